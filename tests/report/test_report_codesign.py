"""Reports and freezing on a co-design-shaped run.

The walking evaluation is too slow for a unit test, so the run uses a small synthetic
problem registered (in this process only) as the co-design problem: its pools mirror the
real catalog's subspaces (one group per (topology, actuator pair), in catalog order, with
that topology's morphological and control parameters, plus a pool of common parameters:
WALK's own co-design space, ``codesign.problems.walking.codesign_space``), and its metrics
come from MODEL's real morphology and mass model (added mass, CoM, longest link), with a
synthetic "power". Only the metrics are synthetic; the subspaces, parameters, optimizer,
store, report and freeze are the real ones.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from codesign.errors import UserError  # noqa: E402
from codesign.model.morphology import build_morphology, mass_report, parameter_space  # noqa: E402
from codesign import problems  # noqa: E402
from codesign.objectives import Objective  # noqa: E402
from codesign.report.build import build_report, layout_for  # noqa: E402
from codesign.report.freeze import freeze_spec, is_morphology  # noqa: E402
from codesign.report.heatmap import UNVISITED_MARK, visit_counts, visit_heatmap  # noqa: E402
from codesign.objectives import ranked  # noqa: E402
from codesign.report.rundata import CODESIGN_PROBLEMS, load_run  # noqa: E402
from codesign.run.spec import parse_spec  # noqa: E402
from codesign.topology.catalog import save_catalog  # noqa: E402
from codesign.topology.enumerate import build_catalog  # noqa: E402
from codesign.types import EvalRecord  # noqa: E402
from codesign.problems.exo_codesign import (codesign_space, group_name, parse_codesign_settings,  # noqa: E402
                                      parse_group_name, topology_prefix)

CODESIGN_PROBLEM = CODESIGN_PROBLEMS[0]        # exo_codesign

CATALOG = build_catalog()
SUBSPACES = CATALOG.subspaces()
PARAMETERS, POOLS = codesign_space(CATALOG)  # WALK's co-design space: names, groups, bounds
BOUNDS = {p.name: (p.low, p.high) for p in PARAMETERS}


def _evaluate(params, context):
    """MODEL's mass model of the decoded design; "power" grows with the normalised control
    parameters (so the control part has something to optimize) and the topology id."""
    tid, pair = parse_group_name(context.subspace[0])
    topology = CATALOG.topology(tid)
    prefix = topology_prefix(tid)
    morph = {p.name: params[prefix + p.name] for p in parameter_space(topology)}
    try:
        report = mass_report(build_morphology(topology, pair, morph))
    except UserError as exc:
        return EvalRecord.failed(str(exc))
    control = [(v - BOUNDS[k][0]) / (BOUNDS[k][1] - BOUNDS[k][0]) for k, v in params.items()
               if not is_morphology(k)]
    power = 100.0 * (1.0 + float(np.mean(control))) + 5.0 * tid
    return EvalRecord("ok", metrics={**report, "power": power})


def _fake_problem() -> problems.Problem:
    return problems.Problem(CODESIGN_PROBLEM, _evaluate, "synthetic co-design stand-in",
                            parameters=PARAMETERS, pools=POOLS, parse_settings=parse_codesign_settings,
                            objectives=(Objective("longest_link_m", until=0.7),
                                        Objective("power")))


def _spec(catalog: Path, name: str = "codesign", extra: str = "") -> str:
    return f"""
