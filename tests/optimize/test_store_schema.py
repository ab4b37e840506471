"""Schema 2 (packed vectors) against schema 1 (long format, the old code in
codesign/run/schema1.py): the same iterations written through both give the same
DataFrames; a real schema-1 run is refused in one line naming `codesign migrate`, migrates
atomically (never half, never under a live driver) and resumes to the database an
uninterrupted schema-2 run writes."""

from __future__ import annotations

import contextlib
import math
import os
import re
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from codesign.errors import Stopped, UserError
from codesign.run import driver, migrate
from codesign.run.driver import start_run
from codesign.run.migrate import migrate_run
from codesign.run.schema1 import SQLiteRunStoreV1
from codesign.run.spec import parse_spec
from codesign.run.lock import DriverLock
from codesign.run.store import SQLiteRunStore, open_run
from codesign.types import Candidate, EvalRecord

# two subspaces of different parameter names; metric NaN and failures injected by the sphere
TOY = """
name = "{name}"
seed = 4
[problem]
name = "{problem}"
[optimizer]
particles = 12
iterations = {iterations}
[optimizer.migration]
exploration = 0.3
local = 0.2
global = 0.2
[evaluation]
{evaluation}
[execution]
mode = "serial"
"""
SPHERE_FAULTS = "raise_above = 0.6\nnan_below = -0.6"


def toy(name: str, problem: str = "mmpso_toy", iterations: int = 6, evaluation: str = "") -> str:
    return TOY.format(name=name, problem=problem, iterations=iterations, evaluation=evaluation)


def run_in(store_class, spec_text: str, results: Path, monkeypatch, stop_after: int | None = None) -> Path:
    """A real run (driver, optimizer, serial executor) written by ``store_class``;
    ``stop_after``: an interrupt right after that many iterations were stored."""
    class Store(store_class):
        def write_iteration(self, *args, **kwargs):
            super().write_iteration(*args, **kwargs)
            if stop_after is not None and args[1] + 1 == stop_after:
                raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(driver, "SQLiteRunStore", Store)
        try:
            return start_run(parse_spec(spec_text), results, progress=False)
        except Stopped:
            return results / parse_spec(spec_text).name / "run.sqlite"


def frames(path: Path, store_class=SQLiteRunStore) -> dict[str, pd.DataFrame]:
    """Everything the readers give, without what legitimately differs between two runs
    (wall times, workers, timestamps, the driver)."""
    with store_class(path, readonly=True) as store:
        keys = [(1, 3), (0, 0), (4, 11), (1, 3)]
        return {"runs": store.runs().drop(columns=["created", "driver", "code_version"]),
                "evaluations": store.evaluations().drop(columns=["wall_s", "worker"]),
                "params": store.params(), "params wide": store.params(wide=True),
                "metrics": store.metrics(), "metrics wide": store.metrics(wide=True),
                "params of keys": store.params(1, keys=keys),
                "params of keys wide": store.params(1, wide=True, keys=keys),
                "metrics of keys": store.metrics(1, keys=keys),
                "iterations": store.iterations().drop(columns=["evals_wall_s", "finished"]),
                "subspaces": store.subspaces()}


def assert_same_frames(left: dict, right: dict) -> None:
    for name in left:
        pd.testing.assert_frame_equal(left[name], right[name], check_exact=True, obj=name)


@pytest.mark.parametrize("problem, evaluation", [("mmpso_toy", ""), ("sphere", SPHERE_FAULTS)])
def test_both_schemas_give_the_same_dataframes_for_the_same_run(tmp_path, monkeypatch, problem, evaluation):
    spec = toy("same", problem, evaluation=evaluation)
    old = run_in(SQLiteRunStoreV1, spec, tmp_path / "v1", monkeypatch)
    new = run_in(SQLiteRunStore, spec, tmp_path / "v2", monkeypatch)
    left, right = frames(old, SQLiteRunStoreV1), frames(new)
    chosen = left["params of keys"]
    assert len(left["params"]) > 0 and set(zip(chosen["iteration"], chosen["particle"])) == {(0, 0), (1, 3), (4, 11)}
    if problem == "sphere":    # the faults happened: failed rows without metrics, NaN metrics
        ev = left["evaluations"]
        assert (ev["status"] == "failed").sum() > 3 and left["metrics"]["value"].isna().any()
        assert len(left["metrics"]) < len(ev)
    else:                      # two subspaces with different parameter names
        assert left["params wide"].isna().any().any() and left["evaluations"]["subspace_id"].nunique() == 2
    assert_same_frames(left, right)
    # and a migrated copy of the schema-1 database reads the same too
    migrated = tmp_path / "migrated" / "run.sqlite"
    migrated.parent.mkdir()
    migrated.write_bytes(old.read_bytes())
    assert migrate_run(migrated).evaluations == len(left["evaluations"])
    assert_same_frames(left, frames(migrated))


