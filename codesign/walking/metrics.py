"""Gait metrics of a rollout (thesis 4.1.2, 4.2.3, 5.4.3): the registry of every metric an
evaluation reports, the accumulator's slot layout, and the finalizers.

All metrics except ``time`` are measured over the second half of the evaluation period,
t >= max_time / 2 ("we ignore data from the first half of the evaluation period for all
measured objectives, except time", 4.1.2). The window starts at the first sample at or
after ``t_start`` and ends at the last sample; integrals use the trapezoidal rule between
consecutive samples (a sample after an impact at the same time adds nothing).

One metric, one place: :data:`REGISTRY` declares each metric (name, unit, one-line
definition, the compiled accumulator that feeds it, the finalizer that computes it). The
names an evaluation reports (``codesign.walking.METRICS``) and the metric table of
docs/walking.md (:func:`metric_table`) follow from it. The accumulator is one float64
array; its header slots (:data:`HEADER_SLOTS`) are numbered by their order of
declaration below, never by hand, and bound to module-level int constants (numba reads
them as compile-time constants). The compiled accumulators that fill it are in
:mod:`codesign.walking.accumulators`; the gait-agreement helpers (recorded angles against
Winter's gait) in :mod:`codesign.walking.gait_agreement`.
"""

from __future__ import annotations

import math
from typing import Mapping, NamedTuple

import numpy as np

from codesign.control.phase import phase_error, true_phase
from codesign.types import STATUS_OK, EvalRecord

TARGET_SPEED = 1.3  # m/s (thesis 4.1.2, Winter's normal walking)


# --------------------------------------------------------------------------- the registry
class Metric(NamedTuple):
    """One reported metric. ``name``: the key of the metrics dict ("<site>" stands for each
    interaction site, e.g. hip_r); ``unit``: SI ("-": a ratio); ``definition``: one line;
    ``accumulator``: what feeds it (a compiled function of
    :mod:`codesign.walking.accumulators`, or the set-up for a design metric);
    ``finalizer``: the function that computes it."""

    name: str
    unit: str
    definition: str
    accumulator: str
    finalizer: str


SITE = "<site>"
WEARER_JOINTS = ("hip", "knee", "ankle")   # an active wearer's joints, each right then left (issue 32)
# Muscle efficiencies of the metabolic proxy (Margaria, Positive and negative work
# performances and their efficiencies in human locomotion, Int Z Angew Physiol 25:339,
# 1968): positive work at 25 %, negative work at -120 % (it costs 1/1.2 of its magnitude).
EFFICIENCY_POSITIVE = 0.25
EFFICIENCY_NEGATIVE = 1.20
_SAMPLE, _GAIT = "accumulate_sample", "accumulate_gait"
_ACT, _TD = "accumulate_actuators", "accumulate_touchdown"
_DESIGN = "setup.design_metrics (walking/setup.py)"

