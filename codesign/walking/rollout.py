"""Closed-loop walking rollout: hard contacts, impedance control, falls, metrics (compiled).

The default contact model (``contact_model = "hard"``) integrates the hard contacts of the
thesis (4.2.3, chapter 5: unilateral, no penetration stiffness, plastic foot impacts,
Coulomb friction) by time stepping (:mod:`codesign.dynamics.timestep`, h = 1 ms): the
whole rollout is one compiled loop of

1. the controller (step impedance + pitch assist, :mod:`codesign.control.impedance`):
   torques at (t, q, qd) and their stiffness/damping Jacobians, which the step treats
   implicitly (a stiff ankle impedance on a light foot is stable at h = 1 ms);
2. one step of the constrained dynamics (loop closures and ground contacts, impulses);
3. :func:`observe`: stop on a fall (hip height below ``min_hip_height`` of the standing
   value, or torso pitch beyond ``max_pitch_deg``), on an invalid gait (no foot on the
   ground for longer than ``max_airborne_time``, or the hip thrown more than
   ``max_hip_rise`` above its standing height -- walking has no flight phase), on
   constraint drift (a loop-closure residual beyond ``max_drift``, or a contact point
   deeper than ``max_drift`` under the ground) or a non-finite state; otherwise one
   metric sample (:mod:`codesign.walking.metrics`) at the step's start with the step's
   mean forces (interaction forces: those of the continuous phases, :func:`impact_step`
   holds the last value through a touch-down impact), and a foot touch-down (a foot
   with no loaded point before the step and one after) for the step length.

The event-driven model of the thesis's simulator (exact contact-mode switching at
located events, ``"hard_event"``) and a soft penalty model (``"soft"``) run the same
controller and checks through :mod:`codesign.walking.rollout_event`: they are the peers
of ``codesign bench evaluate`` and of the cross-check tests. The event-driven model
falls over Painleve configurations of the foot points (no consistent mode) and costs
thousands of events per simulated second, which is why stepping is the default.

Initial state inside the gait: built by :mod:`codesign.walking.setup`; here
:func:`place_on_ground` puts the lowest contact point on the ground with zero velocity.
The first steps settle the other points (plastic impacts come out of the step).

Status (``Rollout.status``): ``ok`` (reached max_time), ``fall_height``, ``fall_pitch``,
``airborne``, ``thrown_up``, ``drift``, ``integrator`` (mass matrix not positive
definite, non-finite state), and for the event-driven models also ``chattering`` and
``contact``.
"""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from codesign.control.impedance import ControllerArrays, control_gains, control_torques
from codesign.dynamics import contact_rows as ct
from codesign.dynamics import timestep as ts
from codesign.dynamics.joint_forces import add_loop_forces, add_point_force, joint_wrenches
from codesign.dynamics.kinematics import body_point_world, center_of_mass, forward_kinematics
from codesign.dynamics.model import Model, make_workspace
from codesign.walking import metrics as mt

# termination codes of observe (shared with the event-driven rollout)
OK = 0
FALL_HEIGHT = 41
FALL_PITCH = 42
DRIFT = 43
AIRBORNE = 44
THROWN_UP = 45
NOT_FINITE = 46
MASS_NOT_PD = 47
STATUS = {FALL_HEIGHT: ("fall_height", "hip below the fall height"),
          FALL_PITCH: ("fall_pitch", "torso pitch beyond the fall limit"),
          DRIFT: ("drift", "constraint drift beyond max_drift"),
          AIRBORNE: ("airborne", "no foot on the ground for longer than max_airborne_time"),
          THROWN_UP: ("thrown_up", "hip thrown above max_hip_rise over its standing height"),
          NOT_FINITE: ("integrator", "non-finite state"),
          MASS_NOT_PD: ("integrator", "mass matrix not positive definite")}

# walk settings vector
WS_MIN_Z, WS_MAX_PITCH, WS_MAX_DRIFT, WS_UPRIGHT, WS_MAX_Z, WS_MAX_AIRBORNE = 0, 1, 2, 3, 4, 5
# walk index vector
WI_BASE_X, WI_BASE_Z, WI_PITCH = 0, 1, 2

CONTACT_MODELS = ("hard", "hard_event", "soft")


