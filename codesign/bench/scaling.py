"""`codesign bench scaling`: how busy the real driver, executor and store keep 1-64 workers.

A cost profile (the wall time of every evaluation of a recorded run, by iteration and
particle: a bundled one, ``--profile``, or a stored run, ``--run``) is replayed through
``codesign optimize``'s own path -- the driver, a ``LocalCluster`` executor and the SQLite
store -- with the ``replay`` problem (:mod:`codesign.problems.replay`), whose evaluation
of (iteration, particle) sleeps for the recorded cost. Sleeping needs no cores, so 64
workers run on a 2-core machine (as threads of at most ``MAX_PROCESSES`` worker
processes, ``--processes`` to change: the evaluations sleep with the GIL released).

Per worker count W it prints the achieved and the ideal time per iteration and their
ratio, the efficiency. ideal = max(sum of the iteration's costs / W, its slowest
evaluation): the shortest any schedule of that synchronous iteration could take (the
peer, computed from the same costs). Beside it, *planned*: the executor's own tasks
(:func:`~codesign.run.planning.plan_iteration` on the costs it predicts from each
particle's previous one) listed on W workers with no scheduling, transfer or driver cost
-- what the plan could achieve; ideal / planned is the part of the efficiency lost to
mispredicted costs, planned / achieved the part lost to overheads. *known*: the same
list schedule had every cost been known in advance (one evaluation per task, longest
first): ideal / known is the most a perfect cost prediction could reach, planned / known
what the executor's prediction loses. The first replayed iteration starts the cluster's
tasks and has no cost predictions; it is not counted.

``--pipeline``: the same with ``[optimizer] pipeline = true`` (the pipelined MMPSO of
:mod:`codesign.optimize.pipeline`, no iteration barrier). Its ideal is that of the whole
replayed run, per iteration: max(sum of all costs / W, the critical path), the critical
path being the longest chain of evaluations the pipeline's rule makes wait for each other
((i, k) starts after (i, k-1) and all of iteration k-2: :func:`pipelined_critical_path`);
achieved is the time from the run's start (its executor up) to the last iteration stored,
every iteration counted. *planned*: the pipelined rule on W workers that take the ready
evaluation of the oldest iteration, longest predicted first, at no cost
(:func:`pipelined_makespan`); *known*: the same by the evaluations' own costs.

*busy*: how much of the counted wall time the W workers spent in evaluations (their own
``wall_s`` as stored, summed, over W x the counted wall time): what ``vmstat`` would show
on W cores were the evaluations computing. It differs from the efficiency where the ideal
is the slowest evaluation or the critical path rather than the work (busy below), and by
the sleeps' overshoot (~1.4 % of the work on the quiet 2-core machine; busy above). In
synchronous mode the next iteration starts during the store write that ends the first
counted one, so busy may count up to one write (a few ms per worker) too many.

Iterations replayed: ``--iterations N`` of the profile's (default 10, ``--quick`` 3), in
blocks of ``BLOCK`` consecutive iterations spread evenly over the profile (consecutive,
so each particle's previous cost predicts its next as in a run).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from codesign.errors import UserError

DESCRIPTION = "achieved vs ideal time per iteration on 1-64 workers (replayed evaluation costs)"
PROFILES = Path(__file__).with_name("profiles")
BUNDLED = ("codesign", "demo")          # profiles/<name>.json or <name>.json.gz
WORKERS = (2, 4, 8, 16, 32, 64)
QUICK_WORKERS = (2, 64)
ITERATIONS, QUICK_ITERATIONS = 10, 3
BLOCK = 5
MAX_PROCESSES = 4                       # worker processes; more workers are threads in them


class Row(NamedTuple):
    """One worker count's measurement (times per iteration, s)."""

    profile: str
    mode: str               # "sync" (the iteration barrier) or "pipeline"
    workers: int
    processes: int
    threads: int
    iterations: int         # iterations counted
    achieved_s: float
    ideal_s: float
    planned_s: float        # the executor's plan on W workers without overheads
    known_s: float          # the same had the costs been known in advance (a perfect prediction)
    efficiency: float       # ideal / achieved
    busy: float             # the evaluations' own wall time / (workers x the counted wall time)


def parse_workers(text: str | None, quick: bool) -> tuple[int, ...]:
    """``--workers 1,2,16,64`` -> (1, 2, 16, 64); one UserError line for anything else."""
    if text is None:
        return QUICK_WORKERS if quick else WORKERS
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise UserError(f"--workers: got {text!r}; expected a comma-separated list of worker counts "
                        f">= 1, like 1,2,16,64")
    return values


