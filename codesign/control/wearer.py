"""Control in the wearer's joint space (issue 29): the device's actuators deliver the
wearer's hip and knee law through the linkage's transmission.

The wearer's law is the chapter-4 step impedance of hip and knee (thesis 4.1.1 eq. 4.1,
:mod:`codesign.control.impedance`), tau_h = K_h(phi) (q_ref(phi) - h) - D_h(phi) h_dot per
leg, h = (hip, knee) angles. The linkage in parallel with thigh and shank has two degrees
of freedom per leg (Kutzbach), so its two actuated angles a determine h and, on the
loop-constrained motion, h_dot = G(q) a_dot with the transmission

    G = dh/da = A^-1,   A = da/dh = R_a,h + R_a,w X,   K_w X = -K_h          (2 x 2 per leg)

where K = [K_h K_w] are the leg's loop-closure rows (point velocity constraints, the
engine's :func:`codesign.dynamics.contact_rows.loop_rows`) on the leg's hip and knee
coordinates and on its added tree coordinates w, X = dw/dh the added joints' motion that
keeps the loops closed (least squares: (K_w^T K_w) X = -K_w^T K_h; K_w is square for the
catalog's linkages), and R_a the actuated joints' rows (angle = row . q). Virtual work on
the constrained motion gives the actuator torques that do the law's work,

    tau_a = G^T tau_h,        tau_a . a_dot = tau_h . h_dot,

each clipped to its actuator's torque-speed envelope at its own rate (clipping both
together to keep their direction walked worse in the issue's probe). The clipped torques
are applied at the actuated joints' rows, so the loop and cuff forces are those of a
device that pushes through its linkage. G is computed every call from this call's
kinematics (forward kinematics and the loop rows at q, in a workspace of its own).

The hip and knee joints of the law are active joints of the controller of kind
:data:`codesign.model.actuators.DRIVEN`: :func:`~codesign.control.impedance.control_torques`
computes their law torque and leaves it to :func:`drive_torques`; their stiffness and
damping stay on the hip and knee rows for the time step's implicit treatment while
neither actuator of the leg saturates (zero otherwise, as a saturated joint's).

Assistance (issue 32, an active wearer): in the drive's ``ASSIST`` mode the wearer's own
hip and knee law acts on the wearer's joints (active joints of the controller, not
DRIVEN), and the device adds an assistance torque tau_p(phi) per leg (hip, knee;
:mod:`codesign.control.assist`, a signal of the controller's gait phase, the left leg half
a period later; or, under ``evaluation.assist_timing = "contact" | "hip_peak"`` (issue 46),
of each leg's own phase as the device estimates it from its signals,
:mod:`codesign.control.phase` and :func:`sense_phase`, no torque before the leg's first
gait event) through its linkage: tau_a = G^T tau_p, clipped as above, applied at the
actuated rows. The wearer's muscles supply what the device does not (the compensation
model of Dembia, Silder, Uchida, Hicks and Delp, PLoS ONE 12(7):e0180320, 2017: simulated
ideal devices with the wearer's motion kept): the human-joint equivalent of the delivered
torques, by virtual work tau_dev = G^-T tau_a (tau_dev . h_dot = tau_a . a_dot), is taken
off the hip and knee rows and written to ``relief`` (per controller row), so the wearer's
torque is tau_law - tau_dev. The device's torques then do no net work on the loop-
constrained motion: a massless device leaves the walk as it was, and the wearer's effort
falls where tau_dev matches the law. An ideal device (no linkage: the actuated rows are the
wearer's hip and knee rows, no added joints) has G = I.

Guard: a transmission whose largest entry exceeds ``max_transmission`` (or a linkage
whose added joints are no longer determined by the loops) is a singular posture:
:func:`drive_torques` applies no device torque and raises the flag ``DriveData.singular``,
which the rollout's checks turn into the status ``transmission_singular``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import numpy as np
from numba import njit

from codesign.control import phase as ph
from codesign.control import signals as sg
from codesign.dynamics.contact_rows import loop_rows
from codesign.dynamics.kinematics import forward_kinematics
from codesign.dynamics.model import make_workspace
from codesign.model import actuators as act

MAX_TRANSMISSION = 50.0     # largest |G| entry before a posture counts as singular (-)
PIVOT_TOL = 1e-12           # relative pivot of the added joints' solve below which it is singular
DELIVER, ASSIST = 0, 1      # the drive's modes: deliver the wearer's law (issue 29), assist an active wearer (32)
# what times the assistance (issue 46 item 2): the law's clock, or the device's own gait-phase
# estimate from one of control.phase's sources (their indices, SOURCE_CONTACT ...)
ASSIST_TIMINGS = ("clock",) + ph.SOURCES
CLOCK = -1                  # DriveArrays.phase_source of the clock-timed profile


class DriveArrays(NamedTuple):
    """The fixed numbers of the wearer-space drive (:func:`compile_drive`); L legs (0: the
    thesis's actuator-space law, nothing to drive)."""

    leg_law: np.ndarray      # int64[L, 2]: active joints (controller rows) of the leg's hip, knee law
    leg_human: np.ndarray    # int64[L, 2]: the leg's hip and knee coordinates
    leg_added: np.ndarray    # int64[L, W]: the leg's added tree coordinates (first leg_nadded[l])
    leg_nadded: np.ndarray   # int64[L]
    leg_loops: np.ndarray    # int64[L, P]: the leg's loop closures (first leg_nloops[l])
    leg_nloops: np.ndarray   # int64[L]
    rows: np.ndarray         # float64[2 L, n]: actuated joint rows, leg l's at 2 l, 2 l + 1
    kind: np.ndarray         # int64[2 L]: actuators.SATURATE or REPORT
    limit: np.ndarray        # float64[2 L, 3]: peak torque, max speed, rated power
    motor: np.ndarray        # float64[2 L, 4]: gear ratio, torque constant, resistance, regeneration
    max_transmission: np.ndarray   # float64[1]
    mode: np.ndarray         # int64[1]: DELIVER or ASSIST
    timing: np.ndarray       # float64[2]: gait frequency (Hz), right leg's phase at t = 0 (ASSIST)
    assist_kind: np.ndarray  # int64[2]: packed SignalTable of the (hip, knee) assistance (N m, engine
    assist_npts: np.ndarray  #   convention; ASSIST), see codesign.control.signals.SignalTable
    assist_x: np.ndarray
    assist_y: np.ndarray
    assist_m: np.ndarray
    phase_source: np.ndarray  # int64[1]: CLOCK, or the phase estimator's source (ASSIST; issue 46)
    phase_config: ph.PhaseConfig  # the estimator's constants (its source's; unused under CLOCK)
    assist_onset: np.ndarray  # int64[1]: strides a leg's estimator measures before its assistance starts


class DriveData(NamedTuple):
    """What the drive writes per call (scratch and outputs)."""

    work: Any                # engine Workspace (make_workspace): the kinematics of q, its own
    K: np.ndarray            # float64[2 m, n] scratch: loop rows
    aux: np.ndarray          # float64[3, 2 m] scratch: the loop rows' bias, velocity, position
    N: np.ndarray            # float64[W, W] scratch: K_w^T K_w
    X: np.ndarray            # float64[W, 2] scratch: -K_w^T K_h, then dw/dh
    G: np.ndarray            # float64[L, 2, 2]: each leg's transmission dh/da of the last call
    cmd: np.ndarray          # float64[2 L]: commanded actuator torques G^T tau_h (N m)
    tau: np.ndarray          # float64[2 L]: delivered (clipped) actuator torques (N m)
    rate: np.ndarray         # float64[2 L]: actuated joint rates (rad/s)
    singular: np.ndarray     # int64[1]: 1 once a call met a singular transmission
    phase: ph.PhaseState     # each leg's phase estimator (strides [L', n_mean], scalars [L', N_SCALARS],
                             #   L' = 2 rows, right then left; zeros: fresh), changed by sense_phase
    phase_now: np.ndarray    # float64[2]: each leg's estimated phase at the last sample (NaN: none)


class DriveLeg(NamedTuple):
    """One leg of the drive: ``law`` the controller rows of its hip and knee law (DRIVEN),
    ``human`` its hip and knee coordinates, ``added`` its added tree coordinates, ``loops``
    its loop closures, ``rows`` its two actuated joints' rows (float64[n] each, in the
    actuator pair's order)."""

    law: tuple[int, int]
    human: tuple[int, int]
    added: tuple[int, ...]
    loops: tuple[int, ...]
    rows: tuple[np.ndarray, np.ndarray]


def compile_drive(n: int, legs: Sequence[DriveLeg], actuators: Sequence[act.Actuator | None],
                  max_transmission: float = MAX_TRANSMISSION,
                  assist: tuple[sg.Signal, sg.Signal] | None = None,
                  timing: tuple[float, float] = (0.0, 0.0),
                  assist_timing: str = "clock", assist_onset: int = 0) -> DriveArrays:
    """The drive's arrays for a model of n coordinates: its legs (none: the thesis's
    actuator-space law), the actuator of each of a leg's two actuated joints (in its
    ``rows`` order, the same on every leg; None: unbounded, not a motor) and the singular
    guard's bound on |G| entries. ``assist``: the (hip, knee) assistance signals of an
    active wearer (mode ASSIST, module docstring; None: DELIVER the law), on the
    controller's clock ``timing`` (gait frequency Hz, right leg's phase at t = 0) or, with
    ``assist_timing`` a source of :data:`codesign.control.phase.SOURCES`, at each leg's
    phase estimated from the device's own signals (:func:`sense_phase`; ASSIST_TIMINGS),
    each leg's assistance starting once its estimator has measured ``assist_onset`` strides
    (0: at its first event; a device that waits for its stride estimate, not used by the clock)."""
    L = len(legs)
    W = max([1] + [len(leg.added) for leg in legs])
    P = max([1] + [len(leg.loops) for leg in legs])

    def padded(values, width):
        out = np.full((L, width), -1, dtype=np.int64)
        for i, v in enumerate(values):
            out[i, :len(v)] = v
        return out

    rows = [np.asarray(r, dtype=np.float64) for leg in legs for r in leg.rows]
    per_row = [actuators[k] for _leg in legs for k in range(2)]
    kind = [act.NO_MOTOR if a is None else act.SATURATE if a.enforced else act.REPORT for a in per_row]
    limit = [act.UNBOUNDED_LIMIT if a is None else a.limit_row() for a in per_row]
    motor = [act.NO_MOTOR_ROW if a is None else a.motor_row() for a in per_row]
    table = sg.SignalTable.pack(assist if assist is not None else (sg.constant(0.0), sg.constant(0.0)))
    return DriveArrays(
        leg_law=np.array([leg.law for leg in legs], dtype=np.int64).reshape(L, 2),
        leg_human=np.array([leg.human for leg in legs], dtype=np.int64).reshape(L, 2),
        leg_added=padded([leg.added for leg in legs], W),
        leg_nadded=np.array([len(leg.added) for leg in legs], dtype=np.int64),
        leg_loops=padded([leg.loops for leg in legs], P),
        leg_nloops=np.array([len(leg.loops) for leg in legs], dtype=np.int64),
        rows=np.array(rows, dtype=np.float64).reshape(2 * L, n),
        kind=np.array(kind, dtype=np.int64).reshape(2 * L),
        limit=np.array(limit, dtype=np.float64).reshape(2 * L, act.LIMIT_COLUMNS),
        motor=np.array(motor, dtype=np.float64).reshape(2 * L, 4),
        max_transmission=np.array([max_transmission]),
        mode=np.array([DELIVER if assist is None else ASSIST], dtype=np.int64),
        timing=np.array(timing, dtype=np.float64).reshape(2),
        assist_kind=table.kind, assist_npts=table.npts, assist_x=table.x, assist_y=table.y,
        assist_m=table.m,
        phase_source=np.array([ASSIST_TIMINGS.index(assist_timing) - 1], dtype=np.int64),
        phase_config=ph.phase_config("contact" if assist_timing == "clock" else assist_timing),
        assist_onset=np.array([assist_onset], dtype=np.int64))


def no_drive(n: int) -> DriveArrays:
    """The drive of the thesis's actuator-space law: no legs."""
    return compile_drive(n, (), (None, None))


def make_drive_data(d: DriveArrays, model) -> DriveData:
    """A fresh (zero) data record for the drive ``d`` of the engine model ``model``."""
    L = d.leg_law.shape[0]
    W = d.leg_added.shape[1]
    n = model.n
    r = 2 * model.n_loops if L else 0
    return DriveData(work=make_workspace(model), K=np.zeros((r, n)), aux=np.zeros((3, r)), N=np.zeros((W, W)),
                     X=np.zeros((W, 2)), G=np.zeros((L, 2, 2)), cmd=np.zeros(2 * L),
                     tau=np.zeros(2 * L), rate=np.zeros(2 * L), singular=np.zeros(1, dtype=np.int64),
                     phase=ph.PhaseState(np.zeros((2, d.phase_config.n_mean)), np.zeros((2, ph.N_SCALARS))),
                     phase_now=np.zeros(2))


# --------------------------------------------------------------------------- compiled
@njit(cache=True, _nrt=False)
def _solve_added(N, X, nw):
    """Solve N Y = X (N float64[nw, nw] symmetric, X float64[nw, 2]) in place by Gaussian
    elimination with partial pivoting (X <- Y). False when a pivot falls below PIVOT_TOL
    times the largest diagonal entry (the added joints are not determined). Nothing to
    solve (True) without added joints (nw = 0: an ideal device)."""
    if nw == 0:
        return True
    scale = 0.0
    for i in range(nw):
        scale = max(scale, abs(N[i, i]))
    if not scale > 0.0:
        return False
    for k in range(nw):
        p = k
        for i in range(k + 1, nw):
            if abs(N[i, k]) > abs(N[p, k]):
                p = i
        if not abs(N[p, k]) > PIVOT_TOL * scale:
            return False
        if p != k:
            for j in range(nw):
                N[k, j], N[p, j] = N[p, j], N[k, j]
            for j in range(2):
                X[k, j], X[p, j] = X[p, j], X[k, j]
        for i in range(k + 1, nw):
            f = N[i, k] / N[k, k]
            for j in range(k, nw):
                N[i, j] -= f * N[k, j]
            for j in range(2):
                X[i, j] -= f * X[k, j]
    for k in range(nw - 1, -1, -1):
        for j in range(2):
            s = X[k, j]
            for i in range(k + 1, nw):
                s -= N[k, i] * X[i, j]
            X[k, j] = s / N[k, k]
    return True


@njit(cache=True, _nrt=False)
def leg_transmission(d, dd, leg, G):
    """G (float64[2, 2]) <- dh/da of leg ``leg`` from the loop rows in dd.K (filled by
    :func:`transmissions`). False when the posture is singular (the added joints not
    determined by the loops, A = da/dh not invertible, or an entry beyond the guard)."""
    nw = d.leg_nadded[leg]
    added = d.leg_added[leg]
    human = d.leg_human[leg]
    N = dd.N
    X = dd.X
    K = dd.K
    for i in range(nw):
        for j in range(nw):
            N[i, j] = 0.0
        X[i, 0] = 0.0
        X[i, 1] = 0.0
    for p in range(d.leg_nloops[leg]):
        for r in range(2 * d.leg_loops[leg, p], 2 * d.leg_loops[leg, p] + 2):
            for i in range(nw):
                ki = K[r, added[i]]
                for j in range(nw):
                    N[i, j] += ki * K[r, added[j]]
                X[i, 0] -= ki * K[r, human[0]]
                X[i, 1] -= ki * K[r, human[1]]
    if not _solve_added(N, X, nw):
        return False
    # A = da/dh: the actuated rows on the leg's hip, knee and added coordinates
    r0 = d.rows[2 * leg]
    r1 = d.rows[2 * leg + 1]
    a00 = r0[human[0]]
    a01 = r0[human[1]]
    a10 = r1[human[0]]
    a11 = r1[human[1]]
    for i in range(nw):
        c = added[i]
        a00 += r0[c] * X[i, 0]
        a01 += r0[c] * X[i, 1]
        a10 += r1[c] * X[i, 0]
        a11 += r1[c] * X[i, 1]
    det = a00 * a11 - a01 * a10
    if det == 0.0 or not math.isfinite(det):
        return False
    G[0, 0] = a11 / det
    G[0, 1] = -a01 / det
    G[1, 0] = -a10 / det
    G[1, 1] = a00 / det
    bound = d.max_transmission[0]
    for i in range(2):
        for j in range(2):
            if not abs(G[i, j]) <= bound:
                return False
    return True


@njit(cache=True, _nrt=False)
def transmissions(m, q, v, d, dd):
    """Every leg's transmission at (q, v) into dd.G (forward kinematics and the loop rows
    of this configuration, in the drive's own workspace dd.work and dd.K). False if one
    is singular (its G is then left as computed so far)."""
    forward_kinematics(m, q, v, dd.work)
    loop_rows(m, dd.work, dd.K, dd.aux[0], dd.aux[1], dd.aux[2])
    for leg in range(d.leg_law.shape[0]):
        if not leg_transmission(d, dd, leg, dd.G[leg]):
            return False
    return True


@njit(cache=True, _nrt=False)
def drive_torques(t, m, q, v, d, dd, tau, joint_tau, joint_gain, relief):
    """Add the device's torques to the generalized forces tau (float64[n]) at time t (s),
    for every leg of the drive d (module docstring). DELIVER: the wearer's hip and knee
    law, tau_h = joint_tau of the leg's law joints (DRIVEN rows of control_torques);
    ASSIST: the assistance profile tau_h = d.assist(phase of the leg: the clock's, or the
    leg's estimate at t, :func:`codesign.control.phase.phase_at`, nothing before its first
    event nor before it measured ``d.assist_onset`` strides). Then
    tau_a = G^T tau_h, each clipped to its envelope at its rate (kind SATURATE), applied
    at the actuated rows. Writes dd.G, dd.cmd, dd.tau, dd.rate. DELIVER zeroes
    joint_gain of a leg's law joints while one of its actuators saturates; ASSIST takes
    the delivered torques' human-joint equivalent G^-T tau_a off the leg's hip and knee
    rows and writes it to relief (float64[na], at the law joints' controller rows). A
    singular transmission applies nothing and sets dd.singular[0] = 1. Returns False then."""
    L = d.leg_law.shape[0]
    if L == 0:
        return True
    if not transmissions(m, q, v, d, dd):
        dd.singular[0] = 1
        for i in range(2 * L):
            dd.cmd[i] = 0.0
            dd.tau[i] = 0.0
        return False
    n = q.shape[0]
    assist = d.mode[0] == ASSIST
    for leg in range(L):
        G = dd.G[leg]
        if assist:
            if d.phase_source[0] == CLOCK:
                phase = d.timing[0] * t + d.timing[1] + 0.5 * leg
                phase -= np.floor(phase)
            else:       # the leg's own estimate; none before its first event or its onset: no assistance
                state = ph.PhaseState(dd.phase.strides[leg], dd.phase.scalars[leg])
                phase = ph.phase_at(d.phase_config, state, t)
                if ph.strides_measured(state) < d.assist_onset[0]:
                    phase = np.nan
            if math.isnan(phase):
                th0 = 0.0
                th1 = 0.0
            else:
                th0 = sg.table_value(d.assist_kind, d.assist_npts, d.assist_x, d.assist_y, d.assist_m, 0, phase)
                th1 = sg.table_value(d.assist_kind, d.assist_npts, d.assist_x, d.assist_y, d.assist_m, 1, phase)
        else:
            th0 = joint_tau[d.leg_law[leg, 0]]
            th1 = joint_tau[d.leg_law[leg, 1]]
        saturated = False
        for k in range(2):
            i = 2 * leg + k
            row = d.rows[i]
            torque = G[0, k] * th0 + G[1, k] * th1
            rate = 0.0
            for c in range(n):
                rate += row[c] * v[c]
            dd.cmd[i] = torque
            if d.kind[i] == act.SATURATE:
                torque, clipped = act.saturate(torque, rate, d.limit[i])
                saturated = saturated or clipped
            dd.tau[i] = torque
            dd.rate[i] = rate
            for c in range(n):
                if row[c] != 0.0:
                    tau[c] += row[c] * torque
        if assist:
            # G^T e = tau_a: the human-joint torques doing the delivered torques' work
            t0 = dd.tau[2 * leg]
            t1 = dd.tau[2 * leg + 1]
            det = G[0, 0] * G[1, 1] - G[0, 1] * G[1, 0]
            e0 = (G[1, 1] * t0 - G[1, 0] * t1) / det
            e1 = (G[0, 0] * t1 - G[0, 1] * t0) / det
            tau[d.leg_human[leg, 0]] -= e0
            tau[d.leg_human[leg, 1]] -= e1
            relief[d.leg_law[leg, 0]] = e0
            relief[d.leg_law[leg, 1]] = e1
        elif saturated:
            for k in range(2):
                joint_gain[d.leg_law[leg, k], 0] = 0.0
                joint_gain[d.leg_law[leg, k], 1] = 0.0
    return True


@njit(cache=True, _nrt=False)
def sense_phase(t, x, feet, d, dd):
    """The device senses one sample (issue 46 item 2): at time t (s), state x (float64[2n],
    q first) and feet float64[2] (right, left foot on the ground, 0/1), each leg's phase
    estimator (:func:`codesign.control.phase.phase_step`) takes the leg's hip angle and
    rate (its ``leg_human`` hip coordinate) and its foot's contact; dd.phase_now gets the
    estimates. Nothing to sense (a clock-timed profile, no assistance, no drive):
    dd.phase_now NaN. The rollouts call it once per observed sample, in time order
    (:func:`codesign.walking.accumulators.observe_sample`); the drive reads the state
    between samples (:func:`drive_torques`)."""
    L = d.leg_law.shape[0]
    dd.phase_now[0] = np.nan
    dd.phase_now[1] = np.nan
    if L == 0 or d.mode[0] != ASSIST or d.phase_source[0] == CLOCK:
        return
    n = x.shape[0] // 2
    for leg in range(min(L, 2)):
        hip = d.leg_human[leg, 0]
        state = ph.PhaseState(dd.phase.strides[leg], dd.phase.scalars[leg])
        dd.phase_now[leg] = ph.phase_step(d.phase_config, state, t, x[hip], x[n + hip], feet[leg] > 0.0)
