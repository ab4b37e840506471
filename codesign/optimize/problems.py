"""Problem registry and the built-in test problems.

A problem is a pure function ``evaluate(params, context) -> EvalRecord`` plus, optionally,
its default search space (parameters and pools), default lexicographic objectives and a
``warmup(settings)`` hook run once per worker (compile numba kernels there) and a
``check(settings)`` hook run on the driver before the run (bad input -> UserError).

Registering a problem (e.g. the co-design problem, by the walking issue): either add an
entry ``"name": "package.module:ATTRIBUTE"`` to :data:`PROBLEMS` (imported lazily, on the
driver and on each worker), or call :func:`register_problem` in a module that is imported
on both. ``ATTRIBUTE`` is a :class:`Problem`.

Fitness: when a problem has objectives (its own or the spec's ``[[objectives]]``), the
evaluation wrapper computes (stage, stage_value) from the returned metrics; otherwise the
problem sets ``stage``/``stage_value`` itself. See :mod:`codesign.optimize.evaluation`.
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import dataclass, field
from typing import Callable

from codesign.optimize.fitness import Objective
from codesign.optimize.space import Group, Parameter, Pool
from codesign.types import EvalContext, EvalRecord


@dataclass(frozen=True)
class Problem:
    name: str
    evaluate: Callable[[dict, EvalContext], EvalRecord]
    description: str = ""
    parameters: tuple[Parameter, ...] = ()
    pools: tuple[Pool, ...] = ()
    objectives: tuple[Objective, ...] = ()
    warmup: Callable[[dict], None] | None = None
    valid: Callable[[tuple[str, ...]], bool] | None = None   # optional subspace rule
    # optional check of the spec's [evaluation] table, run on the driver before a run
    # starts or resumes; raises codesign.errors.UserError (one line) for bad input
    check: Callable[[dict], None] | None = None


# name -> "module:attribute" (lazy), filled further by register_problem
PROBLEMS: dict[str, str] = {
    "six_hump_camel": "codesign.optimize.problems:SIX_HUMP_CAMEL",
    "lexicographic_six_hump": "codesign.optimize.problems:LEXICOGRAPHIC_SIX_HUMP",
    "mmpso_toy": "codesign.optimize.problems:MMPSO_TOY",
    "sphere": "codesign.optimize.problems:SPHERE",
    # the co-design problem (walking issue); resolved only once that module exists
    "exo_codesign": "codesign.walking.problem:PROBLEM",
    "human_gait": "codesign.walking.problem:HUMAN_GAIT",
    "anthropomorphic_baseline": "codesign.walking.problem:ANTHROPOMORPHIC_BASELINE",
}
_REGISTERED: dict[str, Problem] = {}


def register_problem(problem: Problem) -> None:
    _REGISTERED[problem.name] = problem


def problem_names() -> list[str]:
    return sorted(set(PROBLEMS) | set(_REGISTERED))


def get_problem(name: str) -> Problem:
    """The problem registered under ``name``; KeyError/ImportError when unavailable."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    module_name, attribute = PROBLEMS[name].split(":")
    problem = getattr(importlib.import_module(module_name), attribute)
    _REGISTERED[name] = problem
    return problem


# -- test problems ------------------------------------------------------------------------

def six_hump_parts(x: float, y: float) -> tuple[float, float, float]:
    """Thesis eq. 3.14-3.16: f_x = (4 - 2.1 x^2 + x^4/3) x^2, f_y = (-4 + 4 y^2) y^2, f_xy = x y."""
    return (4.0 - 2.1 * x * x + x ** 4 / 3.0) * x * x, (-4.0 + 4.0 * y * y) * y * y, x * y


def _six_hump(params: dict, context: EvalContext) -> EvalRecord:
    """Eq. 3.5/3.17: f = f_x + f_y + f_xy; minima -1.0316 at (0.0898, -0.7126), (-0.0898, 0.7126)."""
    fx, fy, fxy = six_hump_parts(params["x"], params["y"])
    return EvalRecord("ok", metrics={"f": fx + fy + fxy, "fx": fx, "fy": fy})


_SIX_HUMP_PARAMETERS = (Parameter("x", -2.0, 2.0), Parameter("y", -1.0, 1.0))

SIX_HUMP_CAMEL = Problem(
    "six_hump_camel", _six_hump, "six-hump camel function (thesis eq. 3.5), minimized",
    parameters=_SIX_HUMP_PARAMETERS, objectives=(Objective("f"),))

# Table 3.2: optimize f_x until f_x < 0.5, then f_y until f_y < -0.9, then f.
LEXICOGRAPHIC_SIX_HUMP = Problem(
    "lexicographic_six_hump", _six_hump, "six-hump camel with the lexicographic stages of Table 3.2",
    parameters=_SIX_HUMP_PARAMETERS,
    objectives=(Objective("fx", until=0.5), Objective("fy", until=-0.9), Objective("f")))


def _mmpso_toy(params: dict, context: EvalContext) -> EvalRecord:
    """§3.2.2 toy: group (x): f = x; group (x, y): f = 2 - (|x - 0.5| + |y - 0.5|); maximized."""
    if "y" in params:
        f = 2.0 - (abs(params["x"] - 0.5) + abs(params["y"] - 0.5))
    else:
        f = params["x"]
    return EvalRecord("ok", metrics={"f": f})


MMPSO_TOY = Problem(
    "mmpso_toy", _mmpso_toy, "the thesis's MMPSO example: subspaces {(x)} and {(x, y)}",
    parameters=(Parameter("x", 0.0, 1.0), Parameter("y", 0.0, 1.0)),
    pools=(Pool("shape", (Group("x", ("x",)), Group("xy", ("x", "y")))),),
    objectives=(Objective("f", sense="maximize"),))


def _sphere(params: dict, context: EvalContext) -> EvalRecord:
    """sum (p - 0.3)^2 over the parameters, with optional cost and injected faults.

    settings: ``busy_s`` spins the CPU for that many seconds (a compute-bound stand-in for
    a simulation), ``sleep_s`` sleeps; ``raise_above``: raise ValueError when x > it;
    ``nan_below``: return NaN when x < it (fault-injection for tests); ``count_warmups``:
    report how often the warm-up hook ran in this process (metric ``warmups``).
    """
    settings = context.settings
    if settings.get("busy_s"):
        end = time.perf_counter() + float(settings["busy_s"])
        while time.perf_counter() < end:
            pass
    if settings.get("sleep_s"):
        time.sleep(float(settings["sleep_s"]))
    x = params.get("x", 0.0)
    if "raise_above" in settings and x > settings["raise_above"]:
        raise ValueError(f"x = {x:.3f} above {settings['raise_above']}")
    if "nan_below" in settings and x < settings["nan_below"]:
        return EvalRecord("ok", metrics={"f": math.nan})
    metrics = {"f": sum((v - 0.3) ** 2 for v in params.values())}
    if settings.get("count_warmups"):
        metrics["warmups"] = float(_SPHERE_WARMUPS[0])
    return EvalRecord("ok", metrics=metrics)


_SPHERE_WARMUPS = [0]


def _sphere_warmup(settings: dict) -> None:
    """Stands for compiling kernels: counts its calls in this process."""
    _SPHERE_WARMUPS[0] += 1


SPHERE = Problem(
    "sphere", _sphere, "shifted sphere with optional evaluation cost and injected faults",
    parameters=tuple(Parameter(n, -1.0, 1.0) for n in ("x", "y", "z")),
    objectives=(Objective("f"),), warmup=_sphere_warmup)
