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
  metrics (:mod:`codesign.walking.accumulators`) from the state and the constrained dynamics.

The parameters ``p`` are an :class:`EventModel` (fixed numbers) and an :class:`EventData`
(what a run writes), as in :mod:`codesign.walking.stepping`.

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

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from codesign.control.impedance import ControllerArrays, torso_pitch
from codesign.dynamics import contact_event as ct
from codesign.dynamics import contact_rows as cr
from codesign.dynamics.contact_soft import soft_dynamics
from codesign.dynamics import hybrid as hy
from codesign.dynamics.kinematics import body_point_world, center_of_mass, point_kinematics
from codesign.dynamics.model import Model, make_workspace
from codesign.dynamics.specialize import specialize
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt
from codesign.walking.rollout_base import (NOT_FINITE, OK, STATUS, WS_MAX_DRIFT, Rollout,
                                           RolloutSettings, WalkData, WalkModel, check_airborne,
                                           check_body, check_drift, check_drive, control,
                                           cuff_forces, make_walk,
                                           make_walk_data, reset_walk_data, site_forces, status_of)

# user codes of walk_observe (the integrator reports them as TERMINATED) and the check
# vectors are the stepping rollout's (codesign.walking.rollout_base)

class EventModel(NamedTuple):
    """The event-driven rollout's model: the fixed numbers of one set-up, never written by
    a run (as MuJoCo's MjModel)."""

    arrays: Any                    # ModelArrays (Model.arrays)
    contact_settings: np.ndarray   # contact_rows.make_settings (hard or soft)
    walk: WalkModel                # controller, checks' bounds, sites, the accumulator's start


class EventData(NamedTuple):
    """The event-driven rollout's data: what one run writes (as MuJoCo's MjData); put back
    as made by :func:`reset_data`."""

    work: Any               # engine Workspace (make_workspace): scratch
    contact_work: Any       # contact_event.make_contact_workspace: multipliers, rows, cache
    walk: WalkData          # metric accumulator, clocks, scratch


class EventParams(NamedTuple):
    """The event-driven rollout's parameters (the compiled hooks' ``p``): model and data."""

    model: EventModel
    data: EventData


# --------------------------------------------------------------------------- compiled hooks
# The hybrid system is composed from CONTACT's p-free kernels rather than its p-taking
# flow/guards/jump, so that ``p`` holds no function: numba keys a compiled function whose
# arguments contain a dispatcher by the dispatcher's per-process id, which would defeat
# the on-disk cache and recompile the whole rollout in every process (minutes).

@njit(cache=True)
def evaluate(t, x, mode, p):
    """Constrained dynamics at (t, x) in ``mode`` with the walking controller's forces
    (cached on (t, x, mode), as contact.evaluate). False if M is not positive definite."""
    m, s, wm = p.model
    w, cw, wd = p.data
    if ct.cached(cw, t, x, mode):
        return True
    n = cw.qdd.shape[0]
    control(t, x[:n], x[n:], m, wm, wd, cw.tau)
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        return soft_dynamics(m, w, cw, s, t, x, mode)
    return ct.hard_dynamics(m, w, cw, s, t, x, mode)


@njit(cache=True)
def walk_flow(t, x, mode, p, xdot):
    """x = [q, qd] -> [qd, qdd] (contact.flow with the walking controller)."""
    cw = p.data.contact_work
    n = cw.qdd.shape[0]
    if not evaluate(t, x, mode, p):
        xdot[:] = np.nan
        return
    xdot[:n] = x[n:]
    xdot[n:] = cw.qdd


@njit(cache=True)
def walk_guards(t, x, mode, p, g):
    """CONTACT's guards (two per contact point; never firing with soft contact)."""
    if p.model.contact_settings[cr.CONTACT_MODEL] == cr.SOFT:
        g[:] = 1.0
        return
    evaluate(t, x, mode, p)
    ct.write_guards(p.model.arrays, p.data.contact_work, p.model.contact_settings, mode, g)


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
def _soft_normal_force(m, cw, contact_foot):
    """N: the soft contact's total normal force over the contact points (flat ground: the
    vertical ground reaction)."""
    nl = 2 * m.loop_body_a.shape[0]
    total = 0.0
    for i in range(contact_foot.shape[0]):
        if cw.lam[nl + i] > 0.0:
            total += cw.lam[nl + i]
    return total


