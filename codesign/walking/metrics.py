"""Gait metrics of a rollout (thesis 4.1.2, 4.2.3, 5.4.3).

All metrics except ``time`` are measured over the second half of the evaluation period,
t >= max_time / 2 ("we ignore data from the first half of the evaluation period for all
measured objectives, except time", 4.1.2). The window starts at the first sample at or
after ``t_start`` and ends at the last sample; integrals use the trapezoidal rule between
consecutive samples (a sample after an impact at the same time adds nothing).

Per sample the rollout provides: time t (s), forward progress x (m, e.g. the CoM or pelvis
x) and its rate vx (m/s), assist active (0/1), right/left foot in contact (0/1), torque
(N m) and rate (rad/s) of every actuated joint, and force magnitudes (N) at "interaction
sites" (the human hip and knee joints, from the engine's joint constraint forces). At each
foot touchdown it provides the foot's x position.

Metrics (name: unit, definition):

- ``time``: s, time survived (until a fall or max_time)
- ``speed``: m/s, (x_last - x_first) / window duration
- ``speed_ratio``: speed / target speed (1.3 m/s)
- ``speed_match``: max(0, 1 - |speed_ratio - 1|): equals the ratio below the target and
  penalises overshoot symmetrically ("speed within 95 % of the target", 4.1.2)
- ``speed_std``: m/s, standard deviation of vx over the window
- ``assist_fraction``: fraction of the window with the pitch assist active;
  ``assist_free`` = 1 - assist_fraction
- ``non_contact_time``: s, time in the window with neither foot on the ground
- ``power``: W, mean of sum_j |tau_j qd_j| over the actuated joints (eq. 4.5 with |.|,
  the positive and negative work both cost)
- ``torque_rms``: N m, sqrt(mean over time of sum_j tau_j^2 / n_joints)
- ``cost_of_transport``: -, energy / (m g distance) (eq. 4.2; NaN without progress)
- ``step_length``: m, mean |x_k - x_{k-1}| between touchdowns of alternating feet
- ``stance_fraction``: mean over both feet of the fraction of the window in contact
- ``<site>_force_peak``, ``<site>_force_rms``: N, interaction force magnitude

Gait physics (issue 15; :func:`accumulate_gait`, fed per sample by the rollouts):

- ``foot_slip_fraction``: -, of the time a foot is loaded (one of its contact points
  carries a normal force), the fraction in which a loaded point of that foot slides
  (|tangential velocity| > ``SLIP_SPEED`` = 1 cm/s), both feet pooled (time-weighted)
- ``grf_peak_bw``: -, peak of the total vertical ground reaction averaged over a moving
  ``GRF_WINDOW`` = 30 ms (the step's impulses summed over the window / its length), in
  body weights of the whole model (person + device) -- a rigid impact's impulse J counts
  as J / GRF_WINDOW, independent of the time step (stepping rollout: each step's impulse;
  soft-contact peer: its continuous normal force integrated between samples into bins of
  the stepping's h, :func:`accumulate_ground_force`; NaN for the event-driven hard
  contact, whose impacts are jumps without a force)
- ``knee_hyperextension_peak_deg``: deg, largest knee hyperextension (beyond 0 deg)
- ``joint_range_violation_deg``: deg, largest excursion of a hip, knee or ankle beyond
  its passive range of motion (``JOINT_RANGE_DEG``)
- ``torso_pitch_rms_deg``: deg, RMS over the window of the torso's pitch from upright
  (the pitch assist's upright angle; NaN without a pitch assist)
- ``knee_flexion_stance_mean_deg``: deg, mean anatomical knee flexion while its foot is
  on the ground (both legs pooled, time-weighted); a crouched gait keeps it high
- ``cuff_force_peak``: N, largest force magnitude at a device-human attachment joint
  (NaN without attachments)
- ``interaction_force_peak_bw``: -, largest force over the attachments and the human
  joint sites, in body weights (person + device)

Actuator metrics (issue 15; over the motors only -- the WR's actuated joints, not the
human's muscles; left out when a model has none; envelope and electrical model:
:mod:`codesign.model.actuators`):

- ``power_electrical``: W, mean over the window of sum_a P_el,a, with
  P_el = tau w + (tau / (Kt N))^2 R for tau w >= 0 and eta tau w + (tau / (Kt N))^2 R
  otherwise (eta the regeneration efficiency, 0 by default)
- ``actuator_torque_ratio_peak``: max over motors and samples of |tau| / tau_lim(w), the
  delivered torque over the envelope's limit at that speed (1 = saturated; above 1 only
  under the thesis's unbounded rule); samples beyond the maximum speed are the speed
  ratio's business and left out
- ``actuator_speed_ratio_peak``: max over motors and samples of |w| / w_max
"""

