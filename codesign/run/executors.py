"""Executors: evaluate a list of candidates, serially or on Dask, with the same signature.

``executor.evaluate(candidates) -> list[EvalRecord]`` returns the records in candidate
order whatever the number of workers and the order tasks finish in, so results never
depend on them. Evaluations are pure functions of (problem, parameters, seed, settings).
``submit(candidates) -> Pending`` and ``gather(pending)`` split it in two: the driver
submits iteration k+1 and writes iteration k while the workers evaluate.

- :class:`SerialExecutor`: in this process, one after the other (the reference).
- :class:`DaskExecutor`: cost-aware tasks. Each candidate's cost is predicted from its
  particle's previous evaluation (``wall_s``; the first iteration: equal costs);
  :func:`plan_tasks` gives each evaluation a task of its own unless tasks would hold
  less than MIN_TASK_S of predicted work (each task is a scheduler round trip): then
  fewer tasks of equal predicted work (LPT: longest first, each into the lightest task);
  the tasks are submitted longest first (Dask priorities). A :class:`WarmupPlugin` runs
  the problem's warm-up hook (numba compilation) once on every worker, including workers
  that join later; a worker that dies takes its tasks with it and the scheduler
  recomputes them on the others (the driver only waits).

:func:`make_executor` builds one from the spec's ``[execution]`` table: ``serial``,
``local`` (a ``LocalCluster`` with one single-threaded worker process per core by
default), ``scheduler`` (an existing ``dask scheduler`` at tcp://HOST:PORT), ``slurm`` /
``pbs`` (dask-jobqueue: ``jobs`` batch jobs of ``cores`` single-threaded workers each,
with ``memory``, ``walltime``; with ``lifetime`` workers retire before the walltime and
the adaptive cluster submits replacement jobs).
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import math
import os
import signal
import threading
from typing import NamedTuple, Protocol, Sequence

from codesign.errors import UserError
from codesign.run.evaluation import evaluate_batch, warmup
from codesign.objectives import Objective
from codesign.run.spec import ExecutionSpec
from codesign.types import Candidate, EvalRecord


class Executor(Protocol):
    n_workers: int

    def submit(self, candidates: Sequence[Candidate]) -> "Pending": ...

    def gather(self, pending: "Pending") -> list[EvalRecord]: ...

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]: ...

    def cancel(self, pending: "Pending") -> None: ...

    def close(self) -> None: ...


class SerialExecutor:
    """Evaluate in this process, in order."""

    n_workers = 1

    def __init__(self, problem: str, settings: dict, objectives: Sequence[Objective]):
        self.problem, self.settings, self.objectives = problem, dict(settings), tuple(objectives)
        warmup(problem, self.settings)

    def submit(self, candidates: Sequence[Candidate]) -> "Pending":
        """Nothing runs yet: :meth:`gather` evaluates (there are no workers to keep busy)."""
        return Pending(list(candidates), [], list(range(len(candidates))))

    def gather(self, pending: "Pending") -> list[EvalRecord]:
        return evaluate_batch(self.problem, pending.candidates, self.settings, self.objectives)

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]:
        return self.gather(self.submit(candidates))

    def cancel(self, pending: "Pending") -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


try:  # the plugin base class; distributed is a dependency, but keep imports cheap
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover
    _WorkerPlugin = object


class WarmupPlugin(_WorkerPlugin):
    """Runs the problem's warm-up hook once per worker process (compiled kernels)."""

    name = "codesign-warmup"

    def __init__(self, problem: str, settings: dict):
        self.problem, self.settings = problem, dict(settings)

    def setup(self, worker) -> None:
        try:
            warmup(self.problem, self.settings)
        except Exception as exc:  # evaluations will report the failure themselves
            logging.getLogger("codesign").warning("warm-up of %s failed: %s", self.problem, exc)


