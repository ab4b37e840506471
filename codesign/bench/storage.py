"""`codesign bench storage`: bytes per evaluation of a 200-particle co-design run, schema 2
(packed vectors, :mod:`codesign.run.store`) next to schema 1 (long format, the old writer
kept in :mod:`codesign.run.schema1`), on the same iterations written in the same run.

The iterations are the real optimizer's: MMPSO over the co-design problem's space (the
catalog's 126 subspaces, 81 parameters per candidate, the real names and values) with 200
particles, its state stored after each iteration as a run stores it. The records are real
evaluations made once here and repeated with their values perturbed (so no two are equal):

- ``iteration-0 design``: the first candidate of the run's first iteration, evaluated by
  the problem (a random design: singular in screening, with few metrics and a message), as
  most evaluations of a run's early iterations are;
- ``walking design``: ``docs/designs/codesign-walking.json`` walked 10 s (every metric,
  the late iterations of a run; the larger case).

Workers are named like a Dask worker (``tcp://127.0.0.1:4NNNN``, longer than a local
HOST:PID). Reported: each file's size after the run (WAL checkpointed: what stays on disk,
optimizer state included) per evaluation and per iteration, the growth per evaluation
after the first iteration (what a long run converges to: the one-off parts, the latest
state and the name lists, spread over more evaluations), and the write time per iteration.
The first evaluations compile the walking kernels (numba's disk cache; minutes when cold).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from codesign.io import write_csv_atomic
from codesign.optimize.mmpso import MMPSO
from codesign.optimize.pso import PSOSettings
from codesign.optimize.schedule import thesis_migration
from codesign.problems import exo_codesign, get_problem
from codesign.run.evaluation import evaluate_candidate
from codesign.run.schema1 import SQLiteRunStoreV1
from codesign.run.spec import build_space, parse_spec
from codesign.run.store import SQLiteRunStore
from codesign.types import Candidate, EvalRecord
from codesign.walking.design import load_design

DESCRIPTION = "bytes per evaluation of a 200-particle co-design run: schema 2 (packed) vs schema 1 (long format)"
PARTICLES = 200
DESIGN = Path(__file__).resolve().parents[2] / "docs" / "designs" / "codesign-walking.json"
SETTINGS = {"max_time": 10.0, "actuator_model": "bounded"}


class StoreSize(NamedTuple):
    """One schema's file after a run: size (bytes) after the first and after the last
    iteration, and the mean write time per iteration (s)."""

    first_bytes: int
    last_bytes: int
    write_s: float


def new_optimizer(seed: int = 2014) -> MMPSO:
    """MMPSO on the co-design problem's space as the thesis-scale spec sets it up."""
    spec = parse_spec(f'seed = {seed}\n[problem]\nname = "exo_codesign"\n[optimizer]\n'
                      f'particles = {PARTICLES}\niterations = 800\n', "bench storage")
    space = build_space(spec, get_problem("exo_codesign"))
    return MMPSO(space, PSOSettings(PARTICLES, 800), thesis_migration(800), seed)


def sample_records() -> dict[str, EvalRecord]:
    """The two real records the cases repeat (see the module docstring)."""
    problem = get_problem("exo_codesign")
    first = new_optimizer().ask()[0]
    design = load_design(DESIGN)
    group, params = exo_codesign.encode(design)
    walking = Candidate(0, 0, 0, (group, "common"), params, 0)
    settings = problem.parse_settings(SETTINGS)
    return {name: evaluate_candidate(problem.name, candidate, settings, problem.objectives)
            for name, candidate in (("iteration-0 design", first), ("walking design", walking))}


def perturbed(record: EvalRecord, rng: np.random.Generator, k: int) -> EvalRecord:
    """The record with every metric and the stage value moved by a relative 1e-3 (distinct
    floats of full precision), a wall time and a Dask-like worker name."""
    metrics = {n: v * (1.0 + 1e-3 * rng.standard_normal()) for n, v in record.metrics.items()}
    return dataclasses.replace(record, metrics=metrics, wall_s=float(rng.uniform(0.003, 0.4)),
                               stage_value=record.stage_value * (1.0 + 1e-3 * rng.standard_normal()),
                               worker=f"tcp://127.0.0.1:4{k % 64:04d}")


