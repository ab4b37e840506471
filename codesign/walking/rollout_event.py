"""Event-driven walking rollout (``contact_model = "hard_event"`` or ``"soft"``): the peer of
the time-stepping rollout of :mod:`codesign.walking.rollout` (compiled).

The hybrid system is CONTACT's hard-contact model (``codesign.dynamics.contact_event``: flow,
guards, jump) integrated by HYBRID's compiled integrator, with

* the controller (step impedance + pitch assist, :mod:`codesign.control.impedance`)
  writing the generalized forces before every dynamics solve,
* :func:`walk_jump`: the contact jump, plus touch-down bookkeeping for the step length,
* :func:`walk_observe`: after every accepted step and every jump -- stop on a fall (hip
  height below ``min_hip_height`` of the standing value, or torso pitch beyond
  ``max_pitch_deg``), on an invalid gait (no foot on the ground for longer than
  ``max_airborne_time``, or the hip thrown more than ``max_hip_rise`` above its standing
  height -- walking has no flight phase), on constraint drift (a loop-closure residual or the height of an
  active contact beyond ``max_drift``, or any contact point deeper than ``max_drift``
  under the ground -- e.g. a released point whose touch-down guard stayed disarmed) or a
  non-finite state; otherwise accumulate the
  metrics (:mod:`codesign.walking.metrics`) from the state and the constrained dynamics.

Everything between the initial state and the final accumulator runs in compiled code
(:func:`codesign.dynamics.hybrid.integrate`); Python builds inputs and reads outputs.

Initial state inside the gait (phase ``phase0`` of the right leg; the left leg half a
period later): human hip/knee/ankle angles and rates from the nominal gait (rates = phase
rate x gait frequency), torso upright and toes at 0; WR coordinates from the loop-closure
IK (damped Newton on the WR coordinates only, reached by a homotopy from the upright pose
where the loops close at q = 0, and WR rates from the loop velocity constraint); then the
body is placed so that its lowest contact point is on the ground with zero velocity
(base translation). A plastic impact of the touching points makes the velocities
consistent with the contacts, and the contact modes are chosen by CONTACT's exact
active-set search.

Status (``Rollout.status``): ``ok`` (reached max_time), ``fall_height``, ``fall_pitch``,
``airborne``, ``thrown_up``, ``drift``, ``chattering``, ``contact`` (no consistent contact mode / too many touching
points), ``integrator`` (step underflow, max steps, non-finite), ``initial_state``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from codesign.control.impedance import ControllerArrays, control_torques
from codesign.dynamics import contact_event as ct
from codesign.dynamics import contact_rows as cr
from codesign.dynamics.contact_soft import soft_dynamics
from codesign.dynamics import hybrid as hy
from codesign.dynamics.kinematics import body_point_world, center_of_mass
from codesign.dynamics.model import Model, make_workspace
from codesign.dynamics.specialize import specialize
from codesign.walking import metrics as mt
from codesign.walking.rollout import (AIRBORNE, DRIFT, FALL_HEIGHT, FALL_PITCH, STATUS, THROWN_UP,
                                      WI_BASE_Z, WI_PITCH, WS_MAX_AIRBORNE, WS_MAX_DRIFT, WS_MAX_PITCH,
                                      WS_MAX_Z, WS_MIN_Z, WS_UPRIGHT, Rollout, RolloutSettings,
                                      contact_feet, site_forces, walk_settings)

# user codes of walk_observe (the integrator reports them as TERMINATED) and the check
# vectors are the stepping rollout's

WalkParams = namedtuple(
    "WalkParams",
    [
        "ctrl",          # ControllerArrays
        "joint_tau",     # float64[na] scratch: active joint torques
        "joint_rate",    # float64[na] scratch: active joint rates
        "joint_gain",    # float64[na, 2] scratch: active joint stiffness and damping
        "tau",           # float64[n] scratch: generalized control forces (observe)
        "acc",           # float64[...] metric accumulator (metrics.new_accumulator)
        "ws",            # float64[6]: min hip height (m), max |pitch - upright| (rad), max drift (m),
                         # upright pitch (rad), max hip height (m), max time without foot contact (s)
        "last_contact",  # float64[1] scratch: last time (s) a foot touched the ground
        "wi",            # int64[3]: base x, base z, pitch coordinates
        "contact_foot",  # int64[c]: 0 right foot, 1 left foot (toe contacts count for their foot)
        "site_body",     # int64[k]: bodies whose joint force magnitude is an interaction site
        "fext",          # float64[n, 3] scratch
        "tau_check",     # float64[n] scratch
        "site_force",    # float64[k] scratch
        "com",           # float64[4] scratch
        "point",         # float64[2] scratch
    ],
)


# --------------------------------------------------------------------------- compiled hooks
# The hybrid system is composed from CONTACT's p-free kernels rather than its p-taking
# flow/guards/jump, so that ``p`` holds no function: numba keys a compiled function whose
# arguments contain a dispatcher by the dispatcher's per-process id, which would defeat
# the on-disk cache and recompile the whole rollout in every process (minutes).
# p = (model arrays, engine workspace, contact workspace, contact settings, WalkParams).

@njit(cache=True)
def evaluate(t, x, mode, p):
    """Constrained dynamics at (t, x) in ``mode`` with the walking controller's forces
    (cached on (t, x, mode), as contact.evaluate). False if M is not positive definite."""
    m, w, cw, s, cp = p
    if ct.cached(cw, t, x, mode):
        return True
    n = cw.qdd.shape[0]
    control_torques(t, x[:n], x[n:], cp.ctrl, cw.tau, cp.joint_tau, cp.joint_rate,
                    cp.joint_gain)
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        return soft_dynamics(m, w, cw, s, t, x, mode)
    return ct.hard_dynamics(m, w, cw, s, t, x, mode)


@njit(cache=True)
def walk_flow(t, x, mode, p, xdot):
    """x = [q, qd] -> [qd, qdd] (contact.flow with the walking controller)."""
    cw = p[2]
    n = cw.qdd.shape[0]
    if not evaluate(t, x, mode, p):
        xdot[:] = np.nan
        return
    xdot[:n] = x[n:]
    xdot[n:] = cw.qdd


@njit(cache=True)
def walk_guards(t, x, mode, p, g):
    """CONTACT's guards (two per contact point; never firing with soft contact)."""
    if p[3][cr.CONTACT_MODEL] == cr.SOFT:
        g[:] = 1.0
        return
    evaluate(t, x, mode, p)
    ct.write_guards(p[0], p[2], p[3], mode, g)


