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
# --- actuators (issue 15): accumulate_actuators' own sample count and clock, so its
# calls need no order relative to accumulate_sample's
A_MOTORS, A_SAMPLES, A_T_PREV, A_PREV_PEL, A_I_EL, A_TAU_RATIO, A_SPEED_RATIO = (
    23, 24, 25, 26, 27, 28, 29)
HEADER = 30
SITE_PREV_F2, SITE_PEAK, SITE_I_F2 = 0, 1, 2
SITE_SLOTS = 3


def new_accumulator(n_sites: int, t_start: float) -> np.ndarray:
    """float64[HEADER + 3 n_sites] accumulator for a window starting at ``t_start`` (s)."""
    acc = np.zeros(HEADER + SITE_SLOTS * n_sites)
    acc[T_START] = t_start
    acc[TD_FOOT] = -1.0
    return acc


# --- actuators (issue 15)
@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def accumulate_touchdown(acc: np.ndarray, t: float, foot: int, x_foot: float) -> None:
    """A foot (0 right, 1 left) touched down at x_foot (m): a step if the other foot was the
    last to touch down inside the window."""
    if t < acc[T_START]:
        return
    if acc[TD_FOOT] >= 0.0 and int(acc[TD_FOOT]) != foot:
        acc[STEP_SUM] += abs(x_foot - acc[TD_X])
        acc[STEP_COUNT] += 1.0
    acc[TD_FOOT] = foot
    acc[TD_X] = x_foot


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
    # --- actuators (issue 15)
    if acc[A_MOTORS] > 0 and acc[A_SAMPLES] > 0:     # no motors (the human): left out
        out["power_electrical"] = mean(A_I_EL)
        out["actuator_torque_ratio_peak"] = acc[A_TAU_RATIO]
        out["actuator_speed_ratio_peak"] = acc[A_SPEED_RATIO]
    return {k: float(v) for k, v in out.items()}


def metrics_reference(t, x, vx, assist, contact_r, contact_l, joint_tau, joint_rate,
                      site_force, touchdowns, *, t_start: float, time: float,
                      site_names: tuple[str, ...] = (), total_mass: float = math.nan,
                      gravity: float = 9.81, target_speed: float = TARGET_SPEED) -> dict[str, float]:
    """Plain-NumPy reference of the compiled accumulator (same definitions), for tests.

    t, x, vx, assist, contact_r, contact_l: float[s]; joint_tau, joint_rate: float[s, a];
    site_force: float[s, k]; touchdowns: sequence of (t, foot, x_foot).
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


def measured_record(metrics: Mapping[str, float], message: str = "", wall_s: float = 0.0) -> EvalRecord:
    """An ok :class:`EvalRecord` of ``metrics`` (no fitness: stage 0, NaN).

    Metrics that are not finite (not measurable, e.g. a speed over an empty window after
    an early fall) are left out rather than stored as NaN; a stage that needs one then
    fails the record, naming it (:func:`codesign.objectives.score`).
    """
    finite = {k: float(v) for k, v in metrics.items() if math.isfinite(float(v))}
    return EvalRecord(STATUS_OK, message, metrics=finite, wall_s=wall_s)
