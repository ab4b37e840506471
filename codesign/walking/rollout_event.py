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
from codesign.dynamics.contact_rows import NO_POINT
from codesign.dynamics.contact_soft import soft_dynamics
from codesign.dynamics import hybrid as hy
from codesign.dynamics.kinematics import body_point_world, center_of_mass
from codesign.dynamics.model import Model, make_workspace
from codesign.dynamics.specialize import specialize
from codesign.walking import accumulators as ac
from codesign.walking import compiled
from codesign.walking import event_contacts as ec
from codesign.walking import metrics as mt
from codesign.walking.muscle_wearer import (RECORD_RATE, RECORD_TORQUE, RECORD_WIDTH, MuscleModel, leg_loads,
                                            muscle_step, next_tick, record_muscles)
from codesign.walking.rollout_base import (NOT_FINITE, OK, STATUS, WS_MAX_DRIFT, Rollout,
                                           RolloutSettings, WalkData, WalkModel, check_airborne,
                                           check_body, check_drift, check_drive, control,
                                           cuff_forces, make_walk,
                                           make_walk_data, reset_walk_data, site_forces, status_of,
                                           with_muscle_wearer)

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
    record_times: np.ndarray   # float64[k] s: the run's record times (the muscles' records)
    muscle_rec: np.ndarray     # float64[k, 2, RECORD_WIDTH]: the muscle wearer's records
                               #   (:func:`codesign.walking.muscle_wearer.record_muscles`; 0 rows
                               #   under the impedance wearer)
    n_muscle_rec: np.ndarray   # int64[1]: the records filled


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
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
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
    """CONTACT's guards (two per contact point; never firing with soft contact), then
    under the muscle wearer the muscles' clock, g[2c] = tick - t (:func:`muscle_tick`)."""
    c = mode.shape[0]
    if p.model.contact_settings[cr.CONTACT_MODEL] == cr.SOFT:
        g[:2 * c] = 1.0
    else:
        evaluate(t, x, mode, p)
        ct.write_guards(p.model.arrays, p.data.contact_work, p.model.contact_settings, mode, g)
    if g.shape[0] > 2 * c:
        g[2 * c] = p.data.walk.muscle.tick[0] - t


@njit(cache=True)
def muscle_tick(t, x, mode, p):
    """The muscle wearer's step at its tick t (s): the legs' loads from the contact
    forces at (t, x, mode) (soft: the springs'; hard: the multipliers of the active
    points), one :func:`codesign.walking.muscle_wearer.muscle_step` with them, the next
    tick, and the dynamics' cache dropped (the held torques changed at the same state).
    Hard contact: the torques' step can leave an active point's force outside its mode's
    bounds at once (a pull, or beyond the friction cone), where its guard would never
    cross zero, or push a released point still resting on the ground (within TOL_H, not
    separating) into it, where its touch-down guard, never positive since the release, is
    not armed; then the modes are resolved again under the new torques, as after an
    impact (:func:`resolve_after`). Returns 0 or a contact termination code."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    c = mode.shape[0]
    hard = s[cr.CONTACT_MODEL] != cr.SOFT
    evaluate(t, x, mode, p)
    force = np.empty((c, 2))
    ct.read_forces(m, cw, c, force)
    for i in range(c):
        if hard and mode[i] == cr.INACTIVE:
            force[i, 0] = 0.0
            force[i, 1] = 0.0
    leg_loads(force, s[cr.SLOPE], wm.contact_foot, wd.muscle.load)
    step_muscles(t, x, p)
    if not hard:
        return 0
    evaluate(t, x, mode, p)
    g = np.empty(2 * c)
    ct.write_guards(m, cw, s, mode, g)
    nl = 2 * m.loop_body_a.shape[0]
    for i in range(c):
        pushed = mode[i] != cr.INACTIVE and (g[2 * i] <= 0.0 or g[2 * i + 1] <= 0.0)
        resting = (mode[i] == cr.INACTIVE and cw.pos[nl + i] <= s[cr.TOL_H]
                   and cw.vel[nl + i] <= s[cr.REST_SPEED])
        if pushed or resting:
            before = np.zeros(2)
            ec.foot_contacts(mode, wm.contact_foot, before)
            return resolve_after(t, x, mode, p, NO_POINT, NO_POINT, before)
    return 0


@njit(cache=True)
def first_muscle_step(x, p):
    """The muscle wearer's step at t = 0 (the loads of its start record, as the stepping
    rollout's first step); nothing under the impedance wearer."""
    if p.model.walk.muscle.on[0] != 0:
        step_muscles(0.0, x, p)


