"""Executors: evaluate a list of candidates, serially or on Dask, with the same signature.

``executor.evaluate(candidates) -> list[EvalRecord]`` returns the records in candidate
order whatever the number of workers and the order tasks finish in, so results never
depend on them. Evaluations are pure functions of (problem, parameters, seed, settings).
``submit(candidates) -> Pending`` and ``gather(pending)`` split it in two: the driver
submits iteration k+1 and writes iteration k while the workers evaluate.
``executor.stream()`` is the pipelined driver's side (:class:`Stream`): candidates added
at any time, (candidate, record) pairs back as they finish.

- :class:`SerialExecutor`: in this process, one after the other (the reference).
- :class:`DaskExecutor`: cost-aware tasks. Each candidate's cost is predicted from its
  particle's previous evaluation (``wall_s``, through :mod:`codesign.run.cost_model`;
  the first iteration: equal costs);
  :func:`~codesign.run.planning.plan_iteration` gives each evaluation a task of its own, except that where
  one task per evaluation would cost more than it risks (the scheduler could not start
  them as fast as the workers finish them, or they would cost the workers more than 2 %
  of a work-bound iteration), evaluations shorter than MIN_TASK_S share tasks of about
  MIN_TASK_S (LPT: longest first, each into the lightest task); an iteration's tasks go to the scheduler
  in one message, longest first (it starts them in that order), and their records are
  fetched as each task finishes, so that the last one's is all that remains to fetch
  when the iteration's work is done. A :class:`WarmupPlugin` runs
  the problem's warm-up hook (numba compilation) once on every worker, including workers
  that join later; a worker that dies takes its tasks with it and the scheduler
  recomputes them on the others (the driver only waits).

:func:`make_executor` builds one from the spec's ``[execution]`` table: ``serial``,
``local`` (a ``LocalCluster`` with one single-threaded worker process per core by
default), ``scheduler`` (an existing ``dask scheduler`` at tcp://HOST:PORT), ``slurm`` /
``pbs`` (dask-jobqueue: ``jobs`` batch jobs of ``cores`` single-threaded workers each,
with ``memory``, ``walltime``; a job that ends (its walltime, or workers retiring after
``lifetime``) is replaced by the adaptive cluster; the job scripts' logs go to the run's
``jobs/`` folder). The task plans are :mod:`codesign.run.planning`'s, the batch clusters
:mod:`codesign.run.clusters`'.

Faults of the cluster itself (docs/optimization.md, "When the cluster fails"):

- no worker connected for ``no_worker_warning_s`` (default 60 s; at the start of a run
  on a scheduler or batch cluster, or after every worker died): one warning line on
  stderr, then the driver keeps waiting -- workers may still come (a queued batch job,
  a restarted node), and Ctrl-C stops the run resumably at any time;
- the scheduler lost: :class:`ClusterLost` (the driver stops the run resumably, exit 75).

Local and batch clusters serve the Dask dashboard on a free port (``dashboard = false``
or ``--no-dashboard``: none); :func:`make_executor` prints its address in one line.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple, Protocol, Sequence

from codesign.errors import ClusterLost, UserError
from codesign.run.clusters import check_batch_system, children_ignore_sigint, jobqueue_cluster
from codesign.run.cost_model import CostPredictor
from codesign.run.evaluation import evaluate_batch, warmup
from codesign.run.planning import (MIN_TASK_S, TASK_OVERHEAD_S, TASKS_PER_WORKER, plan_iteration, plan_tasks,
                                   stream_priority)
from codesign.objectives import Objective
from codesign.run.spec import ExecutionSpec
from codesign.types import Candidate, EvalRecord


class Executor(Protocol):
    n_workers: int

    def submit(self, candidates: Sequence[Candidate]) -> "Pending": ...

    def gather(self, pending: "Pending") -> list[EvalRecord]: ...

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]: ...

    def cancel(self, pending: "Pending") -> None: ...

    def stream(self) -> "Stream": ...

    def close(self) -> None: ...


class Stream(Protocol):
    """Evaluations whose results come back as they finish (the pipelined driver's side of an
    executor): ``add`` hands candidates to the workers, ``next`` waits for at least one
    to finish and returns every (candidate, record) finished by then, in no fixed order."""

    def add(self, candidates: Sequence[Candidate]) -> None: ...

    def next(self) -> list[tuple[Candidate, EvalRecord]]: ...

    def cancel(self) -> None: ...


class SerialStream:
    """Evaluates in this process, one candidate per ``next``, in the order added."""

    def __init__(self, executor: "SerialExecutor"):
        self.executor, self.queue = executor, collections.deque()

    def add(self, candidates: Sequence[Candidate]) -> None:
        self.queue.extend(candidates)

    def next(self) -> list[tuple[Candidate, EvalRecord]]:
        candidate = self.queue.popleft()
        return [(candidate, self.executor.evaluate([candidate])[0])]

    def cancel(self) -> None:
        self.queue.clear()


class SerialExecutor:
    """Evaluate in this process, in order."""

    n_workers = 1

    def __init__(self, problem: str, settings: Any, objectives: Sequence[Objective]):
        self.problem, self.settings, self.objectives = problem, settings, tuple(objectives)
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

    def stream(self) -> SerialStream:
        return SerialStream(self)

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

    def __init__(self, problem: str, settings: Any):
        self.problem, self.settings = problem, settings

    def setup(self, worker) -> None:
        try:
            warmup(self.problem, self.settings)
        except Exception as exc:  # evaluations will report the failure themselves
            logging.getLogger("codesign").warning("warm-up of %s failed: %s", self.problem, exc)


class RecoveredGatherFilter(logging.Filter):
    """Drops the scheduler's "Couldn't gather keys" error (logged where the scheduler runs:
    the driver's process for local and batch clusters). It means a finished task's worker
    went away (a batch job at its walltime, a killed worker) before the client fetched its
    records; the scheduler recomputes the task and the client fetches it then, so the run
    loses nothing, and the line would print over the driver's progress bar."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Couldn't gather keys")


