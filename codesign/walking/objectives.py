"""Lexicographic objectives of the walking problems (thesis 3.3.2, Tables 4.2, 4.5, 5.3).

A stage is OPT's :class:`codesign.optimize.fitness.Objective` (metric, sense, until), the
form a job spec's ``[[objectives]]`` takes; fitness is (stages satisfied in sequence, value
of the current stage, smaller is better), computed by
:func:`codesign.optimize.fitness.lexicographic` -- one implementation for the optimizer,
``codesign simulate`` and the tests.

Table 5.3 (co-design, the default)::

    1. time                 maximize until time >= max_time
    2. longest_segment      minimize until <= 0.7 m
    3. singularity          minimize until <= 0   (0: not singular along the gait)
    4. speed_assist_score   maximize until >= 1   (see below)
    5. power                minimize

Stage 4, "speed match - no assist time, until speed match >= 0.95 & assist time < 0.1",
aggregates the two multiplicatively (5.4.3)::

    product = speed_match * (1 - assist_fraction)                 (both in [0, 1])
    speed_assist_score = product          while not (speed_match >= 0.95 and
                                                     assist_fraction < 0.1)
                       = 1 + product      once both hold

so the single threshold "until >= 1" of a stage holds exactly when both conditions do
(product <= 1, and product = 1 implies both), and before that the stage maximizes the
thesis's product. The assist time is the fraction of the measurement window (the second
half of the evaluation) with the pitch assist active.

Table 4.2 (unaugmented human, chapter 4; "torque" is ``torque_rms``)::

    time >= max_time; speed_match >= 0.95; speed_std <= 0.1; assist_fraction <= 0;
    non_contact_time <= 0; minimize torque_rms

Table 4.5 (4.2.3, hard contacts, free speed): time >= max_time; speed >= 0.3 m/s;
assist_fraction <= 0; minimize cost_of_transport.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from codesign.errors import UserError
from codesign.optimize.fitness import SENSES, Objective, lexicographic
from codesign.types import STATUS_OK, EvalRecord

SPEED_MATCH_MIN = 0.95       # Table 4.2 / 5.3
ASSIST_FRACTION_MAX = 0.1    # Table 5.3 (strict <)
from codesign.model.morphology import MAX_SEGMENT_LENGTH as MAX_SEGMENT  # 0.7 m, Table 5.3
MIN_SPEED = 0.3              # m/s, Table 4.5


def speed_assist_score(speed_match: float, assist_fraction: float) -> float:
    """Stage-4 metric of Table 5.3 (module docstring)."""
    product = speed_match * (1.0 - assist_fraction)
    done = speed_match >= SPEED_MATCH_MIN and assist_fraction < ASSIST_FRACTION_MAX
    return 1.0 + product if done else product


def with_derived(metrics: Mapping[str, float]) -> dict[str, float]:
    """Metrics plus the aggregated ones the objectives use (``speed_assist_score``)."""
    out = dict(metrics)
    if "speed_match" in out and "assist_fraction" in out:
        out["speed_assist_score"] = speed_assist_score(out["speed_match"], out["assist_fraction"])
    return out


def table_5_3(max_time: float = 10.0, max_segment: float = MAX_SEGMENT) -> tuple[Objective, ...]:
    return (Objective("time", "maximize", max_time),
            Objective("longest_segment", "minimize", max_segment),
            Objective("singularity", "minimize", 0.0),
            Objective("speed_assist_score", "maximize", 1.0),
            Objective("power", "minimize"))


def table_4_2(max_time: float = 10.0) -> tuple[Objective, ...]:
    return (Objective("time", "maximize", max_time),
            Objective("speed_match", "maximize", SPEED_MATCH_MIN),
            Objective("speed_std", "minimize", 0.1),
            Objective("assist_fraction", "minimize", 0.0),
            Objective("non_contact_time", "minimize", 0.0),
            Objective("torque_rms", "minimize"))


def table_4_5(max_time: float = 10.0, min_speed: float = MIN_SPEED) -> tuple[Objective, ...]:
    return (Objective("time", "maximize", max_time),
            Objective("speed", "maximize", min_speed),
            Objective("assist_fraction", "minimize", 0.0),
            Objective("cost_of_transport", "minimize"))


PRESETS = {"table_5_3": table_5_3, "table_4_2": table_4_2, "table_4_5": table_4_5}


def objectives_from_settings(settings: Mapping[str, Any], default: str = "table_5_3",
                             max_time: float = 10.0) -> tuple[Objective, ...]:
    """Stages from ``settings["objectives"]``: a preset name (``table_5_3``, ``table_4_2``,
    ``table_4_5``; built for ``max_time``) or a list of {metric, sense, until} tables (as a
    spec's ``[[objectives]]``). Absent: the ``default`` preset."""
    value = settings.get("objectives", default)
    if isinstance(value, str):
        if value not in PRESETS:
            raise UserError(f"evaluation.objectives: {value!r}; expected one of {sorted(PRESETS)} "
                            "or a list of {metric, sense, until} tables")
        return PRESETS[value](max_time)
    if not isinstance(value, list) or not value:
        raise UserError("evaluation.objectives: expected a preset name or a non-empty list of "
                        "{metric, sense, until} tables")
    out = []
    for k, entry in enumerate(value):
        path = f"evaluation.objectives[{k}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("metric"), str):
            raise UserError(f"{path}: expected a table with a metric name")
        sense = entry.get("sense", "minimize")
        if sense not in SENSES:
            raise UserError(f"{path}.sense: {sense!r}; expected one of {list(SENSES)}")
        until = entry.get("until")
        if until is not None and (isinstance(until, bool) or not isinstance(until, (int, float))
                                  or not math.isfinite(until)):
            raise UserError(f"{path}.until: {until!r}; expected a finite number")
        out.append(Objective(entry["metric"], sense, None if until is None else float(until)))
    return tuple(out)


def fitness(metrics: Mapping[str, float], objectives: tuple[Objective, ...]) -> tuple[int, float]:
    """(stages satisfied, value of the current stage; smaller is better)."""
    return lexicographic(with_derived(metrics), objectives)


def make_record(metrics: Mapping[str, float], objectives: tuple[Objective, ...],
                message: str = "", wall_s: float = 0.0) -> EvalRecord:
    """An ok :class:`EvalRecord` with the lexicographic fitness of ``metrics``.

    Metrics that are not finite (not measurable, e.g. a speed over an empty window after
    an early fall) are left out of the record rather than stored as NaN; the stages that
    would need them are never reached (time comes first), and a missing one that is needed
    makes the record failed, naming it.
    """
    finite = {k: float(v) for k, v in with_derived(metrics).items() if math.isfinite(float(v))}
    try:
        stage, value = lexicographic(finite, objectives)
    except KeyError as exc:
        failed = EvalRecord.failed(f"metric {exc.args[0]!r} needed by the objectives was not "
                                   f"measured ({message or 'no message'})", wall_s=wall_s)
        return dataclasses.replace(failed, metrics=finite)
    return EvalRecord(STATUS_OK, message, stage, float(value), finite, wall_s)