@njit(cache=True)
def step_muscles(t, x, p):
    """One :func:`codesign.walking.muscle_wearer.muscle_step` at (t, x) with the loads in
    the data record, the next tick, the dynamics' cache dropped (the held torques changed
    at the same state) and the records taken until the next tick."""
    wm = p.model.walk
    wd = p.data.walk
    n = p.data.contact_work.qdd.shape[0]
    muscle_step(x[:n], x[n:], wm.muscle, wd.muscle)
    wd.muscle.tick[0] = next_tick(t, wm.muscle.h[0])
    p.data.contact_work.cache_ok[0] = 0
    record_tick(p.data, wd.muscle)


@njit(cache=True)
def record_tick(data, md):
    """The muscles after a tick go to the records before the next tick md.tick[0] (those
    whose step starts at this tick, as the stepping rollout's records)."""
    k_first = data.n_muscle_rec[0]
    k_end = k_first
    rt = data.record_times
    while k_end < data.muscle_rec.shape[0] and rt[k_end] < md.tick[0] - 1e-9:
        k_end += 1
    record_muscles(md, data.muscle_rec, k_first, k_end)
    data.n_muscle_rec[0] = k_end


@njit(cache=True)
def bank_impact(p, c):
    """The last impact's impulses into the 30-ms windows, as the stepping rollout counts
    its impacts: the total normal impulse (N s) into the ground reaction's; with a device,
    each attachment's (:func:`impact_cuff_impulses`) into the cuffs'."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    ac.add_ground_impulse(wd.acc, ec.normal_total(m, cw, c))
    if wm.cuff.shape[0] > 0 and wd.acc[mt.CUFF_BIN_END] > 0.0:     # the window's first sample taken
        ac.add_cuff_impulse(wd.acc, impact_cuff_impulses(m, w, cw, s, c, wm, wd), 1.0)


@njit(cache=True)
def impact_cuff_impulses(m, w, cw, s, c, wm, wd):
    """float64[a, 2]: the impulse (N s, world x, z) on the device at each attachment in
    the last impact (cw.lam: its impulses, cw.qdd: its velocity jump; w: the kinematics it
    was solved at). RNEA is affine in the accelerations and external forces, so a tree
    joint's impulsive wrench is its wrench under (velocity jump, impulses) less that under
    (0, 0); a loop closure's is its impulse. Overwrites wd.cuff_force and wd.site_force
    (the next sample writes them again)."""
    nl = 2 * m.loop_body_a.shape[0]
    loop = np.empty(nl)
    for r in range(nl):
        loop[r] = -cw.lam[r]              # hard loop rows are point_b - point_a (interaction_forces)
    loaded = np.ones(c, dtype=np.int64)
    site_forces(m, w, loop, cw.lam[nl:nl + c], cw.lam[nl + c:nl + 2 * c], loaded, s[cr.SLOPE], cw.qdd, wm, wd)
    cuff_forces(w, loop, wm, wd)
    jump = wd.cuff_force.copy()
    zero = np.zeros(c)
    site_forces(m, w, np.zeros(nl), zero, zero, loaded, s[cr.SLOPE], np.zeros(cw.qdd.shape[0]), wm, wd)
    cuff_forces(w, np.zeros(nl), wm, wd)
    return jump - wd.cuff_force


@njit(cache=True)
def _control_into_workspace(t, x, p):
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    n = cw.qdd.shape[0]
    control(t, x[:n], x[n:], m, wm, wd, cw.tau)


@njit(cache=True)
def _resolve(t, x, mode, p, forced):
    """The contact modes resolved at (t, x) under the controller's forces (``forced``: the
    contact that must leave its mode, or -1); where no combination is consistent
    (Painlevé's case), one tangential impact and the modes resolved again under the
    controller's forces at the new velocities (:mod:`codesign.dynamics.contact_event`).
    Writes mode (and x's velocities after an impulse); returns 0 or a termination code."""
    m, s, wm = p.model
    w, cw = p.data.work, p.data.contact_work
    _control_into_workspace(t, x, p)
    code = ct.resolve_modes(m, w, cw, s, t, x, mode, forced)
    if code != ct.NO_CONSISTENT_MODE:
        return code
    code = ct.tangential_impact(m, w, cw, s, x, mode)
    if code != 0:
        return code
    bank_impact(p, mode.shape[0])
    _control_into_workspace(t, x, p)
    return ct.resolve_modes(m, w, cw, s, t, x, mode, NO_POINT)


@njit(cache=True)
def _settle_approaching(t, x, mode, p):
    """A point that mode resolution made active while it still approaches the ground
    (normal velocity < -TOL_V: it was within TOL_H of the ground at another point's
    event, so it got no impact of its own) receives its plastic impact now, and the
    modes are resolved again; otherwise the acceleration-level constraint would hold its
    approach speed and the point would sink into the ground. Returns 0 or a code."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
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
        bank_impact(p, mode.shape[0])
        code = _resolve(t, x, mode, p, NO_POINT)
        if code != 0:
            return code
    return 0


@njit(cache=True)
def walk_jump(t, x, mode, p, k):
    """contact.jump (impact at a touch-down, then mode resolution and the feet's
    bookkeeping, :func:`resolve_after`); guard 2c: the muscles' tick (:func:`muscle_tick`)."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    if k == 2 * mode.shape[0]:        # the muscles' clock
        return muscle_tick(t, x, mode, p)
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        return 0
    before = np.zeros(2)
    ec.foot_contacts(mode, wm.contact_foot, before)
    code, forced = ct.jump_impact(m, w, cw, s, x, mode, k)
    if code != 0 or forced == -2:
        return code
    if forced == -1:                  # a touch-down's impact
        bank_impact(p, mode.shape[0])
    return resolve_after(t, x, mode, p, forced, k // 2, before)


@njit(cache=True)
def resolve_after(t, x, mode, p, forced, strike, before):
    """The contact modes resolved at (t, x) under the controller's forces (``forced``:
    the contact that must leave its mode, or -1), approaching points settled, then the
    feet's bookkeeping against ``before`` (float64[2]: each foot on the ground before the
    jump, 0/1): a foot whose last contact ended lifted off; a foot that had no
    active contact and now has one through the point ``strike`` (-1: none) touched down
    (its x goes to the step-length accumulator; one after less than ``MIN_SWING_S`` in
    the air does not). Returns 0 or a contact termination code."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    code = _resolve(t, x, mode, p, forced)
    if code != 0:
        return code
    code = _settle_approaching(t, x, mode, p)
    if code != 0:
        return code
    after = np.zeros(2)
    ec.foot_contacts(mode, wm.contact_foot, after)
    for f in range(2):
        if before[f] == 1.0 and after[f] == 0.0:
            ac.accumulate_liftoff(wd.acc, t, f)
    if strike >= 0:
        foot = wm.contact_foot[strike]
        if before[foot] == 0.0 and after[foot] == 1.0:
            body_point_world(w, m.contact_body[strike], m.contact_xz[strike, 0], m.contact_xz[strike, 1],
                             wd.point)
            ac.accumulate_touchdown(wd.acc, t, foot, wd.point[0])
    return 0


@njit(cache=True)
def start_modes(x, mode, p, strike):
    """Plastic impact of the points touching with ``strike`` (the lowest point), then
    the mode search of every touching point (as contact.initial_modes). Writes x (qd) and
    mode; returns 0 or a contact termination code."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    mode[:] = cr.INACTIVE
    if s[cr.CONTACT_MODEL] == cr.SOFT:
        return 0
    code = ct.impact(m, w, cw, s, x, mode, strike)
    if code != 0:
        return code
    mode[:] = cr.INACTIVE
    code = _resolve(0.0, x, mode, p, NO_POINT)
    cw.cache_ok[0] = 0
    return code


@njit(cache=True)
def contact_forces(t, x, mode, p, out):
    """out[c, 2] = (normal, tangential) ground force (N) on every contact point."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    evaluate(t, x, mode, p)
    ct.read_forces(m, cw, mode.shape[0], out)


@njit(cache=True)
def interaction_forces(t, x, mode, p):
    """wd.site_force (:func:`codesign.walking.rollout_base.site_forces`) from the loop-closure
    and contact multipliers of contact.evaluate at (t, x, mode)."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
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
def walk_observe(t, x, mode, p):
    """Fall / drift checks, then one metric sample (module docstring)."""
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
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
        ec.soft_foot_contacts(m, cw, wm.contact_foot, feet)
    else:
        ec.foot_contacts(mode, wm.contact_foot, feet)
    code = check_airborne(t, feet, wd.last_contact, wm.ws)
    if code != OK:
        return code
    ta, active = control(t, x[:n], x[n:], m, wm, wd, wd.tau)
    code = check_drive(wd)
    if code != OK:
        return code
    if wm.site_body.shape[0] > 0:
        interaction_forces(t, x, mode, p)
    # --- gait physics (issue 15): the normal forces (vertical on flat ground) are binned
    # into the ground-reaction window; the hard contact's impacts add their impulses
    # (:func:`bank_impact`)
    grf = ac.accumulate_ground_force(wd.acc, t, ec.normal_total(m, cw, mode.shape[0]))
    cuff = np.nan
    if wm.site_body.shape[0] > 0 and ac.forces_window_open(wd.acc, t):
        cuff = ac.accumulate_cuff_force(wd.acc, t, wd.cuff_force)
    loaded = sliding = 0.0
    pitch = np.nan
    if t >= wd.acc[mt.T_START]:
        loaded, sliding = ec.foot_slip_now(m, w, cw, s, mode, wm)
        pitch = torso_pitch(x, wm.ctrl)
    ac.observe_sample(wd.acc, t, x, feet, grf, cuff, loaded, sliding, pitch, 1.0 if active else 0.0,
                      t, x, 0.0, wm, wd)
    return 0


def integrate(x0, mode0, t_end, p, record_times, settings):
    """The whole rollout, compiled: HYBRID's integrator specialized to the walking system.

    :func:`codesign.dynamics.specialize.specialize` binds ``walk_flow``/``walk_guards``/
    ``walk_jump``/``walk_observe`` as static calls, so the whole rollout is cached on disk:
    a new process (a Dask worker, a CLI call) loads it instead of compiling it again."""
    clock = 1 if p.model.walk.muscle.on[0] != 0 else 0     # the muscles' tick guard
    terminal = np.zeros(2 * mode0.shape[0] + clock, dtype=np.int64)
    rollout = specialize(walk_flow, walk_guards, walk_jump, walk_observe)
    return rollout(x0, mode0, 0.0, t_end, p, record_times, terminal, settings)


# --------------------------------------------------------------------------- python set-up
def make_params(model: Model, ctrl: ControllerArrays, settings: RolloutSettings,
                standing_hip_height: float, site_bodies: tuple[str, ...] = (),
                upright_pitch: float = 0.0, drive=None,
                active_wearer: bool = False) -> EventParams:
    """The integrator's parameter record for ``model`` under ``ctrl`` (and its
    wearer-space ``drive``; None: the thesis's law): its model and a fresh data record.
    A process's first waits for another's compile of the peers (:func:`compiled.wait_for_peers`)."""
    compiled.wait_for_peers()
    model_name = "hard" if settings.contact_model == "hard_event" else settings.contact_model
    s = cr.make_settings(model_name, mu=settings.mu, restitution=settings.restitution, rest_speed=settings.rest_speed,
                         baumgarte_d=settings.baumgarte, baumgarte_p=settings.baumgarte,
                         stiffness=settings.soft_stiffness, damping=settings.soft_damping,
                         v_reg=settings.soft_v_reg, exponent=settings.soft_exponent,
                         dissipation=settings.soft_dissipation)
    wm = make_walk(model, ctrl, settings, standing_hip_height, site_bodies, upright_pitch, drive,
                   active_wearer)
    data = EventData(make_workspace(model), ct.make_contact_workspace(model),
                     make_walk_data(wm, model), **muscle_records(wm, np.zeros(0)))
    return EventParams(EventModel(model.arrays, s, wm), data)


def with_muscles(p: EventParams, model: Model, muscle: MuscleModel, standing_w: float) -> EventParams:
    """The parameters ``p`` with the muscle wearer ``muscle`` (its standing rate
    ``standing_w``, W; :func:`codesign.walking.rollout_base.with_muscle_wearer`) and a fresh
    walking data record for it; the rollout steps it on its clock (:func:`muscle_tick`)."""
    wm = with_muscle_wearer(p.model.walk, muscle, standing_w)
    return EventParams(p.model._replace(walk=wm), p.data._replace(walk=make_walk_data(wm, model)))


def muscle_records(wm: WalkModel, record_times: np.ndarray) -> dict[str, np.ndarray]:
    """EventData's record_times, muscle_rec and n_muscle_rec for a run recording at
    ``record_times`` (float64[k], s): NaN records, none under the impedance wearer."""
    rows = record_times.shape[0] if wm.muscle.on[0] != 0 else 0
    return {"record_times": record_times, "muscle_rec": np.full((rows, 2, RECORD_WIDTH), np.nan),
            "n_muscle_rec": np.zeros(1, dtype=np.int64)}


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
    rt = np.zeros(0) if record_times is None else np.ascontiguousarray(record_times, dtype=np.float64)
    p = p._replace(data=p.data._replace(**muscle_records(p.model.walk, rt)))
    first_muscle_step(x0, p)          # the muscle wearer's step at t = 0 (none under impedance)
    walk_observe(0.0, x0, mode0, p)   # the first metric sample (no-op before the window)
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
    md = p.data.walk.muscle
    muscles = None
    if p.model.walk.muscle.on[0] != 0:      # the records after the last tick: the muscles it left
        muscles = p.data.muscle_rec
        record_muscles(md, muscles, int(p.data.n_muscle_rec[0]), int(np.searchsorted(rt, t, side="right")))
    held = md.torque.copy()
    forces = np.full((rt.shape[0], mode.shape[0], 2), np.nan)
    buf = np.zeros((mode.shape[0], 2))
    for k in range(rt.shape[0]):
        if not np.isnan(rec_x[k, 0]):
            if muscles is not None:         # the torques the muscles held then (hard contact's forces)
                md.torque[:] = muscles[k, :, RECORD_TORQUE:RECORD_RATE]
            contact_forces(rt[k], rec_x[k].copy(), rec_mode[k].copy(), p, buf)
            forces[k] = buf
    md.torque[:] = held
    return Rollout(name, message, time, p.data.walk.acc, x, mode, int(n_steps), int(n_events), rt,
                   rec_x, rec_mode, forces, record_muscles=muscles)


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