from __future__ import annotations

import math

from typing import Mapping

import numpy as np
from numba import njit

from codesign.model import actuators as act
from codesign.types import STATUS_OK, EvalRecord

TARGET_SPEED = 1.3  # m/s (thesis 4.1.2, Winter's normal walking)

# accumulator slots (float64 array; per interaction site 3 slots after the header)
T_START, N_SAMPLES, T_FIRST, T_LAST, X_FIRST, X_LAST = 0, 1, 2, 3, 4, 5
PREV_VX, PREV_ASSIST, PREV_FLIGHT, PREV_STANCE, PREV_POWER, PREV_TAU2 = 6, 7, 8, 9, 10, 11
I_VX, I_VX2, I_ASSIST, I_FLIGHT, I_STANCE, I_ENERGY, I_TAU2 = 12, 13, 14, 15, 16, 17, 18
STEP_SUM, STEP_COUNT, TD_X, TD_FOOT = 19, 20, 21, 22
# --- gait physics (issue 15): foot slip, windowed vertical GRF, joint range, cuff forces
PREV_LOADED, PREV_SLIDING, I_LOADED, I_SLIDING = 23, 24, 25, 26
GRF_PEAK, KNEE_HYPER_PEAK, RANGE_PEAK, CUFF_PEAK = 27, 28, 29, 30
GRF_STEPS, GRF_H, GRF_NEXT, GRF_RING = 31, 32, 33, 34   # ring: window steps, h, next slot, offset
# --- actuators (issue 15): accumulate_actuators' own sample count and clock, so its
# calls need no order relative to accumulate_sample's
A_MOTORS, A_SAMPLES, A_T_PREV, A_PREV_PEL, A_I_EL, A_TAU_RATIO, A_SPEED_RATIO = (
    35, 36, 37, 38, 39, 40, 41)
# --- posture (issue 15): torso pitch squared, stance knee flexion, feet on the ground
PREV_PITCH2, I_PITCH2, PREV_KNEE_STANCE, I_KNEE_STANCE, PREV_FEET, I_FEET = (
    42, 43, 44, 45, 46, 47)
# --- a continuous ground force (soft contact) binned into the GRF ring: the current bin's
# end time and impulse so far, the last sample's time and force
GRF_BIN_END, GRF_BIN_IMPULSE, GRF_PREV_T, GRF_PREV_F = 48, 49, 50, 51
# --- each foot's last lift-off (s; slots LIFTOFF_T + foot): a touchdown after less than
# MIN_SWING_S in the air is a scuff or a bounce, not a step
LIFTOFF_T = 52
HEADER = 54
SITE_PREV_F2, SITE_PEAK, SITE_I_F2 = 0, 1, 2
SITE_SLOTS = 3

# A foot back on the ground less than 0.2 s after it left is not a step: the impact's
# rebound (one or two 1-ms steps in the air) or a toe scuffing the ground in mid-swing
# (swing lasts ~0.4 s at 1.3 m/s, Winter's Table 1.1). Without this rule the walking human
# of docs/designs/human-walking.json, strides of 1.11 s at 1.30 m/s, reported 0.36-m
# steps (16 touchdowns in its last 5 s for 9 steps) instead of 0.72 m. :func:`heel_strikes`
# (the stride-based gait agreement) uses the same threshold.
MIN_SWING_S = 0.2   # s

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
                    h: float = 0.0) -> np.ndarray:
    """float64[HEADER + 3 n_sites + grf_steps] accumulator for a window starting at
    ``t_start`` (s); ``grf_steps`` > 0: the vertical ground reaction is averaged over the
    last grf_steps steps of h seconds (:func:`push_ground_impulse`)."""
    acc = np.zeros(HEADER + SITE_SLOTS * n_sites + grf_steps)
    acc[T_START] = t_start
    acc[TD_FOOT] = -1.0
    acc[LIFTOFF_T] = acc[LIFTOFF_T + 1] = -1e9        # in the air "forever": the first touchdown counts
    # --- gait physics (issue 15): -1 = nothing measured yet
    acc[GRF_PEAK] = acc[KNEE_HYPER_PEAK] = acc[RANGE_PEAK] = acc[CUFF_PEAK] = -1.0
    acc[GRF_STEPS] = grf_steps
    acc[GRF_H] = h
    acc[GRF_RING] = HEADER + SITE_SLOTS * n_sites
    return acc


