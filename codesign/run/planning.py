"""Task planning: how an iteration's evaluations are cut into Dask tasks, and in what order.

Pure functions of the predicted costs (s, :mod:`codesign.run.cost_model`) and the number
of workers, so a plan can be checked without a cluster (tests/optimize/test_scheduling.py)
and replayed (``codesign bench scaling``). The executors (:mod:`codesign.run.executors`)
submit what these plan:

- :func:`plan_tasks`: evaluations at least ``min_task_s`` long get a task each, shorter
  ones share balanced tasks (LPT), longest task first;
- :func:`plan_iteration`: a synchronous iteration's tasks on W workers, sharing only where
  one task per evaluation would cost more than it risks;
- :func:`stream_priority`: the Dask priority of a pipelined evaluation (older iterations
  first, then longer predicted cost); TASKS_PER_WORKER and TASK_OVERHEAD_S size the
  pipelined stream's tasks (:class:`codesign.run.executors.DaskStream`).
"""

from __future__ import annotations

import heapq
from typing import NamedTuple, Sequence


class Task(NamedTuple):
    """Candidates evaluated in one task: their positions in the iteration's candidate
    list, and the task's predicted cost (s)."""

    indices: tuple[int, ...]
    cost_s: float


# A task holds at least this much predicted work (s): each task costs the scheduler and a
# worker ~1-4 ms of round trip on the 2-core reference machine (`codesign bench scaling`:
# a task waited 190 ms for its start at 64 workers and 2000 one-evaluation tasks, the
# scheduler sharing 2 loaded cores with the workers).
MIN_TASK_S = 0.01


def plan_tasks(costs: Sequence[float], min_task_s: float = MIN_TASK_S) -> list[Task]:
    """Cut evaluations of predicted ``costs`` (s) into tasks, the longest task first.

    An evaluation predicted to take at least ``min_task_s`` gets a task of its own, so
    that a worker never waits behind a misprediction in its own task; the shorter ones
    share B = (their sum) / min_task_s tasks (at least 1, at most one each), balanced by
    LPT (the evaluations longest first, each into the task with the least predicted
    work), so that no task costs the scheduler more than its work. The workers pull the
    tasks in the order returned, longest first (list scheduling: within 4/3 of the best
    assignment for exact predictions, Graham 1969). Ties are broken by position: the plan
    is a pure function of its input."""
    n = len(costs)
    alone = [i for i in range(n) if costs[i] >= min_task_s]
    short = sorted((i for i in range(n) if costs[i] < min_task_s), key=lambda i: (-costs[i], i))
    tasks = [Task((i,), float(costs[i])) for i in alone]
    if short:
        bins = max(1, min(len(short), int(float(sum(costs[i] for i in short)) // min_task_s)))
        heap = [(0.0, 0, b) for b in range(bins)]       # (predicted work, evaluations, task)
        members: list[list[int]] = [[] for _ in range(bins)]
        for i in short:
            work, count, b = heapq.heappop(heap)            # equal work: the emptier task
            members[b].append(i)
            heapq.heappush(heap, (work + float(costs[i]), count + 1, b))
        tasks += [Task(tuple(sorted(m)), float(sum(costs[i] for i in m))) for m in members]
    return sorted(tasks, key=lambda t: (-t.cost_s, t.indices))


# The scheduler's cost of one task (s): starting 200 tasks submitted in one message took
# 150-190 ms at 64 workers on the 2-core reference machine (`codesign bench scaling`);
# a worker pays about as much per task (its records sent back, the next one started).
TASK_OVERHEAD_S = 0.001
PACK_ABOVE = 0.02
# Tasks per worker and iteration in a pipelined run (:class:`DaskStream`): enough that the
# oldest iteration's tasks keep every worker busy while the next is asked, few enough
# that their round trips stay a few per cent of the work.
TASKS_PER_WORKER = 4


def plan_iteration(costs: Sequence[float], workers: int) -> list[Task]:
    """The tasks of a synchronous iteration on ``workers`` workers: :func:`plan_tasks`,
    letting short evaluations share tasks where one task per evaluation (TASK_OVERHEAD_S
    each) would cost more than it risks. With W = ``workers`` and the iteration's
    predicted work per worker S = sum / W, shared tasks pay

    - where the scheduler could not start the tasks as fast as the workers finish them:
      n TASK_OVERHEAD_S > S (many short evaluations on many workers: the thesis-scale
      spec on 64 workers, 200 per iteration, most 1-3 ms), or
    - where the tasks would cost each worker more than PACK_ABOVE of its work,
      n TASK_OVERHEAD_S / W > PACK_ABOVE S, in an iteration bound by its work, S > 2 x
      the longest evaluation (the thesis-scale spec on 2 workers), where a short
      prediction that turns out long cannot stretch the iteration much.

    Not where the longest evaluations bound the iteration and the workers are busy while
    the scheduler starts the rest (the thesis-scale spec on 16 workers once some designs
    walk: two surprise-long evaluations in one shared task would cost more than the
    dispatch saves), nor for 40 long evaluations on 2 workers (the demo)."""
    if not costs:
        return []
    per_worker = float(sum(costs)) / max(1, workers)
    tasks_s = len(costs) * TASK_OVERHEAD_S
    pays = tasks_s > per_worker or (tasks_s / max(1, workers) > PACK_ABOVE * per_worker
                                     and per_worker > 2.0 * float(max(costs)))
    return plan_tasks(costs, MIN_TASK_S if pays else 0.0)


def stream_priority(iteration: int, cost_s: float) -> int:
    """Dask priority (higher first) of a pipelined evaluation: older iterations first,
    then the longer predicted cost (in 0.1 ms, capped at ~28 h)."""
    return -iteration * 10**9 + min(int(cost_s * 1e4), 10**9 - 1)
