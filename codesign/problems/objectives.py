"""Lexicographic objectives of the walking problems (thesis 3.3.2, Tables 4.2, 4.5, 5.3).

A stage is a :class:`codesign.objectives.Objective` (metric, sense, until), the form a job
spec's ``[[objectives]]`` takes; fitness is (stages satisfied in sequence, value of the
current stage, smaller is better), computed by :func:`codesign.objectives.score` -- one
implementation for the optimizer, ``codesign simulate`` and the tests. The walking
problems add the derived metric ``speed_assist_score`` (:func:`with_derived`) to WALK's.

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

from typing import Mapping

from codesign.model.morphology import MAX_SEGMENT_LENGTH as MAX_SEGMENT  # 0.7 m, Table 5.3
from codesign.objectives import Objective

SPEED_MATCH_MIN = 0.95       # Table 4.2 / 5.3
ASSIST_FRACTION_MAX = 0.1    # Table 5.3 (strict <)
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