class DaskExecutor:
    """Evaluate on a Dask cluster through a ``distributed.Client``.

    Cost-aware: each candidate's cost is predicted from its particle's previous
    evaluation (``wall_s``, :meth:`predicted_costs`; unknown in the first iteration:
    equal), the candidates are packed into balanced tasks by :func:`plan_iteration` and
    the tasks are submitted in one message, longest first. ``submit`` returns at once
    (the driver writes the previous iteration while the workers evaluate); the records
    are fetched as the tasks finish and ``gather`` returns them in candidate order.

    ``timeout_s``: the start waits that long for ``min_workers`` (UserError after it; a
    local cluster's own workers); None: it waits for one worker as long as it takes,
    with the warning line of ``no_worker_warning_s`` (module docstring)."""

    POLL_S = 0.5       # s between checks of the cluster while waiting

    def __init__(self, problem: str, settings: Any, objectives: Sequence[Objective], client,
                 batch_size: int = 0, cluster=None, min_workers: int = 1,
                 timeout_s: float | None = 120.0, no_worker_warning_s: float = 60.0):
        self.problem, self.settings, self.objectives = problem, settings, tuple(objectives)
        self.client, self.cluster, self.batch_size = client, cluster, int(batch_size)
        self.address = client.scheduler.address
        # the client's own error logs (a lost scheduler, its reconnection attempts) would
        # print tracebacks over the driver's lines; its failures reach the driver as
        # exceptions (:meth:`_lost_or_raise`)
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
        # and tornado's "Exception in callback" for a client future whose stream closed with
        # the scheduler, which can come before the driver hears of the loss (a second line)
        logging.getLogger("tornado.application").setLevel(logging.CRITICAL)
        # and the comms' "Batched Comm Closed" traceback of a worker the cluster ended (a
        # SLURM job at its walltime): the loss reaches the driver as a lost worker
        logging.getLogger("distributed.batched").setLevel(logging.CRITICAL)
        scheduler_log = logging.getLogger("distributed.scheduler")
        if not any(isinstance(f, RecoveredGatherFilter) for f in scheduler_log.filters):
            scheduler_log.addFilter(RecoveredGatherFilter())
        self.no_worker_warning_s = float(no_worker_warning_s)
        self._cost_s: dict[int, float] = {}     # particle -> wall time of its last evaluation, s
        self._predictor = CostPredictor()       # next cost given the last (codesign.run.cost_model)
        try:
            if timeout_s is None:
                self._watch(lambda: self._workers() > 0)
            else:
                client.wait_for_workers(min_workers, timeout=timeout_s)
            self._register_warmup()
        except TimeoutError:
            self.close()
            raise UserError(f"dask scheduler {self.address}: no worker joined within "
                            f"{timeout_s:.0f} s; expected at least {min_workers}") from None
        except BaseException as exc:
            try:
                self._lost_or_raise(exc)
            finally:
                self.close()

    @property
    def n_workers(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def predicted_costs(self, candidates: Sequence[Candidate]) -> list[float]:
        """Seconds per candidate, from its particle's last evaluation
        (:class:`~codesign.run.cost_model.CostPredictor`: the mean next cost after costs
        like it, once learnt; the last cost itself before); a particle not yet evaluated:
        the mean of the others' predictions, or 1 s when none is known (the first
        iteration: one evaluation per task)."""
        known = {c.particle: self._predictor.predict(self._cost_s[c.particle])
                 for c in candidates if c.particle in self._cost_s}
        default = sum(known.values()) / len(known) if known else 1.0
        return [known.get(c.particle, default) for c in candidates]

    def observe(self, evaluated: Sequence[tuple[Candidate, EvalRecord]]) -> None:
        """Learn from finished evaluations: each particle's last cost, and the
        predictor's transitions from its previous one."""
        for candidate, record in evaluated:
            previous = self._cost_s.get(candidate.particle)
            if previous is not None:
                self._predictor.observe(previous, record.wall_s)
            self._cost_s[candidate.particle] = record.wall_s

    def batches(self, candidates: Sequence[Candidate]) -> list[list[int]]:
        """The tasks of one iteration as positions in ``candidates``, longest predicted
        first: ``batch_size`` contiguous candidates each if set, else :func:`plan_iteration`
        on the predicted costs and the workers connected now."""
        n = len(candidates)
        if self.batch_size:
            return [list(range(k, min(n, k + self.batch_size))) for k in range(0, n, self.batch_size)]
        return [list(task.indices) for task in plan_iteration(self.predicted_costs(candidates), self.n_workers)]

    def submit(self, candidates: Sequence[Candidate]) -> "Pending":
        """Send one iteration's tasks to the cluster (returns at once)."""
        from distributed import as_completed

        batches = self.batches(candidates)
        try:
            futures = self._map([[candidates[i] for i in batch] for batch in batches])
        except BaseException as exc:
            self._lost_or_raise(exc)
        # the records are fetched as each task finishes, also while the driver writes
        tasks = DaskTasks(futures, as_completed(futures, with_results=True))
        return Pending(list(candidates), tasks, [i for batch in batches for i in batch])

    def _map(self, tasks: list[list[Candidate]], priority: int = 0) -> list:
        """Submit one task per candidate list in one message to the scheduler (``client.map``:
        one graph update, where a ``submit`` per task costs the scheduler one each); the
        scheduler starts tasks of equal ``priority`` in list order, so the first listed
        starts first."""
        n = len(tasks)
        return self.client.map(evaluate_batch, [self.problem] * n, tasks, [self.settings] * n,
                               [self.objectives] * n, pure=False, priority=priority)

    def gather(self, pending: "Pending") -> list[EvalRecord]:
        """Wait for an iteration's tasks; the records in candidate order (by position,
        never by finishing order)."""
        futures, finished = pending.handle
        results: dict = {}                  # future key -> the task's records
        try:
            try:
                while len(results) < len(futures):
                    self._watch(lambda: _has_ready(finished, self.POLL_S))
                    results.update((future.key, batch) for future, batch in _take_finished(finished))
            except KeyboardInterrupt:   # the driver stops: abandon the iteration in flight quietly
                self.cancel(pending)
                raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            self._lost_or_raise(exc)
        gathered = [results[future.key] for future in futures]
        records: list = [None] * len(pending.candidates)
        for i, record in zip(pending.order, (r for batch in gathered for r in batch), strict=True):
            records[i] = record
        self.observe(list(zip(pending.candidates, records)))
        return records

    def evaluate(self, candidates: Sequence[Candidate]) -> list[EvalRecord]:
        return self.gather(self.submit(candidates))

    def stream(self) -> "DaskStream":
        return DaskStream(self)

    def _workers(self) -> int:
        """Workers connected to the scheduler now (asks the scheduler)."""
        return len(self.client.nthreads())

    def _watch(self, done: Callable[[], bool]) -> None:
        """Return when ``done()`` (it may block up to POLL_S); meanwhile, when no worker has
        been connected for ``no_worker_warning_s``, print one warning line (again after
        workers came and went), and keep waiting."""
        empty_since, warned = None, False
        while not done():
            if self.client.status != "running":       # reconnecting: the scheduler is gone
                raise ConnectionError("the connection to the scheduler was lost")
            if self._workers():
                empty_since, warned = None, False
                continue
            now = time.monotonic()
            empty_since = now if empty_since is None else empty_since
            if not warned and now - empty_since >= self.no_worker_warning_s:
                print(f"warning: no dask worker connected to {self.address} for "
                      f"{self.no_worker_warning_s:g} s; still waiting (start one: dask worker "
                      f"{self.address}; Ctrl-C stops the run, `codesign resume` continues it)",
                      file=sys.stderr, flush=True)
                warned = True
            time.sleep(self.POLL_S)

    def _register_warmup(self) -> None:
        """Register the warm-up plugin. The scheduler keeps it for every worker that joins
        later, then sends it to the workers connected now; one that dies meanwhile fails
        that broadcast (a connection error): send it again while the scheduler lives."""
        for attempt in range(3):
            try:
                self.client.register_plugin(WarmupPlugin(self.problem, self.settings))
                return
            except OSError:
                if attempt == 2 or not self._scheduler_alive():
                    raise

    def _scheduler_alive(self) -> bool:
        """Whether the client is connected and the scheduler answers."""
        if self.client.status != "running":
            return False
        try:
            self.client.nthreads()
        except (OSError, asyncio.CancelledError):
            return False
        return self.client.status == "running"

    def _lost_or_raise(self, exc: BaseException):
        """Raise :class:`ClusterLost` when ``exc`` came from a lost scheduler (it does not
        answer; a worker dying mid-call raises connection errors too), else ``exc``
        itself. The client's reconnection attempts then end with errors its loggers would
        print as tracebacks over the driver's one line: the process is stopping, so they
        are silenced. A task whose workers died more often than the scheduler allows
        (Dask's KilledWorker: ``distributed.scheduler.allowed-failures``, 3) is a
        :class:`ClusterLost` too: the run stops resumably in one line."""
        from distributed import KilledWorker

        if isinstance(exc, KilledWorker):
            raise ClusterLost(f"the workers of one evaluation task died {exc.allowed_failures + 1} times "
                              f"on {self.address} (out of memory? killed nodes? raise dask's "
                              f"distributed.scheduler.allowed-failures for flaky workers)") from None
        if isinstance(exc, (KeyboardInterrupt, UserError)) or self._scheduler_alive():
            raise exc
        for name in ("distributed", "asyncio", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        raise ClusterLost(f"lost the dask scheduler {self.address} ({type(exc).__name__})") from None

    def cancel(self, pending: "Pending") -> None: ...

    def close(self) -> None:
        with contextlib.suppress(Exception, asyncio.CancelledError):   # a lost scheduler
            self.client.close(timeout=5)
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class DaskStream:
    """:class:`Stream` on a :class:`DaskExecutor`: candidates share tasks of about
    ``task_s`` predicted seconds -- the swarm's predicted work per iteration over
    TASKS_PER_WORKER x the workers, at least MIN_TASK_S and the workers x TASK_OVERHEAD_S
    (the scheduler starts about one task per TASK_OVERHEAD_S) -- so that a worker runs a few
    tasks per iteration and each task's round trip (scheduler, client, driver: a few
    ms, 10-20 on the loaded 2-core machine) is small beside its work; a candidate
    predicted to take ``task_s`` or more is a task of its own at once. Shorter ones are
    held until they add up to ``task_s``, or until fewer tasks are in flight than there
    are workers (nobody waits for them), then share tasks (:func:`plan_tasks`, per
    iteration). Tasks run the oldest iteration first, within
    it the longest predicted first (Dask priorities: a worker that frees up takes the next
    by priority, so a misprediction costs one task; the tasks of one iteration handed out
    together go in one message at the priority of their longest, in list order). Results
    are fetched in the client's event loop as the tasks finish (``as_completed``), not by
    one gather round trip per ``next``."""

    def __init__(self, executor: DaskExecutor):
        from distributed import as_completed

        self.executor = executor
        self.workers = executor.n_workers
        self.running: dict = {}             # future -> its candidates
        self.held: list[tuple[Candidate, float]] = []      # short candidates, predicted s
        self.finished = as_completed([], with_results=True)

    def add(self, candidates: Sequence[Candidate]) -> None:
        """Hand the candidates to the workers (short ones possibly held, class docstring)."""
        self.held += zip(candidates, self.executor.predicted_costs(candidates))
        task_s = self.task_s()
        short_s = sum(cost for _, cost in self.held if cost < task_s)
        flush = short_s >= task_s or len(self.running) < self.workers
        go = [(c, cost) for c, cost in self.held if flush or cost >= task_s]
        self.held = [] if flush else [(c, cost) for c, cost in self.held if cost < task_s]
        by_iteration: dict[int, list[tuple[Candidate, float]]] = {}
        for candidate, cost in go:
            by_iteration.setdefault(candidate.iteration, []).append((candidate, cost))
        ex = self.executor
        try:
            for iteration, group in sorted(by_iteration.items()):
                tasks = plan_tasks([cost for _, cost in group], task_s)
                batches = [[group[i][0] for i in task.indices] for task in tasks]
                # one message per iteration, its tasks longest first at the longest one's priority
                for future, batch in zip(ex._map(batches, stream_priority(iteration, tasks[0].cost_s)), batches):
                    self.running[future] = batch
                    self.finished.add(future)
        except BaseException as exc:
            ex._lost_or_raise(exc)

    def task_s(self) -> float:
        """Predicted seconds of work per task: the particles' last evaluations summed (one
        iteration's work) over TASKS_PER_WORKER tasks per worker; at least MIN_TASK_S, and at
        least as long as the scheduler takes to start one task on each worker (W x
        TASK_OVERHEAD_S: 64 ms at 64 workers, where shorter tasks outrun the scheduler)."""
        return max(MIN_TASK_S, self.workers * TASK_OVERHEAD_S,
                   sum(self.executor._cost_s.values()) / (TASKS_PER_WORKER * self.workers))

    def next(self) -> list[tuple[Candidate, EvalRecord]]:
        ex = self.executor
        if self.held and not self.running:
            self.add([])                    # nothing in flight: the held ones go now
        try:
            try:
                ex._watch(lambda: _has_ready(self.finished, ex.POLL_S))
                batch = _take_finished(self.finished)
            except KeyboardInterrupt:
                self.cancel()
                raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            ex._lost_or_raise(exc)
        out = [pair for future, records in batch for pair in zip(self.running.pop(future), records, strict=True)]
        ex.observe(out)
        return out

    def cancel(self) -> None:
        """Cancel the evaluations in flight (the run stops); nothing when the scheduler is gone."""
        if self.executor.client.status == "running":
            with contextlib.suppress(Exception, asyncio.CancelledError):
                self.executor.client.cancel(list(self.running))
        self.running.clear()
        self.held.clear()
        self.finished.clear()


def _has_ready(finished, timeout_s: float) -> bool:
    """Whether an ``as_completed`` holds a finished future, waiting up to ``timeout_s``
    for one (checked under its condition, so a notification is never missed)."""
    with finished.thread_condition:
        if not finished.has_ready():
            finished.thread_condition.wait(timeout_s)
    return finished.has_ready()


def _take_finished(finished) -> list[tuple]:
    """The (future, result) pairs an ``as_completed(..., with_results=True)`` holds now;
    raises a failed task's exception (its ``next_batch`` hands it back as a result)."""
    batch = finished.next_batch(block=False)
    for future, result in batch:
        if future.status == "error":
            raise result[1].with_traceback(result[2])
        if isinstance(result, BaseException):           # cancelled: the scheduler is gone
            raise result
    return batch


class DaskTasks(NamedTuple):
    """An iteration's tasks on Dask: their futures (in submission order) and the
    ``as_completed`` that fetches their records as they finish."""

    futures: list
    finished: object


class Pending(NamedTuple):
    """One iteration submitted to an executor: its candidates, the executor's handle on
    the work (:class:`DaskTasks`; empty for the serial executor) and the
    candidates' positions in the order the tasks return their records."""

    candidates: list[Candidate]
    handle: "DaskTasks | list"
    order: list[int]


def make_executor(problem: str, settings: Any, objectives: Sequence[Objective],
                  execution: ExecutionSpec, folder: Path | None = None,
                  show_dashboard: bool = True) -> SerialExecutor | DaskExecutor:
    """The executor the ``[execution]`` table asks for (see the module docstring).
    ``folder``: the run's folder (batch jobs log into its ``jobs/``); ``show_dashboard``:
    print the dashboard's address (one line on stderr) when the cluster serves one."""
    if execution.mode == "serial":
        return SerialExecutor(problem, settings, objectives)
    from distributed import Client

    waits = dict(no_worker_warning_s=execution.no_worker_warning_s)
    if execution.mode == "scheduler":
        try:
            client = Client(execution.scheduler, timeout="15s")
        except (OSError, TimeoutError) as exc:
            raise UserError(f"--scheduler {execution.scheduler}: cannot connect ({exc}); "
                            f"expected a running `dask scheduler` at tcp://HOST:PORT") from None
        executor = DaskExecutor(problem, settings, objectives, client, execution.batch_size,
                                timeout_s=None, **waits)
    elif execution.mode == "local":
        executor = local_executor(problem, settings, objectives, execution.workers or os.cpu_count() or 1,
                                  batch_size=execution.batch_size, dashboard=execution.dashboard, **waits)
    else:
        cluster = jobqueue_cluster(execution, folder)
        check_batch_system(cluster, execution.mode)
        jobs = execution.cluster.jobs
        cluster.adapt(minimum_jobs=jobs, maximum_jobs=jobs)   # replaces jobs that end (walltime)
        executor = DaskExecutor(problem, settings, objectives, Client(cluster), execution.batch_size,
                                cluster=cluster, timeout_s=None, **waits)
    link = executor.client.dashboard_link if execution.dashboard else None
    if link and show_dashboard:
        print(f"dashboard: {link}", file=sys.stderr, flush=True)
    return executor


def local_executor(problem: str, settings: Any, objectives: Sequence[Objective], processes: int,
                   threads_per_worker: int = 1, batch_size: int = 0, dashboard: bool = False,
                   no_worker_warning_s: float = 60.0) -> DaskExecutor:
    """A :class:`DaskExecutor` on a new ``LocalCluster`` of ``processes`` worker processes
    with ``threads_per_worker`` threads each (runs use one: evaluations hold the GIL;
    ``codesign bench scaling`` uses more, its evaluations sleep); ``dashboard``: serve the
    Dask dashboard on a free loopback port (two runs never clash)."""
    from distributed import Client, LocalCluster

    executor = None
    try:
        with children_ignore_sigint():
            # without a dashboard the scheduler's small HTTP server still takes a free port
            # (its default 8787 warns when taken); worker logs only when critical: a failed
            # evaluation is a record, and a worker losing its scheduler at a Ctrl-C must not
            # print over the driver's one line
            cluster = LocalCluster(n_workers=processes, threads_per_worker=threads_per_worker,
                                   processes=True, dashboard_address="127.0.0.1:0" if dashboard else None,
                                   silence_logs=logging.CRITICAL,
                                   scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
            executor = DaskExecutor(problem, settings, objectives, Client(cluster), batch_size,
                                    cluster=cluster, min_workers=processes,
                                    no_worker_warning_s=no_worker_warning_s)
    except KeyboardInterrupt:        # a Ctrl-C held back while the cluster started: close it again
        if executor is not None:
            executor.close()
        raise
    return executor
