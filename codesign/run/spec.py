"""Job specs: TOML files (``pipelines/*.toml``) loaded and validated into a frozen :class:`Spec`.

Every mistake is one :class:`UserError` line naming the key path and what was expected:
unknown keys, wrong types, out-of-range values, unknown problems, pools, groups or
parameters, and migration probabilities that stop being probabilities. Nothing else
escapes :func:`load_spec` (the hypothesis fuzz test in tests/optimize holds it to that).

Keys (all optional except ``problem.name``; see README "Optimization" for an example)::

    name = "demo"          seed = 0
    [problem]              name = "six_hump_camel"; a walking problem also takes options
                           (control, torso_feedback, drivetrains, wearer, search, device,
                           device_design, wearer_design: codesign.problems.options)
    [optimizer]            algorithm = "pso"|"mmpso", particles, iterations, constriction,
                           c1, c2, velocity_clamp, pipeline = true|false
    [optimizer.migration]  exploration / local / global = {shape = "constant"|"sigmoid"|
                           "gaussian", start, end, peak, center, width}
    [space.parameters.X]   bounds = [low, high], init = [low, high]
    [[space.pools]]        name, groups = [{name, parameters = [...]}, ...]
    [space]                exclude = [["pool.group", "pool.group"], ...]
    [space.start]          X = value ...: particle 0 starts here (e.g. a parent's solution)
    [[space.seeds]]        X = value ...: particle 1, 2, ... starts at each (a study's transfer)
    [space]                start_design = "design.json": its "params" join [space.start] (a
                           walking problem's encode places a design holding more than the search's);
                           start_designs = "designs.json": a list of designs, or one (e.g. the
                           screening's best_designs.json), each where the particles of its
                           subspace start (a walking problem's encode names them);
                           drop_unserved = "loads_subspaces.csv": the subspaces the load
                           screening found no catalog drivetrain for (served = 0) leave the
                           search (:class:`Unserved`, each with its reason)
                           start_spread = s: particles start within +-s of the bounds'
                           width around the start points (0: only particle 0 at [space.start])
    [[objectives]]         metric, sense = "minimize"|"maximize", until
    [evaluation]           free-form table handed to the problem (context.settings)
    [execution]            mode = "serial"|"local"|"scheduler"|"slurm"|"pbs", workers,
                           scheduler, batch_size, dashboard, no_worker_warning_s
    [execution.cluster]    cores, memory, walltime, lifetime, jobs, queue, account, interface
    [freeze]               pools = {pool = "group"}, parameters = {X = value}, parent
    [study]                `codesign study`'s rounds after this spec's global one: focus
                           (the N best topologies) or topologies = [k, ...], focus_particles,
                           focus_iterations, warm_start, verify = ["half_step", "soft",
                           "mujoco"], verify_candidates, focus_rounds, transfer,
                           focus_pairs, search_checks (:class:`StudySpec`); `codesign optimize` runs the
                           global round alone
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from codesign.errors import UserError, listed, nearest
from codesign.io import parse_user_text, read_user_text
from codesign.objectives import SENSES, Objective
from codesign.optimize.pso import PSOSettings
from codesign.optimize.schedule import SHAPES, Migration, Schedule, constant, thesis_migration
from codesign.types import Group, Parameter, Pool
from codesign.optimize.space import Space
from codesign.run.spec_values import (Invalid, check_table, fail, one_line_error, read_bool, read_float,
                                      read_int, read_names, read_range, read_str, user_table)
from codesign.run.spec_starts import Unserved, read_seeds, read_start_design, read_start_designs, read_unserved
from codesign.run.study_spec import StudySpec, parse_study

ALGORITHMS = ("pso", "mmpso")
SPEC_EXPECTED = "a TOML job spec (docs/optimization.md)"
MODES = ("serial", "local", "scheduler", "slurm", "pbs")


@dataclass(frozen=True)
class ClusterSpec:
    """A batch-queue cluster (dask-jobqueue): per job ``cores`` single-threaded workers."""

    cores: int = 1
    memory: str = "4GB"
    walltime: str = "01:00:00"
    lifetime: str = ""          # worker --lifetime (e.g. "55m"), restarts before walltime
    jobs: int = 1
    queue: str = ""
    account: str = ""
    interface: str = ""         # network interface of scheduler and workers (e.g. "lo", "ib0")


@dataclass(frozen=True)
class ExecutionSpec:
    mode: str = "local"
    workers: int = 0            # local: worker processes, 0 = one per core
    scheduler: str = ""         # mode "scheduler": tcp://HOST:PORT
    batch_size: int = 0         # candidates per task, 0 = about 4 tasks per worker
    cluster: ClusterSpec = ClusterSpec()
    dashboard: bool = True      # local / batch clusters serve the Dask dashboard (a free port)
    no_worker_warning_s: float = 60.0   # s without any worker before one warning line


@dataclass(frozen=True)
class FreezeSpec:
    pools: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, float] = field(default_factory=dict)
    parent: str = ""


@dataclass(frozen=True)
class Spec:
    """A validated job spec; ``text`` is the TOML source (stored with the run)."""

    problem: str
    name: str = ""
    seed: int = 0
    algorithm: str = "mmpso"
    pso: PSOSettings = PSOSettings()
    migration: Migration = Migration()
    parameters: dict[str, dict] = field(default_factory=dict)   # name -> {bounds, init}
    pools: tuple[Pool, ...] = ()
    exclude: tuple[tuple[str, ...], ...] = ()
    start: dict[str, float] = field(default_factory=dict)      # name -> value of particle 0
    seeds: tuple[dict[str, float], ...] = ()   # name -> value of particles 1, 2, ...
    start_spread: float = 0.0       # every particle's start within +-spread x width of it
    start_designs: tuple[dict, ...] = ()   # designs where their subspaces' particles start
    start_design: dict = field(default_factory=dict)   # space.start_design's document ({}: none)
    unserved: tuple[Unserved, ...] = ()    # subspaces dropped by the load screening (space.drop_unserved)
    objectives: tuple[Objective, ...] = ()
    evaluation: dict[str, Any] = field(default_factory=dict)
    execution: ExecutionSpec = ExecutionSpec()
    freeze: FreezeSpec = FreezeSpec()
    study: StudySpec | None = None  # ``[study]``: None for a plain job spec
    text: str = ""
    source: str = "<spec>"
    # a walking problem's options (codesign.problems.options.ProblemOptions; None: a problem
    # without options); ``problem`` is then their key (a preset's name, or walking(...))
    options: Any = None

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


# -- loading --------------------------------------------------------------------------------

def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file."""
    path = Path(path)
    text = read_user_text(path, SPEC_EXPECTED)
    spec = parse_spec(text, source=str(path))
    return spec if spec.name else replace(spec, name=path.stem)


