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
from codesign.problems.options import PRESETS, ProblemOptions
from codesign.problems.walking import WalkingProblemSettings, check_walking_design, walk, walk_robust, warmup_settings
from codesign.types import EvalRecord
from codesign.walking import Design

HUMAN = PRESETS["human_gait"]


def human_gait_layout(hip_torso_feedback: bool = False) -> ControlLayout:
    """Table 4.3 "step": hip, knee, ankle; 4-point reference, step K and D sharing their
    transition times (15 parameters per joint, 45 in all); ``hip_torso_feedback``: the
    hip's torso term too (6 more)."""
    return human_layout(sg.STEP, reference_points=4, hip_torso_feedback=hip_torso_feedback)


def parameter_error(params: Mapping[str, float], bounds: Mapping[str, tuple[float, float]]) -> str | None:
    """"parameter NAME: VALUE; expected a number in [low, high]" for the first of ``bounds``
    (name -> (low, high)) that ``params`` is missing, gives as no finite number or outside
    its bounds; None when all are fine."""
    for name, (low, high) in bounds.items():
        value = params.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or not low <= value <= high:
            return f"parameter {name}: {value!r}; expected a number in [{low}, {high}]"
    return None


def human_params_error(params: Mapping[str, float], hip_torso_feedback: bool = False) -> EvalRecord | None:
    """A failed record naming the first parameter of :func:`human_gait_layout` (with the
    hip's torso term under ``hip_torso_feedback``) that is missing, not a finite number or
    outside its bounds (:func:`parameter_error`); None when all are fine."""
    bad = parameter_error(params, human_gait_layout(hip_torso_feedback).bounds())
    return None if bad is None else EvalRecord.failed(f"decode: {bad}")


def run_human(design: Design, settings: WalkingProblemSettings) -> EvalRecord:
    """The human-gait problems' evaluation of a decoded design: WALK's walk of the
    unaugmented human (its defaults: 1.3 m/s target, 0.9 Hz), replayed under the settings'
    robust checks when it walks (:func:`~codesign.problems.walking.walk_robust`)."""
    return walk_robust(design, settings)


def decode(groups: tuple[str, ...], params: Mapping[str, float], settings, options: ProblemOptions = HUMAN) -> Design:
    """The human design of a candidate under the problem's ``options`` (its torso term;
    ValueError naming a bad parameter)."""
    bad = human_params_error(params, options.torso_feedback)
    if bad is not None:
        raise ValueError(bad.message.removeprefix("decode: "))
    return Design(dict(params))


def check_design(design: Design, settings: WalkingProblemSettings, where: str = "design") -> None:
    """``WalkingHooks.check_design``: :func:`~codesign.problems.walking.check_walking_design`."""
    check_walking_design(design, settings.walk, where, augmented=False)


def warmup(settings: WalkingProblemSettings) -> None:
    """Compile the kernels once in this process (a 50-ms rollout of the mid-bounds design)."""
    middle = {n: 0.5 * (lo + hi) for n, (lo, hi) in human_gait_layout().bounds().items()}
    walk(Design(middle), warmup_settings(settings.walk))