def profile_from_run(run: str | Path):
    """The cost profile of a stored run: its evaluations' wall times (whole iterations)."""
    from codesign.problems.replay import CostProfile
    from codesign.run.store import find_run_database, open_run

    path = find_run_database(run)
    with open_run(path, readonly=True) as store:
        evaluations = store.evaluations()
        n_metrics = len(store.metrics())
        name = str(store.runs()["name"].iloc[-1]) if len(store.runs()) else path.parent.name
    if evaluations.empty:
        raise UserError(f"{path}: holds no evaluations; expected a run with at least one iteration")
    if evaluations["run_id"].nunique() > 1:
        evaluations = evaluations[evaluations["run_id"] == evaluations["run_id"].max()]
    costs = evaluations.pivot(index="iteration", columns="particle", values="wall_s").to_numpy(float)
    if np.isnan(costs).any():
        raise UserError(f"{path}: evaluations missing for some (iteration, particle); expected whole "
                        f"iterations")
    provenance = f"run {name!r} ({path}): {costs.shape[0]} iterations x {costs.shape[1]} particles"
    return CostProfile(costs, provenance, max(2, round(n_metrics / len(evaluations))))


def load_source(profile: str | None, run: str | None) -> list[tuple[str, object]]:
    """(label, CostProfile) for each source asked for; default: the bundled profiles."""
    from codesign.problems.replay import read_profile

    if profile and run:
        raise UserError("--profile and --run: got both; expected one source of costs")
    if run:
        return [(Path(run).name or str(run), profile_from_run(run))]
    names = [profile] if profile else list(BUNDLED)
    out = []
    for name in names:
        path = bundled_profile(name) if name in BUNDLED else Path(name)
        if name not in BUNDLED and not path.is_file():
            raise UserError(f"--profile: {name!r} is neither a bundled profile nor a file; expected one "
                            f"of {', '.join(BUNDLED)} or the path of a cost profile")
        out.append((name if name in BUNDLED else path.stem, read_profile(path)))
    return out


def bundled_profile(name: str) -> Path:
    """The file of a bundled profile (``profiles/NAME.json``, or ``.json.gz`` if large)."""
    plain = PROFILES / f"{name}.json"
    return plain if plain.is_file() else PROFILES / f"{name}.json.gz"