@dataclass(frozen=True)
class RolloutSettings:
    """Settings of one rollout (SI units except the *_deg field)."""

    max_time: float = 10.0          # s
    contact_model: str = "hard"     # "hard" (time stepping), "hard_event", "soft" (peers)
    phase0: float = 0.0             # right-leg phase at t = 0 (0 = right heel strike)
    mu: float = 1.0                 # Coulomb friction coefficient
    # time stepping ("hard")
    h: float = 1e-3                 # s, step
    penetration_correction: float = 0.2  # fraction of a penetration pushed out per step
    pgs_tol: float = 1e-8           # relative impulse change ending the contact sweeps
    pgs_max_sweeps: int = 100
    # event-driven peers ("hard_event", "soft")
    restitution: float = 0.0        # plastic foot impacts
    baumgarte: float = 20.0         # 1/s, drift stabilisation gains D = P of CONTACT
    rtol: float = 1e-6
    atol: float = 1e-8
    h_max: float = 5e-3             # s
    event_tol: float = 1e-10        # s
    max_transitions: int = 200      # chattering: events within chatter_window
    chatter_window: float = 1e-2    # s
    max_steps: int = 2_000_000
    # falls and invalid gaits
    min_hip_height: float = 0.6     # fraction of the standing hip height
    max_pitch_deg: float = 60.0     # torso pitch from upright
    max_drift: float = 1e-3         # m
    # Walking has no flight phase: one foot is always on the ground (double support ~20 %
    # of a stride, swing ~40 %; a stride at 0.9 Hz lasts 1.1 s). 0.25 s without any foot
    # contact is a quarter of a stride: a tumble or a jump.
    max_airborne_time: float = 0.25  # s
    # With straight legs the standing hip height is the highest a walking hip reaches
    # (inverted pendulum over a straight stance leg; heel rise at push-off adds ~5 cm).
    max_hip_rise: float = 0.15      # m above the standing hip height: being thrown up


@dataclass(frozen=True)
class Rollout:
    """Outcome of :func:`run`: status, message, time survived, metrics accumulator, final
    state and contact modes, counters (steps; events = contact-mode changes of single
    points), and the recorded samples at ``record_times`` (NaN rows after the end):
    states [k, 2n], contact modes [k, c], contact forces [k, c, 2] (normal, tangent; N)."""

    status: str
    message: str
    time: float
    acc: np.ndarray
    x: np.ndarray
    mode: np.ndarray
    n_steps: int
    n_events: int
    record_times: np.ndarray
    records: np.ndarray
    record_modes: np.ndarray
    record_forces: np.ndarray


StepParams = namedtuple(
    "StepParams",
    [
        "ctrl",          # ControllerArrays
        "tau",           # float64[n] scratch: generalized control forces
        "Kimp",          # float64[n, n] scratch: control stiffness (implicit)
        "Dimp",          # float64[n, n] scratch: control damping (implicit)
        "joint_tau",     # float64[na] scratch: active joint torques
        "joint_rate",    # float64[na] scratch: active joint rates
        "joint_gain",    # float64[na, 2] scratch: active joint stiffness and damping
        "acc",           # float64[...] metric accumulator (metrics.new_accumulator)
        "ws",            # float64[6]: see WS_*
        "wi",            # int64[3]: base x, base z, pitch coordinates
        "contact_foot",  # int64[c]: 0 right foot, 1 left foot
        "site_body",     # int64[k]: bodies whose joint force magnitude is an interaction site
        "fext",          # float64[n, 3] scratch
        "tau_check",     # float64[n] scratch
        "site_force",    # float64[k] scratch
        "com",           # float64[4] scratch
        "point",         # float64[2] scratch
        "feet",          # float64[2]: foot in contact after the last step (0/1)
        "state",         # float64[1]: last time (s) a foot touched the ground
        "counts",        # int64[1]: contact-mode changes
    ],
)


# --------------------------------------------------------------------------- compiled loop
@njit(cache=True)
def site_forces(m, w, loop_force, normal, tangent, loaded, slope, qdd, cp):
    """cp.site_force[k] = |force (N)| across the joint of each site body (thesis 5.3.3):
    RNEA's inward pass (after forward kinematics of the state) with accelerations qdd[n]
    and, as external forces, the loop forces loop_force[2m] (N, on point a, world axes)
    and the ground forces normal[c], tangent[c] (N) of the points with loaded[i] != 0 on a
    ground of the given slope (rad). Shared by the stepping and event-driven rollouts."""
    sa = np.sin(slope)
    ca = np.cos(slope)
    fext = cp.fext
    fext[:, :] = 0.0
    add_loop_forces(m, w, loop_force, np.zeros(m.loop_body_a.shape[0]), fext)
    for i in range(m.contact_body.shape[0]):
        if loaded[i] == 0:
            continue
        body_point_world(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], cp.point)
        add_point_force(fext, m.contact_body[i], cp.point[0], cp.point[1],
                        -sa * normal[i] + ca * tangent[i], ca * normal[i] + sa * tangent[i])
    joint_wrenches(m, w, qdd, fext, cp.tau_check)
    for k in range(cp.site_body.shape[0]):
        b = cp.site_body[k]
        cp.site_force[k] = math.hypot(w.joint_wrench[b, 1], w.joint_wrench[b, 2])