name = "{name}"
seed = 11
[problem]
name = "{CODESIGN_PROBLEM}"
[optimizer]
particles = 16
iterations = 8
[optimizer.migration]
exploration = 0.05
local = 0.1
global = 0.1
[evaluation]
catalog = "{catalog}"
[execution]
mode = "serial"
{extra}"""


@pytest.fixture(scope="module")
def codesign_run(tmp_path_factory):
    from codesign.run.driver import start_run

    folder = tmp_path_factory.mktemp("codesign")
    catalog = folder / "catalog.json"
    save_catalog(CATALOG, catalog)
    previous = problems._BUILT.get(CODESIGN_PROBLEM)
    problems.register_problem(_fake_problem())
    try:
        run = start_run(parse_spec(_spec(catalog)), results=folder, progress=False).parent
        yield run, catalog, start_run
    finally:
        if previous is None:
            problems._BUILT.pop(CODESIGN_PROBLEM, None)
        else:
            problems._BUILT[CODESIGN_PROBLEM] = previous


def test_codesign_heatmap_is_topology_by_pair_with_database_counts(codesign_run):
    run, _, _ = codesign_run
    data = load_run(run)
    grid = layout_for(data).grid
    assert grid.column_labels == tuple(str(t.id) for t in CATALOG.topologies)
    pairs = [len(t.actuator_pairs) for t in CATALOG.topologies]
    assert grid.valid_mask().sum(axis=0).tolist() == pairs
    fig = visit_heatmap(grid, visit_counts(data.evaluations))
    drawn = fig.axes[0].images[0].get_array()
    with sqlite3.connect(run / "run.sqlite") as con:
        db = dict(con.execute("SELECT subspace_id, COUNT(*) FROM evaluations GROUP BY 1"))
    crosses = {(round(t.get_position()[1]), round(t.get_position()[0])) for t in fig.axes[0].texts
               if t.get_text() == UNVISITED_MARK}
    for sid, tid, pair in SUBSPACES:
        topology = CATALOG.topology(tid)
        r, c = topology.actuator_pairs.index(pair), tid - 1  # independent of the grid code
        if sid in db:
            assert drawn[r, c] == db[sid] and not drawn.mask[r, c]
        else:
            assert drawn.mask[r, c] and (r, c) in crosses
    # 16 particles cannot have visited all 126 subspaces in 8 iterations
    assert len(crosses) == len(SUBSPACES) - len(db) > 0
    invalid = ~grid.valid_mask()
    assert invalid.sum() == grid.shape[0] * grid.shape[1] - len(SUBSPACES)


def test_codesign_report_has_morphologies_and_table(codesign_run, tmp_path, db_values):
    run, _, _ = codesign_run
    out = build_report(run, tmp_path / "report", gait=False)  # rollout: tested by WALK
    assert (out / "morphologies.png").stat().st_size > 10_000
    html = (out / "index.html").read_text()
    assert "added mass [kg]" in html and "power [W]" in html and "topology" in html
    data = load_run(run)
    best = ranked(data.evaluations).iloc[0]
    key = (int(best["iteration"]), int(best["particle"]))
    top = (out / "top_solutions.csv").read_text().splitlines()
    assert top[1].split(",")[1] == f"{key[0]}:{key[1]}"
    added = db_values(run, "metrics", key)["added_mass_kg"]
    assert f"{added:+.1f}" in html
    with sqlite3.connect(run / "run.sqlite") as con:
        db = dict(con.execute("SELECT subspace_id, COUNT(*) FROM evaluations GROUP BY 1"))
    rows = [line.split(",") for line in (out / "visits.csv").read_text().splitlines()[1:]]
    assert len(rows) == len(SUBSPACES)
    for sid, tid, pair, n in rows:
        assert int(n) == db.get(int(sid), 0)
        assert (int(tid), tuple(map(int, pair.split("-")))) == next(
            (t, p) for s, t, p in SUBSPACES if s == int(sid))


def test_freeze_topology_then_actuators_then_morphology(codesign_run, tmp_path, db_values, db_rows):
    run, catalog, start_run = codesign_run
    data = load_run(run)
    best = ranked(data.evaluations[data.evaluations["status"] == "ok"]).iloc[0]
    sid = int(best["subspace_id"])
    tid, pair = next((t, p) for s, t, p in SUBSPACES if s == sid)
    key = (int(best["iteration"]), int(best["particle"]))
    solution = db_values(run, "params", key)

    # scenario 2 of thesis 5.6: actuator placement explored within one topology
    text, summary = freeze_spec(run, ["topology"], name="placement")
    spec = parse_spec(text)
    assert summary["subspaces"] == len(CATALOG.topology(tid).actuator_pairs)
    assert not spec.freeze.pools and len(spec.exclude) == len(SUBSPACES) - summary["subspaces"]

    # scenario 1: morphology fixed, control optimized; run it and check its database
    text, summary = freeze_spec(run, ["topology", "actuators", "morphology"], name="control")
    spec = parse_spec(text)
    assert spec.freeze.pools == {"subspace": group_name(tid, pair)}
    prefix = topology_prefix(tid)
    morph = {prefix + p.name for p in parameter_space(CATALOG.topology(tid))}
    assert spec.freeze.parameters == {k: solution[k] for k in morph}
    child = start_run(spec, results=tmp_path, progress=False).parent
    with sqlite3.connect(child / "run.sqlite") as con:
        subspaces = {s for (s,) in con.execute("SELECT DISTINCT subspace_id FROM evaluations")}
        parent, = con.execute("SELECT parent_run_id FROM runs").fetchone()
    rows = [(n, v) for _, _, n, v in db_rows(child, "params")]
    assert subspaces == {sid} and parent == data.name
    for name, value in rows:
        if name in morph:
            assert value == solution[name]
    control = {n for n in solution if not is_morphology(n)}
    moved = {n for n, v in rows if n in control and v != solution[n]}
    assert control and moved == control  # every open (control) parameter was moved

    # scenario 3: one sub-chain (the joints of the last WR link) left open
    last_link = CATALOG.topology(tid).wr_links[-1]
    chain = [j.id for j in CATALOG.topology(tid).joints if last_link in j.links]
    opened = [f"param:j{j}_*" for j in chain]
    text, _ = freeze_spec(run, ["topology", "actuators", "morphology"], open_parts=opened,
                          name="subchain")
    frozen = parse_spec(text).freeze.parameters
    assert set(frozen) == {n for n in morph
                           if int(n.removeprefix(prefix)[1:].split("_")[0]) not in chain}
    assert np.isfinite(list(frozen.values())).all()


def test_pass_rate_heatmap_from_screening_csv(codesign_run, tmp_path, monkeypatch):
    """MODEL's `codesign screen` table (results/screen/pass_rates.csv) -> pass-rate cells."""
    from codesign.report.designs import screening_counts
    from codesign.report.heatmap import pass_rate_heatmap

    run, _, _ = codesign_run
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "screen").mkdir(parents=True)
    rows = ["subspace,topology,actuator_1,actuator_2,samples,passed,pass_rate"]
    rows += [f"{sid},{tid},{p[0]},{p[1]},8,{sid % 9},{(sid % 9) / 8:.6g}"
             for sid, tid, p in SUBSPACES if sid != 5]
    (tmp_path / "results" / "screen" / "pass_rates.csv").write_text("\n".join(rows) + "\n")
    data = load_run(run.resolve() if run.is_absolute() else run)
    passed, tested, _ = screening_counts(data)
    grid = layout_for(data).grid
    fig = pass_rate_heatmap(grid, passed, tested)
    drawn = fig.axes[0].images[0].get_array()
    for sid, tid, pair in SUBSPACES:
        r, c = CATALOG.topology(tid).actuator_pairs.index(pair), tid - 1
        if sid == 5:
            assert drawn.mask[r, c]  # not screened
        else:
            assert drawn[r, c] == pytest.approx((sid % 9) / 8)


def test_a_composed_co_design_problem_gets_the_catalog_layout_as_its_preset_would():
    """A walking(...) problem that searches the catalog is a co-design run for the report,
    the freeze and the screening counts, as the presets with the same options are."""
    from codesign.problems.options import PRESETS
    from codesign.report.rundata import searches_catalog

    for name, options in PRESETS.items():
        if options.search == "wearer":        # needs its frozen device's file: not a catalog search
            continue
        assert searches_catalog(parse_spec(f'[problem]\nname = "{name}"\n')) == (name in CODESIGN_PROBLEMS)
    composed = parse_spec('[problem]\nname = "walking"\ncontrol = "actuator"\ntorso_feedback = true\n'
                          'drivetrains = "searched"\n')
    assert composed.problem.startswith("walking(") and composed.problem not in PRESETS
    assert searches_catalog(composed)
    assert not searches_catalog(parse_spec('[problem]\nname = "sphere"\n'))
