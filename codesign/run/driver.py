"""The driver: ask the optimizer, evaluate on an executor, tell, store — one iteration at a time.

``start_run`` creates ``results/<name>/run.sqlite`` and runs; ``resume_run`` continues a
stored run from the state of its last complete iteration. Each iteration is written in one
transaction after ``tell``, so a driver killed at any moment loses at most the iteration
in flight, and ``resume`` reproduces it exactly (same optimizer and RNG state, same
evaluation seeds): the resumed database equals an uninterrupted run's, except the wall
times, worker names and timestamps.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

from codesign.errors import UserError
from codesign.optimize.mmpso import MMPSO
from codesign.problems import get_problem, problem_names
from codesign.run.executors import make_executor
from codesign.run.spec import ExecutionSpec, Spec, build_space, check_run_name, parse_spec
from codesign.run.stored import inline_run_reference
from codesign.run.store import RUN_FILE, SQLiteRunStore, driver_alive, find_run_database, open_run


def resolve_problem(spec: Spec):
    try:
        return get_problem(spec.problem)
    except KeyError:
        raise UserError(f"{spec.source}: problem.name: {spec.problem!r} is not a registered problem; "
                        f"expected one of {', '.join(problem_names())}") from None
    except ImportError as exc:
        raise UserError(f"{spec.source}: problem.name: {spec.problem!r} is not available in this "
                        f"installation ({exc})") from None


def new_optimizer(spec: Spec) -> MMPSO:
    space = build_space(spec, resolve_problem(spec))
    return MMPSO(space, spec.pso, spec.migration, spec.seed)


def execution_with(spec: Spec, workers: int | None = None, scheduler: str | None = None,
                   cluster: str | None = None, serial: bool = False) -> ExecutionSpec:
    """The spec's [execution] with command-line overrides applied."""
    execution = spec.execution
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


def start_run(spec: Spec, results: str | Path = "results", name: str | None = None,
              execution: ExecutionSpec | None = None, progress: bool = True) -> Path:
    """Create results/<name>/run.sqlite for the spec and run it to the end; returns the path."""
    if name is None:
        name = check_run_name(spec.name or "run", f"{spec.source}: name")
    else:
        check_run_name(name, "--name")
    path = Path(results) / name / RUN_FILE
    if path.exists():
        raise UserError(f"{path}: already exists; expected a new --name, or `codesign resume {path.parent}`")
    optimizer = new_optimizer(spec)            # validates space and problem before any file
    with _executor(spec, execution) as executor:   # and the cluster connection
        store = SQLiteRunStore(path, create=True)
        run_id = store.create_run(name, spec.text, spec.hash, spec.freeze.parent, spec.pso.iterations,
                                  optimizer.space.describe())
        _drive(store, run_id, optimizer, executor, progress)
    return path


def resume_run(run: str | Path, execution: ExecutionSpec | None = None, progress: bool = True,
               overrides: dict | None = None) -> Path:
    """Continue a stored run from its last complete iteration."""
    store = open_run(find_run_database(run))
    runs = store.runs()
    if runs.empty:
        raise UserError(f"{store.path}: holds no run; expected a database made by `codesign optimize`")
    row = runs.iloc[-1]
    if row["status"] == "running" and driver_alive(row["driver"], other_host=False):
        raise UserError(f"{store.path}: still being run by {row['driver']}; expected a stopped run "
                        f"(see `codesign runs`)")
    spec = parse_spec(row["spec_toml"], source=f"{store.path}:spec_toml")
    loaded = store.load_state(int(row["run_id"]))
    if loaded is None:
        optimizer = new_optimizer(spec)
    else:
        space = build_space(spec, resolve_problem(spec))
        try:
            optimizer = MMPSO.from_state(space, spec.pso, spec.migration, loaded[1])
        except (KeyError, ValueError) as exc:
            raise UserError(f"{store.path}: stored optimizer state does not fit the stored spec ({exc})") from None
    if optimizer.done:
        store.set_status(int(row["run_id"]), "finished")
        print(f"{store.path}: already finished ({optimizer.iteration} iterations)", file=sys.stderr)
        return store.path
    with _executor(spec, execution) as executor:
        store.set_status(int(row["run_id"]), "running")
        _drive(store, int(row["run_id"]), optimizer, executor, progress)
    return store.path


def _executor(spec: Spec, execution: ExecutionSpec | None):
    problem = resolve_problem(spec)
    settings = inline_run_reference(spec.evaluation, problem.run_reference)
    if problem.check is not None:     # bad [evaluation] input: one line, before any worker
        problem.check(settings)
    objectives = spec.objectives or problem.objectives
    return make_executor(spec.problem, settings, objectives, execution or spec.execution)


def _drive(store: SQLiteRunStore, run_id: int, optimizer: MMPSO, executor, progress: bool) -> None:
    """ask -> evaluate -> tell -> store, until the optimizer is done; records the run status."""
    status = "failed"
    bar = _progress_bar(optimizer, progress)
    try:
        while not optimizer.done:
            started = time.perf_counter()
            candidates = optimizer.ask()
            records = executor.evaluate(candidates)
            iteration = optimizer.iteration
            optimizer.tell(records)
            key, subspace_id, _ = optimizer.best()
            store.write_iteration(run_id, iteration, candidates, records, (key, subspace_id),
                                  optimizer.state())
            _show(bar, len(candidates) / max(time.perf_counter() - started, 1e-9), key)
        status = "finished"
    except KeyboardInterrupt:
        status = "stopped"
        raise
    finally:
        bar.close()
        store.set_status(run_id, status)
        store.close()


def _progress_bar(optimizer: MMPSO, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=optimizer.settings.iterations, initial=optimizer.iteration, unit="it",
                disable=not enabled, file=sys.stderr, dynamic_ncols=True)


def _show(bar, evals_per_s: float, key) -> None:
    best = "failed" if key[0] else f"stage {int(-key[1])} value {key[2]:.6g}"
    bar.set_postfix_str(f"{evals_per_s:.1f} evals/s, best {best}", refresh=False)
    bar.update(1)


__all__ = ["start_run", "resume_run", "new_optimizer", "execution_with", "resolve_problem"]
