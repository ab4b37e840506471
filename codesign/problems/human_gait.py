"""Problem ``human_gait`` (thesis 4.1.2): the unaugmented human, step impedance at hip,
knee and ankle with a 4-point reference and shared step timing (Table 4.3, "step": 45
parameters), plain PSO, Table 4.2 objectives, 1.3 m/s at 0.9 Hz. Problem
``human_gait_balance`` (issue 31): the same law with SIMBICON's stance-hip balance term,
the hip servoing the torso's world pitch over an arc of its phase (51 parameters)."""

from __future__ import annotations

import math
from typing import Mapping

from codesign.control import signals as sg
from codesign.control.parameters import ControlLayout, human_layout
from codesign.types import Parameter
from codesign.problems.base import Problem, WalkingHooks
from codesign.problems.walking import (METRICS, unit_of, WalkingProblemSettings, check_walking_design, cost_notes,
                                       parse_human_settings, replay_design, walk, warmup_settings)
from codesign.types import EvalContext, EvalRecord
from codesign.walking import Design
from codesign.walking.setup import has_hip_torso_feedback
from codesign.problems import objectives as ob


def human_gait_layout(hip_torso_feedback: bool = False) -> ControlLayout:
    """Table 4.3 "step": hip, knee, ankle; 4-point reference, step K and D sharing their
    transition times (15 parameters per joint, 45 in all); ``hip_torso_feedback``: the
    hip's torso term too (6 more)."""
    return human_layout(sg.STEP, reference_points=4, hip_torso_feedback=hip_torso_feedback)


def human_params_error(params: Mapping[str, float]) -> EvalRecord | None:
    """A failed record naming the first parameter of :func:`human_gait_layout` (with the
    hip's torso term where ``params`` name it) that is missing, not a finite number or
    outside its bounds; None when all are fine."""
    for name, (low, high) in human_gait_layout(has_hip_torso_feedback(params)).bounds().items():
        value = params.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or not low <= value <= high:
            return EvalRecord.failed(f"decode: parameter {name}: {value!r}; expected a number in [{low}, {high}]")
    return None


def evaluate(params: dict[str, float], context: EvalContext) -> EvalRecord:
    """The human-gait problem's evaluate: WALK's evaluation of the unaugmented human (its
    defaults: 1.3 m/s target, 0.9 Hz; the record's own stages from Table 4.2)."""
    settings = context.settings or parse_human_settings({})
    bad = human_params_error(params)
    if bad is not None:
        return bad
    return walk(Design(dict(params)), settings.walk)


def decode(groups: tuple[str, ...], params: Mapping[str, float], settings) -> Design:
    """The human design of a candidate (ValueError naming a bad parameter)."""
    bad = human_params_error(params)
    if bad is not None:
        raise ValueError(bad.message.removeprefix("decode: "))
    return Design(dict(params))


def check_design(design: Design, settings: WalkingProblemSettings, where: str = "design") -> None:
    """``WalkingHooks.check_design``: :func:`~codesign.problems.walking.check_walking_design`."""
    check_walking_design(design, settings.walk, where, augmented=False)


def warmup(settings: WalkingProblemSettings) -> None:
    """Compile the kernels once in this process (a 50-ms rollout of the mid-bounds design)."""
    middle = {n: 0.5 * (lo + hi) for n, (lo, hi) in human_gait_layout().bounds().items()}
    evaluate(middle, EvalContext(settings=WalkingProblemSettings(warmup_settings(settings.walk))))


WALKING = WalkingHooks(decode=decode, check_design=check_design, replay=replay_design)


def problem() -> Problem:
    return _problem("human_gait", False, "unaugmented human, step impedance at hip, knee and "
                    "ankle (thesis chapter 4, Table 4.2 objectives)")


def balance_problem() -> Problem:
    return _problem("human_gait_balance", True, "unaugmented human, step impedance at hip, "
                    "knee and ankle, the hip servoing the torso's pitch (SIMBICON's stance hip)")


def _problem(name: str, hip_torso_feedback: bool, description: str) -> Problem:
    parameters = tuple(Parameter(n, lo, hi)
                       for n, (lo, hi) in human_gait_layout(hip_torso_feedback).bounds().items())
    return Problem(name, evaluate, description, parameters=parameters, objectives=ob.human_stages(),
                   parse_settings=parse_human_settings, warmup=warmup, notes=cost_notes,
                   metrics=METRICS, walking=WALKING, metric_unit=unit_of)