@njit(cache=True)
def impact_step(sw, nl, c, h, g):
    """True if the last step contained a touch-down impact: a point that approached the
    ground faster than 2 g h at the step's start and carries an impulse. Its mean force
    over the step is impulse / h, which grows without bound as h -> 0 (a rigid impact
    is an impulse): the interaction-force metrics skip such steps and keep the forces of
    the continuous phases, as the event-driven model's multipliers do."""
    for i in range(c):
        if sw.mode[i] != ts.INACTIVE and sw.vel[nl + i] < -2.0 * g * h:
            return True
    return False


@njit(cache=True)
def observe(t, x, p, assist_active):
    """Checks and one metric sample after the step from time t (module docstring).
    Returns OK or a termination code."""
    m, w, sw, cs, ss, cp = p
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return NOT_FINITE
    if x[cp.wi[WI_BASE_Z]] < cp.ws[WS_MIN_Z]:
        return FALL_HEIGHT
    if abs(x[cp.wi[WI_PITCH]] - cp.ws[WS_UPRIGHT]) > cp.ws[WS_MAX_PITCH]:
        return FALL_PITCH
    if x[cp.wi[WI_BASE_Z]] > cp.ws[WS_MAX_Z]:
        return THROWN_UP
    nl = 2 * m.loop_body_a.shape[0]
    for r in range(nl):
        if abs(sw.pos[r]) > cp.ws[WS_MAX_DRIFT]:
            return DRIFT
    c = m.contact_body.shape[0]
    for i in range(c):
        if sw.pos[nl + i] < -cp.ws[WS_MAX_DRIFT]:
            return DRIFT
    feet_before0 = cp.feet[0]
    feet_before1 = cp.feet[1]
    cp.feet[0] = 0.0
    cp.feet[1] = 0.0
    for i in range(c):
        if sw.mode[i] != ts.INACTIVE:
            cp.feet[cp.contact_foot[i]] = 1.0
    t1 = t + ss[ts.H]
    if cp.feet[0] > 0.0 or cp.feet[1] > 0.0:
        cp.state[0] = t1
    elif t1 - cp.state[0] > cp.ws[WS_MAX_AIRBORNE]:
        return AIRBORNE
    for foot in range(2):
        before = feet_before0 if foot == 0 else feet_before1
        if before == 0.0 and cp.feet[foot] == 1.0:
            for i in range(c):   # the foot's first loaded point
                if cp.contact_foot[i] == foot and sw.mode[i] != ts.INACTIVE:
                    body_point_world(w, m.contact_body[i], m.contact_xz[i, 0],
                                     m.contact_xz[i, 1], cp.point)
                    mt.accumulate_touchdown(cp.acc, t, foot, cp.point[0])
                    break
    if t < cp.acc[mt.T_START]:
        return OK                              # before the metrics' window
    center_of_mass(m, w, cp.com)
    if cp.site_body.shape[0] > 0 and not impact_step(sw, nl, c, ss[ts.H], m.gravity[0]):
        # the step's mean forces and accelerations; an impact step holds the last value
        site_forces(m, w, sw.loop_force, sw.force[:, 0], sw.force[:, 1], sw.mode,
                    cs[ct.SLOPE], sw.qdd, cp)
    mt.accumulate_sample(cp.acc, t, cp.com[0], cp.com[2], 1.0 if assist_active else 0.0,
                         cp.feet[0], cp.feet[1], cp.joint_tau, cp.joint_rate, cp.site_force)
    return OK


@njit(cache=True)
def record(t, h, x, sw, record_times, k_rec, rec_x, rec_mode, rec_force):
    """Store x and the last step's contact modes and forces for every record time not yet
    stored that is at or before t (within h / 2). Returns the next record index."""
    while k_rec < record_times.shape[0] and record_times[k_rec] <= t + 0.5 * h:
        rec_x[k_rec] = x
        for i in range(sw.mode.shape[0]):
            rec_mode[k_rec, i] = sw.mode[i]
            rec_force[k_rec, i, 0] = sw.force[i, 0]
            rec_force[k_rec, i, 1] = sw.force[i, 1]
        k_rec += 1
    return k_rec