class DaskExecutor:
    """Evaluate on a Dask cluster through a ``distributed.Client``.

    Cost-aware: each candidate's cost is predicted from its particle's previous
    evaluation (``wall_s``; unknown in the first iteration: equal), the candidates are
    packed into balanced tasks by :func:`plan_tasks` and the tasks are submitted longest
    first. ``submit`` returns at once (the driver writes the previous iteration while the
    workers evaluate); ``gather`` returns the records in candidate order."""

    def __init__(self, problem: str, settings: dict, objectives: Sequence[Objective], client,
                 batch_size: int = 0, cluster=None, min_workers: int = 1, timeout_s: float = 120.0):
        self.problem, self.settings, self.objectives = problem, dict(settings), tuple(objectives)
        self.client, self.cluster, self.batch_size = client, cluster, int(batch_size)
        self._cost_s: dict[int, float] = {}     # particle -> wall time of its last evaluation, s
        try:
            client.wait_for_workers(min_workers, timeout=timeout_s)
        except TimeoutError:
            self.close()
            raise UserError(f"dask scheduler {client.scheduler.address}: no worker joined within "
                            f"{timeout_s:.0f} s; expected at least {min_workers}") from None
        client.register_plugin(WarmupPlugin(problem, self.settings))

    @property
    def n_workers(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def predicted_costs(self, candidates: Sequence[Candidate]) -> list[float]:
        """Seconds per candidate: its particle's last evaluation; a particle not yet
        evaluated: the mean of the known ones, or 1 s when none is known (the first
        iteration: one evaluation per task)."""
        known = [self._cost_s[c.particle] for c in candidates if c.particle in self._cost_s]
        default = sum(known) / len(known) if known else 1.0
        return [self._cost_s.get(c.particle, default) for c in candidates]

    def batches(self, candidates: Sequence[Candidate]) -> list[list[int]]:
        """The tasks of one iteration as positions in ``candidates``, longest predicted
        first: ``batch_size`` contiguous candidates each if set, else :func:`plan_tasks`
        on the predicted costs."""
        n = len(candidates)
        if self.batch_size:
            return [list(range(k, min(n, k + self.batch_size))) for k in range(0, n, self.batch_size)]
        return [list(task.indices) for task in plan_tasks(self.predicted_costs(candidates))]

    def submit(self, candidates: Sequence[Candidate]) -> "Pending":
        """Send one iteration's tasks to the cluster (returns at once)."""
        batches = self.batches(candidates)
        futures = [self.client.submit(evaluate_batch, self.problem, [candidates[i] for i in batch],
                                      self.settings, self.objectives, pure=False,
                                      priority=len(batches) - k)     # the longest task first
                   for k, batch in enumerate(batches)]
        return Pending(list(candidates), futures, [i for batch in batches for i in batch])

    def gather(self, pending: "Pending") -> list[EvalRecord]:
        """Wait for an iteration's tasks; the records in candidate order (by position,
        never by finishing order)."""
        try:
            gathered = self.client.gather(pending.handle)
        except KeyboardInterrupt:       # the driver stops: abandon the batch in flight quietly
            self.cancel(pending)
            raise
        records: list = [None] * len(pending.candidates)
        for i, record in zip(pending.order, (r for batch in gathered for r in batch), strict=True):
            records[i] = record
        self._cost_s.update((c.particle, r.wall_s) for c, r in zip(pending.candidates, records))
        return records

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]:
        return self.gather(self.submit(candidates))

    def cancel(self, pending: "Pending") -> None:
        """Cancel the tasks of an abandoned iteration. Its helper tasks on the client's
        event loop then end with errors nobody retrieves, which asyncio would log as
        tracebacks when they are collected: the process is stopping, so silence that logger."""
        logging.getLogger("asyncio").setLevel(logging.CRITICAL + 1)
        with contextlib.suppress(Exception):
            self.client.cancel(pending.handle)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Pending(NamedTuple):
    """One iteration submitted to an executor: its candidates, the executor's handle on
    the work (Dask futures, one per task; empty for the serial executor) and the
    candidates' positions in the order the tasks return their records."""

    candidates: list[Candidate]
    handle: list
    order: list[int]


class Task(NamedTuple):
    """Candidates evaluated in one task: their positions in the iteration's candidate
    list, and the task's predicted cost (s)."""

    indices: tuple[int, ...]
    cost_s: float


# A task holds at least this much predicted work (s): each task costs the scheduler and a
# worker ~1-2 ms of round trip (`codesign bench scaling`: 200 empty tasks on 64 workers
# take 0.2-0.4 s on the 2-core reference machine).
MIN_TASK_S = 0.01