def parse_spec(text: str, source: str = "<spec>") -> Spec:
    """Validate spec TOML text; raises UserError (one line) for every mistake."""
    data = parse_user_text(text, source, SPEC_EXPECTED, "toml")
    try:
        return _spec(data, text, source)
    except Invalid as exc:
        raise one_line_error(f"{source}: {exc}") from None


RUN_NAME_RULE = "a run name of letters, digits, '-', '_', '.' (not starting with '.', at most 200)"


def check_run_name(name: str, where: str) -> str:
    """``name`` if it is a safe run name -- a file name of its own under results/: letters,
    digits, '-', '_', '.', not starting with '.' (no '/', no '..'), at most 200 characters;
    else UserError naming ``where`` (the spec's ``name``, ``--name``). The one rule for
    every run name."""
    plain = name.replace("-", "").replace("_", "").replace(".", "")
    if not (plain.isalnum() and not name.startswith(".") and len(name) <= 200):
        shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
        raise one_line_error(f"{where}: got {shown}; expected {RUN_NAME_RULE}")
    return name


DRIVE_SUFFIXES = (".motor", ".stage_ratio")     # a drivetrain's parameters (model.drivetrain)


def encoded(doc: dict, hooks, where: str) -> tuple[tuple[str, ...], dict[str, float]]:
    """A design file's document under a walking problem's search names (its
    ``WalkingHooks.encode``); UserError, one line prefixed ``where``, for a bad design."""
    from codesign.walking.design import DESIGN_KEYS, Design

    try:
        design = Design.from_json({key: doc[key] for key in DESIGN_KEYS if key in doc}, where)
    except UserError as exc:
        raise one_line_error(str(exc)) from None
    try:
        return hooks.encode(design)
    except UserError as exc:
        raise one_line_error(f"{where}: {exc}") from None