def test_non_finite_values_names_in_any_order_and_empty_records(tmp_path):
    """Values the optimizer never produces but a problem may: inf, NaN, no metrics at
    all, names in other orders; stored through both schemas, read back the same."""
    cands = [Candidate(0, 0, 1, ("g",), {"b": 1.5, "a": math.inf}, 0),
             Candidate(0, 1, 1, ("g",), {"a": 2.0, "b": -3.25e-300}, 0),
             Candidate(0, 2, 2, ("h",), {"c": math.nan}, 0)]
    recs = [EvalRecord("ok", metrics={"m2": -math.inf, "m1": 0.1}, stage=1, stage_value=0.5),
            EvalRecord("ok", metrics={"m1": 7.0, "m2": 1e300}, stage=2, stage_value=-1.0),
            EvalRecord.failed("reason: something", wall_s=0.25, worker="w")]
    read = {}
    for store_class in (SQLiteRunStoreV1, SQLiteRunStore):
        path = tmp_path / store_class.__name__ / "run.sqlite"
        with store_class(path, create=True) as store:
            run_id = store.create_run("r", "", "", "", 1, [])
            store.write_iteration(run_id, 0, cands, recs, ((0.0, -2.0, -1.0), 1), {"x": [1.0]})
        read[store_class] = frames(path, store_class)
    assert_same_frames(read[SQLiteRunStoreV1], read[SQLiteRunStore])
    params = read[SQLiteRunStore]["params"].set_index(["particle", "name"])["value"]
    assert math.isnan(params[(0, "a")]) and params[(1, "b")] == -3.25e-300 and math.isnan(params[(2, "c")])


def stored_bytes(path: Path) -> dict:
    """The raw tables, blobs included, without wall times, workers and timestamps."""
    with contextlib.closing(sqlite3.connect(path)) as c:
        read = lambda sql: c.execute(sql).fetchall()  # noqa: E731
        return {"evaluations": read("SELECT run_id, iteration, particle, subspace_id, stage, stage_value, status, "
                                    "message, param_names, params, metric_names, metrics FROM evaluations "
                                    "ORDER BY rowid"),
                "name_sets": read("SELECT * FROM name_sets ORDER BY set_id"),
                "iterations": read("SELECT run_id, iteration, best_stage, best_value, best_subspace_id, "
                                   "n_failed, state_npz FROM iterations ORDER BY iteration"),
                "runs": read("SELECT run_id, name, spec_toml, spec_hash, parent_run_id, status, "
                             "iterations_total FROM runs"),
                "subspaces": read("SELECT * FROM subspaces")}


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codesign.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def listing(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if not p.is_dir()}