def grf_window_steps(h: float) -> int:
    """Steps of h seconds in the GRF window (at least 1)."""
    return max(1, int(round(GRF_WINDOW / h)))


# --- actuators (issue 15)
@njit(cache=True, _nrt=False)
def accumulate_actuators(acc: np.ndarray, t: float, joint_tau: np.ndarray,
                         joint_rate: np.ndarray, kind: np.ndarray, limit: np.ndarray,
                         motor: np.ndarray) -> None:
    """Add one sample of the actuator metrics (module docstring): delivered torques and
    rates of the active joints with their kinds, envelopes and motor constants
    (ControllerArrays.act_kind / act_limit / act_motor); joints of kind NO_MOTOR are not
    actuators. Samples in time order, the same as :func:`accumulate_sample`'s."""
    if t < acc[T_START]:
        return
    p_el = 0.0
    motors = 0
    for j in range(joint_tau.shape[0]):
        if kind[j] == act.NO_MOTOR:
            continue
        motors += 1
        tau = joint_tau[j]
        w = joint_rate[j]
        p_el += act.electrical_power(tau, w, motor[j])
        speed_ratio = abs(w) / limit[j, act.LIMIT_SPEED]
        if speed_ratio > acc[A_SPEED_RATIO]:
            acc[A_SPEED_RATIO] = speed_ratio
        if speed_ratio <= 1.0:
            lim = act.torque_limit(w, limit[j])
            if abs(tau) / lim > acc[A_TAU_RATIO]:
                acc[A_TAU_RATIO] = abs(tau) / lim
    acc[A_MOTORS] = motors
    if acc[A_SAMPLES] > 0.0:
        acc[A_I_EL] += 0.5 * (t - acc[A_T_PREV]) * (acc[A_PREV_PEL] + p_el)
    acc[A_SAMPLES] += 1.0
    acc[A_T_PREV] = t
    acc[A_PREV_PEL] = p_el


@njit(cache=True, _nrt=False)
def accumulate_sample(acc: np.ndarray, t: float, x: float, vx: float, assist: float,
                      contact_r: float, contact_l: float, joint_tau: np.ndarray,
                      joint_rate: np.ndarray, site_force: np.ndarray) -> None:
    """Add one sample (see module docstring); samples must come in time order."""
    if t < acc[T_START]:
        return
    power = 0.0
    tau2 = 0.0
    for j in range(joint_tau.shape[0]):
        power += abs(joint_tau[j] * joint_rate[j])
        tau2 += joint_tau[j] * joint_tau[j]
    flight = 1.0 if (contact_r <= 0.0 and contact_l <= 0.0) else 0.0
    stance = 0.5 * (contact_r + contact_l)
    if acc[N_SAMPLES] == 0.0:
        acc[T_FIRST] = t
        acc[X_FIRST] = x
    else:
        h = 0.5 * (t - acc[T_LAST])
        acc[I_VX] += h * (acc[PREV_VX] + vx)
        acc[I_VX2] += h * (acc[PREV_VX] * acc[PREV_VX] + vx * vx)
        acc[I_ASSIST] += h * (acc[PREV_ASSIST] + assist)
        acc[I_FLIGHT] += h * (acc[PREV_FLIGHT] + flight)
        acc[I_STANCE] += h * (acc[PREV_STANCE] + stance)
        acc[I_ENERGY] += h * (acc[PREV_POWER] + power)
        acc[I_TAU2] += h * (acc[PREV_TAU2] + tau2)
    for k in range(site_force.shape[0]):
        base = HEADER + SITE_SLOTS * k
        f2 = site_force[k] * site_force[k]
        if acc[N_SAMPLES] > 0.0:
            acc[base + SITE_I_F2] += 0.5 * (t - acc[T_LAST]) * (acc[base + SITE_PREV_F2] + f2)
        acc[base + SITE_PREV_F2] = f2
        if abs(site_force[k]) > acc[base + SITE_PEAK]:
            acc[base + SITE_PEAK] = abs(site_force[k])
    acc[N_SAMPLES] += 1.0
    acc[T_LAST] = t
    acc[X_LAST] = x
    acc[PREV_VX] = vx
    acc[PREV_ASSIST] = assist
    acc[PREV_FLIGHT] = flight
    acc[PREV_STANCE] = stance
    acc[PREV_POWER] = power
    acc[PREV_TAU2] = tau2


