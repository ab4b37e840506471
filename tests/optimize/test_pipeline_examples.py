"""The product's example specs (pipelines/): few, each named where a new user reads, each
one that runs. Research runs live in studies/<study>/ and are not checked here.

Truths: the files in pipelines/ themselves; the README and docs/optimization.md as a
reader sees them; a real one-iteration run of each spec (in this process, serial, a
tiny swarm and a short walk: the budgets are overridden here, never in the files), whose
run database must hold every evaluation it asked for."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from codesign.run.driver import start_run
from codesign.run.spec import ExecutionSpec, parse_spec

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = ROOT / "pipelines"
FILES = sorted(p.name for p in PIPELINES.iterdir())
SPECS = [name for name in FILES if name.endswith(".toml")]
MAX_FILES = 15                  # issue: pipelines/ keeps only the product's examples
PARTICLES = 2                   # per run: the smallest swarm MMPSO and PSO accept
MAX_TIME = 0.3                  # s of walking per evaluation (the specs ask 10 s)
SCREENED = "results/screen/best_designs.json"   # written by `make run`'s screening just before the demo
LOAD_STARTS = "results/screen/load_designs.json"   # the same screening's load-screened starts
LOADS_TABLE = "results/screen/loads_subspaces.csv"  # and its per-subspace loads
MORPHOLOGY = re.compile(r"j\d+_(s|dx|x|z)$")
RUN_BASELINE = 'baseline_of = "results/demo/global"'  # the baseline of `make run`'s finished demo


def test_pipelines_holds_a_few_examples_each_named_in_the_docs():
    readers = (ROOT / "README.md").read_text() + (ROOT / "docs" / "optimization.md").read_text()
    assert 0 < len(FILES) <= MAX_FILES, FILES
    unnamed = [name for name in FILES if f"pipelines/{name}" not in readers]
    assert unnamed == [], f"named neither in README.md nor docs/optimization.md: {unnamed}"


def test_every_start_file_in_pipelines_is_read_by_a_spec_there():
    texts = [(PIPELINES / name).read_text() for name in SPECS]
    for name in FILES:
        if name.endswith(".json"):
            json.loads((PIPELINES / name).read_text())
            assert any(f'"pipelines/{name}"' in text for text in texts), name


def _stand_ins(text: str, folder: Path) -> str:
    """The spec's text with what `make run` writes before it replaced by stored files: the
    screening's best designs and load-screened starts by the morphology of
    docs/designs/wearer-demo.json (its subspace served), the demo's run by that design."""
    demo = json.loads((ROOT / "docs/designs/wearer-demo.json").read_text())
    if SCREENED in text:
        screened = folder / "best_designs.json"
        screened.write_text(json.dumps([{"topology": demo["topology"], "actuators": demo["actuators"],
                                         "params": {k: v for k, v in demo["params"].items() if MORPHOLOGY.match(k)}}]))
        text = text.replace(SCREENED, screened.as_posix())
    if LOAD_STARTS in text:
        starts = folder / "load_designs.json"
        starts.write_text(json.dumps([{"topology": demo["topology"], "actuators": demo["actuators"],
                                       "params": {k: v for k, v in demo["params"].items() if MORPHOLOGY.match(k)}}]))
        text = text.replace(LOAD_STARTS, starts.as_posix())
    if LOADS_TABLE in text:      # the demo's subspace served, topology 1's first pair dropped
        table = folder / "loads_subspaces.csv"
        table.write_text("subspace,topology,actuator_1,actuator_2,samples,passed,served,served_fraction,"
                         "lightest_device_mass_kg,common_reason\n"
                         f"1,1,1,3,50,5,0,0.0,,peak torque\n"
                         f"2,{demo['topology']},{demo['actuators'][0]},{demo['actuators'][1]},50,5,2,0.04,14.0,\n")
        text = text.replace(LOADS_TABLE, table.as_posix())
    return text.replace(RUN_BASELINE, 'baseline_of = "docs/designs/wearer-demo.json"')


@pytest.mark.parametrize("name", SPECS)
def test_every_example_runs_one_short_iteration(name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)                 # specs name their start files from the repository
    spec = parse_spec(_stand_ins((PIPELINES / name).read_text(), tmp_path), name)
    evaluation = dict(spec.evaluation)
    if spec.problem not in ("six_hump_camel", "lexicographic_six_hump", "mmpso_toy"):
        evaluation["max_time"] = MAX_TIME   # a walking problem
    tiny = replace(spec, pso=replace(spec.pso, particles=PARTICLES, iterations=1), evaluation=evaluation,
                   execution=ExecutionSpec(mode="serial", dashboard=False))
    path = start_run(tiny, results=tmp_path, name="tiny", progress=False)
    with contextlib.closing(sqlite3.connect(path)) as db:
        stored = db.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
        failed = db.execute("SELECT status, message FROM evaluations WHERE status != 'ok'").fetchall()
        status = db.execute("SELECT status FROM runs").fetchone()[0]
    assert stored >= PARTICLES and status == "finished", (stored, status)
    assert failed == [], failed             # every candidate evaluated (a bad start or setting fails it)