@njit(cache=True)
def walk(x, t_end, p, record_times, rec_x, rec_mode, rec_force, t0=0.0):
    """The whole rollout from x (float64[2n], updated in place) at t = t0 to t_end (s).

    Steps start at t = t0 + k h (the controller's clock; t0 = 0 for an evaluation, a later
    t0 continues a gait from a state taken at that time, e.g. a stride map); the airborne
    clock restarts at t0 (cp.state[0] = t0) and the contact solver's warm start (sw.P,
    sw.mode) is used as found, so a caller replaying from a state sets both. Metric
    samples accumulate into cp.acc as usual (its window starts at max_time / 2).
    Records x, the contact modes and forces at the first step start at or after each of
    record_times (sorted). Returns (code, time reached s, steps)."""
    m, w, sw, cs, ss, cp = p
    n = m.parent.shape[0]
    c = m.contact_body.shape[0]
    q = x[:n]
    v = x[n:]
    h = ss[ts.H]
    n_steps = int(math.floor((t_end - t0) / h + 0.5))
    cp.state[0] = t0
    k_rec = 0
    prev_mode = sw.mode.copy()
    for k in range(n_steps):
        t = t0 + k * h
        k_rec = record(t, h, x, sw, record_times, k_rec, rec_x, rec_mode, rec_force)
        _, active = control_torques(t, q, v, cp.ctrl, cp.tau, cp.joint_tau, cp.joint_rate,
                                    cp.joint_gain)
        control_gains(cp.ctrl, cp.joint_gain, active, cp.Kimp, cp.Dimp)
        code = ts.step(m, w, sw, cs, ss, q, v, cp.tau, cp.Kimp, cp.Dimp)
        if code == ts.STEP_MASS_NOT_PD:
            return MASS_NOT_PD, t, k
        if code != ts.STEP_OK:
            return NOT_FINITE, t, k
        for i in range(c):
            if sw.mode[i] != prev_mode[i]:
                cp.counts[0] += 1
                prev_mode[i] = sw.mode[i]
        code = observe(t, x, p, active)
        if code != OK:
            return code, t + h, k + 1
    t = t0 + n_steps * h
    record(t, h, x, sw, record_times, k_rec, rec_x, rec_mode, rec_force)
    return OK, t, n_steps


# --------------------------------------------------------------------------- python set-up
def walk_settings(settings: RolloutSettings, standing_hip_height: float,
                  upright_pitch: float) -> np.ndarray:
    """float64[6] of the fall and gait checks (WS_* slots)."""
    return np.array([settings.min_hip_height * standing_hip_height,
                     math.radians(settings.max_pitch_deg), settings.max_drift, upright_pitch,
                     standing_hip_height + settings.max_hip_rise, settings.max_airborne_time])


def contact_feet(model: Model) -> np.ndarray:
    """int64[c]: 0 for a contact point of the right foot (name ending in _r), 1 otherwise."""
    return np.array([0 if name.endswith("_r") else 1 for name in model.contact_names], dtype=np.int64)


def make_params(model: Model, ctrl: ControllerArrays, settings: RolloutSettings,
                standing_hip_height: float, site_bodies: tuple[str, ...] = (),
                upright_pitch: float = 0.0) -> tuple:
    """The compiled rollout's ``p`` for settings.contact_model (the event-driven models'
    own in :mod:`codesign.walking.rollout_event`)."""
    if settings.contact_model != "hard":
        from codesign.walking import rollout_event

        return rollout_event.make_params(model, ctrl, settings, standing_hip_height,
                                         site_bodies, upright_pitch)
    n = model.n
    na = ctrl.act_rows.shape[0]
    cp = StepParams(
        ctrl=ctrl, tau=np.zeros(n), Kimp=np.zeros((n, n)), Dimp=np.zeros((n, n)),
        joint_tau=np.zeros(na), joint_rate=np.zeros(na), joint_gain=np.zeros((na, 2)),
        acc=mt.new_accumulator(len(site_bodies), 0.5 * settings.max_time),
        ws=walk_settings(settings, standing_hip_height, upright_pitch),
        wi=np.array([model.body_id("torso_x"), model.body_id("torso_z"), model.body_id("torso")],
                    dtype=np.int64),
        contact_foot=contact_feet(model),
        site_body=np.array([model.body_id(b) for b in site_bodies], dtype=np.int64),
        fext=np.zeros((n, 3)), tau_check=np.zeros(n), site_force=np.zeros(len(site_bodies)),
        com=np.zeros(4), point=np.zeros(2), feet=np.zeros(2), state=np.zeros(1),
        counts=np.zeros(1, dtype=np.int64))
    cs = ct.make_settings("hard", mu=settings.mu)
    ss = ts.step_settings(h=settings.h, penetration_correction=settings.penetration_correction,
                          pgs_tol=settings.pgs_tol, pgs_max_sweeps=settings.pgs_max_sweeps)
    return (model.arrays, make_workspace(model), ts.make_step_workspace(model), cs, ss, cp)