def window(n_profile: int, n: int) -> list[int]:
    """``n`` of the profile's iterations: blocks of BLOCK consecutive ones spread evenly."""
    if n >= n_profile:
        return list(range(n_profile))
    blocks = max(1, -(-n // BLOCK))
    # block k starts at fraction (k + 1/2) / blocks of the profile (a single block: its middle)
    starts = [round((k + 0.5) / blocks * (n_profile - BLOCK)) for k in range(blocks)] if n_profile > BLOCK else [0]
    chosen: list[int] = []
    for start in starts:
        chosen += [i for i in range(int(start), int(start) + BLOCK) if i < n_profile and i not in chosen]
    chosen += [i for i in range(n_profile) if i not in chosen][:max(0, n - len(chosen))]  # blocks overlapped
    return sorted(chosen[:n])


def ideal_per_iteration(costs: np.ndarray, workers: int) -> np.ndarray:
    """max(sum of costs / W, slowest evaluation) of each iteration (row), s."""
    return np.maximum(costs.sum(axis=1) / workers, costs.max(axis=1))


def planned_per_iteration(costs: np.ndarray, workers: int) -> np.ndarray:
    """Makespan of each iteration after the first when the executor's plan for it (on the
    executor's predictions from each particle's previous cost:
    :func:`~codesign.run.cost_model.predicted_table`) is listed on ``workers`` workers
    that take the next task the moment they are free, at no cost."""
    from codesign.run.cost_model import predicted_table
    from codesign.run.planning import plan_iteration

    return np.asarray([_list_schedule([[float(actual[i]) for i in task.indices]
                                       for task in plan_iteration(list(predicted), workers)], workers)
                       for predicted, actual in zip(predicted_table(costs)[1:], costs[1:])])


def known_per_iteration(costs: np.ndarray, workers: int) -> np.ndarray:
    """Makespan of each iteration after the first if its costs were known in advance: one
    evaluation per task, longest first (LPT), on ``workers`` workers at no cost -- the
    plan of a perfect cost prediction, within Graham's 4/3 of the best schedule."""
    return np.asarray([_list_schedule([[float(c)] for c in sorted(row, reverse=True)], workers)
                       for row in costs[1:]])


def _list_schedule(tasks: list[list[float]], workers: int) -> float:
    """Makespan of tasks (each a list of evaluation costs, s) taken in the order given by
    ``workers`` workers the moment they are free."""
    import heapq

    free = [0.0] * workers
    for task in tasks:
        heapq.heappush(free, heapq.heappop(free) + sum(task))
    return max(free)


def pipelined_critical_path(costs: np.ndarray) -> float:
    """The longest chain of a pipelined run (s): evaluation (i, k) can start once (i, k-1)
    and every evaluation of iteration k-2 are done, so its earliest finish is
    F[k, i] = costs[k, i] + max(F[k-1, i], max_j F[k-2, j])."""
    n = costs.shape[1]
    before, last = np.zeros(n), np.zeros(n)         # F of iterations k-2 and k-1
    for row in costs:
        before, last = last, row + np.maximum(last, before.max())
    return float(last.max())


def pipelined_makespan(costs: np.ndarray, workers: int, known: bool = False) -> float:
    """The makespan of a pipelined run listed on ``workers`` workers at no cost: a free
    worker takes the ready evaluation of the oldest iteration, longest predicted first
    (the executor's prediction from its particle's previous cost,
    :func:`~codesign.run.cost_model.predicted_table`; 1 s for the first iteration), as
    the executor's priorities ask (:func:`codesign.run.planning.stream_priority`);
    ``known``: longest first by the evaluations' own costs (a perfect prediction)."""
    import heapq

    n_it, n = costs.shape
    if known:
        predicted = costs
    else:
        from codesign.run.cost_model import predicted_table

        predicted = predicted_table(costs)                      # (k, i) predicted from (k-1, i)
        predicted[0] = 1.0
    done = np.zeros((n_it, n), dtype=bool)
    ready = [(0, -float(predicted[0, i]), i) for i in range(n)]
    heapq.heapify(ready)
    running: list[tuple[float, int, int]] = []
    now, complete = 0.0, 0                 # complete: iterations with every evaluation done
    while ready or running:
        while ready and len(running) < workers:
            k, _, i = heapq.heappop(ready)
            heapq.heappush(running, (now + float(costs[k, i]), k, i))
        now, k, i = heapq.heappop(running)
        done[k, i] = True
        if k + 1 < n_it and k <= complete:          # the move of (i, k) needs iteration k-1 complete
            heapq.heappush(ready, (k + 1, -float(predicted[k + 1, i]), i))
        while complete < n_it and done[complete].all():
            complete += 1
            k2 = complete                              # moves of iteration `complete` now allowed
            for j in np.flatnonzero(done[k2] if k2 < n_it else []):
                if k2 + 1 < n_it:
                    heapq.heappush(ready, (k2 + 1, -float(predicted[k2 + 1, j]), int(j)))
    return now


def _spec_text(profile_path: Path, particles: int, iterations: int, pipeline: bool = False) -> str:
    return (f'name = "scaling"\nseed = 1\n[problem]\nname = "replay"\n[optimizer]\nalgorithm = "mmpso"\n'
            f"particles = {particles}\niterations = {iterations}\npipeline = {str(pipeline).lower()}\n"
            f"[optimizer.migration]\n"
            f"exploration = 0.05\nlocal = 0.02\nglobal = 0.02\n"
            f"[evaluation]\nprofile = {json.dumps(str(profile_path))}\n")


def measure(label: str, profile, workers: int, iterations: list[int], folder: Path,
            pipeline: bool = False, max_processes: int = MAX_PROCESSES) -> Row:
    """Replay ``iterations`` of ``profile`` on ``workers`` workers (threads of at most
    ``max_processes`` worker processes); one Row."""
    from codesign.problems.replay import CostProfile, write_profile
    from codesign.run.driver import check_run, start_run
    from codesign.run.executors import local_executor
    from codesign.run.spec import parse_spec

    costs = profile.costs[iterations]
    path = folder / f"{label}-{workers}.json"
    write_profile(path, CostProfile(costs, profile.provenance, profile.metrics))
    spec = parse_spec(_spec_text(path, profile.particles, len(iterations), pipeline),
                      source=f"bench scaling {label}")
    problem, settings = check_run(spec)
    processes = max(d for d in range(1, max_processes + 1) if workers % d == 0)
    threads = workers // processes
    stamps: list[float] = []
    mode = "pipeline" if pipeline else "sync"
    with local_executor("replay", settings, problem.objectives, processes, threads) as executor:
        started = time.perf_counter()
        start_run(spec, results=folder, name=f"{label}-{mode}-{workers}", progress=False, executor=executor,
                  on_iteration=lambda k: stamps.append(time.perf_counter()))
    wall = profile_from_run(folder / f"{label}-{mode}-{workers}").costs      # (iterations, particles) s
    if pipeline:
        counted = len(stamps)
        achieved = (stamps[-1] - started) / counted
        ideal = max(costs.sum() / workers, pipelined_critical_path(costs)) / counted
        planned = pipelined_makespan(costs, workers) / counted
        known = pipelined_makespan(costs, workers, known=True) / counted
    else:
        counted = len(stamps) - 1
        achieved = (stamps[-1] - stamps[0]) / counted
        ideal = float(ideal_per_iteration(costs[1:], workers).mean())
        planned = float(planned_per_iteration(costs, workers).mean())
        known = float(known_per_iteration(costs, workers).mean())
    busy = float(wall[-counted:].sum()) / (workers * achieved * counted)
    return Row(label, mode, workers, processes, threads, counted, achieved, ideal, planned, known,
               ideal / achieved, busy)


class Options(NamedTuple):
    """``codesign bench scaling``'s options, checked."""

    workers: tuple[int, ...]
    iterations: int
    sources: list                   # (label, CostProfile)
    max_processes: int
    pipeline: bool
    as_json: bool


def check_options(args: argparse.Namespace) -> Options:
    """The options, or one UserError line for the first bad one (before anything is printed)."""
    quick = bool(getattr(args, "quick", False))
    workers = parse_workers(getattr(args, "workers", None), quick)
    n = getattr(args, "iterations", None) or (QUICK_ITERATIONS if quick else ITERATIONS)
    if n < 2:
        raise UserError(f"--iterations: got {n}; expected at least 2 (the first is not counted)")
    max_processes = MAX_PROCESSES if getattr(args, "processes", None) is None else args.processes
    if max_processes < 1:
        raise UserError(f"--processes: got {max_processes}; expected at least 1 worker process")
    sources = load_source(getattr(args, "profile", None), getattr(args, "run", None))
    return Options(workers, n, sources, max_processes, bool(getattr(args, "pipeline", False)),
                   bool(getattr(args, "json", False)))


def run(args: argparse.Namespace, options: Options | None = None) -> int:
    """Measure and print (``options``: :func:`check_options`'s, when already checked)."""
    from codesign.io import write_csv_atomic

    workers, n, sources, max_processes, pipeline, as_json = options or check_options(args)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="codesign-scaling-") as tmp:
        for label, profile in sources:
            chosen = window(profile.iterations, n)
            if not as_json:
                print(f"{label}{' (pipelined MMPSO)' if pipeline else ''}: {profile.particles} particles, "
                      f"iterations {_ranges(chosen)} of {profile.iterations} ({profile.provenance})")
            for w in workers:
                rows.append(measure(label, profile, w, chosen, Path(tmp), pipeline, max_processes))
                if not as_json:
                    _print_row(rows[-1], header=len(rows) == 1 or rows[-2].profile != label)
    out = Path(getattr(args, "out", "results/bench"))
    out.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(out / "scaling.csv", [r._asdict() for r in rows])
    if as_json:
        print(json.dumps({"cores": os.cpu_count(), "rows": [r._asdict() for r in rows]}, indent=1))
    else:
        print("efficiency = ideal / achieved (ideal: the shortest any schedule could take); busy = the "
              "workers' time in evaluations / their time; ideal/planned = what the executor's cost "
              "predictions leave at no overhead; ideal/known = the same with every cost known "
              "(docs/performance.md)")
        print(f"{os.cpu_count()} cores; wrote {out / 'scaling.csv'}")
    return 0


def _ranges(chosen: list[int]) -> str:
    parts, start = [], chosen[0]
    for a, b in zip(chosen, chosen[1:] + [None]):
        if b != a + 1:
            parts.append(f"{start}-{a}" if a > start else f"{a}")
            start = b
    return ", ".join(parts)


def _print_row(row: Row, header: bool) -> None:
    if header:
        print(f"{'workers':>7} {'procs x threads':>15} {'achieved [s/it]':>15} {'ideal [s/it]':>12} "
              f"{'efficiency':>10} {'busy':>6} {'planned [s/it]':>14} {'ideal/planned':>13} {'ideal/known':>11}")
    print(f"{row.workers:7d} {f'{row.processes} x {row.threads}':>15} {row.achieved_s:15.3f} "
          f"{row.ideal_s:12.3f} {100 * row.efficiency:9.1f}% {100 * row.busy:5.1f}% {row.planned_s:14.3f} "
          f"{100 * row.ideal_s / row.planned_s:12.1f}% {100 * row.ideal_s / row.known_s:10.1f}%")
