"""Reports and freezing on real (small) runs made by OPT's driver in this test.

The run: OPT's built-in ``sphere`` problem through a co-design-shaped space — a pool of
three "topologies" times a pool of three "actuator pairs", where topology t1 has two pairs
and t3 one (the other combinations are excluded, as a topology has only its own pairs).
Exploration is off (P_e = 0) and there are fewer particles than subspaces, so the subspaces
not occupied at the start can never be visited (local and global migration only lead to
subspaces already evaluated): the run is guaranteed to have never-visited cells.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from codesign import cli  # noqa: E402
from codesign.errors import UserError  # noqa: E402
from codesign.run.driver import start_run  # noqa: E402
from codesign.report.build import build_report, layout_for  # noqa: E402
from codesign.report.flow import particle_flow  # noqa: E402
from codesign.report.freeze import freeze_spec  # noqa: E402
from codesign.report.heatmap import (BEST_MARK, UNVISITED_MARK, phase_heatmaps,  # noqa: E402
                                     visit_counts, visit_heatmap)
from codesign.objectives import ranked  # noqa: E402
from codesign.report.rundata import load_run  # noqa: E402
from codesign.run.spec import parse_spec  # noqa: E402

PARTICLES = 4
ITERATIONS = 12
TOPOLOGIES = ("t1", "t2", "t3")
PAIRS = ("p1", "p2", "p3")
INVALID = {("t1", "p3"), ("t3", "p2"), ("t3", "p3")}

SPEC = f"""
name = "parent"
seed = 7
[problem]
name = "sphere"
[optimizer]
particles = {PARTICLES}
iterations = {ITERATIONS}
[optimizer.migration]
exploration = 0.0
local = 0.15
global = 0.25
[[space.pools]]
name = "topology"
groups = [{{name = "t1", parameters = ["x"]}}, {{name = "t2", parameters = ["x", "y"]}},
          {{name = "t3", parameters = ["y"]}}]
[[space.pools]]
name = "pair"
groups = [{{name = "p1", parameters = ["z"]}}, {{name = "p2", parameters = ["x"]}},
          {{name = "p3", parameters = ["y", "z"]}}]
