"""Run store contract: whole iterations, failures recorded, readers during writes, clear
errors for foreign or corrupt files, deterministic state bytes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from codesign.objectives import Objective, describe_fitness

from codesign.errors import UserError
from codesign.run.driver import start_run
from codesign.run.spec import parse_spec
from codesign.run.state_archive import state_from_bytes, state_to_bytes
from codesign.run.store import SQLiteRunStore, open_run

SPHERE = """
name = "faults"
seed = 2
[problem]
name = "sphere"
[optimizer]
algorithm = "pso"
particles = 10
iterations = 8
[evaluation]
raise_above = 0.7
nan_below = -0.7
[execution]
mode = "serial"
"""


def test_failed_evaluations_are_recorded_and_the_run_goes_on(tmp_path):
    path = start_run(parse_spec(SPHERE), tmp_path, progress=False)
    with open_run(path, readonly=True) as store:
        runs, ev, params = store.runs(), store.evaluations(), store.params(wide=True)
        its, metrics = store.iterations(), store.metrics()
    assert runs.loc[0, "status"] == "finished" and len(its) == 8 and len(ev) == 80
    x = params.set_index(["iteration", "particle"])["x"]
    ev = ev.set_index(["iteration", "particle"])
    raised = x > 0.7
    nan = x < -0.7
    assert raised.any() and nan.any()          # the seed visits both fault regions
    assert (ev.loc[raised, "status"] == "failed").all()
    assert ev.loc[raised, "message"].str.startswith("ValueError: x = ").all()
    assert (ev.loc[nan, "status"] == "failed").all()
    assert ev.loc[nan, "message"].str.startswith("non-finite metric f").all()
    assert ev.loc[nan | raised, "stage_value"].isna().all()
    assert (ev.loc[~(nan | raised), "status"] == "ok").all()
    # the best is a successful evaluation, and equals the smallest stored value
    assert its["best_value"].iloc[-1] == pytest.approx(ev.loc[ev["status"] == "ok", "stage_value"].min())
    assert set(metrics["name"]) == {"f"}


def test_state_bytes_are_deterministic_and_pickle_free():
    state = {"a": np.arange(5.0), "b": np.array(3, dtype=np.int64),
             "s": np.frombuffer(b'{"x": 1}', dtype=np.uint8)}
    blob = state_to_bytes(state)
    time.sleep(1.1)                              # zip timestamps must not leak into the bytes
    assert state_to_bytes(state) == blob
    back = state_from_bytes(blob)
    for k in state:
        np.testing.assert_array_equal(back[k], state[k])
    with pytest.raises(ValueError):
        state_to_bytes({"o": np.array([{"no": "pickle"}], dtype=object)})


def test_mostly_zero_state_arrays_are_stored_sparse_and_read_back_bit_for_bit():
    """MMPSO's positions hold every subspace's dimensions, ~95 % zero in a co-design run:
    stored as nonzero values and positions; -0.0, NaN and inf survive exactly."""
    rng = np.random.default_rng(3)
    x = np.zeros((200, 1459))
    x[rng.integers(0, 200, 900), rng.integers(0, 1459, 900)] = rng.normal(size=900)
    x[0, 0], x[0, 1], x[0, 2] = -0.0, np.nan, -np.inf
    state = {"x": x, "dense": rng.normal(size=(20, 10)), "few": np.zeros(3), "n": np.arange(100)}
    blob = state_to_bytes(state)
    assert len(blob) < 0.05 * x.nbytes                  # 900 values + positions, not 2.3 MB
    back = state_from_bytes(blob)
    assert sorted(back) == sorted(state)
    for name, array in state.items():
        assert back[name].dtype == array.dtype and back[name].shape == array.shape
        assert back[name].tobytes() == array.tobytes(), name
    with pytest.raises(ValueError, match="may not contain"):
        state_to_bytes({"x@index": np.zeros(100)})


def test_foreign_and_corrupt_files_give_one_clear_error(tmp_path):
    random_bytes = tmp_path / "random.sqlite"
    random_bytes.write_bytes(np.random.default_rng(0).bytes(8192))
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE people (name TEXT)")
    wrong_app = tmp_path / "wrong.sqlite"
    with sqlite3.connect(wrong_app) as c:
        c.execute("CREATE TABLE codesign_meta (key TEXT, value TEXT)")
        c.execute("INSERT INTO codesign_meta VALUES ('application', 'other')")
    good = start_run(parse_spec(SPHERE), tmp_path, progress=False)
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(good.read_bytes()[:3000])
    expectations = {random_bytes: "unreadable or corrupt", foreign: "not a codesign run database",
                    wrong_app: "application = 'other'", truncated: "corrupt",
                    tmp_path / "missing.sqlite": "no such run database"}
    for path, message in expectations.items():
        with pytest.raises(UserError, match=message):
            with open_run(path, readonly=True) as store:
                store.evaluations()
    done = subprocess.run([sys.executable, "-m", "codesign.cli", "resume", str(random_bytes)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "corrupt" in done.stderr


def test_create_refuses_to_overwrite(tmp_path):
    path = start_run(parse_spec(SPHERE), tmp_path, progress=False)
    with pytest.raises(UserError, match="already exists"):
        start_run(parse_spec(SPHERE), tmp_path, progress=False)
    with pytest.raises(UserError, match="already exists"):
        SQLiteRunStore(path, create=True)


@pytest.mark.integration
def test_readers_see_whole_iterations_while_a_run_is_written(tmp_path):
    spec = tmp_path / "slow.toml"
    spec.write_text(SPHERE.replace("iterations = 8", "iterations = 30").replace(
        "nan_below = -0.7", "nan_below = -0.7\nsleep_s = 0.004"))
    driver = subprocess.Popen([sys.executable, "-m", "codesign.cli", "optimize", str(spec), "--quiet", "--name", "slow",
                               "--results", str(tmp_path / "results")])
    db = tmp_path / "results" / "slow" / "run.sqlite"
    seen = set()
    try:
        while driver.poll() is None:
            if db.exists():
                try:
                    with open_run(db, readonly=True) as store, store.snapshot():
                        n, its = len(store.evaluations()), len(store.iterations())
                except UserError as exc:     # the schema may not be committed yet
                    assert "no codesign_meta" in str(exc) or "corrupt" not in str(exc)
                    continue
                assert n == 10 * its          # whole iterations only
                seen.add(its)
            time.sleep(0.01)
    finally:
        driver.wait(60)
    assert driver.returncode == 0
    assert len(seen - {0, 30}) >= 3            # we did read in the middle of the run


def test_runs_lists_status_best_and_lineage(tmp_path):
    from codesign.commands.runs import run_rows, with_lineage
    start_run(parse_spec(SPHERE), tmp_path, progress=False)
    child = SPHERE.replace('name = "faults"', 'name = "child"') + '[freeze]\nparent = "faults"\n'
    start_run(parse_spec(child), tmp_path, progress=False)
    grandchild = child.replace('name = "child"', 'name = "grand"').replace('parent = "faults"', 'parent = "child"')
    start_run(parse_spec(grandchild), tmp_path, progress=False)
    rows = {r["run"]: r for r in with_lineage(run_rows(tmp_path))}
    assert rows["grand"]["parent"] == "faults > child" and rows["faults"]["parent"] == "-"
    assert rows["faults"]["status"] == "finished" and rows["faults"]["iterations"] == "8/8"
    with open_run(tmp_path / "faults", readonly=True) as store:
        best = store.evaluations().query("status == 'ok'")["stage_value"].min()
    # the best in words: the objective's metric and value, and no walking verdict (a sphere)
    assert rows["faults"]["best"] == describe_fitness(0, best, (Objective("f"),)) and rows["faults"]["walks"] == "-"


def test_resume_refuses_a_run_whose_driver_is_alive(tmp_path):
    from codesign.run.driver import resume_run
    spec = parse_spec(SPHERE)
    store = SQLiteRunStore(tmp_path / "live" / "run.sqlite", create=True)
    store.create_run("live", spec.text, spec.hash, "", 8, [])     # driver: this very process
    store.close()
    with pytest.raises(UserError, match="already being run by"):
        resume_run(tmp_path / "live", progress=False)