@njit(cache=True)
def _control_into_workspace(t, x, p):
    m, s, wm = p.model
    w, cw, wd = p.data
    n = cw.qdd.shape[0]
    control(t, x[:n], x[n:], m, wm, wd, cw.tau)


@njit(cache=True)
def _settle_approaching(t, x, mode, p):
    """A point that mode resolution made active while it still approaches the ground
    (normal velocity < -TOL_V: it was within TOL_H of the ground at another point's
    event, so it got no impact of its own) receives its plastic impact now, and the
    modes are resolved again; otherwise the acceleration-level constraint would hold its
    approach speed and the point would sink into the ground. Returns 0 or a code."""
    m, s, wm = p.model
    w, cw, wd = p.data
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
    step-length accumulator; one after less than ``MIN_SWING_S`` in the air does not), and a
    foot whose last contact ended lifted off."""
    m, s, wm = p.model
    w, cw, wd = p.data
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        return 0
    i = k // 2
    before = np.zeros(2)
    _foot_contacts(mode, wm.contact_foot, before)
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
    _foot_contacts(mode, wm.contact_foot, after)
    for f in range(2):
        if before[f] == 1.0 and after[f] == 0.0:
            ac.accumulate_liftoff(wd.acc, t, f)
    foot = wm.contact_foot[i]
    if before[foot] == 0.0 and after[foot] == 1.0:
        body_point_world(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], wd.point)
        ac.accumulate_touchdown(wd.acc, t, foot, wd.point[0])
    return 0


@njit(cache=True)
def start_modes(x, mode, p, strike):
    """Plastic impact of the points touching with ``strike`` (the lowest point), then
    the mode search of every touching point (as contact.initial_modes). Writes x (qd) and
    mode; returns 0 or a contact termination code."""
    m, s, wm = p.model
    w, cw, wd = p.data
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
    m, s, wm = p.model
    w, cw, wd = p.data
    evaluate(t, x, mode, p)
    ct.read_forces(m, cw, mode.shape[0], out)


@njit(cache=True)
def interaction_forces(t, x, mode, p):
    """wd.site_force (:func:`codesign.walking.rollout_base.site_forces`) from the loop-closure
    and contact multipliers of contact.evaluate at (t, x, mode)."""
    m, s, wm = p.model
    w, cw, wd = p.data
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
                s[cr.SLOPE], cw.qdd, wm, wd)
    cuff_forces(w, lam_loop, wm, wd)      # --- gait physics (issue 15)


@njit(cache=True)
def foot_slip_now(m, w, cw, s, mode, wm):
    """(feet loaded, feet sliding) (:func:`codesign.walking.accumulators.foot_slip`) at the
    state of the last evaluate (w holds its kinematics): hard contact loads its active
    points (tangential velocities from its contact rows), soft contact the points with a
    normal force (velocities from the points' kinematics, along the ground)."""
    nl = 2 * m.loop_body_a.shape[0]
    c = mode.shape[0]
    if s[cr.CONTACT_MODEL] != cr.SOFT:
        return ac.foot_slip(mode, cw.vel[nl + c:nl + 2 * c], wm.contact_foot, mt.SLIP_SPEED)
    loaded = np.zeros(c, dtype=np.int64)
    ut = np.zeros(c)
    buf = np.empty(6)
    sa = np.sin(s[cr.SLOPE])
    ca = np.cos(s[cr.SLOPE])
    for i in range(c):
        if cw.lam[nl + i] > 0.0:
            loaded[i] = 1
            point_kinematics(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], buf)
            ut[i] = ca * buf[2] + sa * buf[3]
    return ac.foot_slip(loaded, ut, wm.contact_foot, mt.SLIP_SPEED)