@njit(cache=True, _nrt=False)
def accumulate_liftoff(acc: np.ndarray, t: float, foot: int) -> None:
    """A foot (0 right, 1 left) left the ground at t (s)."""
    acc[LIFTOFF_T + foot] = t


@njit(cache=True, _nrt=False)
def accumulate_touchdown(acc: np.ndarray, t: float, foot: int, x_foot: float) -> None:
    """A foot (0 right, 1 left) touched down at x_foot (m): a step if the other foot was the
    last to touch down inside the window. A foot back after less than MIN_SWING_S in the
    air (:func:`accumulate_liftoff`) only bounced or scuffed: no touchdown."""
    if t < acc[T_START] or t - acc[LIFTOFF_T + foot] < MIN_SWING_S:
        return
    if acc[TD_FOOT] >= 0.0 and int(acc[TD_FOOT]) != foot:
        acc[STEP_SUM] += abs(x_foot - acc[TD_X])
        acc[STEP_COUNT] += 1.0
    acc[TD_FOOT] = foot
    acc[TD_X] = x_foot


# --------------------------------------------------------------------------- gait physics (issue 15)
@njit(cache=True, _nrt=False)
def foot_slip(loaded, ut, contact_foot, slip_speed):
    """(feet loaded, feet sliding) of one sample, each 0, 1 or 2: a foot is loaded when one
    of its contact points is (loaded[i] != 0: it carries a normal force) and slides when a
    loaded point has |ut[i]| (m/s, tangential velocity) > slip_speed; contact_foot[i] is
    the point's foot (0 or 1)."""
    l0 = l1 = s0 = s1 = 0.0
    for i in range(loaded.shape[0]):
        if loaded[i] == 0:
            continue
        slides = 1.0 if abs(ut[i]) > slip_speed else 0.0
        if contact_foot[i] == 0:
            l0 = 1.0
            s0 = max(s0, slides)
        else:
            l1 = 1.0
            s1 = max(s1, slides)
    return l0 + l1, s0 + s1


@njit(cache=True, _nrt=False)
def push_ground_impulse(acc, impulse):
    """Add one step's total vertical ground impulse (N s) to the window ring (every step,
    also before the metrics' window). Returns the vertical ground reaction averaged over
    the last GRF_STEPS steps (their impulses / (GRF_STEPS h), N), NaN without a ring."""
    n = int(acc[GRF_STEPS])
    if n == 0:
        return np.nan
    base = int(acc[GRF_RING])
    k = int(acc[GRF_NEXT])
    acc[base + k] = impulse
    acc[GRF_NEXT] = (k + 1) % n
    total = 0.0
    for j in range(n):
        total += acc[base + j]
    return total / (n * acc[GRF_H])


@njit(cache=True, _nrt=False)
def accumulate_ground_force(acc, t, force):
    """Feed a continuous total vertical ground force (N) sampled at time t (s; samples in
    time order, any spacing, e.g. every accepted step of the soft-contact peer) into the
    GRF ring: F dt is integrated by the trapezoid rule (F linear between samples) into bins
    of GRF_H seconds, and every completed bin is pushed as one step's impulse
    (:func:`push_ground_impulse`). Returns the windowed ground reaction after the last bin
    completed by this sample (N), NaN if none completed (or there is no ring)."""
    if acc[GRF_STEPS] == 0:
        return np.nan
    h = acc[GRF_H]
    if acc[GRF_BIN_END] <= 0.0:                 # first sample: the first bin starts here
        acc[GRF_BIN_END] = t + h
        acc[GRF_PREV_T] = t
        acc[GRF_PREV_F] = force
        return np.nan
    t0 = acc[GRF_PREV_T]
    f0 = acc[GRF_PREV_F]
    grf = np.nan
    while t >= acc[GRF_BIN_END]:                # t0 < bin end <= t: split the sample there
        te = acc[GRF_BIN_END]
        fe = f0 + (force - f0) * (te - t0) / (t - t0)
        grf = push_ground_impulse(acc, acc[GRF_BIN_IMPULSE] + 0.5 * (f0 + fe) * (te - t0))
        acc[GRF_BIN_IMPULSE] = 0.0
        t0 = te
        f0 = fe
        acc[GRF_BIN_END] = te + h
    acc[GRF_BIN_IMPULSE] += 0.5 * (f0 + force) * (t - t0)
    acc[GRF_PREV_T] = t
    acc[GRF_PREV_F] = force
    return grf