def plan_tasks(costs: Sequence[float], min_task_s: float = MIN_TASK_S) -> list[Task]:
    """Cut evaluations of predicted ``costs`` (s) into tasks, the longest task first.

    As many tasks as there are evaluations -- one evaluation per task, so that a worker
    never waits behind a misprediction in its own task -- unless tasks would then hold
    less than ``min_task_s`` of predicted work on average: then B = sum / min_task_s
    tasks (at least 1), balanced by LPT (the evaluations longest first, each into the
    task with the least predicted work; an evaluation longer than a task's share stays
    alone). The workers pull the tasks in the order returned, longest first (list
    scheduling: within 4/3 of the best assignment for exact predictions, Graham 1969).
    Ties are broken by position: the plan is a pure function of its input."""
    n = len(costs)
    if n == 0:
        return []
    total = float(sum(costs))
    bins = n if min_task_s <= 0.0 else max(1, min(n, int(total // min_task_s)))
    heap = [(0.0, 0, b) for b in range(bins)]       # (predicted work, evaluations, task)
    members: list[list[int]] = [[] for _ in range(bins)]
    for i in sorted(range(n), key=lambda i: (-costs[i], i)):
        work, count, b = heapq.heappop(heap)            # equal work: the emptier task
        members[b].append(i)
        heapq.heappush(heap, (work + float(costs[i]), count + 1, b))
    tasks = [Task(tuple(sorted(m)), float(sum(costs[i] for i in m))) for m in members if m]
    return sorted(tasks, key=lambda t: (-t.cost_s, t.indices))


def make_executor(problem: str, settings: dict, objectives: Sequence[Objective],
                  execution: ExecutionSpec) -> SerialExecutor | DaskExecutor:
    """The executor the ``[execution]`` table asks for (see the module docstring)."""
    if execution.mode == "serial":
        return SerialExecutor(problem, settings, objectives)
    from distributed import Client

    if execution.mode == "scheduler":
        try:
            client = Client(execution.scheduler, timeout="15s")
        except (OSError, TimeoutError) as exc:
            raise UserError(f"--scheduler {execution.scheduler}: cannot connect ({exc}); "
                            f"expected a running `dask scheduler` at tcp://HOST:PORT") from None
        return DaskExecutor(problem, settings, objectives, client, execution.batch_size)
    if execution.mode == "local":
        return local_executor(problem, settings, objectives, execution.workers or os.cpu_count() or 1,
                              batch_size=execution.batch_size)
    cluster = jobqueue_cluster(execution)
    jobs = execution.cluster.jobs
    cluster.adapt(minimum_jobs=jobs, maximum_jobs=jobs)   # replaces jobs that reach their walltime
    return DaskExecutor(problem, settings, objectives, Client(cluster), execution.batch_size,
                        cluster=cluster, timeout_s=3600.0)


def local_executor(problem: str, settings: dict, objectives: Sequence[Objective], processes: int,
                   threads_per_worker: int = 1, batch_size: int = 0) -> DaskExecutor:
    """A :class:`DaskExecutor` on a new ``LocalCluster`` of ``processes`` worker processes
    with ``threads_per_worker`` threads each (runs use one: evaluations hold the GIL;
    ``codesign bench scaling`` uses more, its evaluations sleep)."""
    from distributed import Client, LocalCluster

    with _children_ignore_sigint():
        # no dashboard; the scheduler's small HTTP server on a free loopback port (its
        # default, 8787, warns on stderr when another cluster holds it); worker logs only
        # when critical: a failed evaluation is a record, and a worker losing its
        # scheduler at a Ctrl-C must not print over the driver's one line
        cluster = LocalCluster(n_workers=processes, threads_per_worker=threads_per_worker, processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL,
                               scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        return DaskExecutor(problem, settings, objectives, Client(cluster), batch_size,
                            cluster=cluster, min_workers=processes)


@contextlib.contextmanager
def _children_ignore_sigint():
    """Worker processes started in here ignore SIGINT (an ignored signal stays ignored
    across exec): Ctrl-C at a terminal reaches the whole process group, and only the
    driver should act on it -- it stops the run and closes the cluster, whose workers
    would otherwise each print a KeyboardInterrupt traceback. A SIGINT in these seconds
    is lost (press again)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def jobqueue_cluster(execution: ExecutionSpec):
    """A SLURM or PBS cluster of ``jobs`` jobs x ``cores`` single-threaded worker processes."""
    try:
        import dask_jobqueue
    except ImportError:
        raise UserError("--cluster: dask-jobqueue is not installed; expected `pip install "
                        "codesign[cluster]`") from None
    c = execution.cluster
    kwargs = dict(cores=c.cores, processes=c.cores, memory=c.memory, walltime=c.walltime)
    if c.queue:
        kwargs["queue"] = c.queue
    if c.account:
        kwargs["account"] = c.account
    if c.lifetime:
        kwargs["worker_extra_args"] = ["--lifetime", c.lifetime, "--lifetime-stagger", "2m"]
    kind = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[execution.mode]
    return kind(**kwargs)