def measure(record: EvalRecord, iterations: int, folder: Path) -> dict[str, StoreSize]:
    """Write ``iterations`` iterations of the optimizer's candidates with copies of
    ``record`` through both schemas; the two files' sizes and write times."""
    optimizer = new_optimizer()
    rng = np.random.default_rng(0)
    stores = {"schema 1": SQLiteRunStoreV1(folder / "v1.sqlite", create=True),
              "schema 2": SQLiteRunStore(folder / "v2.sqlite", create=True)}
    run_ids = {k: s.create_run("bench", "", "", "", 800, optimizer.space.describe()) for k, s in stores.items()}
    first: dict[str, int] = {}
    write_s = dict.fromkeys(stores, 0.0)
    for it in range(iterations):
        candidates = optimizer.ask()
        records = [perturbed(record, rng, k) for k in range(len(candidates))]
        optimizer.tell(records)
        key, subspace_id, _ = optimizer.best()
        state = optimizer.state()
        for name, store in stores.items():
            start = time.perf_counter()
            store.write_iteration(run_ids[name], it, candidates, records, (key, subspace_id), state)
            write_s[name] += time.perf_counter() - start
            if it == 0:
                first[name] = store.checkpoint()
    sizes = {}
    for name, store in stores.items():
        store.close()                              # the last connection: WAL checkpointed, removed
        sizes[name] = StoreSize(first[name], store.path.stat().st_size, write_s[name] / iterations)
    return sizes


TARGET_BYTES = 1250      # per evaluation of a 200-particle co-design run (issue 16)


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    iterations = 5 if quick else 30
    records = sample_records()
    rows = []
    for case, record in records.items():
        with tempfile.TemporaryDirectory() as folder:
            sizes = measure(record, iterations, Path(folder))
        evaluations = iterations * PARTICLES
        for schema, size in sizes.items():
            growth = (size.last_bytes - size.first_bytes) / ((iterations - 1) * PARTICLES)
            rows.append({"case": case, "metrics": len(record.metrics), "message_chars": len(record.message),
                         "schema": schema, "iterations": iterations, "evaluations": evaluations,
                         "file_mb": size.last_bytes / 1e6, "bytes_per_eval": size.last_bytes / evaluations,
                         "mb_per_iteration": size.last_bytes / iterations / 1e6,
                         "growth_bytes_per_eval": growth, "write_ms_per_iteration": size.write_s * 1e3})
    out = Path(getattr(args, "out", "results/bench"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "storage.csv"
    write_csv_atomic(path, rows)
    print(f"{PARTICLES} particles x {iterations} iterations, co-design space "
          f"({len(new_optimizer().space.names)} parameters, 81 per candidate); wrote {path}")
    print(f"{'case':<19} {'metrics':>7} {'schema':>8} {'file [MB]':>9} {'B/eval':>7} {'MB/iter':>8} "
          f"{'growth B/eval':>13} {'write [ms/iter]':>15}")
    for r in rows:
        print(f"{r['case']:<19} {r['metrics']:>7} {r['schema']:>8} {r['file_mb']:9.2f} {r['bytes_per_eval']:7.0f} "
              f"{r['mb_per_iteration']:8.3f} {r['growth_bytes_per_eval']:13.0f} {r['write_ms_per_iteration']:15.1f}")
    for case in records:
        old, new = (r for r in rows if r["case"] == case)
        # a long run's bytes per evaluation tend to its growth per evaluation: the file's fixed
        # part (the space's names, the pages of the first iteration) spreads over its iterations
        verdict = "met" if new["growth_bytes_per_eval"] <= TARGET_BYTES else "not met"
        print(f"{case}: schema 2 stores {old['bytes_per_eval'] / new['bytes_per_eval']:.1f}x less per "
              f"evaluation ({new['bytes_per_eval']:.0f} vs {old['bytes_per_eval']:.0f} bytes over {iterations} "
              f"iterations; each further evaluation adds {new['growth_bytes_per_eval']:.0f}: target <= "
              f"{TARGET_BYTES} bytes per evaluation of a long run, {verdict})")
    return 0
