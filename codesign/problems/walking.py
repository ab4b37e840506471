"""What the walking problems share: evaluating a design under a spec's ``[evaluation]``
table, and the metric ``time_fraction`` their first stage is stated on.

Stage 1 of Tables 5.3 and 4.2 ("time until time = maxtime") is stated on
``time_fraction`` = time survived / ``max_time`` (until >= 1): the same order for a fixed
``max_time``, and it stays right when a spec changes ``evaluation.max_time`` (a stage on
``time`` until 10 s could never be met by a 5-s evaluation).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from codesign.errors import UserError
from codesign.problems.objectives import with_derived
from codesign.types import EvalRecord
from codesign.walking import METRICS as WALK_METRICS, Design, WalkSettings, evaluate_detailed
from codesign.walking.rollout_base import RolloutSettings


# the metrics of a walking problem's records: WALK's and the two added here
METRICS = WALK_METRICS + ("speed_assist_score", "time_fraction")


def with_problem_metrics(record: EvalRecord, settings: Mapping[str, Any]) -> EvalRecord:
    """The record with the metrics the walking problems' objectives use besides WALK's:
    ``speed_assist_score`` (Table 5.3, :func:`codesign.problems.objectives.with_derived`)
    and ``time_fraction`` = time / max_time (module docstring). A failed record as it is."""
    if not record.ok:
        return record
    metrics = with_derived(record.metrics)
    if "time" in metrics:
        max_time = float(settings.get("max_time", RolloutSettings.max_time))
        metrics["time_fraction"] = metrics["time"] / max_time
    return dataclasses.replace(record, metrics=metrics)


def walk(design: Design, settings: Mapping[str, Any], human_model=None) -> EvalRecord:
    """WALK's evaluation plus the problems' metrics; a settings error is a failed record.
    ``human_model``: the unaugmented human's engine model to use instead of the human's
    (the anthropomorphic baseline's lumped model)."""
    if settings.get("optimize_frequency"):
        return EvalRecord.failed("evaluation.optimize_frequency: not part of this problem's "
                                 "space; expected false (the gait frequency is fixed at 0.9 Hz)")
    try:
        walk_settings = WalkSettings.from_dict(settings)
    except UserError as exc:
        return EvalRecord.failed(str(exc))
    record = evaluate_detailed(design, walk_settings, human_model=human_model)[0]
    return with_problem_metrics(record, settings)


def check_settings(settings: Mapping[str, Any]) -> None:
    """The walking problems' ``check`` hook: the ``[evaluation]`` table judged on the
    driver before a run starts (WALK's :meth:`WalkSettings.from_dict`: unknown keys, wrong
    types, out-of-range values), one UserError line naming the key -- inside a run the
    same mistakes would only make every evaluation fail."""
    if settings.get("optimize_frequency"):
        raise UserError("evaluation.optimize_frequency: not part of this problem's space; "
                        "expected false (the gait frequency is fixed at 0.9 Hz)")
    WalkSettings.from_dict(settings)


def short_settings(settings: Mapping[str, Any]) -> dict:
    """The settings with a 50-ms rollout (warm-up hooks: compile the kernels)."""
    return dict(settings, max_time=min(0.05, float(settings.get("max_time", 10.0))))