@njit(cache=True, _nrt=False)
def accumulate_gait(acc, t, loaded_feet, sliding_feet, grf, q, gait_q, cuff_force, feet, pitch):
    """One gait-physics sample at time t, called before :func:`accumulate_sample` of the
    same sample (it integrates from that function's last sample time).

    loaded_feet, sliding_feet: :func:`foot_slip`; grf: N, the windowed vertical ground
    reaction (NaN: not measured); q: engine coordinates; gait_q: int64[6] coordinates of
    hip, knee, ankle of the right then the left leg (-1: absent); cuff_force: float64[k, 2]
    force on the device at each attachment (N, world x and z); feet: float64[2], right and
    left foot on the ground (0/1); pitch: rad, the torso's pitch from upright (NaN: none)."""
    if t < acc[T_START]:
        return
    knee_stance = 0.0
    for j in range(gait_q.shape[0]):
        i = gait_q[j]
        if i < 0:
            continue
        joint = j % 3
        a = math.degrees(JOINT_SIGN[joint] * q[i])     # anatomical, deg
        if joint == 1:
            knee_stance += feet[j // 3] * a
            hyper = max(-a, 0.0)                        # knee flexion < 0: hyperextension
            if hyper > acc[KNEE_HYPER_PEAK]:
                acc[KNEE_HYPER_PEAK] = hyper
        out = max(JOINT_RANGE_DEG[joint, 0] - a, a - JOINT_RANGE_DEG[joint, 1], 0.0)
        if out > acc[RANGE_PEAK]:
            acc[RANGE_PEAK] = out
    pitch2 = math.degrees(pitch) ** 2
    on_ground = feet[0] + feet[1]
    if acc[N_SAMPLES] > 0.0:
        half = 0.5 * (t - acc[T_LAST])
        acc[I_LOADED] += half * (acc[PREV_LOADED] + loaded_feet)
        acc[I_SLIDING] += half * (acc[PREV_SLIDING] + sliding_feet)
        acc[I_PITCH2] += half * (acc[PREV_PITCH2] + pitch2)
        acc[I_KNEE_STANCE] += half * (acc[PREV_KNEE_STANCE] + knee_stance)
        acc[I_FEET] += half * (acc[PREV_FEET] + on_ground)
    acc[PREV_LOADED] = loaded_feet
    acc[PREV_SLIDING] = sliding_feet
    acc[PREV_PITCH2] = pitch2
    acc[PREV_KNEE_STANCE] = knee_stance
    acc[PREV_FEET] = on_ground
    if grf > acc[GRF_PEAK]:           # False for NaN
        acc[GRF_PEAK] = grf
    for k in range(cuff_force.shape[0]):
        f = math.hypot(cuff_force[k, 0], cuff_force[k, 1])
        if f > acc[CUFF_PEAK]:
            acc[CUFF_PEAK] = f


def finalize_gait(acc: np.ndarray, body_weight: float, site_peaks: list[float]) -> dict[str, float]:
    """The gait-physics metrics (module docstring) of an accumulator; NaN where not
    measured. body_weight: N (person + device); site_peaks: the sites' peak forces (N)."""
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
        "knee_hyperextension_peak_deg": peak(KNEE_HYPER_PEAK),
        "joint_range_violation_deg": peak(RANGE_PEAK),
        "torso_pitch_rms_deg": math.sqrt(acc[I_PITCH2] / duration) if duration > 0 else nan,
        "knee_flexion_stance_mean_deg": acc[I_KNEE_STANCE] / acc[I_FEET] if acc[I_FEET] > 0 else nan,
        "cuff_force_peak": cuff,
        "interaction_force_peak_bw": max(forces) / body_weight if forces else nan,
    }


