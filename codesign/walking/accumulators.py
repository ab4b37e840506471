"""The compiled metric accumulators (thesis 4.1.2, 4.2.3, 5.4.3): what the rollouts call per
sample to fill the accumulator of :mod:`codesign.walking.metrics` (its slots, the metric
registry and the finalizers are there).

Per sample the rollout provides: time t (s), forward progress x (m, e.g. the CoM or pelvis
x) and its rate vx (m/s), assist active (0/1), right/left foot in contact (0/1), torque
(N m) and rate (rad/s) of every actuated joint, and force magnitudes (N) at "interaction
sites" (the human hip and knee joints, from the engine's joint constraint forces). At each
foot touchdown it provides the foot's x position and at each lift-off its time; per step
(or per sample of a continuous force) the vertical ground impulse
(:func:`push_ground_impulse`, :func:`accumulate_ground_force`); per sample the gait
physics (:func:`accumulate_gait`) and the actuators' torques and rates
(:func:`accumulate_actuators`). Samples before the window (``T_START``) are ignored.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from codesign.control.wearer import sense_phase
from codesign.model import actuators as act
from codesign.walking.metrics import (A_CMD2, A_I_EL, A_MOTORS, A_PREV_CMD2, A_PREV_PEL, A_PREV_TAU2,
                                       A_PREV_THERMAL, A_SAMPLES, A_SPEED_RATIO,
                                       A_TAU2, A_TAU_RATIO, A_THERMAL, A_T_PREV, ANKLE_PF_PEAK,
                                       CUFF_BIN_END, CUFF_CHANNELS, CUFF_NEXT, CUFF_PEAK,
                                       CUFF_PREV_T, CUFF_ROWS, CUFF_STEPS, GAIT_CAP, GAIT_COLUMNS, GAIT_DT, GAIT_NEXT,
                                       GAIT_ROWS, GRF_BIN_END, GRF_PEAK_START,
                                       GRF_BIN_IMPULSE, GRF_H, GRF_NEXT, GRF_PEAK, GRF_PREV_F,
                                       GRF_PREV_T, GRF_RING, GRF_STEPS, GRF_WINDOW, HEADER, I_ASSIST,
                                       I_ENERGY, I_FEET, I_FLIGHT, I_KNEE_STANCE, I_LOADED,
                                       I_PITCH2, I_SLIDING, I_STANCE, I_TAU2, I_VX, I_VX2,
                                       JOINT_RANGE_DEG, JOINT_SIGN, KNEE_HYPER_PEAK, MAX_MOTORS,
                                       LIFTOFF_T, MIN_SWING_S, N_SAMPLES, PH_N, PH_NEXT, PH_OFF,
                                       PH_ROWS, PH_STRIKE_CAP, PH_STRIKES, PREV_ASSIST,
                                       PREV_FEET, PREV_FLIGHT, PREV_KNEE_STANCE, PREV_LOADED,
                                       PREV_PITCH2, PREV_POWER, PREV_SLIDING, PREV_STANCE,
                                       PREV_TAU2, PREV_VX, RANGE_PEAK, SCUFF_MIN_AIR_S, SCUFFS, SITE_I_F2, SITE_PEAK,
                                       SITE_PREV_F2, SITE_SLOTS, STEP_COUNT, STEP_SUM,
                                       TD_FOOT, TD_X, TRANSMISSION_PEAK, T_FIRST, T_LAST,
                                       T_START, W_BASE, W_I_NEG, W_I_POS, W_I_TAU2, W_JOINTS,
                                       W_PREV_NEG, W_PREV_POS, W_PREV_TAU2, W_SAMPLES, W_SLOTS,
                                       W_T_FIRST, W_T_PREV, X_FIRST, X_LAST)
from codesign.walking.knee_loading import accumulate_knee_stance_peak
from codesign.walking.metrics import M_I_E, M_ON, M_PREV_E, M_SAMPLES, M_T_FIRST, M_T_PREV


# --------------------------------------------------------------------------- muscles (issue 45)
@njit(cache=True, _nrt=False)
def accumulate_muscles(acc: np.ndarray, t: float, edot: float) -> None:
    """Add one sample of the muscle wearer's metabolic rate ``edot`` (W) at time t (s) in
    the window: the trapezoid integral between its consecutive samples. Nothing under the
    impedance wearer (acc[M_ON] = 0)."""
    if acc[M_ON] == 0.0 or t < acc[T_START]:
        return
    if acc[M_SAMPLES] == 0:
        acc[M_T_FIRST] = t
    else:
        acc[M_I_E] += 0.5 * (edot + acc[M_PREV_E]) * (t - acc[M_T_PREV])
    acc[M_PREV_E] = edot
    acc[M_T_PREV] = t
    acc[M_SAMPLES] += 1


# --------------------------------------------------------------------------- actuators (issue 15)
@njit(cache=True, _nrt=False)
def accumulate_actuators(acc: np.ndarray, t: float, joint_tau: np.ndarray,
                         joint_rate: np.ndarray, joint_cmd: np.ndarray, kind: np.ndarray,
                         limit: np.ndarray, motor: np.ndarray) -> None:
    """Add one sample of the actuator metrics (metrics.REGISTRY): delivered torques,
    rates and commanded torques (before the clip) of the effort joints with their kinds,
    envelopes and motor constants (WalkModel.effort_kind / effort_limit / effort_motor);
    joints of kind NO_MOTOR are not actuators. Samples in time order, the same as
    :func:`accumulate_sample`'s."""
    if t < acc[T_START]:
        return
    first = acc[A_SAMPLES] == 0.0
    half_dt = 0.0 if first else 0.5 * (t - acc[A_T_PREV])    # the trapezoid's weight
    p_el = 0.0
    cmd2 = 0.0
    tau2 = 0.0
    motors = 0
    for j in range(joint_tau.shape[0]):
        if kind[j] == act.NO_MOTOR:
            continue
        tau = joint_tau[j]
        w = joint_rate[j]
        if motors < MAX_MOTORS:
            heat = tau / limit[j, act.LIMIT_RATED]
            acc[A_THERMAL + motors] += half_dt * (heat * heat + acc[A_PREV_THERMAL + motors])
            acc[A_PREV_THERMAL + motors] = heat * heat
        motors += 1
        cmd2 += joint_cmd[j] * joint_cmd[j]
        tau2 += tau * tau
        p_el += act.electrical_power(tau, w, motor[j])
        speed_ratio = abs(w) / limit[j, act.LIMIT_SPEED]
        if speed_ratio > acc[A_SPEED_RATIO]:
            acc[A_SPEED_RATIO] = speed_ratio
        if speed_ratio <= 1.0:
            lim = act.torque_limit(w, limit[j])
            if abs(tau) / lim > acc[A_TAU_RATIO]:
                acc[A_TAU_RATIO] = abs(tau) / lim
    acc[A_MOTORS] = motors
    acc[A_CMD2] += half_dt * (cmd2 + acc[A_PREV_CMD2])
    acc[A_TAU2] += half_dt * (tau2 + acc[A_PREV_TAU2])
    acc[A_PREV_CMD2] = cmd2
    acc[A_PREV_TAU2] = tau2
    if not first:
        acc[A_I_EL] += half_dt * (acc[A_PREV_PEL] + p_el)
    acc[A_SAMPLES] += 1.0
    acc[A_T_PREV] = t
    acc[A_PREV_PEL] = p_el