REGISTRY: tuple[Metric, ...] = (
    Metric("time", "s", "time survived (until a fall or max_time); the whole rollout, not the window",
           "Rollout.time", "finalize"),
    Metric("speed", "m/s", "(x_last - x_first) / window duration, x the CoM's", _SAMPLE, "finalize"),
    Metric("speed_ratio", "-", "speed / target speed (1.3 m/s)", _SAMPLE, "finalize"),
    Metric("speed_match", "-", "max(0, 1 - |speed_ratio - 1|): the ratio below the target, overshoot "
           "penalised symmetrically", _SAMPLE, "finalize"),
    Metric("speed_std", "m/s", "standard deviation of the CoM's forward velocity over the window",
           _SAMPLE, "finalize"),
    Metric("assist_fraction", "-", "fraction of the window with the pitch assist active",
           _SAMPLE, "finalize"),
    Metric("assist_free", "-", "1 - assist_fraction", _SAMPLE, "finalize"),
    Metric("non_contact_time", "s", "time in the window with neither foot on the ground",
           _SAMPLE, "finalize"),
    Metric("power", "W", "mean of sum_j |tau_j qd_j| over the actuated joints (eq. 4.5 with |.|)",
           _SAMPLE, "finalize"),
    Metric("torque_rms", "N m", "sqrt(mean over time of sum_j tau_j^2 / n_joints)", _SAMPLE, "finalize"),
    Metric("cost_of_transport", "-", "energy / (m g distance) (eq. 4.2; NaN without progress)",
           _SAMPLE, "finalize"),
    Metric("step_length", "m", "mean |x_k - x_(k-1)| between touchdowns of alternating feet (a foot "
           "back after less than MIN_SWING_S = 0.2 s in the air is no touchdown)", _TD, "finalize"),
    Metric("scuffs_per_step", "-", "touchdowns in mid-swing (a foot back after SCUFF_MIN_AIR_S = 50 ms to "
           "MIN_SWING_S in the air: no rebound, no step) per step", _TD, "finalize"),
    Metric("stance_fraction", "-", "mean over both feet of the fraction of the window in contact",
           _SAMPLE, "finalize"),
    Metric(f"{SITE}_force_peak", "N", "peak interaction force magnitude at the site's joint (thesis 5.3.3)",
           _SAMPLE, "finalize"),
    Metric(f"{SITE}_force_rms", "N", "RMS over the window of that force", _SAMPLE, "finalize"),
    Metric("foot_slip_fraction", "-", "of the time a foot is loaded, the fraction in which a loaded point "
           "of it slides (> SLIP_SPEED = 1 cm/s), both feet pooled", _GAIT, "finalize_gait"),
    Metric("grf_peak_bw", "-", "peak of the total vertical ground reaction averaged over GRF_WINDOW = "
           "30 ms, in body weights of the person alone (a device's weight is added_mass; hard contact's impacts by their impulse)", _GAIT, "finalize_gait"),
    Metric("grf_peak_bw_start", "-", "grf_peak_bw over the first half (t < max_time / 2): the start's "
           "landing, which the window leaves out", "accumulate_ground_peak_start", "finalize_gait"),
    Metric("knee_hyperextension_peak_deg", "deg", "largest knee hyperextension (beyond 0 deg)",
           _GAIT, "finalize_gait"),
    Metric("ankle_plantarflexion_peak_deg", "deg", "largest anatomical ankle plantarflexion, both legs "
           "(negative: the ankle stays dorsiflexed)", _GAIT, "finalize_gait"),
    Metric("joint_range_violation_deg", "deg", "largest excursion of a hip, knee or ankle beyond its "
           "passive range of motion (JOINT_RANGE_DEG)", _GAIT, "finalize_gait"),
    Metric("torso_pitch_rms_deg", "deg", "RMS over the window of the torso's pitch from upright "
           "(NaN without a pitch assist)", _GAIT, "finalize_gait"),
    Metric("knee_flexion_stance_mean_deg", "deg", "mean anatomical knee flexion while its foot is on the "
           "ground, both legs pooled", _GAIT, "finalize_gait"),
    *(Metric(f"stride_r_{joint}", "-", f"Pearson correlation of the {joint} angle with Winter's, each "
             "stride heel strike to heel strike (MIN_SWING_S) time-normalized, whole strides in the window, "
             "both legs pooled, sampled every GAIT_SAMPLE_S = 10 ms", "accumulate_gait_sample",
             "stride_metrics (walking/gait_agreement.py)") for joint in ("hip", "knee", "ankle")),
    Metric("cuff_force_peak", "N", "largest force at a device-human attachment joint averaged over "
           "GRF_WINDOW = 30 ms as the ground reaction, impacts included (an impulse J counts J / 30 ms; "
           "NaN without attachments; before issue 46: the continuous phases' samples); an ideal device: "
           "an estimate, its torque peak over its cuff's lever (setup.ideal_cuff_force)",
           "accumulate_gait (push_cuff_bin)", "finalize_gait"),
    Metric("interaction_force_peak_bw", "-", "largest force over the attachments and the human joint "
           "sites, in body weights of the person alone", _GAIT, "finalize_gait"),
    Metric("power_electrical", "W", "mean over the window of the motors' summed electrical power "
           "(left out without motors)", _ACT, "finalize"),
    Metric("actuator_torque_ratio_peak", "-", "max over motors and samples of |tau| / tau_lim(w) "
           "(samples beyond w_max left out)", _ACT, "finalize"),
    Metric("actuator_speed_ratio_peak", "-", "max over motors and samples of |w| / w_max", _ACT, "finalize"),
    Metric("actuator_demand_ratio", "-", "sqrt(time integral over the window of the motors' summed "
           "commanded tau^2 / the same of delivered tau^2): how far the law asks beyond the actuators "
           "(1: never clipped)", _ACT, "finalize"),
    Metric("actuator_thermal_ratio", "-", "max over motors of sqrt(time mean over the window of "
           "tau^2) / the motor's continuous torque: a motor above 1 overheats on a long walk", _ACT,
           "finalize"),
    Metric("transmission_peak", "-", "largest |entry| of the linkage's transmission G = d(hip, knee) / "
           "d(actuated angles) over the window (wearer-space law only)", "accumulate_transmission",
           "finalize"),
    *(Metric(f"wearer_{j}_{name}", unit, f"active wearer's own {j} (both legs; its law's torque less the "
             f"device's, issue 32): {text}", "accumulate_wearer", "finalize_wearer")
      for j in WEARER_JOINTS for name, unit, text in (
          ("torque_rms", "N m", "sqrt(mean over the window and the legs of tau^2)"),
          ("work_pos", "J", "positive work per stride, sum over the legs of the integral of max(tau qd, 0)"),
          ("work_neg", "J", "negative work per stride (<= 0), the same of min(tau qd, 0)"),
          ("metabolic", "J/(kg m)", "(work_pos / 0.25 + |work_neg| / 1.20) over the window per kg of "
           "the wearer and per metre walked (Margaria 1968's muscle efficiencies)"))),
    Metric("wearer_metabolic", "J/(kg m)", "the active wearer's metabolic proxy: the sum of "
           "wearer_<joint>_metabolic over hip, knee and ankle", "accumulate_wearer", "finalize_wearer"),
    Metric("assist_phase_error", "-", "RMS over the window of the estimated gait phase's error, as a fraction "
           "of a stride (wrapped into [-0.5, 0.5)), against the true phase linear between the foot's heel "
           "strikes (a touchdown after MIN_SWING_S in the air, at the rollout's own samples); every "
           "GAIT_SAMPLE_S, both legs pooled; NaN for a clock-timed assistance or none (evaluation.assist_timing)",
           "accumulate_phase", "finalize_phase"),
    # --- the wearer with muscles (issue 45; walking/muscle_wearer.py, docs/muscles.md)
    Metric("metabolic_power", "W", "the muscles' net metabolic power: mean over the window of the rate of "
           "evaluation.metabolic_model summed over both legs' 14 muscles, less their rate standing (upright, every "
           "muscle under the walk's or the paper's pre-stimulation: evaluation.standing_reference; the basal rate "
           "cancels); NaN under the impedance wearer", "accumulate_muscles", "finalize_muscles"),
    Metric("metabolic_cost", "J/(kg m)", "metabolic_power / (the person's body mass x speed): net J per kg per "
           "metre walked; NaN under the impedance wearer or without progress", "accumulate_muscles",
           "finalize_muscles"),
    Metric("knee_flexion_stance_peak_deg", "deg", "loading-response knee flexion: per stance, the largest "
           "anatomical knee flexion with the foot on within 30 % of the leg's last stride after touchdown, once the "
           "knee has flexed 2 deg above its least flexion since (a knee that does not yield: its last angle there), "
           "averaged over the leg's stances from the window; the larger leg's (walking/knee_loading.py; any wearer)",
           "accumulate_knee_stance_peak", "finalize_muscles"),
    Metric("knee_flexion_stance_peak_min_deg", "deg", "the smaller leg's loading-response knee flexion (the knee "
           "that yields less; knee_flexion_stance_peak_deg's rule)", "accumulate_knee_stance_peak", "finalize_muscles"),
    Metric("contact_unsolved_fraction", "-", "fraction of the time steps whose contact impulses miss the "
           "solver's velocity or impulse tolerance (time stepping only; docs/contacts.md)", "Rollout.contact",
           "finalize_contact"),
    Metric("contact_energy_error_steps", "-", "time steps whose contact impulses do more work against the "
           "contact conditions than the energy bound contact_tol_energy (time stepping only)",
           "Rollout.contact", "finalize_contact"),
    Metric("longest_segment", "m", "the design's longest link (0 for the human)", _DESIGN, "build_setup"),
    Metric("singularity", "-", "1 if the screening found the design singular along the gait, else 0",
           _DESIGN, "build_setup"),
    Metric("added_mass", "kg", "the device's mass", _DESIGN, "build_setup"),
    Metric("com_shift", "m", "shift of the whole body's centre of mass by the device",
           _DESIGN, "build_setup"),
    Metric("actuator_mass", "kg", "the motors' mass (co-designs only)", _DESIGN, "build_setup"),
)


