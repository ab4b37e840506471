"""The driver: ask the optimizer, evaluate on an executor, tell, store — one iteration at a time.

``start_run`` creates ``results/<name>/run.sqlite`` and runs; ``resume_run`` continues a
stored run from the state of its last complete iteration. Each iteration is written in one
transaction after ``tell``, so a driver killed at any moment loses at most the iteration
in flight, and ``resume`` reproduces it exactly (same optimizer and RNG state, same
evaluation seeds): the resumed database equals an uninterrupted run's, except the wall
times, worker names and timestamps.
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from codesign.errors import ClusterLost, Stopped, UserError, nearest
from codesign.objectives import describe_fitness
from codesign.optimize.mmpso import MMPSO
from codesign.optimize.pipeline import PipelinedMMPSO
from codesign.problems import get_problem, problem_names
from codesign.run.clusters import JOBS_FOLDER
from codesign.run.executors import Executor, make_executor
from codesign.run.spec import ExecutionSpec, Spec, build_space, check_run_name, parse_spec
from codesign.run.stored import inline_run_reference
from codesign.run.lock import DriverLock, driver_alive
from codesign.run.store import RUN_FILE, SQLiteRunStore, find_run_database, open_run


def resolve_problem(spec: Spec):
    try:
        return get_problem(spec.problem)
    except KeyError:
        raise UserError(f"{spec.source}: problem.name: {spec.problem!r} is not a registered problem"
                        f"{nearest(spec.problem, problem_names())}; expected one of "
                        f"{', '.join(problem_names())}") from None
    except ImportError as exc:
        raise UserError(f"{spec.source}: problem.name: {spec.problem!r} is not available in this "
                        f"installation ({exc})") from None


def optimizer_class(spec: Spec) -> type[MMPSO]:
    """MMPSO, or its pipelined variant with ``[optimizer] pipeline = true``."""
    return PipelinedMMPSO if spec.pso.pipeline else MMPSO


def new_optimizer(spec: Spec) -> MMPSO:
    space = build_space(spec, resolve_problem(spec))
    return optimizer_class(spec)(space, spec.pso, spec.migration, spec.seed)


def execution_with(spec: Spec, workers: int | None = None, scheduler: str | None = None,
                   cluster: str | None = None, serial: bool = False, dashboard: bool | None = None,
                   no_worker_warning_s: float | None = None) -> ExecutionSpec:
    """The spec's [execution] with command-line overrides applied."""
    execution = spec.execution
    if dashboard is not None:
        execution = replace(execution, dashboard=dashboard)
    if no_worker_warning_s is not None:
        if not (math.isfinite(no_worker_warning_s) and no_worker_warning_s >= 0):
            raise UserError(f"--no-worker-warning: got {no_worker_warning_s}; expected seconds, a "
                            f"finite number >= 0")
        execution = replace(execution, no_worker_warning_s=no_worker_warning_s)
    if workers is not None:
        if workers < 0:
            raise UserError(f"--workers: got {workers}; expected an integer >= 0 (0 = serial)")
        execution = replace(execution, workers=workers, mode="serial" if workers == 0 else "local")
    if scheduler:
        if not scheduler.startswith(("tcp://", "tls://", "ws://", "wss://")):
            raise UserError(f"--scheduler: got {scheduler!r}; expected tcp://HOST:PORT")
        execution = replace(execution, mode="scheduler", scheduler=scheduler)
    if cluster:
        execution = replace(execution, mode=cluster)
    if serial:
        execution = replace(execution, mode="serial")
    return execution


