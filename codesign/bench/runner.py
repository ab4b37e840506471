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
import csv
import os
import time
from pathlib import Path

from codesign.optimize.fitness import Objective
from codesign.optimize.mmpso import MMPSO
from codesign.optimize.problems import get_problem
from codesign.optimize.pso import PSOSettings
from codesign.optimize.schedule import Migration
from codesign.optimize.space import single_group_space
from codesign.runner import SerialExecutor, make_executor
from codesign.spec import ExecutionSpec

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
    settings = {f"{kind}_s": t_eval}
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


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    rows = []
    for t_eval, iterations in ((0.010, 4 if quick else 20), (0.200, 1 if quick else 3)):
        for kind in ("sleep", "busy"):
            rows += measure(t_eval, kind, iterations)
    out = Path(getattr(args, "out", "results/bench"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "runner.csv"
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)
    print(f"{PARTICLES} evaluations per iteration, {os.cpu_count()} cores; wrote {path}")
    print(f"{'eval':>7} {'kind':>5} {'executor':>8} {'workers':>7} {'iter [s]':>9} "
          f"{'overhead/eval':>14} {'overhead':>9} {'vs serial':>9} {'eff 1->2':>9}")
    for r in rows:
        eff = f"{r['efficiency_1_to_2'] * 100:8.1f}%" if r["efficiency_1_to_2"] != "" else ""
        print(f"{r['eval_ms']:5.0f}ms {r['kind']:>5} {r['executor']:>8} {r['workers']:>7} "
              f"{r['iteration_s']:9.3f} {r['overhead_ms_per_eval']:11.2f} ms {r['overhead_pct']:8.1f}% {r['vs_serial_pct']:8.1f}% {eff:>9}")
    return 0