@njit(cache=True)
def _foot_contacts(mode, contact_foot, out):
    out[0] = 0.0
    out[1] = 0.0
    for i in range(mode.shape[0]):
        if mode[i] != cr.INACTIVE:
            out[contact_foot[i]] = 1.0


@njit(cache=True)
def _soft_foot_contacts(m, cw, contact_foot, out):
    """Soft contact: a foot is on the ground while one of its points carries normal force."""
    nl = 2 * m.loop_body_a.shape[0]
    out[0] = 0.0
    out[1] = 0.0
    for i in range(contact_foot.shape[0]):
        if cw.lam[nl + i] > 0.0:
            out[contact_foot[i]] = 1.0


@njit(cache=True)
def _control_into_workspace(t, x, p):
    m, w, cw, s, cp = p
    n = cw.qdd.shape[0]
    control_torques(t, x[:n], x[n:], cp.ctrl, cw.tau, cp.joint_tau, cp.joint_rate,
                    cp.joint_gain)


@njit(cache=True)
def _settle_approaching(t, x, mode, p):
    """A point that mode resolution made active while it still approaches the ground
    (normal velocity < -TOL_V: it was within TOL_H of the ground at another point's
    event, so it got no impact of its own) receives its plastic impact now, and the
    modes are resolved again; otherwise the acceleration-level constraint would hold its
    approach speed and the point would sink into the ground. Returns 0 or a code."""
    m, w, cw, s, cp = p
    nl = 2 * m.loop_body_a.shape[0]
    for _ in range(mode.shape[0]):
        strike = -1
        for i in range(mode.shape[0]):
            if mode[i] != cr.INACTIVE and cw.vel[nl + i] < -s[cr.TOL_V]:
                strike = i
                break
        if strike < 0:
            return 0
        code = ct.impact(m, w, cw, s, x, mode, strike)
        if code != 0:
            return code
        _control_into_workspace(t, x, p)
        code = ct.resolve_modes(m, w, cw, s, t, x, mode, -1)
        if code != 0:
            return code
    return 0


@njit(cache=True)
def walk_jump(t, x, mode, p, k):
    """contact.jump (impact at a touch-down, then mode resolution), then: a foot that had
    no active contact and now has one touched down (its striking point's x goes to the
    step-length accumulator)."""
    m, w, cw, s, cp = p
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        return 0
    i = k // 2
    before = np.zeros(2)
    _foot_contacts(mode, cp.contact_foot, before)
    code, forced = ct.jump_impact(m, w, cw, s, x, mode, k)
    if code != 0 or forced == -2:
        return code
    _control_into_workspace(t, x, p)
    code = ct.resolve_modes(m, w, cw, s, t, x, mode, forced)
    if code != 0:
        return code
    code = _settle_approaching(t, x, mode, p)
    if code != 0:
        return code
    after = np.zeros(2)
    _foot_contacts(mode, cp.contact_foot, after)
    foot = cp.contact_foot[i]
    if before[foot] == 0.0 and after[foot] == 1.0:
        body_point_world(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], cp.point)
        mt.accumulate_touchdown(cp.acc, t, foot, cp.point[0])
    return 0