def subspace_starts(spec: Spec, problem, params: dict[str, Parameter]
                    ) -> tuple[tuple[tuple[str, ...], dict[str, float]], ...]:
    """(groups, values) of each of the spec's ``space.start_designs`` under the search's
    names (the problem's ``WalkingHooks.encode``); UserError naming a design the problem
    cannot place or a value outside its parameter's bounds. A design's drivetrain
    (``j<id>.motor``, ``j<id>.stage_ratio``: the load screening's ``load_designs.json``)
    starts a problem that searches drivetrains; one that rates its actuators takes the
    morphology alone."""
    if not spec.start_designs:
        return ()
    hooks = problem.walking
    if hooks is None or hooks.encode is None:
        raise one_line_error(f"{spec.source}: space.start_designs: problem {problem.name!r} does not name a "
                             f"design's parameters; expected a walking co-design problem")
    out = []
    for k, doc in enumerate(spec.start_designs):
        where = f"{spec.source}: space.start_designs[{k}]"
        groups, values = encoded(doc, hooks, where)
        # a problem that rates its actuators takes the design's morphology, not its drivetrains
        values = {name: value for name, value in values.items()
                  if name in params or not name.endswith(DRIVE_SUFFIXES)}
        for name, value in values.items():
            if name not in params:
                raise one_line_error(f"{where}: parameter {name!r} is not one of problem {problem.name!r}'s")
            if not params[name].low <= value <= params[name].high:
                raise one_line_error(f"{where}: {name} = {value} outside the bounds "
                                     f"[{params[name].low}, {params[name].high}]")
        out.append((tuple(groups), dict(values)))
    return tuple(out)


def placed_start(spec: Spec, problem, params: dict[str, Parameter]) -> dict[str, float]:
    """Particle 0's start: ``[space.start]`` and ``space.start_design``'s parameters; a
    design whose parameters are not all the search's (e.g. an adapting wearer's device
    design, whose file holds its wearer's whole law and its frozen units) is placed
    through the walking problem's ``encode``, as ``start_designs`` are, the spec's own
    values of the search's parameters kept over it."""
    raw = spec.start_design.get("params", {})
    hooks = problem.walking
    if all(name in params for name in raw) or hooks is None or hooks.encode is None:
        return dict(spec.start)
    _, placed = encoded(spec.start_design, hooks, f"{spec.source}: space.start_design")
    return {**placed, **{name: value for name, value in spec.start.items() if name in params}}


def _spec(data: dict, text: str, source: str) -> Spec:
    check_table(data, "", ("name", "seed", "problem", "optimizer", "space", "objectives",
                           "evaluation", "execution", "freeze", "study"))
    name = read_str(data, "name", "", "")
    if name:
        check_run_name(name, f"{source}: name")
    seed = read_int(data, "seed", "", 0)
    if "problem" not in data:
        raise Invalid("problem: missing; expected a [problem] table with name = \"...\"")
    problem = user_table(data["problem"], "problem")
    if "name" not in problem:
        raise Invalid("problem.name: missing; expected the name of a registered problem")
    problem_name = read_str(problem, "name", "problem", "")
    evaluation = user_table(data.get("evaluation", {}), "evaluation")
    from codesign.problems.options import spec_problem     # the problems' options: read there

    try:
        problem_name, options, evaluation = spec_problem(problem, evaluation)
    except UserError as exc:
        raise Invalid(str(exc)) from None
    algorithm, pso, migration = _optimizer(data.get("optimizer", {}))
    parameters, pools, exclude, start, start_design, seeds, start_spread, start_designs, unserved = _space(
        data.get("space", {}))
    objectives = parse_objectives(data.get("objectives", []))
    execution = _execution(data.get("execution", {}))
    freeze = _freeze(data.get("freeze", {}))
    study = parse_study(data["study"]) if "study" in data else None
    return Spec(problem=problem_name, name=name, seed=seed, algorithm=algorithm, pso=pso,
                migration=migration, parameters=parameters, pools=pools, exclude=exclude, start=start,
                start_design=start_design, seeds=seeds, start_spread=start_spread, start_designs=start_designs,
                unserved=unserved, objectives=objectives, evaluation=evaluation, execution=execution,
                freeze=freeze, study=study, text=text, source=source, options=options)