def gait_reference(t, t_start, loaded, sliding, grf, angles, cuff, feet, pitch, body_weight,
                   site_peaks) -> dict[str, float]:
    """Plain-NumPy reference of :func:`accumulate_gait` + :func:`finalize_gait`: per
    sample loaded, sliding (feet, float[s]), grf (N, float[s]), angles (engine, float[s, 6]:
    hip, knee, ankle right then left), cuff (float[s, k, 2], N), feet (float[s, 2], 0/1),
    pitch (rad from upright, float[s])."""
    t = np.asarray(t, float)
    w = t >= t_start
    tw = t[w]
    ang = np.degrees(np.asarray(angles, float)[w].reshape(-1, 2, 3) * JOINT_SIGN)
    on = np.asarray(feet, float)[w]
    pitch_deg = np.degrees(np.asarray(pitch, float)[w])
    lo, hi = JOINT_RANGE_DEG[:, 0], JOINT_RANGE_DEG[:, 1]
    out_of_range = np.maximum(np.maximum(lo - ang, ang - hi), 0.0)
    cuff = np.asarray(cuff, float)[w]
    cuff_peak = float(np.hypot(cuff[..., 0], cuff[..., 1]).max()) if cuff.shape[1] else math.nan
    forces = [f for f in (*site_peaks, cuff_peak) if math.isfinite(f)]
    g = np.asarray(grf, float)[w]
    return {
        "foot_slip_fraction": (np.trapezoid(np.asarray(sliding, float)[w], tw)
                               / np.trapezoid(np.asarray(loaded, float)[w], tw)),
        "grf_peak_bw": float(np.nanmax(g)) / body_weight if np.isfinite(g).any() else math.nan,
        "knee_hyperextension_peak_deg": float(np.maximum(-ang[..., 1], 0.0).max()),
        "joint_range_violation_deg": float(out_of_range.max()),
        "torso_pitch_rms_deg": math.sqrt(np.trapezoid(pitch_deg ** 2, tw) / (tw[-1] - tw[0])),
        "knee_flexion_stance_mean_deg": (np.trapezoid((on * ang[..., 1]).sum(axis=1), tw)
                                         / np.trapezoid(on.sum(axis=1), tw)),
        "cuff_force_peak": cuff_peak,
        "interaction_force_peak_bw": max(forces) / body_weight if forces else math.nan,
    }


def finalize(acc: np.ndarray, *, time: float, n_joints: int, site_names: tuple[str, ...] = (),
             total_mass: float = math.nan, gravity: float = 9.81,
             target_speed: float = TARGET_SPEED) -> dict[str, float]:
    """Named metrics (module docstring) from an accumulator; NaN where the window is empty."""
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
        "stance_fraction": mean(I_STANCE),
    }
    for k, name in enumerate(site_names):
        base = HEADER + SITE_SLOTS * k
        out[f"{name}_force_peak"] = acc[base + SITE_PEAK] if acc[N_SAMPLES] > 0 else nan
        out[f"{name}_force_rms"] = math.sqrt(mean(base + SITE_I_F2)) if duration > 0 else nan
    # --- gait physics (issue 15)
    out.update(finalize_gait(acc, total_mass * gravity,
                             [out[f"{name}_force_peak"] for name in site_names]))
    # --- actuators (issue 15)
    if acc[A_MOTORS] > 0 and acc[A_SAMPLES] > 0:     # no motors (the human): left out
        out["power_electrical"] = mean(A_I_EL)
        out["actuator_torque_ratio_peak"] = acc[A_TAU_RATIO]
        out["actuator_speed_ratio_peak"] = acc[A_SPEED_RATIO]
    return {k: float(v) for k, v in out.items()}