def check_run(spec: Spec):
    """Everything about a spec that can be judged before a run starts, judged before any
    file or worker: the problem, the space, the ``[evaluation]`` table (read once by the
    problem's ``parse_settings`` into its settings record: a bad key or value is one line
    here) and the objectives' metrics (the problem's ``metrics``, where declared).
    Returns (problem, parsed settings handed to the workers)."""
    problem = resolve_problem(spec)
    build_space(spec, problem)
    if problem.metrics:               # every registered problem declares them
        for k, objective in enumerate(spec.objectives):
            if objective.metric not in problem.metrics:
                raise UserError(f"{spec.source}: objectives[{k}].metric: {objective.metric!r} is not a "
                                f"metric of problem {problem.name!r}; expected one of "
                                f"{', '.join(problem.metrics)}")
    table = inline_run_reference(spec.evaluation, problem.run_reference)
    try:
        settings = problem.parse_settings(table)
    except UserError as exc:
        raise UserError(f"{spec.source}: {exc}") from None
    for line in problem.notes(settings) if problem.notes is not None else ():
        print(line, file=sys.stderr)
    return problem, settings


def start_run(spec: Spec, results: str | Path = "results", name: str | None = None,
              execution: ExecutionSpec | None = None, progress: bool = True,
              executor: Executor | None = None,
              on_iteration: Callable[[int], None] | None = None) -> Path:
    """Create results/<name>/run.sqlite for the spec and run it to the end; returns the path.

    ``executor``: one already built for this spec's problem and settings (the caller
    closes it), instead of one from ``execution``; ``on_iteration(k)`` is called once
    iteration k is stored (``codesign bench scaling`` times the iterations with it).

    The spec is checked before anything is written; the run's driver lock is taken before
    its database is created (:class:`DriverLock`), so of two drivers starting the same
    name one runs and the other gets one line. SIGINT/SIGTERM stop the run
    (:class:`codesign.errors.Stopped`)."""
    if name is None:
        name = check_run_name(spec.name or "run", f"{spec.source}: name")
    else:
        check_run_name(name, "--name")
    optimizer = new_optimizer(spec)            # validates space and problem before any file
    checked = check_run(spec)
    folder = Path(results) / name
    path = folder / RUN_FILE
    made = _make_folder(folder)
    lock = DriverLock(path)
    try:
        with _stop_on_signals() as stop:
            lock.acquire()
            if path.exists():
                raise UserError(f"{path}: already exists; expected a new --name, or "
                                f"`codesign resume {folder}`")
            with _executor(spec, execution, checked, folder, progress, executor) as running:   # before any file
                store = SQLiteRunStore(path, create=True, run=dict(
                    name=name, spec_toml=spec.text, spec_hash=spec.hash, parent=spec.freeze.parent,
                    iterations_total=spec.pso.iterations, subspaces=optimizer.space.describe()))
                _drive(store, store.run_id, optimizer, running, progress, stop, on_iteration,
                       objectives=spec.objectives or checked[0].objectives, unit=checked[0].metric_unit)
    finally:
        lock.release()
        if not path.exists():                   # batch jobs' log folder, if still empty
            with contextlib.suppress(OSError):
                (folder / JOBS_FOLDER).rmdir()
        for k in reversed(made):                # nothing left of a run that never started
            with contextlib.suppress(OSError):
                k.rmdir()
    return path


def resume_run(run: str | Path, execution: ExecutionSpec | None = None, progress: bool = True,
               overrides: dict | None = None) -> Path:
    """Continue a stored run from its last complete iteration (under its driver lock)."""
    path = find_run_database(run)
    lock = DriverLock(path)
    store = None
    try:
        with _stop_on_signals() as stop:
            lock.acquire()
            store = open_run(path)
            runs = store.runs()
            if runs.empty:
                raise UserError(f"{store.path}: holds no run; expected a database made by `codesign optimize`")
            row = runs.iloc[-1]
            if row["status"] == "running" and driver_alive(row["driver"], other_host=False):
                # a live driver that holds no lock (a database written before the locks)
                raise UserError(f"{path.parent}: already being run by {row['driver']}; expected one "
                                f"driver per run (see `codesign runs`)")
            spec = parse_spec(row["spec_toml"], source=f"{store.path}:spec_toml")
            loaded = store.load_state(int(row["run_id"]))
            if loaded is None:
                optimizer = new_optimizer(spec)
            else:
                space = build_space(spec, resolve_problem(spec))
                try:
                    optimizer = optimizer_class(spec).from_state(space, spec.pso, spec.migration, loaded[1])
                except (KeyError, ValueError) as exc:
                    raise UserError(f"{store.path}: stored optimizer state does not fit the stored "
                                    f"spec ({exc})") from None
            checked = check_run(spec)
            if optimizer.done:
                store.set_status(int(row["run_id"]), "finished")
                print(f"{store.path}: already finished ({optimizer.iteration} iterations)", file=sys.stderr)
                return store.path
            with _executor(spec, execution, checked, path.parent, progress) as executor:
                store.set_status(int(row["run_id"]), "running")
                _drive(store, int(row["run_id"]), optimizer, executor, progress, stop,
                       objectives=spec.objectives or checked[0].objectives, unit=checked[0].metric_unit)
    finally:
        if store is not None:
            store.close()
        lock.release()
    return path