def _optimizer(data: Any) -> tuple[str, PSOSettings, Migration]:
    path = "optimizer"
    check_table(data, path, ("algorithm", "particles", "iterations", "constriction", "c1", "c2",
                        "velocity_clamp", "pipeline", "migration"))
    algorithm = read_str(data, "algorithm", path, "mmpso", ALGORITHMS)
    pso = PSOSettings(
        particles=read_int(data, "particles", path, 40, low=1, high=100_000),
        iterations=read_int(data, "iterations", path, 100, low=1, high=10_000_000),
        constriction=read_float(data, "constriction", path, 0.729, 0.0, 1.0),
        c1=read_float(data, "c1", path, 2.05, 0.0, 10.0),
        c2=read_float(data, "c2", path, 2.05, 0.0, 10.0),
        velocity_clamp=read_float(data, "velocity_clamp", path, 0.6, 1e-6, 1.0),
        pipeline=read_bool(data, "pipeline", path, False))
    if "migration" not in data:
        return algorithm, pso, thesis_migration(pso.iterations)
    if algorithm == "pso":
        raise Invalid("optimizer.migration: given for algorithm \"pso\"; expected it only with \"mmpso\"")
    table = check_table(data["migration"], "optimizer.migration", ("exploration", "local", "global"))
    schedules = {key: _schedule(table.get(key, {"shape": "constant", "start": 0.0}),
                                f"optimizer.migration.{key}") for key in ("exploration", "local", "global")}
    migration = Migration(schedules["exploration"], schedules["local"], schedules["global"])
    for t in _check_points(pso.iterations, schedules.values()):
        values = migration.at(t)
        for key, value in zip(("exploration", "local", "global"), values):
            if not 0.0 <= value <= 1.0:
                raise Invalid(f"optimizer.migration.{key}: is {value:.4g} at iteration {t}; expected a probability in [0, 1]")
        if sum(values) > 1.0 + 1e-12:
            raise Invalid(f"optimizer.migration: P_e + P_l + P_g = {sum(values):.4g} at iteration {t}; expected <= 1 (eq. 3.6)")
    return algorithm, pso, migration


def _check_points(iterations: int, schedules) -> list[int]:
    """Iterations where the probabilities are checked: every one for runs up to 20000
    iterations, else a grid of 20000 plus each curve's center (where a Gaussian peaks)."""
    if iterations <= 20_000:
        return list(range(iterations))
    points = {int(t) for t in np.linspace(0, iterations - 1, 20_000)}
    points |= {min(max(int(round(s.center)), 0), iterations - 1) for s in schedules}
    return sorted(points)


def _schedule(data: Any, path: str) -> Schedule:
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return constant(read_float({"p": data}, "p", path, 0.0, 0.0, 1.0))
    check_table(data, path, ("shape", "start", "end", "peak", "center", "width"))
    shape = read_str(data, "shape", path, "constant", SHAPES)
    return Schedule(shape=shape, start=read_float(data, "start", path, 0.0, -1.0, 1.0),
                    end=read_float(data, "end", path, 0.0, -1.0, 1.0),
                    peak=read_float(data, "peak", path, 0.0, -1.0, 1.0),
                    center=read_float(data, "center", path, 0.0, -1e9, 1e9),
                    width=read_float(data, "width", path, 1.0, 1e-9, 1e9))