@pytest.mark.integration
def test_a_schema_1_run_is_refused_then_migrates_and_resumes_to_the_uninterrupted_run(tmp_path, monkeypatch):
    spec = toy("old", "sphere", iterations=7, evaluation=SPHERE_FAULTS)
    reference = run_in(SQLiteRunStore, spec, tmp_path / "reference", monkeypatch)
    db = run_in(SQLiteRunStoreV1, spec, tmp_path / "results", monkeypatch, stop_after=3)
    folder = db.parent
    with contextlib.closing(sqlite3.connect(db)) as c:
        assert c.execute("SELECT value FROM codesign_meta WHERE key = 'schema_version'").fetchone() == ("1",)
        assert c.execute("SELECT count(*), max(iteration) FROM evaluations").fetchone() == (36, 2)
        assert c.execute("SELECT status FROM runs").fetchone() == ("stopped",)
    before = listing(tmp_path / "results")
    for args in (("resume", folder), ("report", folder, "--no-gait")):
        done = cli(*args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert re.fullmatch(rf"codesign {args[0]}: error: {re.escape(str(db))}: run database schema '1' "
                            rf"\(long format, before compact storage\); expected '2': convert it with "
                            rf"`codesign migrate {re.escape(str(folder))}`", done.stderr.strip()), done.stderr
        assert listing(tmp_path / "results") == before
    old_frames = frames(db, SQLiteRunStoreV1)
    done = cli("migrate", folder)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert re.fullmatch(rf"{re.escape(str(db))}: schema 1 -> 2, 36 evaluations, \d+\.\d\d MB -> \d+\.\d\d MB\n",
                        done.stdout)
    assert sorted(listing(tmp_path / "results")) == ["old/run.sqlite"]     # no temporary, no -wal left
    assert_same_frames(old_frames, frames(db))
    assert cli("migrate", folder).stdout == f"{db}: already schema 2; nothing to do\n"
    done = cli("resume", folder, "--quiet")
    assert done.returncode == 0, done.stderr
    assert stored_bytes(db) == stored_bytes(reference)        # bit-identical, blobs and state included


def test_migrate_refuses_a_live_driver_and_leaves_nothing_half_written(tmp_path, monkeypatch):
    db = run_in(SQLiteRunStoreV1, toy("old"), tmp_path, monkeypatch)
    original = db.read_bytes()
    with DriverLock(db):                       # a driver of this run is alive
        with pytest.raises(UserError, match=r"already being run by .*expected one driver per run"):
            migrate_run(db.parent)
    assert db.read_bytes() == original and sorted(p.name for p in db.parent.iterdir()) == ["run.sqlite"]

    calls = []

    def failing(*args):                        # stopped in the middle of the copy
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return insert(*args)

    insert = migrate.insert_evaluations
    monkeypatch.setattr(migrate, "insert_evaluations", failing)
    with pytest.raises(KeyboardInterrupt):
        migrate_run(db.parent)
    assert db.read_bytes() == original and sorted(p.name for p in db.parent.iterdir()) == ["run.sqlite"]
    monkeypatch.undo()

    with contextlib.closing(sqlite3.connect(db)) as reader:   # open elsewhere: its WAL would strand
        reader.execute("SELECT count(*) FROM evaluations").fetchone()
        with pytest.raises(UserError, match=r"open in another process \(run.sqlite-wal present\)"):
            migrate_run(db)
    assert db.read_bytes() == original
    assert migrate_run(db).to_version == "2"
    with open_run(db, readonly=True) as store:
        assert len(store.evaluations()) == 72
    assert sorted(p.name for p in db.parent.iterdir()) == ["run.sqlite"]
    assert not os.path.exists(str(db) + ".lock")


def decode(blob: bytes, names_json: str) -> dict[str, float]:
    """A packed vector by hand (struct, not the store's numpy): the format as documented."""
    import json
    names = json.loads(names_json)
    return dict(zip(names, struct.unpack(f"<{len(names)}d", blob)))


def test_the_packed_format_is_the_documented_one(tmp_path, monkeypatch):
    db = run_in(SQLiteRunStore, toy("fmt", "sphere", evaluation=SPHERE_FAULTS), tmp_path, monkeypatch)
    with contextlib.closing(sqlite3.connect(db)) as c:
        rows = c.execute("SELECT e.iteration, e.particle, p.names_json, e.params, m.names_json, e.metrics "
                         "FROM evaluations e JOIN name_sets p ON p.set_id = e.param_names "
                         "JOIN name_sets m ON m.set_id = e.metric_names").fetchall()
        page_size = c.execute("PRAGMA page_size").fetchone()[0]
    assert page_size == 16384
    with open_run(db, readonly=True) as store:
        params, metrics = store.params(), store.metrics()
    by_hand = {(it, pa, n): v for it, pa, pn, pb, _, _ in rows for n, v in decode(pb, pn).items()}
    assert by_hand == {(r.iteration, r.particle, r.name): r.value for r in params.itertuples()}
    by_hand = [(it, pa, n, v) for it, pa, _, _, mn, mb in rows for n, v in decode(mb, mn).items()]
    assert len(by_hand) == len(metrics) and any(math.isnan(v) for *_, v in by_hand)


def test_a_codesign_iteration_of_200_particles_stays_under_the_storage_target(tmp_path):
    """The real optimizer's candidates (81 co-design parameters each) with a record as
    large as a walking design's (37 metrics, a 140-character message): schema 2 grows by
    <= 1250 bytes per evaluation (the issue's target) on the real file size, schema 1 by
    more than 4x that; the sizes returned are the files'."""
    from codesign.bench.storage import PARTICLES, measure
    metrics = {f"metric_number_{k:02d}_peak": 1.0 + k / 3.0 for k in range(37)}
    record = EvalRecord("ok", "x" * 140, stage=9, stage_value=-1.25, metrics=metrics)
    sizes = measure(record, 3, tmp_path)
    old, new = sizes["schema 1"], sizes["schema 2"]
    assert new.last_bytes == (tmp_path / "v2.sqlite").stat().st_size
    assert old.last_bytes == (tmp_path / "v1.sqlite").stat().st_size
    growth_new = (new.last_bytes - new.first_bytes) / (2 * PARTICLES)
    growth_old = (old.last_bytes - old.first_bytes) / (2 * PARTICLES)
    assert 81 * 8 + 37 * 8 + 140 < growth_new <= 1250          # the vectors and message, little else
    assert growth_old > 4 * growth_new