@njit(cache=True)
def start_modes(x, mode, p, strike):
    """Plastic impact of the points touching with ``strike`` (the lowest point), then
    the mode search of every touching point (as contact.initial_modes). Writes x (qd) and
    mode; returns 0 or a contact termination code."""
    m, w, cw, s, cp = p
    mode[:] = cr.INACTIVE
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        return 0
    code = ct.impact(m, w, cw, s, x, mode, strike)
    if code != 0:
        return code
    mode[:] = cr.INACTIVE
    _control_into_workspace(0.0, x, p)
    code = ct.resolve_modes(m, w, cw, s, 0.0, x, mode, -1)
    cw.cache_ok[0] = 0
    return code


@njit(cache=True)
def contact_forces(t, x, mode, p, out):
    """out[c, 2] = (normal, tangential) ground force (N) on every contact point."""
    m, w, cw, s, cp = p
    evaluate(t, x, mode, p)
    ct.read_forces(m, cw, mode.shape[0], out)


@njit(cache=True)
def interaction_forces(t, x, mode, p):
    """cp.site_force (:func:`codesign.walking.rollout.site_forces`) from the loop-closure
    and contact multipliers of contact.evaluate at (t, x, mode)."""
    m, w, cw, s, cp = p
    nl = 2 * m.loop_body_a.shape[0]
    c = mode.shape[0]
    # Hard contact's loop rows are point_b - point_a: its multiplier acts +lam on b and
    # -lam on a; the soft model copies the engine's multipliers (rows point_a - point_b).
    # site_forces takes the force on a. Soft contact loads every point it reports.
    soft = s[cr.CONTACT_MODEL] == cr.SOFT
    sign = 1.0 if soft else -1.0
    lam_loop = np.empty(nl)
    for r in range(nl):
        lam_loop[r] = sign * cw.lam[r]
    loaded = np.empty(c, dtype=np.int64)
    for i in range(c):
        loaded[i] = 1 if soft else mode[i]
    site_forces(m, w, lam_loop, cw.lam[nl:nl + c], cw.lam[nl + c:nl + 2 * c], loaded,
                s[cr.SLOPE], cw.qdd, cp)


@njit(cache=True)
def walk_observe(t, x, mode, p):
    """Fall / drift checks, then one metric sample (module docstring)."""
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return ct.NOT_FINITE
    m, w, cw, s, cp = p
    n = cw.qdd.shape[0]
    if x[cp.wi[WI_BASE_Z]] < cp.ws[WS_MIN_Z]:
        return FALL_HEIGHT
    if abs(x[cp.wi[WI_PITCH]] - cp.ws[WS_UPRIGHT]) > cp.ws[WS_MAX_PITCH]:
        return FALL_PITCH
    if x[cp.wi[WI_BASE_Z]] > cp.ws[WS_MAX_Z]:
        return THROWN_UP
    if not evaluate(t, x, mode, p):
        return ct.NOT_FINITE
    nl = 2 * m.loop_body_a.shape[0]
    for r in range(nl):
        if abs(cw.pos[r]) > cp.ws[WS_MAX_DRIFT]:
            return DRIFT
    for i in range(mode.shape[0]):
        h = cw.pos[nl + i]
        if (mode[i] != cr.INACTIVE and abs(h) > cp.ws[WS_MAX_DRIFT]) or h < -cp.ws[WS_MAX_DRIFT]:
            return DRIFT   # an active point off the ground, or any point under it
    center_of_mass(m, w, cp.com)
    feet = np.zeros(2)
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        _soft_foot_contacts(m, cw, cp.contact_foot, feet)
    else:
        _foot_contacts(mode, cp.contact_foot, feet)
    if feet[0] > 0.0 or feet[1] > 0.0:
        cp.last_contact[0] = t
    elif t - cp.last_contact[0] > cp.ws[WS_MAX_AIRBORNE]:
        return AIRBORNE
    ta, active = control_torques(t, x[:n], x[n:], cp.ctrl, cp.tau, cp.joint_tau, cp.joint_rate,
                    cp.joint_gain)
    if cp.site_body.shape[0] > 0:
        interaction_forces(t, x, mode, p)
    mt.accumulate_sample(cp.acc, t, cp.com[0], cp.com[2], 1.0 if active else 0.0, feet[0],
                         feet[1], cp.joint_tau, cp.joint_rate, cp.site_force)
    return 0


def integrate(x0, mode0, t_end, p, record_times, settings):
    """The whole rollout, compiled: HYBRID's integrator specialized to the walking system.

    :func:`codesign.dynamics.specialize.specialize` binds ``walk_flow``/``walk_guards``/
    ``walk_jump``/``walk_observe`` as static calls, so the whole rollout is cached on disk:
    a new process (a Dask worker, a CLI call) loads it instead of compiling it again."""
    terminal = np.zeros(2 * mode0.shape[0], dtype=np.int64)
    rollout = specialize(walk_flow, walk_guards, walk_jump, walk_observe)
    return rollout(x0, mode0, 0.0, t_end, p, record_times, terminal, settings)