def _space(data: Any) -> tuple[dict, tuple[Pool, ...], tuple[tuple[str, ...], ...], dict[str, float], dict,
                               tuple[dict[str, float], ...], float, tuple[dict, ...], tuple[Unserved, ...]]:
    check_table(data, "space", ("parameters", "pools", "exclude", "start", "seeds", "start_design", "start_designs",
                                "start_spread", "drop_unserved"))
    parameters = {}
    for pname, entry in user_table(data.get("parameters", {}), "space.parameters").items():
        path = f"space.parameters.{pname}"
        check_table(entry, path, ("bounds", "init"))
        if "bounds" in entry:
            read_range(entry["bounds"], f"{path}.bounds")
        if "init" in entry:
            read_range(entry["init"], f"{path}.init")
        parameters[pname] = dict(entry)
    pools = []
    raw_pools = data.get("pools", [])
    if not isinstance(raw_pools, list):
        fail("space.pools", raw_pools, "an array of tables [[space.pools]]")
    for k, pool in enumerate(raw_pools):
        path = f"space.pools[{k}]"
        check_table(pool, path, ("name", "groups"))
        pool_name = read_str(pool, "name", path, f"pool{k + 1}")
        groups = pool.get("groups")
        if not isinstance(groups, list) or not groups:
            fail(f"{path}.groups", groups, "a non-empty array of {name, parameters} tables")
        parsed = []
        for j, group in enumerate(groups):
            gpath = f"{path}.groups[{j}]"
            check_table(group, gpath, ("name", "parameters"))
            parsed.append(Group(read_str(group, "name", gpath, f"g{j + 1}"),
                                read_names(group.get("parameters", []), f"{gpath}.parameters")))
        if len({g.name for g in parsed}) != len(parsed):
            fail(f"{path}.groups", [g.name for g in parsed], "distinct group names")
        pools.append(Pool(pool_name, tuple(parsed)))
    if len({p.name for p in pools}) != len(pools):
        fail("space.pools", [p.name for p in pools], "distinct pool names")
    exclude = data.get("exclude", [])
    if not isinstance(exclude, list):
        fail("space.exclude", exclude, "a list of lists of \"pool.group\" names")
    combos = tuple(read_names(c, f"space.exclude[{k}]") for k, c in enumerate(exclude))
    start_table = user_table(data.get("start", {}), "space.start")
    start, start_design = read_start_design(data["start_design"]) if "start_design" in data else ({}, {})
    start.update({name: read_float(start_table, name, "space.start", None) for name in start_table})
    seeds = read_seeds(data.get("seeds", []))
    designs = read_start_designs(data["start_designs"]) if "start_designs" in data else ()
    spread = read_float(data, "start_spread", "space", 0.0, 0.0, 0.5)
    if spread > 0 and not (start or designs):
        fail("space.start_spread", spread, "a start point ([space.start], space.start_design or "
             "space.start_designs) to spread around")
    unserved = read_unserved(data["drop_unserved"]) if "drop_unserved" in data else ()
    return parameters, tuple(pools), combos, start, start_design, seeds, spread, designs, unserved


def parse_objectives(data: Any) -> tuple[Objective, ...]:
    """A spec's ``[[objectives]]`` (or a design file's ``objectives``): the lexicographic
    stages (Invalid, one line naming the entry)."""
    if not isinstance(data, list):
        fail("objectives", data, "an array of tables [[objectives]]")
    out = []
    for k, entry in enumerate(data):
        path = f"objectives[{k}]"
        check_table(entry, path, ("metric", "sense", "until"))
        if "metric" not in entry:
            raise Invalid(f"{path}.metric: missing; expected the name of a metric")
        until = read_float(entry, "until", path, None)
        if k == len(data) - 1 and until is not None:
            raise Invalid(f"{path}.until: given for the last objective; expected it only on earlier stages")
        out.append(Objective(read_str(entry, "metric", path, ""), read_str(entry, "sense", path, "minimize", SENSES),
                             until))
    return tuple(out)


