"""Executors: evaluate a list of candidates, serially or on Dask, with the same signature.

``executor.evaluate(candidates) -> list[EvalRecord]`` returns the records in candidate
order whatever the number of workers and the order tasks finish in, so results never
depend on them. Evaluations are pure functions of (problem, parameters, seed, settings).

- :class:`SerialExecutor`: in this process, one after the other (the reference).
- :class:`DaskExecutor`: candidates are cut into contiguous batches, one task per batch:
  up to 4 tasks per worker thread and iteration (load balance when evaluation times vary),
  fewer when that would make tasks shorter than 0.25 s judged from the last iteration's
  evaluation times (each task costs a few ms of scheduling and a round trip); a :class:`WarmupPlugin` runs the problem's warm-up hook (numba compilation)
  once on every worker, including workers that join later; a worker that dies takes its
  tasks with it and the scheduler recomputes them on the others (the driver only waits).

:func:`make_executor` builds one from the spec's ``[execution]`` table: ``serial``,
``local`` (a ``LocalCluster`` with one single-threaded worker process per core by
default), ``scheduler`` (an existing ``dask scheduler`` at tcp://HOST:PORT), ``slurm`` /
``pbs`` (dask-jobqueue: ``jobs`` batch jobs of ``cores`` single-threaded workers each,
with ``memory``, ``walltime``; with ``lifetime`` workers retire before the walltime and
the adaptive cluster submits replacement jobs).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import threading
from typing import Protocol, Sequence

from codesign.errors import UserError
from codesign.run.evaluation import evaluate_batch, warmup
from codesign.objectives import Objective
from codesign.run.spec import ExecutionSpec
from codesign.types import Candidate, EvalRecord


class Executor(Protocol):
    n_workers: int

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]: ...

    def close(self) -> None: ...


class SerialExecutor:
    """Evaluate in this process, in order."""

    n_workers = 1

    def __init__(self, problem: str, settings: dict, objectives: Sequence[Objective]):
        self.problem, self.settings, self.objectives = problem, dict(settings), tuple(objectives)
        warmup(problem, self.settings)

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]:
        return evaluate_batch(self.problem, candidates, self.settings, self.objectives)

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
    """Evaluate on a Dask cluster through a ``distributed.Client``."""

    def __init__(self, problem: str, settings: dict, objectives: Sequence[Objective], client,
                 batch_size: int = 0, cluster=None, min_workers: int = 1, timeout_s: float = 120.0):
        self.problem, self.settings, self.objectives = problem, dict(settings), tuple(objectives)
        self.client, self.cluster, self.batch_size = client, cluster, int(batch_size)
        self._eval_s: float | None = None        # mean evaluation time of the last iteration
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

    def batches(self, candidates: Sequence[Candidate]) -> list[Sequence[Candidate]]:
        """Contiguous batches: ``batch_size`` if set, else adaptive (see tasks_per_worker)."""
        if self.batch_size:
            size = self.batch_size
        else:
            tasks = self.n_workers * tasks_per_worker(len(candidates), self.n_workers, self._eval_s)
            size = max(1, math.ceil(len(candidates) / tasks))
        return [candidates[k:k + size] for k in range(0, len(candidates), size)]

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]:
        futures = [self.client.submit(evaluate_batch, self.problem, list(batch), self.settings,
                                      self.objectives, pure=False)
                   for batch in self.batches(candidates)]
        try:
            gathered = self.client.gather(futures)
        except KeyboardInterrupt:       # the driver stops: abandon the batch in flight quietly
            self._abandon(futures)
            raise
        records = [record for batch in gathered for record in batch]
        if records:
            self._eval_s = sum(r.wall_s for r in records) / len(records)
        return records

    def _abandon(self, futures) -> None:
        """Cancel the tasks of an interrupted gather. Its helper tasks on the client's event
        loop then end with errors nobody retrieves, which asyncio would log as tracebacks
        when they are collected: the process is stopping, so silence that logger."""
        logging.getLogger("asyncio").setLevel(logging.CRITICAL + 1)
        with contextlib.suppress(Exception):
            self.client.cancel(futures)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


TARGET_TASK_S = 0.25
MAX_TASKS_PER_WORKER = 4


def tasks_per_worker(n_candidates: int, n_workers: int, eval_s: float | None) -> int:
    """Tasks per worker and iteration: 4 (load balance) unless tasks would be shorter than
    TARGET_TASK_S, then fewer, down to 1 (one round trip per worker). Unknown cost: 4."""
    if eval_s is None:
        return MAX_TASKS_PER_WORKER
    work_per_worker = n_candidates * eval_s / max(n_workers, 1)
    return int(min(MAX_TASKS_PER_WORKER, max(1, work_per_worker // TARGET_TASK_S)))


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