def contact_heights(model: Model, q: np.ndarray) -> np.ndarray:
    """float64[c] world z (m) of every contact point at configuration q."""
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, np.zeros(model.n), w)
    out = np.empty(model.n_contacts)
    pt = np.zeros(2)
    for i in range(model.n_contacts):
        body_point_world(w, model.contact_body[i], model.contact_xz[i, 0], model.contact_xz[i, 1], pt)
        out[i] = pt[1]
    return out


def place_on_ground(model: Model, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Shift the base so the lowest contact point is at z = 0 with zero velocity.

    Returns (q, qd, index of the lowest contact point)."""
    from codesign.dynamics.kinematics import point_jacobian

    q = q.copy()
    qd = qd.copy()
    ix, iz = model.body_id("torso_x"), model.body_id("torso_z")
    q[iz] = 0.0
    heights = contact_heights(model, q)
    low = int(np.argmin(heights))
    q[iz] = -heights[low]
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, qd, w)
    J = np.zeros((2, model.n))
    point_jacobian(model.arrays, w, model.contact_body[low], model.contact_xz[low, 0],
                   model.contact_xz[low, 1], J)
    v = J @ qd
    qd[ix] -= v[0]      # the base prismatic columns are the world x and z axes
    qd[iz] -= v[1]
    return q, qd, low


def initial_modes(x0: np.ndarray, p: tuple, strike: int) -> tuple[np.ndarray, int]:
    """(contact modes int64[c], code): all inactive for time stepping (the first step
    settles the contacts); the event-driven models' plastic impact and mode search
    otherwise (x0 is updated in place)."""
    if len(p) == 6:
        return np.zeros(p[0].contact_body.shape[0], dtype=np.int64), 0
    from codesign.walking import rollout_event

    return rollout_event.initial_modes(x0, p, strike)


def run(x0: np.ndarray, mode0: np.ndarray, p: tuple, settings: RolloutSettings,
        record_times: np.ndarray | None = None, t0: float = 0.0) -> Rollout:
    """Simulate from (x0, mode0) to settings.max_time (compiled); never raises for a
    failing design (the status says what happened). ``t0`` (s, stepping model only): the
    time of x0 on the controller's clock (:func:`walk`); max_time stays the end time."""
    if settings.contact_model != "hard":
        if t0 != 0.0:
            raise ValueError(f"t0 = {t0}: a start time needs the stepping model (contact_model 'hard')")
        from codesign.walking import rollout_event

        return rollout_event.run(x0, mode0, p, settings, record_times)
    m = p[0]
    c = m.contact_body.shape[0]
    rt = np.zeros(0) if record_times is None else np.ascontiguousarray(record_times, dtype=np.float64)
    rec_x = np.full((rt.shape[0], x0.shape[0]), np.nan)
    rec_mode = np.zeros((rt.shape[0], c), dtype=np.int64)
    rec_force = np.full((rt.shape[0], c, 2), np.nan)
    x = np.array(x0, dtype=np.float64)
    code, t, steps = walk(x, settings.max_time, p, rt, rec_x, rec_mode, rec_force, float(t0))
    code, t = int(code), float(t)
    sw, cp = p[2], p[5]
    if code == OK:
        status, message, time = "ok", "", settings.max_time
    else:
        status, text = STATUS[code]
        message, time = f"{text} at t = {t:.3f} s", t
    return Rollout(status, message, time, cp.acc, x, sw.mode.copy(), int(steps),
                   int(cp.counts[0]), rt, rec_x, rec_mode, rec_force)


def step_statistics(p: tuple) -> dict[str, int]:
    """Steps, Gauss-Seidel sweeps and unconverged contact problems of a stepping rollout."""
    s = p[2].stats
    return {"steps": int(s[ts.STAT_STEPS]), "sweeps": int(s[ts.STAT_SWEEPS]),
            "unconverged": int(s[ts.STAT_UNCONVERGED])}