def _execution(data: Any) -> ExecutionSpec:
    path = "execution"
    check_table(data, path, ("mode", "workers", "scheduler", "batch_size", "cluster", "dashboard",
                        "no_worker_warning_s"))
    mode = read_str(data, "mode", path, "local", MODES)
    scheduler = read_str(data, "scheduler", path, "")
    if mode == "scheduler" and not scheduler.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        fail("execution.scheduler", scheduler, "an address like tcp://HOST:PORT for mode = \"scheduler\"")
    cpath = "execution.cluster"
    cl = check_table(data.get("cluster", {}), cpath, ("cores", "memory", "walltime", "lifetime",
                                                 "jobs", "queue", "account", "interface"))
    cluster = ClusterSpec(cores=read_int(cl, "cores", cpath, 1, low=1), memory=_memory(cl, cpath),
                          walltime=_walltime(cl, cpath),
                          lifetime=read_str(cl, "lifetime", cpath, ""), jobs=read_int(cl, "jobs", cpath, 1, low=1),
                          queue=read_str(cl, "queue", cpath, ""), account=read_str(cl, "account", cpath, ""),
                          interface=read_str(cl, "interface", cpath, ""))
    dashboard = data.get("dashboard", True)
    if not isinstance(dashboard, bool):
        fail("execution.dashboard", dashboard, "true or false")
    return ExecutionSpec(mode=mode, workers=read_int(data, "workers", path, 0),
                         scheduler=scheduler, batch_size=read_int(data, "batch_size", path, 0),
                         cluster=cluster, dashboard=dashboard,
                         no_worker_warning_s=read_float(data, "no_worker_warning_s", path, 60.0, 0.0, 1e9))


# [D-]HH:MM:SS, HH:MM, or minutes: what both SLURM and PBS read
_WALLTIME = re.compile(r"^(\d+-)?\d{1,3}:[0-5]\d(:[0-5]\d)?$|^\d+$")


def _walltime(data: dict, path: str) -> str:
    value = read_str(data, "walltime", path, "01:00:00")
    if not _WALLTIME.match(value):
        fail(f"{path}.walltime", value, "a batch walltime like \"04:00:00\" ([D-]HH:MM:SS)")
    return value


def _memory(data: dict, path: str) -> str:
    value = read_str(data, "memory", path, "4GB")
    from dask.utils import parse_bytes

    try:
        ok = parse_bytes(value) >= 2**20 if value.strip() else False
    except ValueError:
        ok = False
    if not ok:
        fail(f"{path}.memory", value, "a memory size like \"16GB\" (at least 1 MiB)")
    return value


def _freeze(data: Any) -> FreezeSpec:
    check_table(data, "freeze", ("pools", "parameters", "parent"))
    pools = user_table(data.get("pools", {}), "freeze.pools")
    for key, value in pools.items():
        if not isinstance(value, str):
            fail(f"freeze.pools.{key}", value, "the name of the group to keep")
    params = user_table(data.get("parameters", {}), "freeze.parameters")
    values = {key: read_float(params, key, "freeze.parameters", None) for key in params}
    return FreezeSpec(pools=dict(pools), parameters=values, parent=read_str(data, "parent", "freeze", ""))


# -- the search space of a spec ---------------------------------------------------------------

def unserved_exclusions(spec: Spec, problem, pools) -> tuple[tuple[str, ...], ...]:
    """``space.exclude`` entries ("pool.group") of the subspaces the load screening dropped
    (:attr:`Spec.unserved`), named by the problem's encode of an empty design of each."""
    if not spec.unserved:
        return ()
    hooks = problem.walking
    if hooks is None or hooks.encode is None:
        raise one_line_error(f"{spec.source}: space.drop_unserved: problem {problem.name!r} has no topology "
                             "subspaces; expected a walking co-design problem")
    from codesign.walking.design import Design

    pool_of = {g.name: p.name for p in pools for g in p.groups}
    out = []
    for dropped in spec.unserved:
        groups, _ = hooks.encode(Design({}, dropped.topology, dropped.actuators))
        for group in groups:                # a subspace the spec's pools do not hold is not there anyway
            if group in pool_of:
                out.append((f"{pool_of[group]}.{group}",))
    return tuple(out)


