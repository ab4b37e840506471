"""`codesign bench runner`: Dask scheduling overhead and parallel efficiency vs the serial executor.

For evaluations of 10 ms and 200 ms, one optimizer iteration of P candidates is evaluated
by the serial executor (the peer: no scheduling at all), and by a LocalCluster with 1 and
with 2 single-threaded worker processes (the production path: batches, plugin, gather).

- overhead per evaluation = (wall time of an iteration - P t_eval / workers) / P, also
  as a percentage of t_eval; "vs serial" = (workers x wall - serial wall) / P / t_eval,
  the cost Dask adds over the serial executor measured in the same run (on a loaded
  machine even the serial executor misses its ideal time: sleeps and spins overshoot);
- parallel efficiency 1 -> 2 workers = T(1 worker) / (2 T(2 workers)).

Two kinds of evaluation: ``sleep`` (the evaluation sleeps: measures scheduling alone,
even on a loaded machine) and ``busy`` (the evaluation spins the CPU, like a simulation).
On a 2-core machine the busy case is the honest one for a compute-bound problem but is
pessimistic: the driver, the scheduler and anything else running (other users) compete
with the two workers for the two cores; the sleep case isolates what Dask itself costs.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from codesign.io import write_csv_atomic
from codesign.objectives import Objective
from codesign.optimize.mmpso import MMPSO
from codesign.problems import get_problem
from codesign.optimize.pso import PSOSettings
from codesign.optimize.schedule import Migration
from codesign.optimize.space import single_group_space
from codesign.run.executors import SerialExecutor, make_executor
from codesign.run.spec import ExecutionSpec

DESCRIPTION = "scheduling overhead per evaluation and 1->2 worker efficiency (Dask vs serial)"
PARTICLES = 16


def _candidates(iterations: int) -> list[list]:
    problem = get_problem("sphere")
    optimizer = MMPSO(single_group_space(problem.parameters), PSOSettings(PARTICLES, iterations),
                      Migration(), seed=0)
    return [optimizer.ask() for _ in range(iterations)]   # positions do not matter here


def _time(executor, batches) -> float:
    """Mean wall time per iteration (s), after one warm-up iteration."""
    executor.evaluate(batches[0])
    start = time.perf_counter()
    for batch in batches:
        executor.evaluate(batch)
    return (time.perf_counter() - start) / len(batches)


def measure(t_eval: float, kind: str, iterations: int) -> list[dict]:
    settings = get_problem("sphere").parse_settings({f"{kind}_s": t_eval})
    objectives = (Objective("f"),)
    batches = _candidates(iterations)
    rows = []
    timings = {}
    configs = [("serial", 1, None), ("dask", 1, ExecutionSpec(mode="local", workers=1)),
               ("dask", 2, ExecutionSpec(mode="local", workers=2))]
    for executor_name, workers, execution in configs:
        executor = (SerialExecutor("sphere", settings, objectives) if execution is None
                    else make_executor("sphere", settings, objectives, execution))
        with executor:
            wall = _time(executor, batches)
        timings[(executor_name, workers)] = wall
        ideal = PARTICLES * t_eval / workers
        overhead = (wall - ideal) / PARTICLES
        # the same, measured against the serial executor of this run (machine noise cancels)
        vs_serial = (wall * workers - timings[("serial", 1)]) / PARTICLES
        rows.append({"eval_ms": t_eval * 1e3, "kind": kind, "executor": executor_name, "workers": workers,
                     "iteration_s": wall, "overhead_ms_per_eval": overhead * 1e3,
                     "overhead_pct": 100.0 * overhead / t_eval,
                     "vs_serial_pct": 100.0 * vs_serial / t_eval, "efficiency_1_to_2": ""})
    efficiency = timings[("dask", 1)] / (2.0 * timings[("dask", 2)])
    rows[-1]["efficiency_1_to_2"] = efficiency
    return rows


def codesign_sized_space():
    """A space shaped like the co-design one (§5.4.1): pool 1 with 126 groups (10
    topologies x their actuator pairs; 8 morphology parameters shared per topology + 14
    control parameters per pair), pool 2 with 20 common parameters: 1864 parameters."""
    from codesign.types import Group, Parameter, Pool
    from codesign.optimize.space import Space
    params, groups = [], []
    for t in range(10):
        morphology = [f"t{t}_m{k}" for k in range(8)]
        params += [Parameter(n, 0.0, 1.0) for n in morphology]
        for a in range(13 if t < 9 else 9):
            control = [f"t{t}_a{a}_c{k}" for k in range(14)]
            params += [Parameter(n, 0.0, 1.0) for n in control]
            groups.append(Group(f"t{t}_a{a}", tuple(morphology + control)))
    common = [Parameter(f"c{k}", 0.0, 1.0) for k in range(20)]
    return Space(tuple(params + common), (Pool("topology", tuple(groups)),
                                          Pool("common", (Group("common", tuple(p.name for p in common)),))))


def driver_cost(iterations: int) -> dict:
    """Seconds per iteration of ask + tell and of the store write, 200 particles, co-design-sized."""
    import tempfile

    import numpy as np

    from codesign.optimize.schedule import thesis_migration
    from codesign.run.state_archive import state_to_bytes
    from codesign.run.store import SQLiteRunStore
    from codesign.types import EvalRecord

    space = codesign_sized_space()
    optimizer = MMPSO(space, PSOSettings(200, 800), thesis_migration(800), seed=1)
    rng = np.random.default_rng(0)
    optimizer_s = store_s = 0.0
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteRunStore(Path(folder) / "run.sqlite", create=True)
        run_id = store.create_run("bench", "", "", "", 800, space.describe())
        for it in range(iterations):
            t0 = time.perf_counter()
            candidates = optimizer.ask()
            records = [EvalRecord("ok", stage=int(rng.integers(3)), stage_value=float(rng.random()),
                                  metrics={f"m{k}": 1.0 for k in range(10)}) for _ in candidates]
            optimizer.tell(records)
            t1 = time.perf_counter()
            store.write_iteration(run_id, it, candidates, records, optimizer.best()[:2], optimizer.state())
            t2 = time.perf_counter()
            optimizer_s += t1 - t0
            store_s += t2 - t1
        store.close()
    return {"optimizer_s": optimizer_s / iterations, "store_s": store_s / iterations,
            "state_kb": len(state_to_bytes(optimizer.state())) / 1e3, "parameters": len(space.names)}


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    cost = driver_cost(5 if quick else 30)
    print(f"driver, co-design-sized space ({cost['parameters']} parameters, 126 subspaces, 200 particles): "
          f"ask+tell {cost['optimizer_s'] * 1e3:.1f} ms, store write {cost['store_s'] * 1e3:.1f} ms per "
          f"iteration; state {cost['state_kb']:.0f} kB")
    rows = []
    for t_eval, iterations in ((0.010, 4 if quick else 20), (0.200, 1 if quick else 3)):
        for kind in ("sleep", "busy"):
            rows += measure(t_eval, kind, iterations)
    out = Path(getattr(args, "out", "results/bench"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "runner.csv"
    write_csv_atomic(path, rows)
    print(f"{PARTICLES} evaluations per iteration, {os.cpu_count()} cores; wrote {path}")
    print(f"{'eval':>7} {'kind':>5} {'executor':>8} {'workers':>7} {'iter [s]':>9} "
          f"{'overhead/eval':>14} {'overhead':>9} {'vs serial':>9} {'eff 1->2':>9}")
    for r in rows:
        eff = f"{r['efficiency_1_to_2'] * 100:8.1f}%" if r["efficiency_1_to_2"] != "" else ""
        print(f"{r['eval_ms']:5.0f}ms {r['kind']:>5} {r['executor']:>8} {r['workers']:>7} "
              f"{r['iteration_s']:9.3f} {r['overhead_ms_per_eval']:11.2f} ms {r['overhead_pct']:8.1f}% {r['vs_serial_pct']:8.1f}% {eff:>9}")
    return 0
