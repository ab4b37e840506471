"""Test problems with known optima (thesis chapter 3): the six-hump camel function, its
lexicographic variant (Table 3.2), the MMPSO toy of section 3.2.2, and a shifted sphere
with an optional cost and injected faults (for the run machinery's tests)."""

from __future__ import annotations

import math
import time

from codesign.errors import UserError, shown
from codesign.objectives import Objective
from codesign.types import Group, Parameter, Pool
from codesign.problems.base import Problem
from codesign.types import EvalContext, EvalRecord


def six_hump_parts(x: float, y: float) -> tuple[float, float, float]:
    """Thesis eq. 3.14-3.16: f_x = (4 - 2.1 x^2 + x^4/3) x^2, f_y = (-4 + 4 y^2) y^2, f_xy = x y."""
    return (4.0 - 2.1 * x * x + x ** 4 / 3.0) * x * x, (-4.0 + 4.0 * y * y) * y * y, x * y


def _six_hump(params: dict, context: EvalContext) -> EvalRecord:
    """Eq. 3.5/3.17: f = f_x + f_y + f_xy; minima -1.0316 at (0.0898, -0.7126), (-0.0898, 0.7126)."""
    fx, fy, fxy = six_hump_parts(params["x"], params["y"])
    return EvalRecord("ok", metrics={"f": fx + fy + fxy, "fx": fx, "fy": fy})


def check_settings(allowed: dict[str, str], problem: str):
    """A check hook for a problem whose [evaluation] keys are ``allowed``: name -> kind
    ("number >= 0", "number", "boolean"); anything else is one UserError line."""
    def check(settings: dict) -> None:
        for key, value in settings.items():
            kind = allowed.get(key)
            if kind is None:
                expected = f"one of {', '.join(allowed)}" if allowed else "no keys (it takes no settings)"
                raise UserError(f"evaluation.{key}: unknown key for problem {problem!r}; expected {expected}")
            number = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
            ok = (isinstance(value, bool) if kind == "boolean" else
                  number and (kind == "number" or value >= 0))
            if not ok:
                raise UserError(f"evaluation.{key}: got {shown(value)}; expected a {'finite ' if kind != 'boolean' else ''}{kind}")
    return check


_SIX_HUMP_PARAMETERS = (Parameter("x", -2.0, 2.0), Parameter("y", -1.0, 1.0))

SIX_HUMP_CAMEL = Problem(
    "six_hump_camel", _six_hump, "six-hump camel function (thesis eq. 3.5), minimized",
    parameters=_SIX_HUMP_PARAMETERS, objectives=(Objective("f"),),
    check=check_settings({}, "six_hump_camel"), metrics=("f", "fx", "fy"))

# Table 3.2: optimize f_x until f_x < 0.5, then f_y until f_y < -0.9, then f.
LEXICOGRAPHIC_SIX_HUMP = Problem(
    "lexicographic_six_hump", _six_hump, "six-hump camel with the lexicographic stages of Table 3.2",
    parameters=_SIX_HUMP_PARAMETERS,
    objectives=(Objective("fx", until=0.5), Objective("fy", until=-0.9), Objective("f")),
    check=check_settings({}, "lexicographic_six_hump"), metrics=("f", "fx", "fy"))


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
    objectives=(Objective("f", sense="maximize"),),
    check=check_settings({}, "mmpso_toy"), metrics=("f",))


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
    objectives=(Objective("f"),), warmup=_sphere_warmup,
    check=check_settings({"busy_s": "number >= 0", "sleep_s": "number >= 0", "raise_above": "number",
                          "nan_below": "number", "count_warmups": "boolean"}, "sphere"),
    metrics=("f", "warmups"))
