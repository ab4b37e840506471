"""Step impedance control of the augmented human (thesis 4.1.1 eq. 4.1, 5.3.4 eq. 5.9-5.12).

Active joints (the two actuated WR joints of each leg and each ankle; for the unaugmented
human of chapter 4: hip, knee and ankle)::

    tau_j(t) = K_j(phi) (q_ref_j(phi) - q_j) - D_j(phi) qd_j                   (5.9)

with periodic signals K, D (step, eq. 5.10-5.11, or constant / ppoly as in Table 4.1) and
q_ref (ppoly, 5 points in chapter 5) of the gait phase phi. Passive WR joints::

    tau_j = K_j (q_rest_j - q_j) - D_j qd_j                                    (5.12)

Torso feedback (an extension, not in the thesis; issue 15): an active joint may add a
term on the torso's pitch to its law (5.9),

    tau_j += -Kt_j(phi) (theta - theta_up) - Dt_j(phi) theta_dot

with theta the base (torso) pitch, theta_up the assist's upright angle and Kt, Dt step
signals of the phase (signed: which way a WR joint's torque turns the torso depends on the
linkage). The chapter-5 law acts on joint angles only, so a passive wearer's torso is held
upright by nothing but the assist; this is the balance term of SIMBICON-style
controllers (Yin, Loken and van de Panne, ACM TOG 26(3), 2007: the stance hip servos the
torso's world pitch). It is treated explicitly by the time step (not in
:func:`control_gains`: its Jacobian, row_j e_pitch^T, is not symmetric).

Left and right legs run the same parameters half a period apart:
phi_right(t) = frac(f t + phi_0), phi_left(t) = frac(f t + phi_0 + 1/2), f the gait
frequency (0.9 Hz default, thesis 4.1.2).

Assistive torque on the floating-base pitch (thesis 4.1.1), read from the garbled
"tau_a = Ka_p (q_a - q) - Ka_d qd, Ka_p = 3000, Ka_d = 20, q_a = 5 deg, neutral zone of
+-q_a in which no assistive torque is provided" as a spring/damper towards the edge of the
neutral zone around the upright pitch ``q_up``::

    e = q - q_up;  |e| <= q_a: tau = 0 (inactive);
    otherwise:     tau = Ka_p (sign(e) q_a - e) - Ka_d qd   (active; its time is measured)

Actuators (issue 15): an active joint with an actuator
(:class:`codesign.model.actuators.Actuator`, the WR's actuated joints) delivers its
torque clipped to the actuator's torque-speed envelope at the joint speed,
tau = clip(tau_5.9, -tau_lim(qd_j), tau_lim(qd_j)), before it is mapped to generalized
forces; a joint without one (the human's joints: muscles) is unbounded. A saturated
joint reports zero stiffness and damping to :func:`control_gains`: its torque no longer
depends on q (nor, at the peak torque, on qd), and the time step's implicit
M + hD + h^2 K would otherwise add the linearized impedance -h K dq - D dqd on top of the
limit, i.e. deliver more than the actuator can. In the envelope's power region
tau_lim = P / |qd| does depend on qd; treating it explicitly is first order like the
rest of the step, and never adds the negative damping its derivative has when braking.

Joints as rows: every controlled joint angle is a linear function of the generalized
coordinates, angle = row . q, rate = row . qd, and a joint torque tau enters the generalized
forces as row^T tau. For a tree joint the row is a unit vector; for a (possibly actuated)
loop-closure joint between bodies a and b the relative angle theta_b - theta_a is the
difference of the two bodies' absolute angles, each the sum of the revolute coordinates on
the path from the root (engine convention, codesign/dynamics/model.py), so the row holds
+1 / -1 on those coordinates -- which also applies the loop torque +tau on b and -tau on a
(thesis 5.3.2) through the principle of virtual work.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from numba import njit

from codesign.control import signals as sg
from codesign.dynamics.model import absolute_angle_row
from codesign.model import actuators as act

ASSIST_STIFFNESS = 3000.0      # N m / rad  (thesis 4.1.1)
ASSIST_DAMPING = 20.0          # N m s / rad
ASSIST_ZONE = np.deg2rad(5.0)  # rad, half-width of the neutral zone
GAIT_FREQUENCY = 0.9           # Hz (thesis 4.1.2, Winter's normal walking)


# --------------------------------------------------------------------------- joint rows
def tree_joint_row(n: int, index: int) -> np.ndarray:
    """float64[n] unit row of tree joint ``index``."""
    row = np.zeros(n)
    row[index] = 1.0
    return row


def loop_joint_row(parent: np.ndarray, joint_type: np.ndarray, body_a: int, body_b: int) -> np.ndarray:
    """float64[n] row of a loop-closure joint: relative angle theta_b - theta_a."""
    return (absolute_angle_row(parent, joint_type, body_b)
            - absolute_angle_row(parent, joint_type, body_a))


# --------------------------------------------------------------------------- python-facing spec
@dataclass(frozen=True)
class ActiveJoint:
    """Step impedance law of one actuated joint (same parameters for both legs).

    name: parameter prefix (e.g. ``ankle``); reference, stiffness, damping: signals of the
    phase in rad, N m/rad, N m s/rad.
    """

    name: str
    reference: sg.Signal
    stiffness: sg.Signal
    damping: sg.Signal
    actuator: act.Actuator | None = None   # None: a human joint (muscles), unbounded
    torso_stiffness: sg.Signal | None = None   # N m/rad on the torso pitch; None: no term
    torso_damping: sg.Signal | None = None     # N m s/rad on the torso pitch rate


@dataclass(frozen=True)
class PassiveJoint:
    """Spring/damper of a passive WR joint (eq. 5.12): N m/rad, rad, N m s/rad."""

    name: str
    stiffness: float
    rest: float
    damping: float


@dataclass(frozen=True)
class Assist:
    """Assistive torque on the base pitch with a neutral zone (thesis 4.1.1)."""

    enabled: bool = True
    stiffness: float = ASSIST_STIFFNESS
    damping: float = ASSIST_DAMPING
    zone: float = ASSIST_ZONE      # rad
    upright: float = 0.0           # rad, base pitch of the upright posture


@dataclass(frozen=True)
class Controller:
    """All control parameters of one design (the model-independent part)."""

    active: tuple[ActiveJoint, ...] = ()
    passive: tuple[PassiveJoint, ...] = ()
    frequency: float = GAIT_FREQUENCY   # Hz
    assist: Assist = field(default_factory=Assist)


# Arrays the compiled controller reads (see compile_controller for shapes).
ControllerArrays = namedtuple(
    "ControllerArrays",
    [
        "timing",        # float64[2]: gait frequency (Hz), phase of the right leg at t = 0
        "act_rows",      # float64[na, n]: joint angle = row . q
        "act_offset",    # float64[na]: phase offset (0 right leg, 0.5 left leg)
        "act_signal",    # int64[na, 5]: signal rows of (reference, stiffness, damping,
                         #   torso stiffness, torso damping); -1: no torso term
        "sig_kind", "sig_npts", "sig_x", "sig_y", "sig_m",   # packed SignalTable
        "pas_rows",      # float64[np, n]
        "pas_params",    # float64[np, 3]: stiffness, rest angle, damping
        "assist_index",  # int64[1]: coordinate of the base pitch, -1 = no assist
        "assist_params", # float64[4]: stiffness, damping, zone half-width, upright pitch
        # --- actuators (issue 15)
        "act_kind",      # int64[na]: actuators.NO_MOTOR, SATURATE or REPORT
        "act_limit",     # float64[na, 3]: peak torque, max speed, rated power (inf: none)
        "act_motor",     # float64[na, 4]: gear ratio, torque constant, resistance, regeneration
        # --- the rows' nonzero columns (issue 16: a joint row has 1-4 nonzeros of n)
        "act_cols",      # int64[na, w]: nonzero columns of act_rows[j], ascending, first act_ncols[j]
        "act_ncols",     # int64[na]
        "pas_cols",      # int64[np, w]: the same for pas_rows
        "pas_ncols",     # int64[np]
        "pitch_index",   # int64[1]: coordinate of the base pitch (torso feedback; -1 if none)
        # --- the entries of the gains that change from step to step (issue 16, update_gains)
        "gain_entries",  # int64[e, 2]: (i, k) reached by the active rows' outer products and the pitch diagonal
        "gain_pas",      # int64[p]: entry (row of gain_entries) of each passive contribution to them
        "gain_pas_kd",   # float64[p, 2]: that contribution's stiffness, damping (K_j row_i row_k, D_j row_i row_k)
    ],
)


def row_columns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cols int64[k, w], ncols int64[k]): the nonzero columns of each of rows
    (float64[k, n]), ascending, in cols[j, :ncols[j]] (the rest -1); w = the largest count
    (at least 1)."""
    rows = np.asarray(rows, dtype=np.float64)
    nz = [np.flatnonzero(r) for r in rows]
    ncols = np.array([len(c) for c in nz], dtype=np.int64)
    cols = np.full((len(nz), max([1] + [len(c) for c in nz])), -1, dtype=np.int64)
    for j, c in enumerate(nz):
        cols[j, :len(c)] = c
    return cols, ncols