[space]
exclude = {json.dumps([[f"topology.{t}", f"pair.{p}"] for t, p in sorted(INVALID)])}
[execution]
mode = "serial"
"""


def _run(spec_text: str, folder: Path, name: str) -> Path:
    spec = parse_spec(spec_text, source=name)
    return start_run(spec, results=folder, name=name, progress=False).parent


@pytest.fixture(scope="module")
def parent_run(tmp_path_factory) -> Path:
    return _run(SPEC, tmp_path_factory.mktemp("runs"), "parent")


def _db_counts(run_folder: Path) -> dict[tuple[str, str], int]:
    """Evaluations per (topology, pair) straight from SQLite (independent of the report)."""
    with sqlite3.connect(run_folder / "run.sqlite") as con:
        groups = {sid: json.loads(g) for sid, g in con.execute(
            "SELECT subspace_id, groups_json FROM subspaces")}
        counts = con.execute("SELECT subspace_id, COUNT(*) FROM evaluations GROUP BY subspace_id")
        return {(groups[s]["topology"], groups[s]["pair"]): n for s, n in counts}


def _cell_texts(ax) -> dict[tuple[int, int], str]:
    return {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
            for t in ax.texts if t.get_ha() == "center"}


def test_heatmap_counts_equal_database_cell_by_cell(parent_run):
    data = load_run(parent_run)
    layout = layout_for(data)
    best_sid = int(ranked(data.evaluations).iloc[0]["subspace_id"])
    fig = visit_heatmap(layout.grid, visit_counts(data.evaluations), best_subspace=best_sid)
    ax = fig.axes[0]
    drawn = ax.images[0].get_array()
    grid = layout.grid
    assert grid.column_labels == TOPOLOGIES and grid.row_labels == PAIRS
    db = _db_counts(parent_run)
    texts = _cell_texts(ax)
    hatched = {(round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in ax.patches
               if p.get_hatch()}
    n_unvisited = 0
    for r, pair in enumerate(PAIRS):
        for c, topo in enumerate(TOPOLOGIES):
            if (topo, pair) in INVALID:
                assert drawn.mask[r, c] and (r, c) in hatched
            elif (topo, pair) in db:
                assert not drawn.mask[r, c] and drawn[r, c] == db[(topo, pair)]
                assert texts[(r, c)] == str(db[(topo, pair)])
                assert (r, c) not in hatched
            else:
                n_unvisited += 1
                assert drawn.mask[r, c] and texts[(r, c)] == UNVISITED_MARK
    # 6 valid subspaces, 4 particles, no exploration: exactly 2 never visited
    assert n_unvisited == 2
    assert sum(db.values()) == PARTICLES * ITERATIONS
    br, bc = grid.cells[best_sid]
    assert any(t.get_text() == BEST_MARK and round(t.get_position()[0] - 0.45) == bc
               for t in ax.texts)
    # the phases partition the evaluations: their cells add up to the totals
    phases = phase_heatmaps(grid, data.evaluations, best_subspace=best_sid)
    total = sum(np.ma.filled(a.images[0].get_array(), 0.0) for a in phases.axes
                if a.images)
    for (topo, pair), n in db.items():
        assert total[PAIRS.index(pair), TOPOLOGIES.index(topo)] == n


def test_particle_flow_conserves_particles(parent_run):
    data = load_run(parent_run)
    flow = particle_flow(data.evaluations)
    occ = flow.occupancy
    assert (occ.sum(axis=1) == PARTICLES).all()
    step = occ.diff().iloc[1:]
    assert (step == (flow.inflow - flow.outflow).iloc[1:]).all().all()
    assert flow.inflow.to_numpy().sum() == flow.outflow.to_numpy().sum()
    with sqlite3.connect(parent_run / "run.sqlite") as con:
        for it, sid, n in con.execute("SELECT iteration, subspace_id, COUNT(*) FROM evaluations "
                                      "GROUP BY iteration, subspace_id"):
            assert occ.loc[it, sid] == n


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value and not value.startswith("#"):
                self.links.append(value)


@pytest.mark.integration
def test_report_renders_in_a_fresh_process_and_links_resolve(parent_run, tmp_path):
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "codesign.cli", "report", str(parent_run),
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    parser = _Links()
    parser.feed((out / "index.html").read_text())
    assert len(parser.links) >= 6
    for link in parser.links:
        assert not re.match(r"[a-z]+:", link) and not link.startswith("/"), link
        assert (out / link).is_file(), link
    for png in ("visits.png", "visits_phases.png", "flow.png", "migration.png", "progress.png"):
        assert (out / png).stat().st_size > 10_000
    summary = (out / "summary.md").read_text()
    best = ranked(load_run(parent_run).evaluations).iloc[0]
    assert f"{int(best['iteration'])}:{int(best['particle'])}" in summary
    assert not list(tmp_path.glob(".report*"))  # staging folder renamed away
    # a problem that does not walk: the best's stage in words last, no design file (issue 42)
    lines = done.stdout.splitlines()
    assert lines[-1].startswith(f"best (evaluation {int(best['iteration'])}:{int(best['particle'])}): stage ")
    assert not any(line.startswith("design: ") for line in lines) and not (out / "best_design.json").exists()


def test_report_never_replaces_a_folder_that_is_not_a_report(parent_run, tmp_path):
    """The report replaces its folder whole; ``-o`` naming a folder of other files must be
    refused (it used to be renamed away and deleted), an earlier report is replaced."""
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("keep")
    with pytest.raises(UserError, match="not an earlier report"):
        build_report(parent_run, foreign, gait=False)
    assert (foreign / "thesis.tex").read_text() == "keep"
    a_file = tmp_path / "a.txt"
    a_file.write_text("keep")
    with pytest.raises(UserError, match="is a file"):
        build_report(parent_run, a_file, gait=False)
    out = tmp_path / "report"
    build_report(parent_run, out, gait=False)
    (out / "stale.txt").write_text("from an earlier report")
    build_report(parent_run, out, gait=False)
    assert (out / "index.html").is_file() and not (out / "stale.txt").exists()


def test_report_of_a_run_in_progress(tmp_path):
    """A reader while the driver is mid-run, inside an uncommitted write (WAL)."""
    from codesign.run.driver import new_optimizer, resolve_problem
    from codesign.run.executors import make_executor
    from codesign.run.store import SQLiteRunStore

    spec = parse_spec(SPEC, source="live")
    optimizer = new_optimizer(spec)
    store = SQLiteRunStore(tmp_path / "live" / "run.sqlite", create=True)
    run_id = store.create_run("live", spec.text, spec.hash, "", spec.pso.iterations,
                              optimizer.space.describe())
    try:
        problem = resolve_problem(spec)
        with make_executor(spec.problem, problem.parse_settings(spec.evaluation),
                           problem.objectives, spec.execution) as executor:
            for _ in range(3):
                candidates = optimizer.ask()
                records = executor.evaluate(candidates)
                iteration = optimizer.iteration
                optimizer.tell(records)
                key, sid, _ = optimizer.best()
                store.write_iteration(run_id, iteration, candidates, records, (key, sid),
                                      optimizer.state())
        # the driver is in the middle of writing iteration 3 (transaction not committed)
        writer = store._conn
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO evaluations VALUES (?, 3, 0, 1, 0, 0.5, 'ok', '', 0.0, '', 1, x'', 1, x'')",
                       (run_id,))
        out = build_report(tmp_path / "live")
        summary = (out / "summary.md").read_text()
        assert "3 of 12 iterations" in summary and "not finished" in summary
        assert f"{3 * PARTICLES} evaluations" in summary
        assert len(load_run(tmp_path / "live").evaluations) == 3 * PARTICLES
        writer.execute("ROLLBACK")
    finally:
        store.close()


def test_freeze_round_trip_child_never_changes_frozen_values(parent_run, tmp_path, db_values, db_rows):
    text, summary = freeze_spec(parent_run, ["pool:topology", "param:x"], name="child",
                                warm_start=3)
    child = parse_spec(text, source="child")
    data = load_run(parent_run)
    best = ranked(data.evaluations[data.evaluations["status"] == "ok"]).iloc[0]
    key = (int(best["iteration"]), int(best["particle"]))
    groups = data.subspace_groups[int(best["subspace_id"])]
    # frozen values in the new spec are the solution's, bit for bit
    assert child.freeze.pools == {"topology": groups["topology"]}
    assert child.freeze.parameters == {"x": db_values(parent_run, "params", key)["x"]}
    assert child.freeze.parent == "parent"
    # warm start: init ranges of the open parameters inside their bounds
    for name, entry in tomllib.loads(text).get("space", {}).get("parameters", {}).items():
        assert name != "x" and -1.0 <= entry["init"][0] < entry["init"][1] <= 1.0
    child_folder = _run(text, tmp_path, "child")
    with sqlite3.connect(child_folder / "run.sqlite") as con:
        parent_name, = con.execute("SELECT parent_run_id FROM runs").fetchone()
        topologies = {json.loads(g)["topology"] for (g,) in con.execute(
            "SELECT s.groups_json FROM evaluations e JOIN subspaces s "
            "ON e.subspace_id = s.subspace_id")}
        n_eval, = con.execute("SELECT COUNT(*) FROM evaluations").fetchone()
    params = db_rows(child_folder, "params")
    xs = [v for _, _, n, v in params if n == "x"]
    open_values = {n: len({v for _, _, m, v in params if m == n}) for _, _, n, _ in params if n != "x"}.items()
    assert parent_name == "parent"
    assert n_eval == PARTICLES * ITERATIONS
    assert topologies == {groups["topology"]}
    assert xs and all(v == child.freeze.parameters["x"] for v in xs)
    assert open_values and all(n > 1 for _, n in open_values)  # open parameters moved


def test_warm_started_continuation_starts_at_the_solution_and_never_loses_it(parent_run, tmp_path,
                                                                           db_values):
    data = load_run(parent_run)
    best = ranked(data.evaluations[data.evaluations["status"] == "ok"]).iloc[0]
    key = (int(best["iteration"]), int(best["particle"]))
    solution = db_values(parent_run, "params", key)
    text, _ = freeze_spec(parent_run, ["pool:topology"], name="cont", warm_start=3)
    assert parse_spec(text, source="cont").start == solution         # every parameter is open
    child = load_run(_run(text, tmp_path, "cont"))
    first = child.evaluations.set_index(["iteration", "particle"]).loc[(0, 0)]
    # particle 0 re-evaluates the parent's solution: the same parameters, bit for bit, and
    # (evaluations are deterministic) the same stage and value
    assert db_values(child.folder, "params", (0, 0)) == solution
    assert (first["stage"], first["stage_value"]) == (best["stage"], best["stage_value"])
    child_best = ranked(child.evaluations[child.evaluations["status"] == "ok"]).iloc[0]
    assert (-child_best["stage"], child_best["stage_value"]) <= (-best["stage"], best["stage_value"])


def test_freeze_reopens_a_part_and_rejects_bad_input(parent_run, tmp_path, capsys, db_values):
    data = load_run(parent_run)
    best = ranked(data.evaluations).iloc[0]
    used = db_values(parent_run, "params", (int(best["iteration"]), int(best["particle"])))
    assert len(used) >= 2
    reopen = sorted(used)[-1]
    text, _ = freeze_spec(parent_run, ["param:*"], open_parts=[f"param:{reopen}"], name="c")
    frozen = parse_spec(text).freeze.parameters
    assert frozen == {k: v for k, v in used.items() if k != reopen}
    out = tmp_path / "child.toml"
    cases = [["--keep", "wings"], ["--keep", "topology"], ["--keep", "param:nothing"],
             ["--keep", "pool:colour"], ["--keep", "pool:pair", "--solution", "999:0"],
             ["--keep", "pool:pair", "--solution", "last"]]
    done = subprocess.run([sys.executable, "-m", "codesign.cli", "freeze", str(parent_run),
                           "-o", str(out), *cases[0]], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    for extra in cases[1:]:
        assert cli.main(["freeze", str(parent_run), "-o", str(out), *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error:" in err, err
        assert not out.exists() and not list(tmp_path.glob(".child.toml*"))
    out.write_text("keep me")
    assert cli.main(["freeze", str(parent_run), "-o", str(out), "--keep", "pool:pair"]) == 2
    assert out.read_text() == "keep me"
    capsys.readouterr()
    assert cli.main(["freeze", str(parent_run), "-o", str(out), "--keep", "pool:pair",
                     "--force"]) == 0
    frozen = parse_spec(out.read_text()).freeze
    assert frozen.parent == "parent"
    said = capsys.readouterr().out              # the frozen pools as `pool = group`, no Python dict
    assert "frozen pools " + ", ".join(f"{k} = {v}" for k, v in frozen.pools.items()) in said
    assert frozen.pools and "{" not in said
    with pytest.raises(UserError):
        load_run(tmp_path / "nothing-here")
