"""The top-solutions table re-evaluates the best design at half the time step and with soft
contacts (issue 15): the columns hold exactly what an evaluation of that stored design
under the changed settings gives."""

import math

import pytest

from codesign.problems.walking import walk
from codesign.report import robustness as rb
from codesign.run.stored import stored_candidate
from codesign.walking import WalkSettings


@pytest.mark.slow
def test_the_best_design_is_reevaluated_under_both_variants(tmp_path):
    from codesign.report.build import build_report
    from codesign.run.driver import start_run
    from codesign.run.spec import parse_spec
    import pandas as pd

    run = start_run(parse_spec(
        'name = "rob"\nseed = 3\n[problem]\nname = "human_gait"\n[optimizer]\nalgorithm = "pso"\n'
        'particles = 2\niterations = 1\n[evaluation]\nmax_time = 0.2\n[execution]\nmode = "serial"\n'),
        results=tmp_path, progress=False)
    out = build_report(run.parent, tmp_path / "report", gait=False, robustness=1)
    table = pd.read_csv(out / "top_solutions.csv", dtype={"stage": str, "stage value": str})
    best = str(table["eval"].iloc[0])
    stored = stored_candidate(str(run), False, best)
    settings = WalkSettings.from_dict({"max_time": 0.2})
    variants = {"h/2": {"max_time": 0.2, "h": 5e-4}, "soft": {"max_time": 0.2, "contact_model": "soft_step", "h": 2.5e-4}}
    for name, change in rb.VARIANTS:
        assert change(settings) == WalkSettings.from_dict(variants[name])    # the variant, spelled out
        direct = walk(stored.design, WalkSettings.from_dict(variants[name])).metrics
        assert table[f"{name} walked [s]"].iloc[0] == direct["time"]
        speed = table[f"{name} speed [m/s]"].iloc[0]
        assert (math.isnan(speed) and "speed" not in direct) or speed == direct["speed"]
    assert rb.VARIANTS[0][1](WalkSettings.from_dict({"h": 2e-3})).rollout.h == 1e-3
    # the report says first whether the best design walks (issue 34): the verdict of its
    # stored metrics -- 0.2 s from the standing start is no walk
    from codesign.problems.verdict import walking_verdict
    from codesign.run.store import open_run

    iteration, particle = (int(v) for v in best.split(":"))
    with open_run(run, readonly=True) as store:
        metrics = store.metrics(wide=True)
        evaluations = store.evaluations()
    row = metrics[(metrics["iteration"] == iteration) & (metrics["particle"] == particle)].iloc[0]
    message = evaluations[(evaluations["iteration"] == iteration) & (evaluations["particle"] == particle)]["message"]
    verdict = walking_verdict(row.to_dict(), 0.2, message.iloc[0] or "")
    summary = (out / "summary.md").read_text()
    assert not verdict.walks and f"Best design: {verdict.text}." in summary
    assert summary.index(f"Best design: {verdict.text}") < summary.index("Best so far")
    # the top table's speed and walks columns are the stored speed and that verdict
    assert table["walks"].iloc[0] == verdict.short
    assert table["speed [m/s]"].iloc[0] == pytest.approx(row["speed"], abs=1e-12)
    # and every condition of the run's objectives it does not meet, not only the first
    from codesign.objectives import unmet_conditions
    from codesign.problems import get_problem

    problem = get_problem("human_gait")
    unmet = unmet_conditions(row.dropna().to_dict(), problem.objectives, problem.metric_unit)
    assert unmet and table["conditions not met"].iloc[0] == "; ".join(unmet)
    # one stage numbering (issue 34): the table's stage, the overview's words and the
    # progress milestones count the objectives from 1 ("k of n: metric"), and the stage
    # value is that metric's stored value with its unit
    from codesign.objectives import stage_label, with_unit

    with open_run(run, readonly=True) as store:
        evaluations = store.evaluations()
    stage = int(evaluations[(evaluations["iteration"] == iteration)
                            & (evaluations["particle"] == particle)]["stage"].iloc[0])
    label = stage_label(stage, problem.objectives)
    metric = problem.objectives[stage].metric
    assert table["stage"].iloc[0] == label.removeprefix("stage ")
    assert table["stage value"].iloc[0] == with_unit(row[metric], problem.metric_unit(metric), 4)
    html = (out / "index.html").read_text()
    assert f"Best so far: evaluation {best} in subspace" in html and f": {label} " in html
    assert "<th>speed [m/s]</th>" in html and ">1 of 17: time_fraction</td>" in html
    assert "<th>stage</th>" in html and "<caption>Gait (second half of the walk)</caption>" in html
    # a run of one subspace lists the best of each particle, not one design
    assert sorted(table["eval"]) == ["0:0", "0:1"]


def test_the_report_takes_the_checks_it_names_and_refuses_an_unknown_one_in_one_line(tmp_path):
    from codesign.errors import UserError
    from tests.runtools import codesign, one_line

    assert rb.parse_checks("wearer_heavy, half_step") == ("wearer_heavy", "half_step")
    assert rb.parse_checks("") == ()
    with pytest.raises(UserError, match="a check twice"):
        rb.parse_checks("soft,soft")
    # every check has its column prefix; the wearer checks scale the run's own scale
    assert set(rb.PREFIX) == set(rb.CHECKS) and rb.WEARER_CHECKS == {"wearer_light": 0.9, "wearer_heavy": 1.1}
    done = codesign("report", tmp_path / "no-run", "--robustness-checks", "half_step,wearer_lite")
    one_line(done, 2, r".*--robustness-checks: unknown check 'wearer_lite'; expected a comma-separated list of "
                      r"half_step, soft, wearer_light, wearer_heavy")
    assert not any(tmp_path.iterdir())


def test_a_problem_that_cannot_scale_its_wearer_refuses_the_wearer_checks():
    """The anthropomorphic baseline's segments hold the device's lumps: a wearer check goes
    through the problem's own parser and is refused in one line (a study records it as a
    check not made), not applied to the lumps; its contact checks still are made."""
    from pathlib import Path

    from codesign.errors import UserError
    from codesign.problems import get_problem

    design = Path(__file__).resolve().parents[2] / "docs" / "designs" / "codesign-walking.json"
    problem = get_problem("anthropomorphic_baseline")
    table = {"baseline_of": str(design), "max_time": 0.2}
    settings = problem.parse_settings(table)
    with pytest.raises(UserError, match=r"^evaluation\.wearer_mass_scale: got 0\.9 with the anthropomorphic"):
        rb.check_settings(problem, table, settings, "wearer_light")
    assert rb.check_settings(problem, table, settings, "half_step").walk.rollout.h == 0.5 * settings.walk.rollout.h
    # a problem that can: the run's own scale times the factor
    human = get_problem("human_gait")
    scaled = {"max_time": 0.2, "wearer_mass_scale": 1.2}
    heavy = rb.check_settings(human, scaled, human.parse_settings(scaled), "wearer_heavy")
    assert heavy.walk.wearer_mass_scale == pytest.approx(1.32, rel=1e-15)