def changing_gain_entries(act_cols: np.ndarray, act_ncols: np.ndarray, pas_rows: np.ndarray,
                          pas_params: np.ndarray, pitch_index: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(entries int64[e, 2], pas int64[p], pas_kd float64[p, 2]) of :func:`update_gains`:
    the entries (i, k) of the stiffness and damping matrices that the active rows' outer
    products (nonzero columns act_cols[j, :act_ncols[j]]) and the pitch diagonal (-1: no
    assist) reach -- the only ones whose value changes between calls -- and the passive
    rows' contributions to them in the order :func:`control_gains` adds them: entry
    index and (K_j row_i row_k, D_j row_i row_k), the same products as there."""
    entries: list[tuple[int, int]] = []
    for j in range(act_cols.shape[0]):
        cols = [int(i) for i in act_cols[j, :act_ncols[j]]]
        entries += [(i, k) for i in cols for k in cols if (i, k) not in entries]
    if pitch_index >= 0 and (pitch_index, pitch_index) not in entries:
        entries.append((pitch_index, pitch_index))
    where = {e: p for p, e in enumerate(entries)}
    pas, pas_kd = [], []
    for j in range(pas_rows.shape[0]):
        row = pas_rows[j]
        cols = np.flatnonzero(row)
        for i in cols:
            for k in cols:
                if (int(i), int(k)) in where:
                    pas.append(where[(int(i), int(k))])
                    pas_kd.append([pas_params[j, 0] * row[i] * row[k], pas_params[j, 2] * row[i] * row[k]])
    return (np.array(entries, dtype=np.int64).reshape(len(entries), 2),
            np.array(pas, dtype=np.int64), np.array(pas_kd, dtype=np.float64).reshape(len(pas), 2))


def compile_controller(controller: Controller, n: int,
                       active_rows: dict[str, Sequence[np.ndarray]],
                       passive_rows: dict[str, Sequence[np.ndarray]],
                       pitch_index: int, phase0: float = 0.0,
                       driven: frozenset[str] = frozenset()) -> ControllerArrays:
    """Arrays for :func:`control_torques`.

    active_rows / passive_rows: joint name -> (row of the right leg, row of the left leg)
    (a single row is allowed: a joint outside the legs, no half-period shift); rows are
    float64[n] (see :func:`tree_joint_row`, :func:`loop_joint_row`). pitch_index: base
    pitch coordinate (the assist acts there). phase0: phase of the right leg at t = 0.
    driven: names of active joints whose law the device delivers (kind DRIVEN: the
    wearer-space law, :mod:`codesign.control.wearer`).
    """
    signals: list[sg.Signal] = []
    rows, offsets, sig_idx = [], [], []
    kinds, limits, motors = [], [], []
    for joint in controller.active:
        base = len(signals)
        signals += [joint.reference, joint.stiffness, joint.damping]
        torso = [-1, -1]
        if joint.torso_stiffness is not None:
            torso = [len(signals), len(signals) + 1]
            signals += [joint.torso_stiffness, joint.torso_damping]
        hw = joint.actuator
        for side, row in enumerate(_rows_of(active_rows, joint.name)):
            rows.append(np.asarray(row, dtype=np.float64))
            offsets.append(0.5 * side)
            sig_idx.append([base, base + 1, base + 2] + torso)
            kinds.append(act.DRIVEN if joint.name in driven else act.NO_MOTOR if hw is None
                         else act.SATURATE if hw.enforced else act.REPORT)
            limits.append(act.UNBOUNDED_LIMIT if hw is None else hw.limit_row())
            motors.append(act.NO_MOTOR_ROW if hw is None else hw.motor_row())
    p_rows, p_par = [], []
    for joint in controller.passive:
        for row in _rows_of(passive_rows, joint.name):
            p_rows.append(np.asarray(row, dtype=np.float64))
            p_par.append([joint.stiffness, joint.rest, joint.damping])
    table = sg.SignalTable.pack(signals or [sg.constant(0.0)])
    a = controller.assist
    act_rows = np.array(rows, dtype=np.float64).reshape(len(rows), n)
    pas_rows = np.array(p_rows, dtype=np.float64).reshape(len(p_rows), n)
    act_cols, act_ncols = row_columns(act_rows)
    pas_cols, pas_ncols = row_columns(pas_rows)
    pas_params = np.array(p_par, dtype=np.float64).reshape(len(p_par), 3)
    pitch = pitch_index if a.enabled else -1
    gain_entries, gain_pas, gain_pas_kd = changing_gain_entries(act_cols, act_ncols, pas_rows,
                                                                pas_params, pitch)
    return ControllerArrays(
        timing=np.array([controller.frequency, phase0], dtype=np.float64),
        act_rows=act_rows,
        act_offset=np.array(offsets, dtype=np.float64),
        act_signal=np.array(sig_idx, dtype=np.int64).reshape(len(sig_idx), 5),
        sig_kind=table.kind, sig_npts=table.npts, sig_x=table.x, sig_y=table.y, sig_m=table.m,
        pas_rows=pas_rows,
        pas_params=pas_params,
        assist_index=np.array([pitch], dtype=np.int64),
        assist_params=np.array([a.stiffness, a.damping, a.zone, a.upright], dtype=np.float64),
        act_kind=np.array(kinds, dtype=np.int64),
        act_limit=np.array(limits, dtype=np.float64).reshape(len(rows), act.LIMIT_COLUMNS),
        act_motor=np.array(motors, dtype=np.float64).reshape(len(rows), 4),
        act_cols=act_cols, act_ncols=act_ncols, pas_cols=pas_cols, pas_ncols=pas_ncols,
        pitch_index=np.array([pitch_index], dtype=np.int64),
        gain_entries=gain_entries, gain_pas=gain_pas, gain_pas_kd=gain_pas_kd,
    )


def _rows_of(table: dict, name: str) -> list:
    if name not in table:
        raise KeyError(f"controller joint {name!r}: no model joint mapped to it "
                       f"(mapped: {sorted(table)})")
    rows = table[name]
    if isinstance(rows, np.ndarray) and rows.ndim == 1:
        return [rows]
    return list(rows)


# --------------------------------------------------------------------------- compiled law
@njit(cache=True, _nrt=False)
def assist_torque(pitch: float, pitch_rate: float, params: np.ndarray) -> tuple:
    """(torque N m, active?) of the assistive pitch law; params = (K, D, zone, upright)."""
    e = pitch - params[3]
    zone = params[2]
    if abs(e) <= zone:
        return 0.0, False
    edge = zone if e > 0.0 else -zone
    return params[0] * (edge - e) - params[1] * pitch_rate, True


@njit(cache=True, _nrt=False)
def torso_pitch(q: np.ndarray, c) -> float:
    """rad: the base (torso) pitch from the assist's upright angle, q the coordinates (or
    the state, coordinates first); NaN for a controller without the pitch assist."""
    ia = c.assist_index[0]
    return q[ia] - c.assist_params[3] if ia >= 0 else np.nan


@njit(cache=True, _nrt=False)
def control_torques(t: float, q: np.ndarray, v: np.ndarray, c, tau: np.ndarray,
                    joint_tau: np.ndarray, joint_rate: np.ndarray,
                    joint_gain: np.ndarray, joint_cmd: np.ndarray) -> tuple:
    """Generalized control forces at time t.

    q, v: float64[n]; c: ControllerArrays. Writes (overwrites) tau: float64[n] generalized
    forces of all joint torques and the assist; joint_tau, joint_rate: float64[na] torque
    (N m; delivered: clipped to the joint's actuator envelope where c.act_kind is
    SATURATE) and rate (rad/s) of each active joint (for power metrics); joint_gain:
    float64[na, 2] its stiffness K(t) (N m/rad) and damping D(t) (N m s/rad), zero while
    saturated, for :func:`control_gains`; joint_cmd: float64[na] the law's torque before
    the clip (N m). A joint of kind DRIVEN (the wearer's hip and knee under the
    wearer-space law, :mod:`codesign.control.wearer`) gets its law torque in joint_tau
    and nothing in tau: the device's actuators deliver it. Returns (assist torque N m,
    assist active?).
    """
    n = q.shape[0]
    for i in range(n):
        tau[i] = 0.0
    base = c.timing[0] * t + c.timing[1]     # the gait phase of each row: frac(base + offset)
    for j in range(c.act_rows.shape[0]):
        row = c.act_rows[j]
        cols = c.act_cols[j]
        angle = 0.0
        rate = 0.0
        for p in range(c.act_ncols[j]):       # the row's nonzeros only (a zero adds nothing)
            i = cols[p]
            angle += row[i] * q[i]
            rate += row[i] * v[i]
        phase = base + c.act_offset[j]
        phase -= np.floor(phase)
        s = c.act_signal[j]
        ref = sg.table_value(c.sig_kind, c.sig_npts, c.sig_x, c.sig_y, c.sig_m, s[0], phase)
        k = sg.table_value(c.sig_kind, c.sig_npts, c.sig_x, c.sig_y, c.sig_m, s[1], phase)
        d = sg.table_value(c.sig_kind, c.sig_npts, c.sig_x, c.sig_y, c.sig_m, s[2], phase)
        torque = k * (ref - angle) - d * rate
        if s[3] >= 0:         # torso feedback (explicit: not in control_gains)
            ip = c.pitch_index[0]
            kt = sg.table_value(c.sig_kind, c.sig_npts, c.sig_x, c.sig_y, c.sig_m, s[3], phase)
            dt = sg.table_value(c.sig_kind, c.sig_npts, c.sig_x, c.sig_y, c.sig_m, s[4], phase)
            torque -= kt * (q[ip] - c.assist_params[3]) + dt * v[ip]
        joint_cmd[j] = torque
        if c.act_kind[j] == act.SATURATE:
            torque, saturated = act.saturate(torque, rate, c.act_limit[j])
            if saturated:      # d tau / d q = 0: nothing for the step to treat implicitly
                k = 0.0
                d = 0.0
        joint_tau[j] = torque
        joint_rate[j] = rate
        joint_gain[j, 0] = k
        joint_gain[j, 1] = d
        if c.act_kind[j] == act.DRIVEN:
            continue
        for p in range(c.act_ncols[j]):
            tau[cols[p]] += row[cols[p]] * torque
    for j in range(c.pas_rows.shape[0]):
        row = c.pas_rows[j]
        cols = c.pas_cols[j]
        angle = 0.0
        rate = 0.0
        for p in range(c.pas_ncols[j]):
            i = cols[p]
            angle += row[i] * q[i]
            rate += row[i] * v[i]
        torque = c.pas_params[j, 0] * (c.pas_params[j, 1] - angle) - c.pas_params[j, 2] * rate
        for p in range(c.pas_ncols[j]):
            tau[cols[p]] += row[cols[p]] * torque
    ia = c.assist_index[0]
    if ia < 0:
        return 0.0, False
    ta, active = assist_torque(q[ia], v[ia], c.assist_params)
    tau[ia] += ta
    return ta, active


@njit(cache=True, _nrt=False)
def control_gains(c, joint_gain: np.ndarray, assist_active: bool, stiffness: np.ndarray,
                  damping: np.ndarray) -> None:
    """The Jacobians of :func:`control_torques` at the same time: stiffness = -d tau / d q
    and damping = -d tau / d qd (float64[n, n]; symmetric positive semi-definite), i.e.
    sum_j K_j row_j row_j^T and sum_j D_j row_j row_j^T over the active joints
    (joint_gain[j] = (K_j, D_j) from control_torques) and the passive ones, plus the
    assist's K and D on the pitch when it is active. A time-stepping integrator treats
    these terms implicitly. Only the entries the rows' outer products and the pitch
    diagonal can reach are written (zeroed, then summed): pass matrices that are zero
    elsewhere (np.zeros once; every call leaves them so). :func:`passive_row_gains`, then
    :func:`update_gains`; a caller that keeps the matrices calls the first once and the
    second at every step (issue 16: the passive rows' entries are constant)."""
    passive_row_gains(c, stiffness, damping)
    update_gains(c, joint_gain, assist_active, stiffness, damping)


@njit(cache=True, inline="always")
def _add_outer(stiffness, damping, row, cols, ncols, kj, dj):
    """stiffness += kj row row^T, damping += dj row row^T on the row's nonzero columns
    cols[:ncols] (inlined: a call per row would cost more than its few entries)."""
    for a in range(ncols):
        i = cols[a]
        for b in range(ncols):
            k = cols[b]
            stiffness[i, k] += kj * row[i] * row[k]
            damping[i, k] += dj * row[i] * row[k]


@njit(cache=True, _nrt=False)
def passive_row_gains(c, stiffness: np.ndarray, damping: np.ndarray) -> None:
    """The passive rows' part of :func:`control_gains`: their outer-product entries of
    stiffness and damping (float64[n, n]) zeroed, then sum_j K_j row_j row_j^T and
    sum_j D_j row_j row_j^T in row order. Constant: the entries the active rows or the
    pitch diagonal also reach are then completed by :func:`update_gains`."""
    for j in range(c.pas_rows.shape[0]):
        cols = c.pas_cols[j]
        for a in range(c.pas_ncols[j]):
            for b in range(c.pas_ncols[j]):
                stiffness[cols[a], cols[b]] = 0.0
                damping[cols[a], cols[b]] = 0.0
    for j in range(c.pas_rows.shape[0]):
        _add_outer(stiffness, damping, c.pas_rows[j], c.pas_cols[j], c.pas_ncols[j],
                   c.pas_params[j, 0], c.pas_params[j, 2])


@njit(cache=True, _nrt=False)
def update_gains(c, joint_gain: np.ndarray, assist_active: bool, stiffness: np.ndarray,
                 damping: np.ndarray) -> None:
    """:func:`control_gains` on matrices that already hold its result for some earlier
    gains: rewrites only the entries that change (c.gain_entries: those the active rows'
    outer products and the pitch diagonal reach), each summed as control_gains sums it --
    zeroed, the active rows in order, the passive rows' contributions (c.gain_pas_kd, the
    same products) in order, the assist -- so the result is identical to the bit. A few
    entries instead of every passive row's (issue 16)."""
    e = c.gain_entries
    for p in range(e.shape[0]):
        stiffness[e[p, 0], e[p, 1]] = 0.0
        damping[e[p, 0], e[p, 1]] = 0.0
    for j in range(c.act_rows.shape[0]):
        _add_outer(stiffness, damping, c.act_rows[j], c.act_cols[j], c.act_ncols[j],
                   joint_gain[j, 0], joint_gain[j, 1])
    for p in range(c.gain_pas.shape[0]):
        i = e[c.gain_pas[p], 0]
        k = e[c.gain_pas[p], 1]
        stiffness[i, k] += c.gain_pas_kd[p, 0]
        damping[i, k] += c.gain_pas_kd[p, 1]
    ia = c.assist_index[0]
    if ia >= 0 and assist_active:
        stiffness[ia, ia] += c.assist_params[0]
        damping[ia, ia] += c.assist_params[1]
