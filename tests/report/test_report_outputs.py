"""What `codesign report` says, as a new user reads it (issue 42, item 6), on a real
2-iteration human-gait run, the command in its own process: its last two lines are the
best's verdict and the best design's file (what `make run` ends on), the design file
replays to the stored metrics bit for bit, the page leads with the best design and names
no heading twice, and the progress counts stages 1-based as the text does. Truths: the run
store read directly, the verdict of the stored metrics, a replay of the design file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.runtools import codesign

SPEC = """
name = "said"
seed = 5
[problem]
name = "human_gait"
[optimizer]
algorithm = "pso"
particles = 3
iterations = 2
[evaluation]
max_time = 0.3
[execution]
mode = "serial"
"""


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    from codesign.run.driver import start_run
    from codesign.run.spec import parse_spec

    folder = tmp_path_factory.mktemp("said")
    run = start_run(parse_spec(SPEC), results=folder, progress=False).parent
    done = codesign("report", run, "--no-gait", "--robustness", "0", timeout=600)
    assert done.returncode == 0, done.stderr
    return run, done.stdout.splitlines()


def _stored_best(run: Path):
    """The best evaluation (most conditions met, then the smallest stage value, then the
    earliest) and its metrics, straight from the store."""
    from codesign.run.store import open_run

    with open_run(run, readonly=True) as store:
        ev = store.evaluations()
        metrics = store.metrics(wide=True)
    ok = ev[ev["status"] == "ok"]
    best = ok.sort_values(["stage", "stage_value", "iteration", "particle"],
                          ascending=[False, True, True, True]).iloc[0]
    row = metrics[(metrics["iteration"] == best["iteration"]) & (metrics["particle"] == best["particle"])].iloc[0]
    return best, {k: v for k, v in row.items() if k not in ("run_id", "iteration", "particle") and pd.notna(v)}, ok


def test_the_report_ends_on_the_bests_verdict_then_its_design_file(reported):
    from codesign.problems import get_problem
    from codesign.problems.verdict import walking_verdict
    from codesign.walking import load_design

    run, lines = reported
    best, metrics, _ = _stored_best(run)
    out = run / "report"
    assert lines[-3] == f"report: {out / 'index.html'} (summary: {out / 'summary.md'})"
    verdict = walking_verdict(metrics, 0.3, best["message"] or "")
    assert lines[-2] == f"best (evaluation {best['iteration']}:{best['particle']}): {verdict.text}"
    assert lines[-1] == f"design: {out / 'best_design.json'}"
    # the file is the best design under the run's settings: its replay measures what the run stored
    design = load_design(out / "best_design.json")
    assert design.evaluation == {"max_time": 0.3}
    assert design.problem["name"] == "human_gait"          # the file says what it is (issue 42)
    problem = get_problem("human_gait")
    replayed = problem.walking.replay(design, problem.parse_settings(design.evaluation)).record.metrics
    for name, value in metrics.items():
        assert replayed[name] == value, name


def test_the_page_leads_with_the_best_design_and_names_no_heading_twice(reported):
    run, _ = reported
    html = (run / "report" / "index.html").read_text()
    headings = re.findall(r"<h2 id=\"[^\"]+\">([^<]+)</h2>", html)
    captions = re.findall(r"<caption>([^<]+)</caption>", html)
    assert headings[0] == "Best design" and len(set(headings)) == len(headings)
    assert len(set(captions)) == len(captions), captions
    solutions = html.index('<h2 id="solutions">')
    assert html.index("Best design: ") < html.index("Best so far: ") < solutions
    assert solutions < html.index('<img src="progress.png"') < html.index('<img src="visits.png"')
    assert 'href="best_design.json"' in html
    summary = (run / "report" / "summary.md").read_text()
    titles = [line for line in summary.splitlines() if line.startswith("#") or line.startswith("**")]
    assert len(set(titles)) == len(titles), titles


def test_progress_counts_stages_as_the_text_does(reported):
    """progress.csv's stages are the text's "stage k of n" (k = conditions met + 1; 0 for a
    failed iteration); the milestone table names every condition with its unit and the
    speed-and-assist score is defined where it is shown."""
    from codesign.problems import get_problem

    run, _ = reported
    _, _, ok = _stored_best(run)
    progress = pd.read_csv(run / "report" / "progress.csv", index_col="iteration")
    for iteration in progress.index:
        so_far = ok[ok["iteration"] <= iteration]
        assert progress.loc[iteration, "best_stage"] == so_far["stage"].max() + 1
    summary = (run / "report" / "summary.md").read_text()
    objectives = get_problem("human_gait").objectives
    best = ok.sort_values(["stage", "stage_value"], ascending=[False, True]).iloc[0]
    assert f"stage {int(best['stage']) + 1} of {len(objectives)}: " in summary
    for k, objective in enumerate(objectives[:-1], start=1):
        row = next(line for line in summary.splitlines() if line.startswith(f"| {k} of {len(objectives)}: "))
        assert f"| {objective.metric} {objective.condition()} " in row
        assert re.search(rf"\| {re.escape(objective.metric)} {re.escape(objective.condition())} "
                         r"(\S+|\(dimensionless\)) \|", row), row
    if any(o.metric == "speed_assist_score" for o in objectives):
        row = next(line for line in summary.splitlines() if ": speed_assist_score |" in line)
        assert "speed_match x (1 - assist_fraction)" in row
    assert json.loads((run / "report" / "best_design.json").read_text())["topology"] is None


def test_a_section_shows_its_figures_before_its_tables_unless_told():
    """The best design's section reads verdict, figure, loads (issue 42); the top table's
    section keeps its tables first (its figure, the morphologies, illustrates them)."""
    from codesign.report.html import Section, render_page

    table = pd.DataFrame({"a": ["1"]})
    figure = [("walk.png", "the walk")]
    lead = render_page("t", [Section("best", "Best design", paragraphs=["verdict"], figures=figure, tables=[table])])
    assert lead.index("verdict") < lead.index('<img src="walk.png"') < lead.index("<table>")
    top = render_page("t", [Section("top", "Top", figures=figure, tables=[table], tables_first=True)])
    assert top.index("<table>") < top.index('<img src="walk.png"')
