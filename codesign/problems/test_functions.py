"""Test problems with known optima (thesis chapter 3): the six-hump camel function, its
lexicographic variant (Table 3.2), the MMPSO toy of section 3.2.2, and a shifted sphere
with an optional cost and injected faults (for the run machinery's tests)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Mapping

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


_SIX_HUMP_PARAMETERS = (Parameter("x", -2.0, 2.0), Parameter("y", -1.0, 1.0))

SIX_HUMP_CAMEL = Problem(
    "six_hump_camel", _six_hump, "six-hump camel function (thesis eq. 3.5), minimized",
    parameters=_SIX_HUMP_PARAMETERS, objectives=(Objective("f"),), metrics=("f", "fx", "fy"))

# Table 3.2: optimize f_x until f_x < 0.5, then f_y until f_y < -0.9, then f.
LEXICOGRAPHIC_SIX_HUMP = Problem(
    "lexicographic_six_hump", _six_hump, "six-hump camel with the lexicographic stages of Table 3.2",
    parameters=_SIX_HUMP_PARAMETERS,
    objectives=(Objective("fx", until=0.5), Objective("fy", until=-0.9), Objective("f")), metrics=("f", "fx", "fy"))


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
    objectives=(Objective("f", sense="maximize"),), metrics=("f",))


@dataclass(frozen=True)
class SphereSettings:
    """The sphere's settings: ``busy_s`` spins the CPU for that many seconds (a
    compute-bound stand-in for a simulation), ``sleep_s`` sleeps; ``raise_above``: raise
    ValueError when x > it; ``nan_below``: return NaN when x < it (fault injection for
    tests; None: never); ``count_warmups``: report how often the warm-up hook ran in this
    process (metric ``warmups``)."""

    busy_s: float = 0.0
    sleep_s: float = 0.0
    raise_above: float | None = None
    nan_below: float | None = None
    count_warmups: bool = False


def parse_sphere_settings(table: Mapping[str, Any]) -> SphereSettings:
    """The sphere's ``parse_settings``: each key of :class:`SphereSettings`, of its type
    (durations >= 0); anything else is one UserError line."""
    kinds = {"busy_s": "number >= 0", "sleep_s": "number >= 0", "raise_above": "number",
             "nan_below": "number", "count_warmups": "boolean"}
    for key, value in table.items():
        kind = kinds.get(key)
        if kind is None:
            raise UserError(f"evaluation.{key}: unknown key for problem 'sphere'; expected one of {', '.join(kinds)}")
        number = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
        ok = isinstance(value, bool) if kind == "boolean" else number and (kind == "number" or value >= 0)
        if not ok:
            raise UserError(f"evaluation.{key}: got {shown(value)}; expected a "
                            f"{'finite ' if kind != 'boolean' else ''}{kind}")
    return SphereSettings(**{k: (v if isinstance(v, bool) else float(v)) for k, v in table.items()})


def _sphere(params: dict, context: EvalContext) -> EvalRecord:
    """sum (p - 0.3)^2 over the parameters, with the optional cost and injected faults of
    :class:`SphereSettings`."""
    settings = context.settings or SphereSettings()
    if settings.busy_s:
        end = time.perf_counter() + settings.busy_s
        while time.perf_counter() < end:
            pass
    if settings.sleep_s:
        time.sleep(settings.sleep_s)
    x = params.get("x", 0.0)
    if settings.raise_above is not None and x > settings.raise_above:
        raise ValueError(f"x = {x:.3f} above {settings.raise_above}")
    if settings.nan_below is not None and x < settings.nan_below:
        return EvalRecord("ok", metrics={"f": math.nan})
    metrics = {"f": sum((v - 0.3) ** 2 for v in params.values())}
    if settings.count_warmups:
        metrics["warmups"] = float(_SPHERE_WARMUPS[0])
    return EvalRecord("ok", metrics=metrics)


_SPHERE_WARMUPS = [0]


def _sphere_warmup(settings: SphereSettings) -> None:
    """Stands for compiling kernels: counts its calls in this process."""
    _SPHERE_WARMUPS[0] += 1


SPHERE = Problem(
    "sphere", _sphere, "shifted sphere with optional evaluation cost and injected faults",
    parameters=tuple(Parameter(n, -1.0, 1.0) for n in ("x", "y", "z")),
    objectives=(Objective("f"),), parse_settings=parse_sphere_settings, warmup=_sphere_warmup,
    metrics=("f", "warmups"))
