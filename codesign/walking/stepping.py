"""The stepping walking rollout: hard contacts, impedance control, falls, metrics (compiled).

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
   deeper than ``max_drift`` under the hard ground) or a non-finite state; otherwise one
   metric sample (:mod:`codesign.walking.accumulators`) at the step's start with the step's
   mean forces (interaction forces at the human joints: those of the continuous phases,
   :func:`impact_step` holds the last value through a touch-down impact; at the device's
   attachments every step's, impacts included, averaged over the ground reaction's 30-ms
   window), the feet's slip (sw.ut of the loaded points), the vertical ground
   impulse into the ground reaction's moving window (impacts included: an impulse J
   counts J / window), and a foot touch-down (a foot with no loaded point before the step
   and one after) for the step length.

The event-driven model of the thesis's simulator (exact contact-mode switching at
located events, ``"hard_event"``) and a soft penalty model (``"soft"``) run the same
controller and checks through :mod:`codesign.walking.rollout_event`: they are the peers
of ``codesign bench evaluate`` and of the cross-check tests. The event-driven model
falls over Painleve configurations of the foot points (no consistent mode) and costs
thousands of events per simulated second, which is why stepping is the default.

Initial state inside the gait: built by :mod:`codesign.walking.setup`; here
:func:`place_on_ground` puts the lowest contact point on the ground with zero velocity.
The first steps settle the other points (plastic impacts come out of the step).

The parameters ``p`` are a :class:`StepModel` (the fixed numbers of one set-up) and a
:class:`StepData` (what a run writes: scratch, the contact solver's warm start, the
metric accumulator, clocks), as MuJoCo's MjModel and MjData; :func:`run` resets the data
first (:func:`reset_data`), so a set-up replays the same, and its result owns copies.

Status codes, settings and the result record: :mod:`codesign.walking.rollout_base`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from codesign.control.impedance import ControllerArrays, passive_row_gains, torso_pitch, update_gains
from codesign.dynamics import contact_lcp as lcp
from codesign.dynamics import contact_rows as ct
from codesign.dynamics import cycles as cy
from codesign.dynamics import timestep as ts
from codesign.dynamics.kinematics import body_point_world, center_of_mass
from codesign.dynamics.model import Model, make_workspace
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt
from codesign.walking.rollout_base import (MASS_NOT_PD, NOT_FINITE, OK, WS_MAX_DRIFT, ContactHealth, Rollout,
                                           RolloutSettings, WalkData, WalkModel, check_airborne,
                                           check_body, check_drift, check_drive, clone_arrays,
                                           control, copy_arrays,
                                           cuff_forces, make_walk, make_walk_data,
                                           reset_walk_data, site_forces, status_of, with_muscle_wearer,
                                           zero_arrays)
from codesign.walking.muscle_wearer import RECORD_WIDTH, MuscleModel, leg_loads, muscle_step, record_muscles


class StepModel(NamedTuple):
    """The stepping rollout's model: the fixed numbers of one set-up, never written by a
    run (as MuJoCo's MjModel)."""

    arrays: Any                    # ModelArrays (Model.arrays)
    contact_settings: np.ndarray   # contact_rows.make_settings
    step_settings: np.ndarray      # timestep.step_settings
    walk: WalkModel                # controller, checks' bounds, sites, the accumulator's start


class StepData(NamedTuple):
    """The stepping rollout's data: what one run writes (as MuJoCo's MjData); put back as
    made by :func:`reset_data`."""

    work: Any               # engine Workspace (make_workspace): scratch
    step_work: Any          # time-step workspace (timestep.make_step_workspace): the contact
                            # solver's warm start (modes, impulses), counters, scratch
    walk: WalkData          # metric accumulator, clocks, counts, scratch


class StepParams(NamedTuple):
    """The stepping rollout's parameters (the compiled functions' ``p``): model and data."""

    model: StepModel
    data: StepData


# the fields of the time-step workspace that are the sparsity pattern of M~'s factor
# (fixed numbers of the model, timestep.make_step_workspace): a reset keeps them
STEP_PATTERN_FIELDS = ("fac_ptr", "fac_idx", "fac_mask", "full_ptr", "full_idx")


# --------------------------------------------------------------------------- compiled loop
@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def vertical_impulse(sw, c, h, slope):
    """Total vertical (world z) ground impulse of the last step, N s: the contact forces
    (normal, tangent to a ground of the given slope, rad) times h."""
    ca = math.cos(slope)
    sa = math.sin(slope)
    total = 0.0
    for i in range(c):
        total += ca * sw.force[i, 0] + sa * sw.force[i, 1]
    return h * total


@njit(cache=True, _nrt=False)
def observe(t, x, p, assist_active):
    """Checks and one metric sample after the step from time t (module docstring).
    Returns OK or a termination code."""
    m, cs, ss, wm = p.model
    w, sw, wd = p.data
    code = check_body(x, wm.wi, wm.ws)
    if code == OK:
        code = check_drive(wd)
    if code != OK:
        return code
    nl = 2 * m.loop_body_a.shape[0]
    c = m.contact_body.shape[0]
    code = check_drift(sw.pos, nl, sw.mode, wm.ws[WS_MAX_DRIFT], False, ss[ts.SOFT_STIFFNESS] == 0.0)
    if code != OK:
        return code
    feet_before0 = wd.feet[0]
    feet_before1 = wd.feet[1]
    wd.feet[0] = 0.0
    wd.feet[1] = 0.0
    for i in range(c):
        if sw.mode[i] != ts.INACTIVE:
            wd.feet[wm.contact_foot[i]] = 1.0
    code = check_airborne(t + ss[ts.H], wd.feet, wd.last_contact, wm.ws)
    if code != OK:
        return code
    for foot in range(2):
        before = feet_before0 if foot == 0 else feet_before1
        if before == 1.0 and wd.feet[foot] == 0.0:
            ac.accumulate_liftoff(wd.acc, t, foot)
        if before == 0.0 and wd.feet[foot] == 1.0:
            for i in range(c):   # the foot's first loaded point
                if wm.contact_foot[i] == foot and sw.mode[i] != ts.INACTIVE:
                    body_point_world(w, m.contact_body[i], m.contact_xz[i, 0],
                                     m.contact_xz[i, 1], wd.point)
                    ac.accumulate_touchdown(wd.acc, t, foot, wd.point[0])
                    break
    # --- gait physics (issue 15): the step's vertical ground impulse into the GRF window
    grf = ac.push_ground_impulse(wd.acc, vertical_impulse(sw, c, ss[ts.H], cs[ct.SLOPE]))
    cuff = math.nan
    if wm.site_body.shape[0] > 0 and ac.forces_window_open(wd.acc, t):
        # the step's mean forces and accelerations (an impact's impulse / h): the cuffs take
        # them into their 30-ms window, impacts included (issue 46); the human joint sites
        # hold the last continuous value through an impact step
        impact = impact_step(sw, nl, c, ss[ts.H], m.gravity[0])
        if impact:
            for k in range(wd.site_force.shape[0]):
                wd.site_hold[k] = wd.site_force[k]
        site_forces(m, w, sw.loop_force, sw.force[:, 0], sw.force[:, 1], sw.mode,
                    cs[ct.SLOPE], sw.qdd, wm, wd)
        if impact:
            for k in range(wd.site_force.shape[0]):
                wd.site_force[k] = wd.site_hold[k]
        cuff_forces(w, sw.loop_force, wm, wd)
        cuff = ac.push_cuff_impulse(wd.acc, wd.cuff_force, ss[ts.H])
    loaded = sliding = 0.0
    pitch = math.nan
    if t >= wd.acc[mt.T_START]:                # inside the metrics' window
        center_of_mass(m, w, wd.com)
        loaded, sliding = ac.foot_slip(sw.mode, sw.ut, wm.contact_foot, mt.SLIP_SPEED)
        pitch = torso_pitch(x, wm.ctrl)
    # the gait sample: the state after the step, at t + h, as walk's records take it at the
    # next step's start
    ac.observe_sample(wd.acc, t, x, wd.feet, grf, cuff, loaded, sliding, pitch,
                      1.0 if assist_active else 0.0, t + ss[ts.H], x, 0.5 * ss[ts.H], wm, wd)
    return OK


@njit(cache=True, _nrt=False)
def record(t, h, x, sw, record_times, k_rec, rec_x, rec_mode, rec_force, rec_res, t_prev):
    """Store x, the last step's contact modes, the contact forces and the largest contact
    residuals since the previous record (sw.res_since, then zeroed; rec_res [k,
    contact_lcp.N_RESIDUALS]) for every record time not yet stored that is at or before t
    (within h / 2). The forces are the mean over
    the steps since the previous record (``t_prev``; the first: since the rollout's start)
    -- the impulses :func:`walk` summed into rec_force[k_rec] over that span, divided by
    it -- so that an impact between two records counts by its impulse, as a force plate
    sampled at the record rate would show it; a record with no step since the previous
    one gets the last step's forces. Returns (the next record index, the time of the last
    record stored, s)."""
    n_rec = record_times.shape[0]
    while k_rec < n_rec and record_times[k_rec] <= t + 0.5 * h:
        for j in range(x.shape[0]):
            rec_x[k_rec, j] = x[j]
        span = t - t_prev
        for i in range(sw.mode.shape[0]):
            rec_mode[k_rec, i] = sw.mode[i]
            for j in range(2):
                if span > 0.5 * h:
                    rec_force[k_rec, i, j] /= span
                else:
                    rec_force[k_rec, i, j] = sw.force[i, j]
        for j in range(sw.res_since.shape[0]):
            rec_res[k_rec, j] = sw.res_since[j]
            sw.res_since[j] = 0.0
        t_prev = t
        k_rec += 1
        if k_rec < n_rec:
            rec_force[k_rec, :, :] = 0.0
    return k_rec, t_prev


@njit(cache=True, _nrt=False)
def walk(x, t_end, p, record_times, rec_x, rec_mode, rec_force, rec_res, rec_mus, t0=0.0):
    """The whole rollout from x (float64[2n], updated in place) at t = t0 to t_end (s).

    Steps start at t = t0 + k h (the controller's clock; t0 = 0 for an evaluation, a later
    t0 continues a gait from a state taken at that time, e.g. a stride map); the airborne
    clock restarts at t0 (wd.last_contact[0] = t0) and the data record p.data (the contact
    solver's warm start sw.P, sw.mode; the feet in contact; the accumulator) is used as
    found, so a caller replaying from a state sets it (:func:`copy_data`). Metric
    samples accumulate into wd.acc as usual (its window starts at max_time / 2).
    Records x and the contact modes at the first step start at or after each of
    record_times (sorted), with the contact forces' mean and the largest contact residuals
    since the previous record (:func:`record`), and under the muscle wearer its activations
    and torques (rec_mus float64[k, 2, RECORD_WIDTH], :func:`record_muscles`; no rows
    otherwise). Returns (code, time reached s, steps)."""
    m, cs, ss, wm = p.model
    w, sw, wd = p.data
    n = m.parent.shape[0]
    c = m.contact_body.shape[0]
    q = x[:n]
    v = x[n:]
    h = ss[ts.H]
    n_steps = int(math.floor((t_end - t0) / h + 0.5))
    wd.last_contact[0] = t0
    k_rec = 0
    t_rec = t0                      # time of the last record (the forces' mean starts there)
    if record_times.shape[0] > 0:
        rec_force[0, :, :] = 0.0    # impulses summed until the first record
    prev_mode = wd.prev_mode
    for i in range(c):
        prev_mode[i] = sw.mode[i]
    passive_row_gains(wm.ctrl, wd.Kimp, wd.Dimp)   # constant; the steps update the rest
    for k in range(n_steps):
        t = t0 + k * h
        k_first = k_rec
        k_rec, t_rec = record(t, h, x, sw, record_times, k_rec, rec_x, rec_mode, rec_force, rec_res,
                              t_rec)
        c0 = cy.cycles()
        muscle_step(q, v, wm.muscle, wd.muscle)     # the muscle wearer (none under impedance)
        if rec_mus.shape[0] > 0:
            record_muscles(wd.muscle, rec_mus, k_first, k_rec)
        _, active = control(t, q, v, m, wm, wd, wd.tau)
        update_gains(wm.ctrl, wd.joint_gain, active, wd.Kimp, wd.Dimp)
        cy.add(sw.cycles, cy.CONTROL, c0)
        code = ts.step(m, w, sw, cs, ss, q, v, wd.tau, wd.Kimp, wd.Dimp)
        if code == ts.STEP_MASS_NOT_PD:
            return MASS_NOT_PD, t, k
        if code != ts.STEP_OK:
            return NOT_FINITE, t, k
        for i in range(c):
            if sw.mode[i] != prev_mode[i]:
                wd.counts[0] += 1
                prev_mode[i] = sw.mode[i]
        if wm.muscle.on[0] != 0:                # the legs' loads over the step, for the next
            leg_loads(sw.force, cs[ct.SLOPE], wm.contact_foot, wd.muscle.load)
        if k_rec < record_times.shape[0]:       # the step's impulses, for the next record
            for i in range(c):
                rec_force[k_rec, i, 0] += sw.force[i, 0] * h
                rec_force[k_rec, i, 1] += sw.force[i, 1] * h
        c0 = cy.cycles()
        code = observe(t, x, p, active)
        cy.add(sw.cycles, cy.OBSERVE, c0)
        if code != OK:
            return code, t + h, k + 1
    t = t0 + n_steps * h
    k_first = k_rec
    k_rec, t_rec = record(t, h, x, sw, record_times, k_rec, rec_x, rec_mode, rec_force, rec_res, t_rec)
    if rec_mus.shape[0] > 0:        # the end: the muscles as the last step left them
        record_muscles(wd.muscle, rec_mus, k_first, k_rec)
    return OK, t, n_steps


# --------------------------------------------------------------------------- python set-up
def make_params(model: Model, ctrl: ControllerArrays, settings: RolloutSettings,
                standing_hip_height: float, site_bodies: tuple[str, ...] = (),
                upright_pitch: float = 0.0, drive=None,
                active_wearer: bool = False) -> StepParams:
    """The compiled rollout's parameter record for ``model`` under ``ctrl`` (and its
    wearer-space ``drive``, :mod:`codesign.control.wearer`; None: the thesis's law): its
    model and a fresh data record."""
    cs = ct.make_settings("hard", mu=settings.mu)     # (the ground's rows; "soft_step": step settings)
    soft = settings.contact_model == "soft_step"
    ss = ts.step_settings(h=settings.h, penetration_correction=settings.penetration_correction,
                          pgs_tol=settings.pgs_tol,
                          pgs_max_sweeps=settings.soft_max_sweeps if soft else settings.pgs_max_sweeps,
                          pivoting=settings.contact_solver == "pivoting",
                          tol_velocity=settings.contact_tol_velocity,
                          tol_impulse=settings.contact_tol_impulse,
                          tol_energy=settings.contact_tol_energy,
                          soft_stiffness=settings.soft_stiffness if soft else 0.0,
                          soft_damping=settings.soft_damping, soft_v_reg=settings.soft_v_reg,
                          soft_exponent=settings.soft_exponent, soft_dissipation=settings.soft_dissipation)
    implicit_rows = np.vstack([ctrl.act_rows, ctrl.pas_rows]).reshape(-1, model.n)
    wm = make_walk(model, ctrl, settings, standing_hip_height, site_bodies, upright_pitch, drive,
                   active_wearer)
    data = StepData(make_workspace(model), ts.make_step_workspace(model, implicit_rows),
                    make_walk_data(wm, model))
    return StepParams(StepModel(model.arrays, cs, ss, wm), data)


def with_muscles(p: StepParams, model: Model, muscle: MuscleModel, standing_w: float) -> StepParams:
    """The parameters ``p`` with the muscle wearer ``muscle`` (its standing rate
    ``standing_w``, W; :func:`codesign.walking.rollout_base.with_muscle_wearer`) and a fresh
    walking data record for it."""
    wm = with_muscle_wearer(p.model.walk, muscle, standing_w)
    return StepParams(p.model._replace(walk=wm), p.data._replace(walk=make_walk_data(wm, model)))


def reset_data(p: StepParams) -> None:
    """Put the data record p.data back as :func:`make_params` made it (in place): scratch,
    the contact solver's warm start (all points inactive, no impulses), its counters, the
    metric accumulator, clocks and counts."""
    zero_arrays(p.data.work)
    zero_arrays(p.data.step_work, keep=STEP_PATTERN_FIELDS)
    reset_walk_data(p.model.walk, p.data.walk)


def copy_data(src: StepData, dst: StepData) -> None:
    """Copy the data record ``src`` (e.g. a :func:`clone_data` of a settled run) into
    ``dst`` in place: a run from dst then starts from the same solver state, bit for bit."""
    copy_arrays(src, dst)


def clone_data(data: StepData) -> StepData:
    """A copy of the data record ``data`` (its arrays copied)."""
    return clone_arrays(data)


def no_records(n_state: int, n_contacts: int) -> tuple[np.ndarray, ...]:
    """:func:`walk`'s record arguments for a walk that records nothing (record_times, rec_x,
    rec_mode, rec_force, rec_res, rec_mus: empty arrays of their types), for a state of
    ``n_state`` numbers and ``n_contacts`` contact points."""
    return (np.zeros(0), np.zeros((0, n_state)), np.zeros((0, n_contacts), dtype=np.int64),
            np.zeros((0, n_contacts, 2)), np.zeros((0, lcp.N_RESIDUALS)), np.zeros((0, 2, RECORD_WIDTH)))


def run(x0: np.ndarray, p: StepParams, settings: RolloutSettings,
        record_times: np.ndarray | None = None, t0: float = 0.0) -> Rollout:
    """Simulate from x0 to settings.max_time (compiled) from a reset data record
    (:func:`reset_data`: all contacts inactive), so a set-up replays the same; never raises
    for a failing design (the status says what happened). ``t0`` (s): the time of x0 on the
    controller's clock (:func:`walk`); max_time stays the end time. The result owns its
    arrays (a later run leaves it as it is)."""
    reset_data(p)
    m = p.model.arrays
    c = m.contact_body.shape[0]
    rt = np.zeros(0) if record_times is None else np.ascontiguousarray(record_times, dtype=np.float64)
    rec_x = np.full((rt.shape[0], x0.shape[0]), np.nan)
    rec_mode = np.zeros((rt.shape[0], c), dtype=np.int64)
    rec_force = np.full((rt.shape[0], c, 2), np.nan)
    rec_res = np.full((rt.shape[0], lcp.N_RESIDUALS), np.nan)
    muscles = p.model.walk.muscle.on[0] != 0
    rec_mus = np.full((rt.shape[0] if muscles else 0, 2, RECORD_WIDTH), np.nan)
    x = np.array(x0, dtype=np.float64)
    code, t, steps = walk(x, settings.max_time, p, rt, rec_x, rec_mode, rec_force, rec_res, rec_mus, float(t0))
    code, t = int(code), float(t)
    rec_force[np.isnan(rec_x[:, 0])] = np.nan     # records never reached: the impulses summed for them
    sw, wd = p.data.step_work, p.data.walk
    status, message = status_of(code, t)
    time = settings.max_time if code == OK else t
    s = sw.stats
    health = ContactHealth(int(s[ts.STAT_STEPS]), int(s[ts.STAT_ABOVE_TOL]), int(s[ts.STAT_ENERGY_ABOVE]))
    return Rollout(status, message, time, wd.acc, x, sw.mode, int(steps),
                   int(wd.counts[0]), rt, rec_x, rec_mode, rec_force, rec_res, health,
                   rec_mus if muscles else None)


def residual_names(ss: np.ndarray) -> dict[int, str]:
    """The contact residuals a stepping rollout measures (contact_lcp.RES_* -> name with
    its unit) under step settings ``ss``: the hard conditions' five, or the soft law's one."""
    if ss[ts.SOFT_STIFFNESS] > 0.0:
        return {lcp.RES_NEGATIVE: "soft_law_impulse_N_s"}
    return {lcp.RES_GAP: "gap_velocity_m_s", lcp.RES_NEGATIVE: "negative_impulse_N_s",
            lcp.RES_CONE: "cone_violation_N_s", lcp.RES_SLIP: "slip_velocity_m_s",
            lcp.RES_WORK: "energy_error_J"}


def residual_quantile(hist: np.ndarray, quantile: float) -> float:
    """The upper edge of the residual histogram's bin (int64[ts.N_HIST_BINS] of
    :func:`codesign.dynamics.timestep.record_residuals`) that holds the given quantile (0..1)
    of the steps: within a factor 10^0.25 above the true quantile; 0 when it falls in bin 0
    (at most 1e-15), inf in the last bin."""
    total = int(hist.sum())
    if total == 0:
        return float("nan")
    rank = quantile * total
    seen = 0
    for b in range(ts.N_HIST_BINS):
        seen += int(hist[b])
        if seen >= rank:
            if b == 0:
                return 0.0
            if b == ts.N_HIST_BINS - 1:
                return float("inf")
            return 10.0 ** (ts.HIST_LOG_MIN + b / ts.HIST_DECADE_BINS)
    return float("inf")


def step_statistics(p: StepParams) -> dict[str, Any]:
    """The contact solver's account of a stepping rollout (record.json's ``time_step``;
    docs/contacts.md says what each entry means): steps, Gauss-Seidel sweeps, the steps that
    called Lemke's method and its pivots, the steps that kept approximate impulses
    (``approximate``; ``unconverged``: of those, Gauss-Seidel at its sweep limit), the
    residuals of every step's impulses against the contact conditions (the largest and the
    99th percentile over the steps, in m/s, N s and J), the steps beyond the tolerances and
    the tolerances; the contact points' summed slip path (m) and friction dissipation (J)."""
    sw = p.data.step_work
    s = sw.stats
    ss = p.model.step_settings
    soft = ss[ts.SOFT_STIFFNESS] > 0.0
    names = residual_names(ss)
    return {"steps": int(s[ts.STAT_STEPS]), "sweeps": int(s[ts.STAT_SWEEPS]),
            "pivoted": int(s[ts.STAT_PIVOTED]), "pivots": int(s[ts.STAT_PIVOTS]),
            "unconverged": int(s[ts.STAT_UNCONVERGED]), "approximate": int(s[ts.STAT_APPROX]),
            "above_tolerance": int(s[ts.STAT_ABOVE_TOL]),
            "energy_above_bound": int(s[ts.STAT_ENERGY_ABOVE]),
            "tolerance": {"velocity_m_s": float(ss[ts.TOL_VELOCITY]),
                          "impulse_N_s": float(ss[ts.TOL_IMPULSE]),
                          "energy_J": float(ss[ts.TOL_ENERGY])},
            "residual_max": {name: float(sw.res_max[j]) for j, name in names.items()},
            "residual_p99": {name: residual_quantile(sw.res_hist[j], 0.99)
                             for j, name in names.items()},
            "solver": "soft_law" if soft else "pivoting" if ss[ts.PIVOTING] != 0.0 else "gauss_seidel",
            "dense_factor": int(s[ts.STAT_DENSE]),
            "slip_path_m": float(sw.slip_path.sum()),
            "friction_work_J": float(sw.friction_work.sum())}