# --------------------------------------------------------------------------- the active wearer (issue 32)
@njit(cache=True, _nrt=False)
def accumulate_wearer(acc: np.ndarray, t: float, tau: np.ndarray, rate: np.ndarray) -> None:
    """Add one sample of an active wearer's effort (metrics.REGISTRY, ``wearer_*``): its
    own torques tau (N m) and rates (rad/s) of its joints (float64[w], WalkModel.wearer_source:
    hip, knee, ankle, each right then left; w = 0: a passive wearer, nothing). Per joint
    the legs' sum of tau^2, of the positive and of the negative power, integrated by the
    trapezoid rule on the wearer's own clock. Samples in time order."""
    w = tau.shape[0]
    if t < acc[T_START] or w == 0:
        return
    acc[W_JOINTS] = w
    first = acc[W_SAMPLES] == 0.0
    half = 0.0 if first else 0.5 * (t - acc[W_T_PREV])
    for k in range(w // 2):
        tau2 = 0.0
        pos = 0.0
        neg = 0.0
        for e in range(2 * k, 2 * k + 2):
            p = tau[e] * rate[e]
            tau2 += tau[e] * tau[e]
            if p > 0.0:
                pos += p
            else:
                neg += p
        base = W_BASE + W_SLOTS * k
        if not first:
            acc[base + W_I_TAU2] += half * (acc[base + W_PREV_TAU2] + tau2)
            acc[base + W_I_POS] += half * (acc[base + W_PREV_POS] + pos)
            acc[base + W_I_NEG] += half * (acc[base + W_PREV_NEG] + neg)
        acc[base + W_PREV_TAU2] = tau2
        acc[base + W_PREV_POS] = pos
        acc[base + W_PREV_NEG] = neg
    if first:
        acc[W_T_FIRST] = t
    acc[W_SAMPLES] += 1.0
    acc[W_T_PREV] = t


@njit(cache=True, _nrt=False)
def accumulate_transmission(acc: np.ndarray, t: float, G: np.ndarray) -> None:
    """Add one sample of ``transmission_peak``: the largest |entry| of the legs'
    transmissions G (float64[L, 2, 2], :mod:`codesign.control.wearer`)."""
    if t < acc[T_START]:
        return
    for leg in range(G.shape[0]):
        for i in range(2):
            for j in range(2):
                if abs(G[leg, i, j]) > acc[TRANSMISSION_PEAK]:
                    acc[TRANSMISSION_PEAK] = abs(G[leg, i, j])


@njit(cache=True, _nrt=False)
def accumulate_sample(acc: np.ndarray, t: float, x: float, vx: float, assist: float,
                      contact_r: float, contact_l: float, joint_tau: np.ndarray,
                      joint_rate: np.ndarray, site_force: np.ndarray) -> None:
    """Add one sample (the module docstring's per-sample quantities); samples must come in time order."""
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
    air (:func:`accumulate_liftoff`) only bounced or scuffed: no touchdown; a scuff (after at
    least SCUFF_MIN_AIR_S) is counted."""
    air = t - acc[LIFTOFF_T + foot]
    if t < acc[T_START] or air < MIN_SWING_S:
        if t >= acc[T_START] and air >= SCUFF_MIN_AIR_S:
            acc[SCUFFS] += 1.0
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
def add_ground_impulse(acc, impulse):
    """An impact's total vertical ground impulse (N s) at the time of the last
    :func:`accumulate_ground_force` sample, into the bin that sample is in (the event-driven
    hard contact's impacts are jumps: the stepping rollout counts them by their impulse too)."""
    if acc[GRF_STEPS] > 0 and acc[GRF_BIN_END] > 0.0:
        acc[GRF_BIN_IMPULSE] += impulse


# --------------------------------------------------------------------------- issue 46
@njit(cache=True, _nrt=False)
def forces_window_open(acc, t):
    """Whether a sample at time t (s) measures the interaction forces: from GRF_WINDOW
    before the metrics' window, so that the cuff window's first sample in the metrics'
    window already averages a full window."""
    return t >= acc[T_START] - GRF_WINDOW


@njit(cache=True, _nrt=False)
def push_cuff_bin(acc):
    """Push the current bin's impulses (N s per channel: x, z of each attachment) into the
    cuff ring and empty the bin. Returns the largest attachment force averaged over the
    ring (|sum of its impulses| / (CUFF_STEPS GRF_H), N): an impact's impulse J counts
    J / GRF_WINDOW, as in the ground reaction (metrics.GRF_WINDOW); NaN without cuffs."""
    n = int(acc[CUFF_STEPS])
    ch = int(acc[CUFF_CHANNELS])
    if n == 0 or ch == 0:
        return np.nan
    bins = int(acc[CUFF_ROWS])
    ring = bins + 2 * ch
    k = int(acc[CUFF_NEXT])
    for c in range(ch):
        acc[ring + k * ch + c] = acc[bins + c]
        acc[bins + c] = 0.0
    acc[CUFF_NEXT] = (k + 1) % n
    peak = 0.0
    for a in range(ch // 2):
        fx = 0.0
        fz = 0.0
        for j in range(n):
            fx += acc[ring + j * ch + 2 * a]
            fz += acc[ring + j * ch + 2 * a + 1]
        peak = max(peak, math.hypot(fx, fz))
    return peak / (n * acc[GRF_H])


@njit(cache=True, _nrt=False)
def add_cuff_impulse(acc, force, dt):
    """Impulses force * dt (float64[a, 2] in N, dt in s; an impact's own impulses in N s
    with dt = 1) into the current cuff bin."""
    if acc[CUFF_STEPS] == 0:
        return
    bins = int(acc[CUFF_ROWS])
    for a in range(force.shape[0]):
        acc[bins + 2 * a] += force[a, 0] * dt
        acc[bins + 2 * a + 1] += force[a, 1] * dt


@njit(cache=True, _nrt=False)
def push_cuff_impulse(acc, cuff_force, dt):
    """One time step's cuff forces (float64[a, 2], N: the step's mean, impacts included)
    over dt (s) as one bin (:func:`push_cuff_bin`). Returns the windowed peak (N)."""
    add_cuff_impulse(acc, cuff_force, dt)
    return push_cuff_bin(acc)


@njit(cache=True, _nrt=False)
def accumulate_cuff_force(acc, t, cuff_force):
    """Feed continuous cuff forces (float64[a, 2], N) sampled at time t (s; samples in time
    order, any spacing: the soft and event-driven peers' accepted steps, MuJoCo's steps)
    into the cuff ring, integrated by the trapezoid rule into bins of GRF_H seconds as
    :func:`accumulate_ground_force` does for the ground reaction. Returns the windowed
    peak after the last bin this sample completed (N), NaN if none completed."""
    if acc[CUFF_STEPS] == 0:
        return np.nan
    h = acc[GRF_H]
    bins = int(acc[CUFF_ROWS])
    prev = bins + int(acc[CUFF_CHANNELS])
    na = cuff_force.shape[0]
    if acc[CUFF_BIN_END] <= 0.0:                 # first sample: the first bin starts here
        acc[CUFF_BIN_END] = t + h
        acc[CUFF_PREV_T] = t
        for a in range(na):
            acc[prev + 2 * a] = cuff_force[a, 0]
            acc[prev + 2 * a + 1] = cuff_force[a, 1]
        return np.nan
    peak = np.nan
    t0 = acc[CUFF_PREV_T]
    while t >= acc[CUFF_BIN_END]:                # t0 < bin end <= t: split the sample there
        te = acc[CUFF_BIN_END]
        s = (te - t0) / (t - t0)
        for c in range(2 * na):
            f0 = acc[prev + c]
            fe = f0 + (cuff_force[c // 2, c % 2] - f0) * s
            acc[bins + c] += 0.5 * (f0 + fe) * (te - t0)
            acc[prev + c] = fe
        peak = push_cuff_bin(acc)
        t0 = te
        acc[CUFF_BIN_END] = te + h
    for c in range(2 * na):
        f = cuff_force[c // 2, c % 2]
        acc[bins + c] += 0.5 * (acc[prev + c] + f) * (t - t0)
        acc[prev + c] = f
    acc[CUFF_PREV_T] = t
    return peak


@njit(cache=True, _nrt=False)
def accumulate_gait(acc, t, loaded_feet, sliding_feet, grf, q, gait_q, cuff, feet, pitch):
    """One gait-physics sample at time t, called before :func:`accumulate_sample` of the
    same sample (it integrates from that function's last sample time).

    loaded_feet, sliding_feet: :func:`foot_slip`; grf: N, the windowed vertical ground
    reaction (NaN: not measured); q: engine coordinates; gait_q: int64[6] coordinates of
    hip, knee, ankle of the right then the left leg (-1: absent); cuff: N, the largest
    windowed attachment force (:func:`push_cuff_bin`; NaN: not measured); feet: float64[2], right and
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
        elif joint == 2 and -a > acc[ANKLE_PF_PEAK]:    # dorsiflexion < 0: plantarflexion
            acc[ANKLE_PF_PEAK] = -a
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
    if cuff > acc[CUFF_PEAK]:         # False for NaN
        acc[CUFF_PEAK] = cuff


# --------------------------------------------------------------------------- issue 31
@njit(cache=True, _nrt=False)
def accumulate_ground_peak_start(acc, t, grf):
    """The first half's ground-reaction peak (``grf_peak_bw_start``): the windowed vertical
    ground reaction grf (N, :func:`push_ground_impulse`; NaN: not measured) of the step
    from t (s), counted while t < T_START."""
    if t < acc[T_START] and grf > acc[GRF_PEAK_START]:      # False for NaN
        acc[GRF_PEAK_START] = grf


@njit(cache=True, _nrt=False)
def accumulate_gait_sample(acc, t, q, gait_q, feet, tol):
    """Store the gait sample (metrics.GAIT_COLUMNS: the engine angles q[gait_q] of hip,
    knee, ankle right then left, rad, NaN where gait_q is -1; feet float64[2], right and
    left on the ground 0/1) of the state at time t (s) as every sample k of time
    k GAIT_DT <= t + tol not stored yet (all samples, also before the window: heel
    strikes need the swing before them). tol (s): h / 2 for the stepping rollout, whose
    records take the first step start within h / 2 of a record time; 0 for a state at
    every accepted step. A rollout continued from t0 > 0 fills the samples before t0 with
    its first state (no contact change there: no heel strike)."""
    k = int(acc[GAIT_NEXT])
    cap = int(acc[GAIT_CAP])
    while k < cap and k * acc[GAIT_DT] <= t + tol:
        row = int(acc[GAIT_ROWS]) + GAIT_COLUMNS * k
        for j in range(6):
            acc[row + j] = q[gait_q[j]] if gait_q[j] >= 0 else np.nan
        acc[row + 6] = feet[0]
        acc[row + 7] = feet[1]
        k += 1
    acc[GAIT_NEXT] = k


# --------------------------------------------------------------------------- issue 46 item 2
@njit(cache=True, _nrt=False)
def accumulate_phase(acc, t, feet, phase_now, tol):
    """One sample of ``assist_phase_error``'s record, every sample (also before the
    window: the true phase needs the strikes before it): each foot's heel strike -- the
    sample where feet[leg] (0/1) is on the ground after at least MIN_SWING_S s off it,
    as :func:`codesign.walking.gait_agreement.heel_strikes` finds them, here at every
    sample of the rollout -- stored at its time t (s); and the device's estimated phase
    phase_now float64[2] (right, left; NaN: none) stored as the phase row of every gait
    sample time k GAIT_DT <= t + tol not stored yet (tol as
    :func:`accumulate_gait_sample`'s)."""
    cap = int(acc[PH_STRIKE_CAP])
    for leg in range(2):
        off = acc[PH_OFF + leg]
        if feet[leg] <= 0.0:
            if math.isnan(off):
                acc[PH_OFF + leg] = t
        elif not math.isnan(off):
            n = int(acc[PH_N + leg])
            if t - off >= MIN_SWING_S and n < cap:
                acc[int(acc[PH_STRIKES]) + leg * cap + n] = t
                acc[PH_N + leg] = n + 1
            acc[PH_OFF + leg] = np.nan
    k = int(acc[PH_NEXT])
    while k < int(acc[GAIT_CAP]) and k * acc[GAIT_DT] <= t + tol:
        row = int(acc[PH_ROWS]) + 2 * k
        acc[row] = phase_now[0]
        acc[row + 1] = phase_now[1]
        k += 1
    acc[PH_NEXT] = k


# --------------------------------------------------------------------------- one observation step (issue 42)
@njit(cache=True, _nrt=False)
def observe_sample(acc, t, x, feet, grf, cuff, loaded, sliding, pitch, assist, t_state, x_state,
                   state_tol, wm, wd):
    """One sample of every metric: the one observation step that each rollout (time
    stepping, event-driven and soft, MuJoCo's) calls once per sample, after its checks, so
    every rollout measures alike. A new metric whose accumulator reads the quantities
    below is added here (its call, in the order its slots need) and nowhere in the
    rollouts.

    The sample at time t (s): x the engine state (q first) of the gait physics; feet
    float64[2] right and left foot on the ground (0/1); grf N the windowed vertical ground
    reaction (NaN: the rollout does not measure it); cuff N the largest windowed attachment
    force (:func:`push_cuff_bin`, NaN: none or not measured); loaded, sliding the feet loaded and
    sliding (:func:`foot_slip`); pitch rad the torso's pitch (NaN: none); assist the pitch
    assist active (0/1). The gait sample (:func:`accumulate_gait_sample`) takes the state
    x_state at time t_state (s) within state_tol (s) of a sample time -- the stepping
    rollouts' state after the step, h / 2; the event-driven peers' t, x, 0. Read from the
    walking model and data (:class:`~codesign.walking.rollout_base.WalkModel`,
    :class:`~codesign.walking.rollout_base.WalkData`): wm.gait_q, wm.effort_kind /
    effort_limit / effort_motor; wd.com (the CoM's x and x rate, filled by the rollout in
    the window), wd.site_force (N), wd.effort_tau / effort_rate /
    effort_cmd, wd.drive.G, wd.wearer_tau / wearer_rate (:func:`rollout_base.control`).

    Every sample, also before the window: the first half's ground-reaction peak, the
    gait sample and the loading-response knee (which follows the feet from the start);
    inside the window (t >= acc[T_START]; loaded, sliding, pitch, wd.com and the forces
    are read only there) the gait physics, the sample, the actuators, the
    transmission and the active wearer, in this order (the gait physics integrates from
    the previous sample's time, which :func:`accumulate_sample` then moves), then the
    muscle wearer's metabolic rate wd.muscle.edot (issue 45).

    First of all (issue 46 item 2), the device senses the sample: its gait-phase
    estimators see the state x_state at t_state and the feet
    (:func:`codesign.control.wearer.sense_phase`; nothing for a clock-timed assistance),
    so every rollout feeds them the same samples, in time order, once each; the estimate
    and the heel strikes are recorded (:func:`accumulate_phase`)."""
    sense_phase(t_state, x_state, feet, wm.drive, wd.drive)
    accumulate_phase(acc, t_state, feet, wd.drive.phase_now, state_tol)
    accumulate_ground_peak_start(acc, t, grf)
    accumulate_gait_sample(acc, t_state, x_state, wm.gait_q, feet, state_tol)
    accumulate_knee_stance_peak(acc, t, x, wm.gait_q, feet)
    if t < acc[T_START]:
        return
    accumulate_gait(acc, t, loaded, sliding, grf, x, wm.gait_q, cuff, feet, pitch)
    accumulate_sample(acc, t, wd.com[0], wd.com[2], assist, feet[0], feet[1], wd.effort_tau,
                      wd.effort_rate, wd.site_force)
    accumulate_actuators(acc, t, wd.effort_tau, wd.effort_rate, wd.effort_cmd, wm.effort_kind,
                         wm.effort_limit, wm.effort_motor)
    accumulate_transmission(acc, t, wd.drive.G)
    accumulate_wearer(acc, t, wd.wearer_tau, wd.wearer_rate)
    accumulate_muscles(acc, t, wd.muscle.edot[0])