def build_space(spec: Spec, problem) -> Space:
    """The problem's default space with the spec's overrides, exclusions and freezing.

    ``space.parameters``: with a problem that declares parameters, each entry overrides the
    bounds/init of one of them, inside the problem's own range (unknown names and wider
    bounds are errors); otherwise they declare the parameters. ``space.pools``: replace the problem's pools; without any pools the space
    is plain PSO (one group of all parameters).
    """
    declared = {p.name: p for p in problem.parameters}
    params = dict(declared)
    for pname, entry in spec.parameters.items():
        path = f"space.parameters.{pname}"
        if declared and pname not in declared:
            raise one_line_error(f"{spec.source}: {path}: unknown parameter of problem {problem.name!r}"
                                 f"{nearest(pname, declared)}; expected one of {listed(declared)}")
        base = declared.get(pname)
        if base is None and "bounds" not in entry:
            raise one_line_error(f"{spec.source}: {path}.bounds: missing; expected [low, high]")
        low, high = entry.get("bounds", (base.low, base.high) if base else None)
        if base is not None and not base.low <= low < high <= base.high:
            raise one_line_error(f"{spec.source}: {path}.bounds: {[low, high]} outside the range of problem "
                                 f"{problem.name!r} [{base.low:g}, {base.high:g}]; expected bounds inside it")
        init = entry.get("init", (low, high) if "bounds" in entry else base.init_range)
        if init[0] < low or init[1] > high:
            raise one_line_error(f"{spec.source}: {path}.init: {list(init)} outside the bounds [{low}, {high}]; "
                            f"expected a range inside the bounds")
        params[pname] = Parameter(pname, float(low), float(high), float(init[0]), float(init[1]))
    if not params:
        raise one_line_error(f"{spec.source}: space.parameters: none declared; expected at least one parameter")
    pools = spec.pools or problem.pools or (Pool("all", (Group("all", tuple(params)),)),)
    where = "space.pools" if spec.pools else f"the pools of problem {problem.name!r}"
    for pool in pools:
        for group in pool.groups:
            for pname in group.parameters:
                if pname not in params:
                    raise one_line_error(f"{spec.source}: {where}: group {pool.name}.{group.name} uses unknown "
                                    f"parameter {pname!r}; expected one of {listed(params)}")
    labels = {f"{p.name}.{g.name}" for p in pools for g in p.groups}
    for k, combo in enumerate(spec.exclude):
        for label in combo:
            if label not in labels:
                raise one_line_error(f"{spec.source}: space.exclude[{k}]: unknown group {label!r}; "
                                f"expected \"pool.group\" names")
    pool_groups = {p.name: [g.name for g in p.groups] for p in pools}
    for pool_name, group in spec.freeze.pools.items():
        if pool_name not in pool_groups:
            raise one_line_error(f"{spec.source}: freeze.pools.{pool_name}: unknown pool; "
                            f"expected one of {', '.join(pool_groups)}")
        if group not in pool_groups[pool_name]:
            raise one_line_error(f"{spec.source}: freeze.pools.{pool_name}: unknown group {group!r}; "
                            f"expected one of {listed(pool_groups[pool_name])}")
    start = placed_start(spec, problem, params)
    points = len(spec.seeds) + bool(start)
    if points > spec.pso.particles:
        raise one_line_error(f"{spec.source}: space.seeds: {points} start points for {spec.pso.particles} "
                             f"particles; expected at most one per particle")
    for table, values in (("freeze.parameters", spec.freeze.parameters), ("space.start", start),
                          *((f"space.seeds[{k}]", seed) for k, seed in enumerate(spec.seeds))):
        for pname, value in values.items():
            if pname not in params:
                raise one_line_error(f"{spec.source}: {table}.{pname}: unknown parameter; "
                                     f"expected one of {listed(params)}")
            if not params[pname].low <= value <= params[pname].high:
                raise one_line_error(f"{spec.source}: {table}.{pname}: {value} outside the bounds "
                                     f"[{params[pname].low}, {params[pname].high}]")
    try:
        space = Space(tuple(params.values()), tuple(pools), exclude=spec.exclude + unserved_exclusions(spec, problem, pools),
                      frozen_pools=dict(spec.freeze.pools), frozen_parameters=dict(spec.freeze.parameters),
                      valid=problem.valid, start=start, seeds=spec.seeds, start_spread=spec.start_spread,
                      subspace_starts=subspace_starts(spec, problem, params))
    except ValueError as exc:
        raise one_line_error(f"{spec.source}: space: {exc}; expected at least one valid subspace") from None
    if spec.algorithm == "pso" and space.n_subspaces > 1:
        raise one_line_error(f"{spec.source}: optimizer.algorithm: \"pso\" with {space.n_subspaces} subspaces; "
                        f"expected \"mmpso\" (or freeze the pools)")
    return space