def metric_names(site_names: tuple[str, ...]) -> tuple[str, ...]:
    """Every metric name of :data:`REGISTRY`, in its order; the "<site>" entries expand,
    where the first of them stands, to each site's entries (site by site)."""
    site_templates = [m.name for m in REGISTRY if m.name.startswith(SITE)]
    names: list[str] = []
    for metric in REGISTRY:
        if not metric.name.startswith(SITE):
            names.append(metric.name)
        elif metric.name == site_templates[0]:
            names += [t.replace(SITE, site) for site in site_names for t in site_templates]
    return tuple(names)


def metric_unit(name: str) -> str | None:
    """The unit of a reported metric (:data:`REGISTRY`; a "<site>" entry matches every
    site's name), None for a name the registry does not declare."""
    for metric in REGISTRY:
        if metric.name == name or (metric.name.startswith(SITE) and name.endswith(metric.name[len(SITE):])):
            return metric.unit
    return None


def metric_table() -> str:
    """docs/walking.md's metric table (Markdown, a definition's | escaped) from :data:`REGISTRY`."""
    rows = ["| metric | unit | definition | accumulated by | finalized by |",
            "| --- | --- | --- | --- | --- |"]
    rows += ["| `{}` | {} | {} | `{}` | `{}` |".format(m.name, m.unit, m.definition.replace("|", "\\|"),
                                                     m.accumulator, m.finalizer) for m in REGISTRY]
    return "\n".join(rows) + "\n"