def metrics_reference(t, x, vx, assist, contact_r, contact_l, joint_tau, joint_rate,
                      site_force, touchdowns, *, t_start: float, time: float,
                      site_names: tuple[str, ...] = (), total_mass: float = math.nan,
                      gravity: float = 9.81, target_speed: float = TARGET_SPEED,
                      gait: Mapping | None = None) -> dict[str, float]:
    """Plain-NumPy reference of the compiled accumulator (same definitions), for tests.

    t, x, vx, assist, contact_r, contact_l: float[s]; joint_tau, joint_rate: float[s, a];
    site_force: float[s, k]; touchdowns: sequence of (t, foot, x_foot); gait: the keyword
    arguments of :func:`gait_reference` but t, t_start, body_weight, site_peaks.
    """
    t = np.asarray(t, float)
    w = t >= t_start
    tw = t[w]
    tau = np.asarray(joint_tau, float).reshape(len(t), -1)[w]
    rate = np.asarray(joint_rate, float).reshape(len(t), -1)[w]
    f = np.asarray(site_force, float).reshape(len(t), -1)[w]
    cr, cl = np.asarray(contact_r, float)[w], np.asarray(contact_l, float)[w]
    xw, vw = np.asarray(x, float)[w], np.asarray(vx, float)[w]
    T = tw[-1] - tw[0]
    speed = (xw[-1] - xw[0]) / T
    mean_v = np.trapezoid(vw, tw) / T
    energy = np.trapezoid(np.abs(tau * rate).sum(axis=1), tw)
    assist_fraction = np.trapezoid(np.asarray(assist, float)[w], tw) / T
    td = [(foot, xf) for (tt, foot, xf) in touchdowns if tt >= t_start]
    steps = [abs(b[1] - a[1]) for a, b in zip(td, td[1:]) if a[0] != b[0]]
    out = {
        "time": float(time),
        "speed": speed,
        "speed_ratio": speed / target_speed,
        "speed_match": max(0.0, 1.0 - abs(speed / target_speed - 1.0)),
        "speed_std": math.sqrt(max(np.trapezoid(vw ** 2, tw) / T - mean_v ** 2, 0.0)),
        "assist_fraction": assist_fraction,
        "assist_free": 1.0 - assist_fraction,
        "non_contact_time": np.trapezoid(((cr <= 0) & (cl <= 0)).astype(float), tw),
        "power": energy / T,
        "torque_rms": math.sqrt(np.trapezoid((tau ** 2).sum(axis=1), tw) / T / tau.shape[1]),
        "cost_of_transport": (energy / (total_mass * gravity * (xw[-1] - xw[0]))
                              if xw[-1] > xw[0] else math.nan),
        "step_length": float(np.mean(steps)) if steps else math.nan,
        "stance_fraction": np.trapezoid(0.5 * (cr + cl), tw) / T,
    }
    for k, name in enumerate(site_names):
        out[f"{name}_force_peak"] = float(np.abs(f[:, k]).max())
        out[f"{name}_force_rms"] = math.sqrt(np.trapezoid(f[:, k] ** 2, tw) / T)
    if gait is not None:        # --- gait physics (issue 15)
        out.update(gait_reference(t, t_start, body_weight=total_mass * gravity,
                                  site_peaks=[out[f"{n}_force_peak"] for n in site_names], **gait))
    return {k: float(v) for k, v in out.items()}


# --- actuators (issue 15)
def actuator_metrics_reference(t, joint_tau, joint_rate, kind, limit, motor, *,
                               t_start: float) -> dict[str, float]:
    """Plain-NumPy reference of :func:`accumulate_actuators` + the actuator part of
    :func:`finalize` (same definitions), for tests. t: float[s]; joint_tau, joint_rate:
    float[s, a]; kind: int[a]; limit: float[a, 3]; motor: float[a, 4]."""
    t = np.asarray(t, float)
    w = t >= t_start
    tw = t[w]
    tau = np.asarray(joint_tau, float).reshape(len(t), -1)[w]
    rate = np.asarray(joint_rate, float).reshape(len(t), -1)[w]
    keep = np.asarray(kind) != act.NO_MOTOR
    tau, rate = tau[:, keep], rate[:, keep]
    limit, motor = np.asarray(limit, float)[keep], np.asarray(motor, float)[keep]
    if not keep.any() or tw.size < 2:
        return {}
    mech = tau * rate
    joule = (tau / (motor[:, 1] * motor[:, 0])) ** 2 * motor[:, 2]
    p_el = np.where(mech >= 0, mech, motor[:, 3] * mech) + joule
    speed_ratio = np.abs(rate) / limit[:, 1]
    lim = np.where(np.abs(rate) * limit[:, 0] > limit[:, 2],
                   limit[:, 2] / np.maximum(np.abs(rate), 1e-300), limit[:, 0])
    torque_ratio = np.where(speed_ratio <= 1.0, np.abs(tau) / lim, 0.0)
    return {"power_electrical": float(np.trapezoid(p_el.sum(axis=1), tw) / (tw[-1] - tw[0])),
            "actuator_torque_ratio_peak": float(torque_ratio.max()),
            "actuator_speed_ratio_peak": float(speed_ratio.max())}