def _make_folder(folder: Path) -> list[Path]:
    """Create the run folder (and missing parents); the folders made, innermost last."""
    made = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder)
        reason = "a file is in the way" if blocker != folder or folder.exists() else exc.strerror
        raise UserError(f"{folder}: cannot create the run folder ({blocker}: {reason}); expected "
                        f"--results to name a writable folder") from None
    return made


class _StopRequest(KeyboardInterrupt):
    """SIGINT or SIGTERM reached the driver."""


@contextlib.contextmanager
def _stop_on_signals():
    """SIGINT and SIGTERM raise :class:`_StopRequest` in the driver's main thread (the first
    one; later ones are ignored while the run shuts down), turned into one
    :class:`Stopped` line here (exit 130); a lost scheduler (:class:`ClusterLost`) into the
    same line with its reason (exit 75). Yields a dict the driver fills with where it stopped."""
    where: dict = {}
    signals = (signal.SIGINT, signal.SIGTERM)
    main = threading.current_thread() is threading.main_thread()
    previous = {s: signal.getsignal(s) for s in signals} if main else {}

    def handler(signum, frame):
        for s in signals:
            signal.signal(s, signal.SIG_IGN)
        raise _StopRequest(signal.Signals(signum).name)

    for s in previous:
        signal.signal(s, handler)
    try:
        yield where
    except (KeyboardInterrupt, ClusterLost) as exc:
        for s in previous:
            signal.signal(s, signal.SIG_IGN)
        kind, reason = (Stopped, "") if isinstance(exc, KeyboardInterrupt) else (ClusterLost, f"{exc}: ")
        if not where:
            raise kind(f"{reason}stopped before the run started; nothing was written") from None
        raise kind(f"{reason}stopped at iteration {where['iteration']} of {where['total']} — continue "
                   f"with: codesign resume {where['folder']}") from None
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _executor(spec: Spec, execution: ExecutionSpec | None, checked, folder: Path, progress: bool,
              given: Executor | None = None):
    """The run's executor as a context: ``given`` (left open), else a new one from the spec."""
    if given is not None:
        return contextlib.nullcontext(given)
    problem, settings = checked
    objectives = spec.objectives or problem.objectives
    return make_executor(spec.problem, settings, objectives, execution or spec.execution, folder,
                         show_dashboard=progress)