# --------------------------------------------------------------------------- python set-up
def make_params(model: Model, ctrl: ControllerArrays, settings: RolloutSettings,
                standing_hip_height: float, site_bodies: tuple[str, ...] = (),
                upright_pitch: float = 0.0) -> tuple:
    """The integrator's ``p``: (model arrays, workspace, contact workspace, contact settings,
    WalkParams)."""
    n = model.n
    na = ctrl.act_rows.shape[0]
    cp = WalkParams(
        ctrl=ctrl, joint_tau=np.zeros(na), joint_rate=np.zeros(na),
        joint_gain=np.zeros((na, 2)), tau=np.zeros(n),
        acc=mt.new_accumulator(len(site_bodies), 0.5 * settings.max_time),
        ws=walk_settings(settings, standing_hip_height, upright_pitch),
        last_contact=np.zeros(1),
        wi=np.array([model.body_id("torso_x"), model.body_id("torso_z"), model.body_id("torso")],
                    dtype=np.int64),
        contact_foot=contact_feet(model),
        site_body=np.array([model.body_id(b) for b in site_bodies], dtype=np.int64),
        fext=np.zeros((n, 3)), tau_check=np.zeros(n), site_force=np.zeros(len(site_bodies)),
        com=np.zeros(4), point=np.zeros(2))
    model_name = "hard" if settings.contact_model == "hard_event" else settings.contact_model
    s = cr.make_settings(model_name, mu=settings.mu, restitution=settings.restitution,
                         baumgarte_d=settings.baumgarte, baumgarte_p=settings.baumgarte)
    return (model.arrays, make_workspace(model), ct.make_contact_workspace(model), s, cp)


def initial_modes(x0: np.ndarray, p: tuple, strike: int) -> tuple[np.ndarray, int]:
    """(mode int64[c], code) from :func:`start_modes`; x0 is updated in place."""
    mode = np.zeros(p[0].contact_body.shape[0], dtype=np.int64)
    code = start_modes(x0, mode, p, strike)
    return mode, int(code)


def run(x0: np.ndarray, mode0: np.ndarray, p: tuple, settings: RolloutSettings,
        record_times: np.ndarray | None = None) -> Rollout:
    """Integrate from (x0, mode0) to settings.max_time (compiled); never raises for a
    failing design (the status says what happened)."""
    walk_observe(0.0, x0, mode0, p)   # the first metric sample (no-op before the window)
    rt = np.zeros(0) if record_times is None else np.ascontiguousarray(record_times, dtype=np.float64)
    s = hy.settings("dopri5", rtol=settings.rtol, atol=settings.atol, h_max=settings.h_max,
                    event_tol=settings.event_tol, max_steps=settings.max_steps,
                    max_transitions=settings.max_transitions,
                    chatter_window=settings.chatter_window, max_events=1)
    out = integrate(np.ascontiguousarray(x0), np.ascontiguousarray(mode0), settings.max_time, p,
                    rt, s)
    (status, user_code, t, x, mode, rec_x, rec_mode, _n_rec, _et, _ek, _exb, _exa, _ema,
     n_events, n_steps, _n_rejected, _n_flow) = out
    name, message = _status(int(status), int(user_code), float(t), s)
    time = settings.max_time if status == hy.SUCCESS else float(t)
    forces = np.full((rt.shape[0], mode.shape[0], 2), np.nan)
    buf = np.zeros((mode.shape[0], 2))
    for k in range(rt.shape[0]):
        if not np.isnan(rec_x[k, 0]):
            contact_forces(rt[k], rec_x[k].copy(), rec_mode[k].copy(), p, buf)
            forces[k] = buf
    return Rollout(name, message, time, p[4].acc, x, mode, int(n_steps), int(n_events), rt,
                   rec_x, rec_mode, forces)


def _status(status: int, user_code: int, t: float, s) -> tuple[str, str]:
    """(status name, one-line message) of an integrator outcome."""
    if status == hy.SUCCESS:
        return "ok", ""
    if status == hy.TERMINATED:
        if user_code in STATUS:
            name, text = STATUS[user_code]
            return name, f"{text} at t = {t:.3f} s"
        text = ct.TERMINATION_MESSAGES.get(user_code, f"terminated with code {user_code}")
        return ("integrator" if user_code == ct.NOT_FINITE else "contact"), f"{text} at t = {t:.3f} s"
    if status == hy.CHATTERING:
        return "chattering", hy.status_message(status, user_code, t, s)
    return "integrator", hy.status_message(status, user_code, t, s)