def nominal_gait_agreement(t: np.ndarray, angles: dict[str, np.ndarray], nominal,
                           frequency: float, phase0: float, t_start: float) -> dict[str, float]:
    """How natural a simulated gait is: per joint, the Pearson correlation and the RMS
    difference (rad) between the simulated angle and Winter's nominal angle at the
    controller's phase, over t >= t_start, both legs pooled (the left leg against the
    nominal half a period later).

    t: float64[k] s; angles: ``{"<joint>_<r|l>": float64[k]}`` engine angles (rad) for
    joint in hip, knee, ankle; nominal: :class:`codesign.model.gait.NominalGait`.
    Returns ``{"<joint>_corr": r, "<joint>_rms_rad": e}``; NaN without samples."""
    from codesign.model.gait import GAIT_JOINTS

    keep = t >= t_start
    out: dict[str, float] = {}
    for k, joint in enumerate(GAIT_JOINTS):
        sim, ref = [], []
        for side, offset in (("r", 0.0), ("l", 0.5)):
            sim.append(angles[f"{joint}_{side}"][keep])
            ref.append(nominal.angles(frequency * t[keep] + phase0 + offset)[:, k])
        a, b = np.concatenate(sim), np.concatenate(ref)
        ok = a.size > 1 and np.std(a) > 0 and np.std(b) > 0
        out[f"{joint}_corr"] = float(np.corrcoef(a, b)[0, 1]) if ok else math.nan
        out[f"{joint}_rms_rad"] = float(np.sqrt(np.mean((a - b) ** 2))) if a.size else math.nan
    return out


def heel_strikes(t: np.ndarray, on_ground: np.ndarray, min_swing: float = MIN_SWING_S) -> np.ndarray:
    """Touchdown times (s) of one foot: the samples where it is on the ground after at
    least ``min_swing`` s off it (a swing lasts ~0.4 s at 0.9 Hz; shorter lifts are
    bounces and shuffles within a stance, not strides).

    t: float64[k] s; on_ground: bool[k]."""
    strikes = []
    off_since = None
    for ti, on in zip(t, on_ground):
        if not on:
            off_since = ti if off_since is None else off_since
        elif off_since is not None:
            if ti - off_since >= min_swing:
                strikes.append(ti)
            off_since = None
    return np.array(strikes)


def stride_gait_agreement(t: np.ndarray, angles: dict[str, np.ndarray], nominal,
                          strikes: dict[str, np.ndarray], t_start: float) -> dict[str, float]:
    """:func:`nominal_gait_agreement` with each leg's strides time-normalized the way
    gait data are (Winter's phase 0 is heel strike): a sample at t in the stride
    [s_k, s_k+1) of its leg has phase (t - s_k) / (s_k+1 - s_k). Only whole strides with
    s_k >= t_start count. strikes: ``{"r": float64[m], "l": ...}`` touchdown times (s,
    :func:`heel_strikes`). Returns ``{"<joint>_corr": r, "<joint>_rms_rad": e}`` (NaN
    without a whole stride)."""
    from codesign.model.gait import GAIT_JOINTS

    out: dict[str, float] = {}
    for k, joint in enumerate(GAIT_JOINTS):
        sim, ref = [], []
        for side in ("r", "l"):
            s = np.asarray(strikes[side], dtype=float)
            s = s[s >= t_start]
            for a, b in zip(s[:-1], s[1:]):
                keep = (t >= a) & (t < b)
                sim.append(angles[f"{joint}_{side}"][keep])
                ref.append(nominal.angles((t[keep] - a) / (b - a))[:, k])
        a_, b_ = (np.concatenate(sim), np.concatenate(ref)) if sim else (np.zeros(0), np.zeros(0))
        ok = a_.size > 1 and np.std(a_) > 0 and np.std(b_) > 0
        out[f"{joint}_corr"] = float(np.corrcoef(a_, b_)[0, 1]) if ok else math.nan
        out[f"{joint}_rms_rad"] = float(np.sqrt(np.mean((a_ - b_) ** 2))) if a_.size else math.nan
    return out


def measured_record(metrics: Mapping[str, float], message: str = "", wall_s: float = 0.0) -> EvalRecord:
    """An ok :class:`EvalRecord` of ``metrics`` (no fitness: stage 0, NaN).

    Metrics that are not finite (not measurable, e.g. a speed over an empty window after
    an early fall) are left out rather than stored as NaN; a stage that needs one then
    fails the record, naming it (:func:`codesign.objectives.score`).
    """
    finite = {k: float(v) for k, v in metrics.items() if math.isfinite(float(v))}
    return EvalRecord(STATUS_OK, message, metrics=finite, wall_s=wall_s)