def _drive(store: SQLiteRunStore, run_id: int, optimizer: MMPSO, executor: Executor, progress: bool,
           where: dict, on_iteration: Callable[[int], None] | None = None, objectives: tuple = (),
           unit: Callable[[str], str | None] | None = None) -> None:
    """Run the optimizer to its end: :func:`_drive_iterations`, or :func:`_drive_pipelined`
    for a :class:`PipelinedMMPSO`; records the run status (``stopped`` on an interrupt or a
    lost cluster, ``failed`` on anything else, ``finished``). ``objectives`` (the run's) and
    ``unit`` (its problem's ``metric_unit``): the progress bar's best in words
    (:func:`~codesign.objectives.describe_fitness`)."""
    status = "failed"
    bar = _progress_bar(optimizer, progress)
    where.update(folder=store.path.parent, total=optimizer.settings.iterations,
                 iteration=optimizer.iteration)

    shown = [time.perf_counter()]

    def stored(iteration: int, evaluations: int, best) -> None:
        """Iteration ``iteration`` is in the database: progress, bar, ``on_iteration``."""
        where["iteration"] = iteration + 1
        if on_iteration is not None:
            on_iteration(iteration)
        now = time.perf_counter()
        _show(bar, evaluations / max(now - shown[0], 1e-9), best[0], objectives, unit)
        shown[0] = now

    try:
        if isinstance(optimizer, PipelinedMMPSO):
            _drive_pipelined(store, run_id, optimizer, executor, stored)
        else:
            _drive_iterations(store, run_id, optimizer, executor, stored)
        status = "finished"
    except (KeyboardInterrupt, ClusterLost):
        status = "stopped"
        # what the database holds: the signal can land between an iteration's commit and
        # the callback that counts it (the stopped line then named one iteration too few)
        where["iteration"] = len(store.iterations(run_id))
        raise
    finally:
        bar.close()
        store.set_status(run_id, status)
        store.close()


def _drive_pipelined(store: SQLiteRunStore, run_id: int, optimizer: PipelinedMMPSO, executor: Executor,
                     stored: Callable) -> None:
    """Evaluations handed to the workers the moment the optimizer can ask them (in tasks
    of a few: :class:`~codesign.run.executors.DaskStream`); an iteration is written when
    its last evaluation is in (whole iterations, each with the state after it, as the
    synchronous driver writes them), after the candidates it made ready were handed out.
    An interrupt cancels the evaluations in flight."""
    stream = executor.stream()
    finished = False
    try:
        stream.add(optimizer.ready())
        while not optimizer.done:
            completed = []
            for candidate, record in stream.next():
                completed += optimizer.tell_one(candidate, record)
            stream.add(optimizer.ready())              # the workers get the next evaluations ...
            for it in completed:                       # ... while the driver writes
                store.write_iteration(run_id, it.iteration, it.candidates, it.records, it.best, it.state)
                stored(it.iteration, len(it.candidates), it.best)
        finished = True
    finally:
        if not finished:
            stream.cancel()


def _drive_iterations(store: SQLiteRunStore, run_id: int, optimizer: MMPSO, executor: Executor,
                      stored: Callable) -> None:
    """ask -> evaluate -> tell -> store, one synchronous iteration at a time.

    Overlapped by one step: once iteration k is told, iteration k+1 is asked and submitted
    *before* k is written, so the workers evaluate k+1 while the driver writes k. What is
    written is unchanged (k's candidates, records, best and the optimizer state right
    after k's tell, taken before k+1's ask), and k is written before k+1 is told, so a
    driver killed at any moment leaves whole iterations and resumes as before. An
    interrupt abandons the iteration in flight (its tasks are cancelled)."""
    pending = None
    finished = False
    try:
        if not optimizer.done:
            pending = executor.submit(optimizer.ask())
        while pending is not None:
            records = executor.gather(pending)
            candidates, iteration = pending.candidates, optimizer.iteration
            optimizer.tell(records)
            best, state = optimizer.best(), optimizer.state()
            pending = None if optimizer.done else executor.submit(optimizer.ask())   # workers start k+1 ...
            store.write_iteration(run_id, iteration, candidates, records, best[:2], state)   # ... while k is written
            stored(iteration, len(candidates), best[:2])
        finished = True
    finally:
        if pending is not None and not finished:
            executor.cancel(pending)


def _progress_bar(optimizer: MMPSO, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=optimizer.settings.iterations, initial=optimizer.iteration, unit="it",
                disable=not enabled, file=sys.stderr, dynamic_ncols=True)


def _show(bar, evals_per_s: float, key, objectives: tuple, unit=None) -> None:
    best = "failed" if key[0] else describe_fitness(int(-key[1]), key[2], objectives, unit)
    bar.set_postfix_str(f"{evals_per_s:.1f} evals/s, best {best}", refresh=False)
    bar.update(1)


__all__ = ["start_run", "resume_run", "check_run", "new_optimizer", "optimizer_class", "execution_with", "resolve_problem"]
