"""Problem ``human_gait`` (thesis 4.1.2): the unaugmented human, step impedance at hip,
knee and ankle with a 4-point reference and shared step timing (Table 4.3, "step": 45
parameters), plain PSO, Table 4.2 objectives, 1.3 m/s at 0.9 Hz."""

from __future__ import annotations

import math
from typing import Mapping

from codesign.control import signals as sg
from codesign.control.parameters import ControlLayout, human_layout
from codesign.types import Parameter
from codesign.problems.base import Problem
from codesign.errors import UserError
from codesign.problems.walking import METRICS, check_settings as check_walk_settings, short_settings, walk
from codesign.types import EvalContext, EvalRecord
from codesign.walking import Design
from codesign.problems import objectives as ob


def human_gait_layout() -> ControlLayout:
    """Table 4.3 "step": hip, knee, ankle; 4-point reference, step K and D sharing their
    transition times (15 parameters per joint, 45 in all)."""
    return human_layout(sg.STEP, reference_points=4)


def human_params_error(params: Mapping[str, float]) -> EvalRecord | None:
    """A failed record naming the first parameter of :func:`human_gait_layout` that is
    missing, not a finite number or outside its bounds; None when all are fine."""
    for name, (low, high) in human_gait_layout().bounds().items():
        value = params.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or not low <= value <= high:
            return EvalRecord.failed(f"decode: parameter {name}: {value!r}; expected a number in [{low}, {high}]")
    return None


def evaluate(params: dict[str, float], context: EvalContext) -> EvalRecord:
    """The human-gait problem's evaluate: WALK's evaluation of the unaugmented human (its
    defaults: 1.3 m/s target, 0.9 Hz; the record's own stages from Table 4.2)."""
    if context.settings.get("human_control", "step") != "step":
        return EvalRecord.failed("evaluation.human_control: this problem searches the step "
                                 "layout of Table 4.3; expected \"step\"")
    bad = human_params_error(params)
    if bad is not None:
        return bad
    return walk(Design(dict(params)), context.settings)


def check(settings: dict) -> None:
    """Driver-side check of the [evaluation] table (the problem's ``check`` hook)."""
    if settings.get("human_control", "step") != "step":
        raise UserError(f"evaluation.human_control: {settings['human_control']!r}; expected \"step\" "
                        f"(this problem searches the step layout of Table 4.3)")
    check_walk_settings(settings)


def warmup(settings: dict) -> None:
    """Compile the kernels once in this process (a 50-ms rollout of the mid-bounds design)."""
    middle = {n: 0.5 * (lo + hi) for n, (lo, hi) in human_gait_layout().bounds().items()}
    evaluate(middle, EvalContext(settings=short_settings(settings)))


def problem() -> Problem:
    parameters = tuple(Parameter(n, lo, hi) for n, (lo, hi) in human_gait_layout().bounds().items())
    stages = ob.human_stages()
    return Problem("human_gait", evaluate,
                   "unaugmented human, step impedance at hip, knee and ankle (thesis chapter 4, "
                   "Table 4.2 objectives)",
                   parameters=parameters, objectives=stages, warmup=warmup, check=check,
                   metrics=METRICS)