# --------------------------------------------------------------------------- accumulator layout
class SlotLayout:
    """Names of an accumulator's slots in order; a slot's index is its position."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def add(self, *names: str) -> tuple[int, ...]:
        """Append ``names``; returns their indices (to bind module constants)."""
        first = len(self.names)
        self.names.extend(names)
        return tuple(range(first, first + len(names)))


_header = SlotLayout()
# window, clock and progress (new_accumulator, accumulate_sample)
T_START, N_SAMPLES, T_FIRST, T_LAST, X_FIRST, X_LAST = _header.add(
    "T_START", "N_SAMPLES", "T_FIRST", "T_LAST", "X_FIRST", "X_LAST")
# the previous sample's integrands and their trapezoid integrals (accumulate_sample)
PREV_VX, PREV_ASSIST, PREV_FLIGHT, PREV_STANCE, PREV_POWER, PREV_TAU2 = _header.add(
    "PREV_VX", "PREV_ASSIST", "PREV_FLIGHT", "PREV_STANCE", "PREV_POWER", "PREV_TAU2")
I_VX, I_VX2, I_ASSIST, I_FLIGHT, I_STANCE, I_ENERGY, I_TAU2 = _header.add(
    "I_VX", "I_VX2", "I_ASSIST", "I_FLIGHT", "I_STANCE", "I_ENERGY", "I_TAU2")
# steps (accumulate_touchdown): summed lengths, count, the last touchdown's x and foot
STEP_SUM, STEP_COUNT, TD_X, TD_FOOT = _header.add("STEP_SUM", "STEP_COUNT", "TD_X", "TD_FOOT")
# --- gait physics (issue 15; accumulate_gait): foot slip, peaks (-1: nothing measured yet)
PREV_LOADED, PREV_SLIDING, I_LOADED, I_SLIDING = _header.add(
    "PREV_LOADED", "PREV_SLIDING", "I_LOADED", "I_SLIDING")
GRF_PEAK, KNEE_HYPER_PEAK, RANGE_PEAK, CUFF_PEAK = _header.add(
    "GRF_PEAK", "KNEE_HYPER_PEAK", "RANGE_PEAK", "CUFF_PEAK")
# the GRF ring (push_ground_impulse): window steps, h, next slot, offset of the ring
GRF_STEPS, GRF_H, GRF_NEXT, GRF_RING = _header.add("GRF_STEPS", "GRF_H", "GRF_NEXT", "GRF_RING")
# --- actuators (issue 15; accumulate_actuators): its own sample count and clock, so its
# calls need no order relative to accumulate_sample's
A_MOTORS, A_SAMPLES, A_T_PREV, A_PREV_PEL, A_I_EL, A_TAU_RATIO, A_SPEED_RATIO = _header.add(
    "A_MOTORS", "A_SAMPLES", "A_T_PREV", "A_PREV_PEL", "A_I_EL", "A_TAU_RATIO", "A_SPEED_RATIO")
# --- posture (issue 15; accumulate_gait): torso pitch squared, stance knee flexion, feet on the ground
PREV_PITCH2, I_PITCH2, PREV_KNEE_STANCE, I_KNEE_STANCE, PREV_FEET, I_FEET = _header.add(
    "PREV_PITCH2", "I_PITCH2", "PREV_KNEE_STANCE", "I_KNEE_STANCE", "PREV_FEET", "I_FEET")
# --- a continuous ground force (soft contact; accumulate_ground_force) binned into the GRF
# ring: the current bin's end time and impulse so far, the last sample's time and force
GRF_BIN_END, GRF_BIN_IMPULSE, GRF_PREV_T, GRF_PREV_F = _header.add(
    "GRF_BIN_END", "GRF_BIN_IMPULSE", "GRF_PREV_T", "GRF_PREV_F")
# --- the actuators' demand and the linkage's transmission (issue 29): the time integrals of the
# motors' summed squared commanded and delivered torques and their last samples (trapezoid:
# an event-driven model's uneven steps weigh by their duration; accumulate_actuators), the
# largest |G| entry (accumulate_transmission; -1: nothing measured)
A_CMD2, A_TAU2, A_PREV_CMD2, A_PREV_TAU2, TRANSMISSION_PEAK = _header.add(
    "A_CMD2", "A_TAU2", "A_PREV_CMD2", "A_PREV_TAU2", "TRANSMISSION_PEAK")
# --- each motor's time integral of (tau / continuous torque)^2 (issue 30, trapezoid as above)
# and its last sample, motors counted in the effort joints' order; beyond MAX_MOTORS left out
(A_THERMAL0, A_THERMAL1, A_THERMAL2, A_THERMAL3, A_THERMAL4, A_THERMAL5, A_THERMAL6,
 A_THERMAL7) = _header.add(*(f"A_THERMAL{k}" for k in range(8)))
A_THERMAL, MAX_MOTORS = A_THERMAL0, 8    # motor k's slot: A_THERMAL + k
(A_PREV_THERMAL0, A_PREV_THERMAL1, A_PREV_THERMAL2, A_PREV_THERMAL3, A_PREV_THERMAL4, A_PREV_THERMAL5,
 A_PREV_THERMAL6, A_PREV_THERMAL7) = _header.add(*(f"A_PREV_THERMAL{k}" for k in range(MAX_MOTORS)))
A_PREV_THERMAL = A_PREV_THERMAL0         # motor k's: A_PREV_THERMAL + k
# --- an active wearer's own effort (issue 32; accumulate_wearer): its joints, own samples
# and clock, then per wearer joint (hip, knee, ankle; both legs summed) a block of W_SLOTS:
# the previous sample's tau^2, positive and negative power and their trapezoid integrals
W_JOINTS, W_SAMPLES, W_T_FIRST, W_T_PREV = _header.add("W_JOINTS", "W_SAMPLES", "W_T_FIRST", "W_T_PREV")
_wearer = SlotLayout()
W_PREV_TAU2, W_PREV_POS, W_PREV_NEG, W_I_TAU2, W_I_POS, W_I_NEG = _wearer.add(
    "PREV_TAU2", "PREV_POS", "PREV_NEG", "I_TAU2", "I_POS", "I_NEG")
W_SLOTS = len(_wearer.names)
(W_HIP_PREV_TAU2, W_HIP_PREV_POS, W_HIP_PREV_NEG, W_HIP_I_TAU2, W_HIP_I_POS, W_HIP_I_NEG,
 W_KNEE_PREV_TAU2, W_KNEE_PREV_POS, W_KNEE_PREV_NEG, W_KNEE_I_TAU2, W_KNEE_I_POS, W_KNEE_I_NEG,
 W_ANKLE_PREV_TAU2, W_ANKLE_PREV_POS, W_ANKLE_PREV_NEG, W_ANKLE_I_TAU2, W_ANKLE_I_POS, W_ANKLE_I_NEG) = _header.add(
    *(f"W_{j.upper()}_{name}" for j in WEARER_JOINTS for name in _wearer.names))
W_BASE = W_HIP_PREV_TAU2     # joint k's slot: W_BASE + W_SLOTS k + W_PREV_TAU2 ...
# --- each foot's last lift-off (s; slot LIFTOFF_T + foot, accumulate_liftoff): a touchdown
# after less than MIN_SWING_S in the air is a scuff (counted: SCUFFS) or a rebound, not a step
LIFTOFF_R, LIFTOFF_L, SCUFFS = _header.add("LIFTOFF_R", "LIFTOFF_L", "SCUFFS")
LIFTOFF_T = LIFTOFF_R
# --- issue 45: the muscle wearer's metabolic rate (accumulate_muscles): on (0/1), its
# standing rate (W), own samples and clock, the previous sample's rate and its trapezoid
# integral (J)
M_ON, M_STANDING, M_SAMPLES, M_T_FIRST, M_T_PREV, M_PREV_E, M_I_E = _header.add(
    "M_ON", "M_STANDING", "M_SAMPLES", "M_T_FIRST", "M_T_PREV", "M_PREV_E", "M_I_E")
# and per leg the loading-response knee's state (slot + leg: walking/knee_loading.py)
(KNEE_FOOT_R, KNEE_FOOT_L, KNEE_DOWN_R, KNEE_DOWN_L, KNEE_UP_R, KNEE_UP_L, KNEE_STRIDE_R, KNEE_STRIDE_L,
 KNEE_LOW_R, KNEE_LOW_L, KNEE_YIELDED_R, KNEE_YIELDED_L, KNEE_TOP_R, KNEE_TOP_L, KNEE_HELD_R, KNEE_HELD_L,
 KNEE_OPEN_R, KNEE_OPEN_L, KNEE_SUM_R, KNEE_SUM_L, KNEE_N_R, KNEE_N_L) = _header.add(
    *(f"KNEE_{n}_{side}" for n in ("FOOT", "DOWN", "UP", "STRIDE", "LOW", "YIELDED", "TOP", "HELD", "OPEN", "SUM", "N")
      for side in "RL"))
KNEE_FOOT, KNEE_DOWN, KNEE_UP, KNEE_STRIDE, KNEE_LOW = KNEE_FOOT_R, KNEE_DOWN_R, KNEE_UP_R, KNEE_STRIDE_R, KNEE_LOW_R
KNEE_YIELDED, KNEE_TOP, KNEE_HELD, KNEE_OPEN = KNEE_YIELDED_R, KNEE_TOP_R, KNEE_HELD_R, KNEE_OPEN_R
KNEE_SUM, KNEE_N = KNEE_SUM_R, KNEE_N_R
# --- issue 31: the first half's ground-reaction peak (accumulate_ground_peak_start; -1:
# nothing measured), the largest ankle plantarflexion (accumulate_gait; -inf: nothing), and
# the gait samples (accumulate_gait_sample): their spacing (s), capacity, the next one's
# index and the offset of their rows (GAIT_COLUMNS floats each) after the GRF ring
GRF_PEAK_START, ANKLE_PF_PEAK = _header.add("GRF_PEAK_START", "ANKLE_PF_PEAK")
GAIT_DT, GAIT_CAP, GAIT_NEXT, GAIT_ROWS = _header.add("GAIT_DT", "GAIT_CAP", "GAIT_NEXT", "GAIT_ROWS")
# --- issue 46: the cuff window (accumulators.push_cuff_bin): bins of GRF_H s, channels (x, z per
# attachment), next slot, bin end, last time; rows: bin impulses, last forces, ring [steps, channels]
CUFF_STEPS, CUFF_CHANNELS, CUFF_NEXT, CUFF_BIN_END, CUFF_PREV_T, CUFF_ROWS = _header.add(
    "CUFF_STEPS", "CUFF_CHANNELS", "CUFF_NEXT", "CUFF_BIN_END", "CUFF_PREV_T", "CUFF_ROWS")
# --- issue 46 item 2: the device's estimated gait phase (accumulate_phase): the offset of its
# rows (2 floats, right and left leg, per gait sample: the same times as the gait samples'),
# the next row's index; each foot's heel strikes (a touchdown after MIN_SWING_S in the air):
# the offset of their rows (PH_STRIKE_CAP times per leg, right then left), the counts, and
# since when each foot is off the ground (NaN: on it, or not yet off)
PH_ROWS, PH_NEXT, PH_STRIKES, PH_STRIKE_CAP, PH_N_R, PH_N_L, PH_OFF_R, PH_OFF_L = _header.add(
    "PH_ROWS", "PH_NEXT", "PH_STRIKES", "PH_STRIKE_CAP", "PH_N_R", "PH_N_L", "PH_OFF_R", "PH_OFF_L")
PH_N, PH_OFF = PH_N_R, PH_OFF_R     # leg l's slot: PH_N + l, PH_OFF + l
HEADER_SLOTS: tuple[str, ...] = tuple(_header.names)
HEADER = len(HEADER_SLOTS)
# per interaction site, after the header (accumulate_sample)
_site = SlotLayout()
SITE_PREV_F2, SITE_PEAK, SITE_I_F2 = _site.add("SITE_PREV_F2", "SITE_PEAK", "SITE_I_F2")
SITE_SLOT_NAMES: tuple[str, ...] = tuple(_site.names)
SITE_SLOTS = len(SITE_SLOT_NAMES)

# A foot back on the ground less than 0.2 s after it left is not a step: the impact's
# rebound (one or two 1-ms steps in the air) or a toe scuffing the ground in mid-swing
# (swing lasts ~0.4 s at 1.3 m/s, Winter's Table 1.1; a touch after SCUFF_MIN_AIR_S is a
# scuff: a rebound in the soft heel pad lasts a few ms). Without this rule the walking human
# of docs/designs/human-thesis-walking.json, strides of 1.11 s at 1.30 m/s, reported 0.36-m
# steps (16 touchdowns in its last 5 s for 9 steps) instead of 0.72 m. :func:`heel_strikes`
# (the stride-based gait agreement) uses the same threshold.
MIN_SWING_S = 0.2   # s
SCUFF_MIN_AIR_S = 0.05   # s
# The gait samples behind the stride metrics (stride_r_*): every 10 ms from t = 0, the
# grid ``codesign simulate`` records at by default, so that its printed agreement and the
# metric are one number. A row: the engine angles of hip, knee, ankle of the right then
# the left leg (rad), then each foot on the ground (0/1: a contact point of it active).
GAIT_SAMPLE_S = 0.01   # s
GAIT_COLUMNS = 8

# --- gait physics (issue 15)
# A contact point slides when its tangential velocity exceeds 1 cm/s: 10x the largest
# sticking velocity the time step leaves (0.7 mm/s, its Delassus regularisation; issue 15
# diagnosis), 1 % of walking speed, and over a 0.6-s stance at most 6 mm of creep.
SLIP_SPEED = 0.01   # m/s
# Rigid plastic impacts are impulses (their mean force over a step, impulse / h, grows
# without bound as h -> 0). The reported ground reaction is its moving average over 30 ms,
# the time over which a real heel pad and shoe spread the heel-strike impact (the impact
# peak of a heel strike occurs within the first 10-30 ms of stance: Clark, Ryan & Weyand,
# J Exp Biol 217:2037, 2014; 220:247, 2017): an impulse J contributes J / 30 ms, a steady
# force itself (a standing body reads 1.0 BW), whatever the step.
GRF_WINDOW = 0.03   # s
# Passive ranges of motion, anatomical degrees (hip flexion, knee flexion, ankle
# dorsiflexion; - = extension / hyperextension / plantarflexion), AAOS-style norms:
# hip -15..120, knee -5..140 (AAOS: 0 normal, up to ~10 deg hyperextension), ankle -50..20
# (docs/walking.md, Metrics, for the sources).
JOINT_RANGE_DEG = np.array([[-15.0, 120.0], [-5.0, 140.0], [-50.0, 20.0]])
JOINT_SIGN = np.array([1.0, -1.0, 1.0])   # engine = sign * anatomical (codesign.model.gait)


def new_accumulator(n_sites: int, t_start: float, grf_steps: int = 0,
                    h: float = 0.0, gait_samples: int = 0, n_cuffs: int = 0) -> np.ndarray:
    """float64[HEADER + 3 n_sites + grf_steps + GAIT_COLUMNS gait_samples
    + 2 n_cuffs (2 + grf_window_steps(h))] accumulator for a window starting at
    ``t_start`` (s); ``grf_steps`` > 0: the vertical ground reaction is averaged over the
    last grf_steps steps of h seconds
    (:func:`codesign.walking.accumulators.push_ground_impulse`); ``gait_samples``: rows
    for that many gait samples, one every GAIT_SAMPLE_S from t = 0
    (:func:`codesign.walking.accumulators.accumulate_gait_sample`, :func:`gait_sample_count`),
    and as many rows of the estimated gait phase (2 each) with room for every heel strike
    of a walk of gait_samples GAIT_SAMPLE_S (one per MIN_SWING_S at most, per leg;
    :func:`codesign.walking.accumulators.accumulate_phase`); ``n_cuffs``: the attachments
    whose forces are averaged over GRF_WINDOW (:func:`codesign.walking.accumulators.push_cuff_bin`)."""
    strike_cap = int(gait_samples * GAIT_SAMPLE_S / MIN_SWING_S) + 2
    channels = 2 * n_cuffs
    cuff_steps = grf_window_steps(h) if h > 0.0 else 0
    acc = np.zeros(HEADER + SITE_SLOTS * n_sites + grf_steps + GAIT_COLUMNS * gait_samples
                   + 2 * gait_samples + 2 * strike_cap + channels * (2 + cuff_steps))
    acc[T_START] = t_start
    acc[TD_FOOT] = -1.0
    acc[LIFTOFF_R] = acc[LIFTOFF_L] = -1e9        # in the air "forever": the first touchdown counts
    # --- gait physics (issue 15): -1 = nothing measured yet
    acc[GRF_PEAK] = acc[KNEE_HYPER_PEAK] = acc[RANGE_PEAK] = acc[CUFF_PEAK] = -1.0
    acc[TRANSMISSION_PEAK] = -1.0
    acc[GRF_STEPS] = grf_steps
    acc[GRF_H] = h
    acc[GRF_RING] = HEADER + SITE_SLOTS * n_sites
    # --- issue 31
    acc[GRF_PEAK_START] = -1.0
    acc[ANKLE_PF_PEAK] = -math.inf
    acc[GAIT_DT] = GAIT_SAMPLE_S
    acc[GAIT_CAP] = gait_samples
    acc[GAIT_ROWS] = acc[GRF_RING] + grf_steps
    # --- issue 46 item 2
    acc[PH_ROWS] = acc[GAIT_ROWS] + GAIT_COLUMNS * gait_samples
    acc[PH_STRIKES] = acc[PH_ROWS] + 2 * gait_samples
    acc[PH_STRIKE_CAP] = strike_cap
    acc[PH_OFF_R] = acc[PH_OFF_L] = math.nan
    acc[CUFF_STEPS] = cuff_steps if channels else 0
    acc[CUFF_CHANNELS] = channels
    acc[CUFF_ROWS] = acc[PH_STRIKES] + 2 * strike_cap
    # --- issue 45
    acc[KNEE_DOWN:KNEE_STRIDE_L + 1] = math.nan
    return acc


def grf_window_steps(h: float) -> int:
    """Steps of h seconds in the GRF window (at least 1)."""
    return max(1, int(round(GRF_WINDOW / h)))


def gait_sample_count(max_time: float) -> int:
    """How many gait samples a rollout of ``max_time`` s holds: the times k GAIT_SAMPLE_S
    <= max_time, k = 0, 1, ... (those of ``np.arange(0, max_time + GAIT_SAMPLE_S / 2,
    GAIT_SAMPLE_S)``, simulate's recording grid)."""
    times = np.arange(0.0, max_time + 0.5 * GAIT_SAMPLE_S, GAIT_SAMPLE_S)
    return int(np.count_nonzero(times <= max_time))


class PhaseSamples(NamedTuple):
    """The device's estimated gait phase an accumulator holds (:func:`phase_samples`):
    t float64[k] (s, the gait samples' times), estimate float64[k, 2] (right, left; a
    fraction of the stride, NaN: none), strikes (right, left) float64[m] s each."""

    t: np.ndarray
    estimate: np.ndarray
    strikes: tuple[np.ndarray, np.ndarray]


def phase_samples(acc: np.ndarray) -> PhaseSamples:
    """The estimated phases and heel strikes stored so far in ``acc`` (copies)."""
    k = int(acc[PH_NEXT])
    base = int(acc[PH_ROWS])
    cap = int(acc[PH_STRIKE_CAP])
    first = int(acc[PH_STRIKES])
    strikes = tuple(acc[first + leg * cap:first + leg * cap + int(acc[PH_N + leg])].copy() for leg in range(2))
    return PhaseSamples(np.arange(k) * acc[GAIT_DT], acc[base:base + 2 * k].reshape(k, 2).copy(), strikes)


# --------------------------------------------------------------------------- finalizers
def finalize_phase(acc: np.ndarray) -> dict[str, float]:
    """``assist_phase_error`` (:data:`REGISTRY`): over the gait samples in the window
    (t >= T_START) where both are known, the RMS of
    :func:`codesign.control.phase.phase_error` between each leg's estimate and its true
    phase (:func:`codesign.control.phase.true_phase` between the leg's heel strikes), both
    legs pooled; NaN without an estimate there (a clock-timed assistance, or none)."""
    samples = phase_samples(acc)
    errors = []
    for leg in range(2):
        e = phase_error(samples.estimate[:, leg], true_phase(samples.t, samples.strikes[leg]))
        errors.append(e[(samples.t >= acc[T_START]) & np.isfinite(e)])
    pooled = np.concatenate(errors)
    return {"assist_phase_error": math.sqrt(float(np.mean(pooled ** 2))) if pooled.size else math.nan}


def finalize_gait(acc: np.ndarray, body_weight: float, site_peaks: list[float]) -> dict[str, float]:
    """The gait-physics metrics (:data:`REGISTRY`) of an accumulator; NaN where not
    measured. body_weight: N (the person's own weight); site_peaks: the sites' peak forces (N)."""
    nan = math.nan
    measured = acc[N_SAMPLES] > 0

    def peak(slot, scale=1.0):
        return acc[slot] / scale if measured and acc[slot] >= 0.0 else nan

    cuff = peak(CUFF_PEAK)
    forces = [f for f in (*site_peaks, cuff) if math.isfinite(f)]
    duration = acc[T_LAST] - acc[T_FIRST] if acc[N_SAMPLES] > 1 else 0.0
    return {
        "foot_slip_fraction": acc[I_SLIDING] / acc[I_LOADED] if acc[I_LOADED] > 0 else nan,
        "grf_peak_bw": peak(GRF_PEAK, body_weight),
        "grf_peak_bw_start": acc[GRF_PEAK_START] / body_weight if acc[GRF_PEAK_START] >= 0.0 else nan,
        "knee_hyperextension_peak_deg": peak(KNEE_HYPER_PEAK),
        "ankle_plantarflexion_peak_deg": (acc[ANKLE_PF_PEAK] if measured and math.isfinite(acc[ANKLE_PF_PEAK])
                                          else nan),
        "joint_range_violation_deg": peak(RANGE_PEAK),
        "torso_pitch_rms_deg": math.sqrt(acc[I_PITCH2] / duration) if duration > 0 else nan,
        "knee_flexion_stance_mean_deg": acc[I_KNEE_STANCE] / acc[I_FEET] if acc[I_FEET] > 0 else nan,
        "cuff_force_peak": cuff,
        "interaction_force_peak_bw": max(forces) / body_weight if forces else nan,
    }


def finalize_wearer(acc: np.ndarray, wearer_mass: float, stride_frequency: float) -> dict[str, float]:
    """An active wearer's effort metrics (:data:`REGISTRY`, ``wearer_*``) of an
    accumulator: per stride (window duration x ``stride_frequency``, Hz) and, for the
    metabolic proxy, per kg of the wearer (``wearer_mass``) and per metre the CoM moved
    over the window. Empty for a passive wearer or an empty window; the proxies NaN without
    forward progress."""
    if acc[W_JOINTS] <= 0 or acc[W_SAMPLES] < 2:
        return {}
    duration = acc[W_T_PREV] - acc[W_T_FIRST]
    strides = duration * stride_frequency
    distance = acc[X_LAST] - acc[X_FIRST]
    legs = acc[W_JOINTS] / len(WEARER_JOINTS)
    out: dict[str, float] = {}
    total = 0.0
    for k, joint in enumerate(WEARER_JOINTS):
        base = W_BASE + W_SLOTS * k
        positive, negative = acc[base + W_I_POS], acc[base + W_I_NEG]
        cost = (positive / EFFICIENCY_POSITIVE + abs(negative) / EFFICIENCY_NEGATIVE) / wearer_mass
        out[f"wearer_{joint}_torque_rms"] = math.sqrt(acc[base + W_I_TAU2] / (duration * legs))
        out[f"wearer_{joint}_work_pos"] = positive / strides
        out[f"wearer_{joint}_work_neg"] = negative / strides
        out[f"wearer_{joint}_metabolic"] = cost / distance if distance > 0 else math.nan
        total += cost
    out["wearer_metabolic"] = total / distance if distance > 0 else math.nan
    return out


def finalize_muscles(acc: np.ndarray, body_mass: float, speed: float) -> dict[str, float]:
    """The muscle wearer's metrics (:data:`REGISTRY`, issue 45): ``metabolic_power`` (W,
    net of standing), ``metabolic_cost`` (J/(kg m): per kg of the person's ``body_mass``
    and per metre at the window's ``speed``, m/s), NaN under the impedance wearer; and
    ``knee_flexion_stance_peak_deg`` / ``knee_flexion_stance_peak_min_deg``, the larger /
    smaller of the two legs' mean loading-response knee peaks (any wearer; NaN: a leg
    without one)."""
    nan = math.nan
    legs = tuple(acc[KNEE_SUM + leg] / acc[KNEE_N + leg] if acc[KNEE_N + leg] > 0 else nan for leg in range(2))
    measured = all(math.isfinite(v) for v in legs)
    out = {"metabolic_power": nan, "metabolic_cost": nan,
           "knee_flexion_stance_peak_deg": max(legs) if measured else nan,
           "knee_flexion_stance_peak_min_deg": min(legs) if measured else nan}
    duration = acc[M_T_PREV] - acc[M_T_FIRST]
    if acc[M_ON] > 0 and acc[M_SAMPLES] > 1 and duration > 0:
        power = acc[M_I_E] / duration - acc[M_STANDING]
        out["metabolic_power"] = power
        out["metabolic_cost"] = power / (body_mass * speed) if speed > 0 else nan
    return out


def finalize_contact(steps: int, above_tolerance: int, energy_above_bound: int) -> dict[str, float]:
    """The contact solver's health metrics of a stepping rollout (``ContactHealth``'s counts)."""
    return {"contact_unsolved_fraction": above_tolerance / steps if steps else math.nan,
            "contact_energy_error_steps": float(energy_above_bound)}


def finalize(acc: np.ndarray, *, time: float, n_joints: int, site_names: tuple[str, ...] = (),
             total_mass: float = math.nan, gravity: float = 9.81,
             target_speed: float = TARGET_SPEED, wearer_mass: float = math.nan,
             stride_frequency: float = math.nan) -> dict[str, float]:
    """Named metrics (:data:`REGISTRY`, but the design's) from an accumulator; NaN where the
    window is empty. total_mass (kg): everything the ground carries (the cost of
    transport's); wearer_mass (kg): the person's own mass, which the body-weight figures
    and the wearer's per-kg effort refer to (NaN: total_mass)."""
    duration = acc[T_LAST] - acc[T_FIRST] if acc[N_SAMPLES] > 1 else 0.0
    nan = math.nan

    def mean(slot):
        return acc[slot] / duration if duration > 0 else nan

    distance = acc[X_LAST] - acc[X_FIRST] if duration > 0 else nan
    speed = distance / duration if duration > 0 else nan
    mean_vx = mean(I_VX)
    var_vx = mean(I_VX2) - mean_vx * mean_vx if duration > 0 else nan
    ratio = speed / target_speed
    assist_fraction = mean(I_ASSIST)
    energy = acc[I_ENERGY] if duration > 0 else nan
    out = {
        "time": float(time),
        "speed": speed,
        "speed_ratio": ratio,
        "speed_match": max(0.0, 1.0 - abs(ratio - 1.0)) if duration > 0 else nan,
        "speed_std": math.sqrt(max(var_vx, 0.0)) if duration > 0 else nan,
        "assist_fraction": assist_fraction,
        "assist_free": 1.0 - assist_fraction,
        "non_contact_time": acc[I_FLIGHT] if duration > 0 else nan,
        "power": mean(I_ENERGY),
        "torque_rms": math.sqrt(mean(I_TAU2) / n_joints) if duration > 0 and n_joints else nan,
        "cost_of_transport": (energy / (total_mass * gravity * distance)
                              if duration > 0 and distance > 0 else nan),
        "step_length": acc[STEP_SUM] / acc[STEP_COUNT] if acc[STEP_COUNT] > 0 else nan,
        "scuffs_per_step": acc[SCUFFS] / acc[STEP_COUNT] if acc[STEP_COUNT] > 0 else nan,
        "stance_fraction": mean(I_STANCE),
    }
    for k, name in enumerate(site_names):
        base = HEADER + SITE_SLOTS * k
        out[f"{name}_force_peak"] = acc[base + SITE_PEAK] if acc[N_SAMPLES] > 0 else nan
        out[f"{name}_force_rms"] = math.sqrt(mean(base + SITE_I_F2)) if duration > 0 else nan
    # --- gait physics (issue 15), body weights the person's own (issue 46; the device's: added_mass)
    person = wearer_mass if math.isfinite(wearer_mass) else total_mass
    out.update(finalize_gait(acc, person * gravity,
                             [out[f"{name}_force_peak"] for name in site_names]))
    if acc[A_MOTORS] > 0 and acc[A_SAMPLES] > 0:     # actuators (issue 15); none (the human): left out
        out["power_electrical"] = mean(A_I_EL)
        out["actuator_torque_ratio_peak"] = acc[A_TAU_RATIO]
        out["actuator_speed_ratio_peak"] = acc[A_SPEED_RATIO]
        if acc[A_TAU2] > 0.0:
            out["actuator_demand_ratio"] = math.sqrt(acc[A_CMD2] / acc[A_TAU2])
        motors = min(int(acc[A_MOTORS]), MAX_MOTORS)
        out["actuator_thermal_ratio"] = math.sqrt(max(mean(A_THERMAL + k) for k in range(motors)))
    if acc[TRANSMISSION_PEAK] >= 0.0:
        out["transmission_peak"] = acc[TRANSMISSION_PEAK]
    out.update(finalize_wearer(acc, wearer_mass, stride_frequency))
    out.update(finalize_phase(acc))     # --- issue 46 item 2
    out.update(finalize_muscles(acc, wearer_mass, speed))   # --- issue 45
    return {k: float(v) for k, v in out.items()}


def measured_record(metrics: Mapping[str, float], message: str = "", wall_s: float = 0.0) -> EvalRecord:
    """An ok :class:`EvalRecord` of ``metrics`` (no fitness: stage 0, NaN). Metrics that
    are not finite (not measurable, e.g. a speed over an empty window after an early fall)
    are left out rather than stored as NaN; a stage that needs one then fails the record,
    naming it (:func:`codesign.objectives.score`)."""
    finite = {k: float(v) for k, v in metrics.items() if math.isfinite(float(v))}
    return EvalRecord(STATUS_OK, message, metrics=finite, wall_s=wall_s)
