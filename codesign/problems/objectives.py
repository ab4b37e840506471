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

The problems' defaults (issue 15) are these tables with stages that reject gaits and
designs no person could walk or wear, each an "until" threshold (never a penalty weight),
placed after the design checks and before the speed and cost stages -- the thesis names
interaction forces as its first piece of future work (5.6). :func:`codesign_stages`::

    time_fraction >= 1; longest_segment <= 0.7 m; singularity <= 0;
    foot_slip_fraction <= 0.05      (a loaded foot slides in at most 5 % of stance)
    non_contact_time <= 0.05 s      (walking has no flight phase)
    grf_peak_bw <= 3                (30-ms ground reaction; walking peaks near 1.2 BW)
    knee_hyperextension_peak_deg <= 5
    actuator_speed_ratio_peak <= 1  (no actuator driven beyond its maximum speed; with
                                     motors only -- the torque ratio is <= 1 by saturation)
    actuator_thermal_ratio <= 1     (every motor's RMS torque within its continuous rating)
    interaction_force_peak_bw <= 2.5   (every cuff and human hip/knee joint)
    cuff_force_peak <= 700 N        (the force a person tolerates at a cuff; with cuffs only)
    torso_pitch_rms_deg <= 5        (an upright torso: within the assist's neutral zone)
    knee_flexion_stance_mean_deg <= 30   (no crouch gait)
    speed_assist_score >= 1; minimize power

The posture stages come last before speed: they reject the crouched, forward-leaning
gaits that rock in place on the assist (a design whose torso leans outside the assist's
zone all the time scores speed_assist_score = 0 whatever it does, a plateau the
search cannot climb; the torso's RMS pitch is graded there).

:func:`human_stages` adds the slip, ground-reaction, knee and posture stages to Table 4.2
before its torque stage, and then those of a human-like gait (issue 31, :data:`HUMAN_LIKE`)::

    stride_r_hip >= 0.96; stride_r_knee >= 0.90; stride_r_ankle >= 0.70
    ankle_plantarflexion_peak_deg >= 10; grf_peak_bw <= 1.5; grf_peak_bw_start <= 1.5 The limits and their sources: :data:`LIMITS`. A spec's
``[[objectives]]`` replaces the stages (e.g. the thesis's Table 5.3 as printed, for a
comparison with the thesis).
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

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


# --------------------------------------------------------------------------- issue 15 stages
# Thresholds of the physical-credibility stages (docs/walking.md, "Objectives"):
LIMITS = {
    # a foot may slide briefly at heel strike and toe-off; the human walking designs slide
    # in 0.4-1 % of stance (docs/designs), the rejected co-design in 62 %
    "foot_slip_fraction": 0.05,
    # walking keeps one foot on the ground (the 0.05 s tolerance)
    "non_contact_time": 0.05,
    # vertical ground reaction over 30 ms: walking peaks near 1.1-1.2 BW (Keller et al.,
    # Clin Biomech 1996); 3 BW leaves room for a rigid model's heel strike
    "grf_peak_bw": 3.0,
    # the knee's passive hyperextension range is about 5 deg (AAOS norms)
    "knee_hyperextension_peak_deg": 5.0,
    "actuator_speed_ratio_peak": 1.0,
    # a motor's RMS torque over the walk within its continuous (thermal) rating (issue 30):
    # the datasheets' rated torque is what the winding carries without overheating
    "actuator_thermal_ratio": 1.0,
    # in-vivo hip and knee contact forces in walking: 2.4 and 2.6 BW with the muscles'
    # forces (Bergmann et al., J Biomech 2001; Kutzner et al., J Biomech 2010); a model
    # without muscles, and every cuff, must stay below them
    "interaction_force_peak_bw": 2.5,
    # comfort limit of a force applied to the thigh / shank through a cuff: 867 +- 296 N
    # and 702 +- 220 N (Yandell, Ziemnicki, McDonald, Zelik, PLOS ONE 15(2):e0228536, 2020);
    # the shank's mean bounds every cuff (individual limits go down to 250 N)
    "cuff_force_peak": 700.0,
    # the pitch assist acts beyond 5 deg from upright (thesis 4.1.1): a torso held outside
    # that zone on RMS leans on the assist; the human walking designs: 2.3 deg
    "torso_pitch_rms_deg": 5.0,
    # crouch gait is defined by the knee's flexion in stance, most often a minimum above
    # 20-30 deg (systematic review: Gait & Posture 82:153-160, 2020); the mean >= the
    # minimum, so 30 deg rejects every gait such a definition calls crouch. Winter's
    # nominal gait: 12.6 deg over stance (0-60 % of the cycle); human walking design 20.5
    "knee_flexion_stance_mean_deg": 30.0,
}


POSTURE = ("torso_pitch_rms_deg", "knee_flexion_stance_mean_deg")

# A gait a biomechanist would call human (issue 31), the human-gait problem's stages after
# the credibility ones: (metric, sense, threshold). The correlations per stride with
# Winter's gait are thesis Table 4.4's best (step mode: hip 0.96, knee 0.90) with the
# ankle raised from its 0.54 to the 0.70; a push-off of at least 10 deg of
# plantarflexion around toe-off (Winter's reaches 16-20 deg; Winter, Biomechanics and
# Motor Control of Human Movement, 4th ed., Table A.2); the 30-ms ground reaction at
# most 1.5 BW over the whole walk: walking at 1.3 m/s peaks near 1.1-1.3 BW (Keller et
# al., Clin Biomech 1996), the start (first half) included.
class ThesisHumanGait(NamedTuple):
    """A human gait of the thesis's Table 4.4: per-stride correlations with Winter's hip,
    knee and ankle, and the torque RMS (N m) it took."""

    hip_r: float
    knee_r: float
    ankle_r: float
    torque_rms: float


TABLE_4_4_STEP = ThesisHumanGait(0.96, 0.90, 0.54, 108.6)   # step mode, the best of Table 4.4

HUMAN_LIKE = (("stride_r_hip", "maximize", TABLE_4_4_STEP.hip_r), ("stride_r_knee", "maximize", TABLE_4_4_STEP.knee_r),
              ("stride_r_ankle", "maximize", 0.70), ("ankle_plantarflexion_peak_deg", "maximize", 10.0),
              ("grf_peak_bw", "minimize", 1.5), ("grf_peak_bw_start", "minimize", 1.5))


def _below(*metrics: str) -> tuple[Objective, ...]:
    return tuple(Objective(name, "minimize", LIMITS[name]) for name in metrics)


def codesign_stages(motors: bool = True) -> tuple[Objective, ...]:
    """The co-design problems' default stages (module docstring); ``motors=False`` (the
    anthropomorphic baseline, which has neither motors nor cuffs) leaves out the actuator
    and cuff stages."""
    thesis = (Objective("time_fraction", "maximize", 1.0),) + table_5_3()[1:]
    gait = ("foot_slip_fraction", "non_contact_time", "grf_peak_bw", "knee_hyperextension_peak_deg")
    wear = (("actuator_speed_ratio_peak", "actuator_thermal_ratio") if motors else ()) + ("interaction_force_peak_bw",) \
        + (("cuff_force_peak",) if motors else ())
    return thesis[:3] + _below(*gait) + _below(*wear) + _below(*POSTURE) + thesis[3:]


def human_stages() -> tuple[Objective, ...]:
    """The human-gait problem's default stages: Table 4.2 (stage 1 on time_fraction) with
    the slip, ground-reaction, knee and posture stages, then the human-like gait's
    (:data:`HUMAN_LIKE`, issue 31), before the torque stage."""
    thesis = (Objective("time_fraction", "maximize", 1.0),) + table_4_2()[1:]
    human_like = tuple(Objective(metric, sense, until) for metric, sense, until in HUMAN_LIKE)
    return thesis[:-1] + _below("foot_slip_fraction", "grf_peak_bw", "knee_hyperextension_peak_deg") \
        + _below(*POSTURE) + human_like + thesis[-1:]