@njit(cache=True)
def walk_observe(t, x, mode, p):
    """Fall / drift checks, then one metric sample (module docstring)."""
    m, s, wm = p.model
    w, cw, wd = p.data
    n = cw.qdd.shape[0]
    code = check_body(x, wm.wi, wm.ws)
    if code != OK:
        return code
    if not evaluate(t, x, mode, p):
        return NOT_FINITE
    code = check_drift(cw.pos, 2 * m.loop_body_a.shape[0], mode, wm.ws[WS_MAX_DRIFT], True)
    if code != OK:
        return code
    center_of_mass(m, w, wd.com)
    feet = np.zeros(2)
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        _soft_foot_contacts(m, cw, wm.contact_foot, feet)
    else:
        _foot_contacts(mode, wm.contact_foot, feet)
    code = check_airborne(t, feet, wd.last_contact, wm.ws)
    if code != OK:
        return code
    ta, active = control(t, x[:n], x[n:], m, wm, wd, wd.tau)
    code = check_drive(wd)
    if code != OK:
        return code
    if wm.site_body.shape[0] > 0:
        interaction_forces(t, x, mode, p)
    # --- gait physics (issue 15): the soft contact's normal forces (vertical on flat
    # ground) are binned into the ground-reaction window; the event-driven hard contact's
    # impacts are jumps without a force, so it has none (grf_peak_bw NaN)
    grf = np.nan
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        grf = ac.accumulate_ground_force(wd.acc, t, _soft_normal_force(m, cw, wm.contact_foot))
    cuff = np.nan
    if wm.site_body.shape[0] > 0 and ac.forces_window_open(wd.acc, t):
        cuff = ac.accumulate_cuff_force(wd.acc, t, wd.cuff_force)
    loaded = sliding = 0.0
    pitch = np.nan
    if t >= wd.acc[mt.T_START]:
        loaded, sliding = foot_slip_now(m, w, cw, s, mode, wm)
        pitch = torso_pitch(x, wm.ctrl)
    ac.observe_sample(wd.acc, t, x, feet, grf, cuff, loaded, sliding, pitch, 1.0 if active else 0.0,
                      t, x, 0.0, wm, wd)
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
                upright_pitch: float = 0.0, drive=None,
                active_wearer: bool = False) -> EventParams:
    """The integrator's parameter record for ``model`` under ``ctrl`` (and its
    wearer-space ``drive``; None: the thesis's law): its model and a fresh data record."""
    model_name = "hard" if settings.contact_model == "hard_event" else settings.contact_model
    s = cr.make_settings(model_name, mu=settings.mu, restitution=settings.restitution,
                         baumgarte_d=settings.baumgarte, baumgarte_p=settings.baumgarte,
                         stiffness=settings.soft_stiffness, damping=settings.soft_damping,
                         v_reg=settings.soft_v_reg)
    wm = make_walk(model, ctrl, settings, standing_hip_height, site_bodies, upright_pitch, drive,
                   active_wearer)
    data = EventData(make_workspace(model), ct.make_contact_workspace(model),
                     make_walk_data(wm, model))
    return EventParams(EventModel(model.arrays, s, wm), data)


def reset_data(p: EventParams) -> None:
    """Put the walking part of the data record back as :func:`make_params` made it (in
    place): the metric accumulator, clocks and scratch. The engine and contact workspaces
    are the integrator's scratch and its cache on (t, x, mode), which :func:`start_modes`
    leaves invalid; they keep what :func:`initial_modes` wrote."""
    reset_walk_data(p.model.walk, p.data.walk)


def initial_modes(x0: np.ndarray, p: EventParams, strike: int) -> tuple[np.ndarray, int]:
    """(mode int64[c], code) from :func:`start_modes`; x0 is updated in place."""
    mode = np.zeros(p.model.arrays.contact_body.shape[0], dtype=np.int64)
    code = start_modes(x0, mode, p, strike)
    return mode, int(code)


def run(x0: np.ndarray, mode0: np.ndarray, p: EventParams, settings: RolloutSettings,
        record_times: np.ndarray | None = None) -> Rollout:
    """Integrate from (x0, mode0) to settings.max_time (compiled) from a reset walking data
    record (:func:`reset_data`), so a set-up replays the same; never raises for a failing
    design (the status says what happened). The result owns its arrays."""
    reset_data(p)
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
    return Rollout(name, message, time, p.data.walk.acc, x, mode, int(n_steps), int(n_events), rt,
                   rec_x, rec_mode, forces)


def _status(status: int, user_code: int, t: float, s) -> tuple[str, str]:
    """(status name, one-line message) of an integrator outcome."""
    if status == hy.SUCCESS:
        return "ok", ""
    if status == hy.TERMINATED:
        if user_code in STATUS:
            return status_of(user_code, t)
        text = ct.TERMINATION_MESSAGES.get(user_code, f"terminated with code {user_code}")
        return ("integrator" if user_code == ct.NOT_FINITE else "contact"), f"{text} at t = {t:.3f} s"
    if status == hy.CHATTERING:
        return "chattering", hy.status_message(status, user_code, t, s)
    return "integrator", hy.status_message(status, user_code, t, s)
