"""What the stepping and the event-driven walking rollouts share: their settings and
result records, status codes, the fall / drift / airborne checks, the interaction-site
forces, and placing the body on the ground (compiled where it runs per step).

Status (``Rollout.status``): ``ok`` (reached max_time), ``fall_height``, ``fall_pitch``,
``airborne``, ``thrown_up``, ``drift``, ``integrator`` (mass matrix not positive
definite, non-finite state), and for the event-driven models also ``chattering`` and
``contact``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from codesign.control.impedance import control_torques
from codesign.control.wearer import drive_torques, make_drive_data, no_drive
from codesign.dynamics.joint_forces import add_loop_forces, add_point_force, joint_wrenches
from codesign.dynamics.kinematics import body_point_world, forward_kinematics, point_jacobian
from codesign.dynamics.model import Model, make_workspace
from codesign.model import actuators as act
from codesign.walking import metrics as mt
from codesign.walking.muscle_wearer import (MuscleModel, apply_muscle_torques, clone_muscle_data, keep_muscle_torques,
                                            make_muscle_model)

# termination codes of the checks (both rollouts)
OK = 0
FALL_HEIGHT = 41
FALL_PITCH = 42
DRIFT = 43
AIRBORNE = 44
THROWN_UP = 45
NOT_FINITE = 46
MASS_NOT_PD = 47
TRANSMISSION_SINGULAR = 48
STATUS = {FALL_HEIGHT: ("fall_height", "hip below the fall height"),
          FALL_PITCH: ("fall_pitch", "torso pitch beyond the fall limit"),
          DRIFT: ("drift", "constraint drift beyond max_drift"),
          AIRBORNE: ("airborne", "no foot on the ground for longer than max_airborne_time"),
          THROWN_UP: ("thrown_up", "hip thrown above max_hip_rise over its standing height"),
          NOT_FINITE: ("integrator", "non-finite state"),
          MASS_NOT_PD: ("integrator", "mass matrix not positive definite"),
          TRANSMISSION_SINGULAR: ("transmission_singular",
                                  "the linkage's transmission is singular (an entry of G beyond "
                                  "its bound, or the added joints undetermined)")}

# walk settings vector
WS_MIN_Z, WS_MAX_PITCH, WS_MAX_DRIFT, WS_UPRIGHT, WS_MAX_Z, WS_MAX_AIRBORNE = 0, 1, 2, 3, 4, 5
# walk index vector
WI_BASE_X, WI_BASE_Z, WI_PITCH = 0, 1, 2

CONTACT_MODELS = ("hard", "soft_step", "hard_event", "soft")
STEPPING_MODELS = ("hard", "soft_step")   # the contact models of the time-stepping rollout
CONTACT_SOLVERS = ("pivoting", "gauss_seidel")   # the time step's (codesign.dynamics.contact_solvers)


@dataclass(frozen=True)
class RolloutSettings:
    """Settings of one rollout (SI units except the *_deg field)."""

    max_time: float = 10.0          # s
    contact_model: str = "hard"     # "hard", "soft_step" (time stepping), "hard_event", "soft" (peers)
    phase0: float = 0.0             # right-leg phase at t = 0 (0 = right heel strike)
    mu: float = 1.0                 # Coulomb friction coefficient
    # time stepping ("hard")
    h: float = 1e-3                 # s, step
    penetration_correction: float = 0.2  # fraction of a penetration pushed out per step
    pgs_tol: float = 1e-8           # relative impulse change ending the contact sweeps
    pgs_max_sweeps: int = 100
    contact_solver: str = "pivoting"  # "pivoting" (Lemke finishes every step) | "gauss_seidel" (legacy)
    contact_tol_velocity: float = 1e-6  # m/s: a step's gap and slip residuals within it are solved
    contact_tol_impulse: float = 1e-6   # N s: the same of its negative-impulse and cone residuals
    contact_tol_energy: float = 1e-6    # J: the bound on the work a step's impulses do wrongly
    # event-driven peers ("hard_event", "soft")
    restitution: float = 0.0        # plastic foot impacts
    rest_speed: float = 1e-4        # m/s: a point an event lifts slower than this rests (docs/contacts.md)
    baumgarte: float = 20.0         # 1/s, drift stabilisation gains D = P of CONTACT
    rtol: float = 1e-6
    atol: float = 1e-8
    h_max: float = 5e-3             # s
    event_tol: float = 1e-10        # s
    max_transitions: int = 200      # chattering: events within chatter_window
    chatter_window: float = 1e-2    # s
    max_steps: int = 2_000_000
    soft_stiffness: float = 1e5     # N/m^n: "soft"'s and "soft_step"'s normal spring per contact point
    soft_damping: float = 1e3       # N s/m: its normal damper
    soft_exponent: float = 1.0      # its spring's exponent n (>= 1; 1.5: Hertz, with soft_dissipation Hunt-Crossley)
    soft_dissipation: float = 0.0   # s/m: Hunt-Crossley's c, the force k x^n (1 + c v) (0: none)
    soft_v_reg: float = 1e-2        # m/s: its friction's regularisation (creep below it)
    soft_max_sweeps: int = 3000     # "soft_step": Gauss-Seidel's sweep limit (~50-60 a step on a walk)
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


class ContactHealth(NamedTuple):
    """How well the time step solved its contact problems over a rollout
    (:mod:`codesign.dynamics.timestep`; docs/contacts.md): ``steps``; ``above_tolerance``,
    the steps whose impulses miss the velocity (m/s) or impulse (N s) tolerance;
    ``energy_above_bound``, those whose impulses do more work against the contact conditions
    than the energy bound (J)."""

    steps: int
    above_tolerance: int
    energy_above_bound: int


@dataclass(frozen=True)
class Rollout:
    """Outcome of :func:`run`: status, message, time survived, metrics accumulator, final
    state and contact modes, counters (steps; events = contact-mode changes of single
    points), and the recorded samples at ``record_times`` (NaN rows after the end):
    states [k, 2n], contact modes [k, c], contact forces [k, c, 2] (normal, tangent; N:
    the stepping rollout's are each point's mean force since the previous record, impacts
    counted by their impulse; the event-driven and soft models' the force at the record
    time, their forces being finite between events). It owns its arrays: copies, taken
    here, so that a later run of the same set-up (which writes the set-up's data record)
    leaves a result as it was."""

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
    # the stepping rollout's: per record, the largest of each contact residual since the
    # previous one (float64[k, contact_lcp.N_RESIDUALS]: m/s, N s, N s, m/s, J), and the
    # solver's account of the whole run; None for the event-driven and soft models
    record_residuals: np.ndarray | None = None
    contact: ContactHealth | None = None
    # the stepping rollout's under the muscle wearer (issue 45): per record and leg, each
    # muscle's activation (codesign.model.muscle_table.NAMES order) and the muscles'
    # torques on the paper's (ankle, knee, hip) angles held over the step that starts there
    # and each muscle's metabolic rate over it (float64[k, 2, 7 + 3 + 7]: -, N m, W;
    # codesign.walking.muscle_wearer.record_muscles); else None
    record_muscles: np.ndarray | None = None

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, f.name, value.copy())


def status_of(code: int, t: float) -> tuple[str, str]:
    """(status name, one-line message) of a check's termination code at time t (s)."""
    if code == OK:
        return "ok", ""
    name, text = STATUS[code]
    return name, f"{text} at t = {t:.3f} s"


@njit(cache=True, _nrt=False)
def check_body(x, wi, ws):
    """OK or the code of the first failed whole-body check of state x (float64[2n]): a
    non-finite state, the hip below the fall height, the torso pitch beyond the fall
    limit, the hip thrown above its bound (``wi``/``ws``: see WI_*/WS_*)."""
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return NOT_FINITE
    if x[wi[WI_BASE_Z]] < ws[WS_MIN_Z]:
        return FALL_HEIGHT
    if abs(x[wi[WI_PITCH]] - ws[WS_UPRIGHT]) > ws[WS_MAX_PITCH]:
        return FALL_PITCH
    if x[wi[WI_BASE_Z]] > ws[WS_MAX_Z]:
        return THROWN_UP
    return OK


@njit(cache=True, _nrt=False)
def check_drive(wd):
    """OK, or TRANSMISSION_SINGULAR once the wearer-space drive met a singular posture
    (:func:`codesign.control.wearer.drive_torques`)."""
    return TRANSMISSION_SINGULAR if wd.drive.singular[0] != 0 else OK


@njit(cache=True, _nrt=False)
def control(t, q, v, m, wm, wd, tau):
    """The controller's generalized forces at (t, q, v) into tau (float64[n]): the
    impedance laws (:func:`codesign.control.impedance.control_torques`), the wearer-space
    drive where there is one (:func:`codesign.control.wearer.drive_torques`, with
    kinematics of its own), the muscle wearer's held torques on the human's hip, knee and
    ankle where it is on (:mod:`codesign.walking.muscle_wearer`, stepped by the rollout
    once per step: :func:`codesign.walking.muscle_wearer.muscle_step`), and the effort
    joints' torques, rates and
    commanded torques for the metrics (wd.effort_*, :func:`effort_joints`). Returns
    (assist torque N m, assist active?)."""
    ta, active = control_torques(t, q, v, wm.ctrl, tau, wd.joint_tau, wd.joint_rate,
                                 wd.joint_gain, wd.joint_cmd)
    if wm.muscle.on[0] != 0:      # the muscle wearer: its held torques replace the impedance laws'
        apply_muscle_torques(wm.muscle, wd.muscle, q, v, tau, wd.joint_tau, wd.joint_gain, wd.joint_cmd)
    dd = wd.drive
    drive_torques(t, m, q, v, wm.drive, dd, tau, wd.joint_tau, wd.joint_gain, wd.relief)
    muscles = wm.muscle.on[0] != 0
    if muscles:                   # muscles do not compensate the device (their reflexes respond)
        keep_muscle_torques(wm.muscle, tau, wd.relief)
    for e in range(wm.wearer_source.shape[0]):
        s = wm.wearer_source[e]
        wd.wearer_tau[e] = wd.joint_tau[s] if muscles else wd.joint_tau[s] - wd.relief[s]
        wd.wearer_rate[e] = wd.joint_rate[s]
    for e in range(wm.effort_source.shape[0]):
        s = wm.effort_source[e]
        if s >= 0:
            wd.effort_tau[e] = wd.joint_tau[s]
            wd.effort_rate[e] = wd.joint_rate[s]
            wd.effort_cmd[e] = wd.joint_cmd[s]
        else:
            wd.effort_tau[e] = dd.tau[-1 - s]
            wd.effort_rate[e] = dd.rate[-1 - s]
            wd.effort_cmd[e] = dd.cmd[-1 - s]
    return ta, active


@njit(cache=True, _nrt=False)
def check_drift(pos, n_loop_rows, mode, max_drift, active_on_ground, rigid_ground=True):
    """OK or DRIFT: a loop-closure residual pos[:n_loop_rows] (m) beyond ``max_drift``, a
    contact point deeper than it under the ground (gaps pos[n_loop_rows:], m; on a
    ``rigid_ground`` only: soft contacts sink by design), or, when ``active_on_ground`` (the
    event-driven model, whose active points are held on the ground), an active point
    (mode != 0) off the ground by more than it."""
    for r in range(n_loop_rows):
        if abs(pos[r]) > max_drift:
            return DRIFT
    if not rigid_ground:
        return OK
    for i in range(mode.shape[0]):
        gap = pos[n_loop_rows + i]
        if gap < -max_drift or (active_on_ground and mode[i] != 0 and abs(gap) > max_drift):
            return DRIFT
    return OK


@njit(cache=True, _nrt=False)
def check_airborne(t, feet, last_contact, ws):
    """OK, or AIRBORNE when neither foot has touched the ground (feet[2]: 0/1) for longer
    than the walk's bound since last_contact[0] (s), which is set to t while one does."""
    if feet[0] > 0.0 or feet[1] > 0.0:
        last_contact[0] = t
    elif t - last_contact[0] > ws[WS_MAX_AIRBORNE]:
        return AIRBORNE
    return OK


@njit(cache=True, _nrt=False)
def site_forces(m, w, loop_force, normal, tangent, loaded, slope, qdd, wm, wd):
    """wd.site_force[k] = |force (N)| across the joint of each site body (thesis 5.3.3):
    RNEA's inward pass (after forward kinematics of the state) with accelerations qdd[n]
    and, as external forces, the loop forces loop_force[2m] (N, on point a, world axes)
    and the ground forces normal[c], tangent[c] (N) of the points with loaded[i] != 0 on a
    ground of the given slope (rad); wm, wd: the walk's model and data. Shared by the
    stepping and event-driven rollouts."""
    sa = np.sin(slope)
    ca = np.cos(slope)
    fext = wd.fext
    fext[:, :] = 0.0
    add_loop_forces(m, w, loop_force, wm.no_loop_torque, fext)
    for i in range(m.contact_body.shape[0]):
        if loaded[i] == 0:
            continue
        body_point_world(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], wd.point)
        add_point_force(fext, m.contact_body[i], wd.point[0], wd.point[1],
                        -sa * normal[i] + ca * tangent[i], ca * normal[i] + sa * tangent[i])
    joint_wrenches(m, w, qdd, fext, wd.tau_check)
    for k in range(wm.site_body.shape[0]):
        b = wm.site_body[k]
        wd.site_force[k] = math.hypot(w.joint_wrench[b, 1], w.joint_wrench[b, 2])


def walk_settings(settings: RolloutSettings, standing_hip_height: float,
                  upright_pitch: float) -> np.ndarray:
    """float64[6] of the fall and gait checks (WS_* slots)."""
    return np.array([settings.min_hip_height * standing_hip_height,
                     math.radians(settings.max_pitch_deg), settings.max_drift, upright_pitch,
                     standing_hip_height + settings.max_hip_rise, settings.max_airborne_time])


def contact_feet(model: Model) -> np.ndarray:
    """int64[c]: 0 for a contact point of the right foot (name ending in _r), 1 otherwise."""
    return np.array([0 if name.endswith("_r") else 1 for name in model.contact_names], dtype=np.int64)


def walk_indices(model: Model) -> np.ndarray:
    """int64[3] (WI_*): the base x, base z and torso pitch coordinates."""
    return np.array([model.body_id("torso_x"), model.body_id("torso_z"), model.body_id("torso")],
                    dtype=np.int64)


class WalkModel(NamedTuple):
    """The walking part of a rollout's model: fixed numbers of one set-up, never written
    by a run (:func:`make_walk`)."""

    ctrl: Any                  # ControllerArrays
    ws: np.ndarray             # float64[6]: the checks' bounds, see WS_*
    wi: np.ndarray             # int64[3]: base x, base z, pitch coordinates (WI_*)
    contact_foot: np.ndarray   # int64[c]: 0 right foot, 1 left foot (toe contacts count for their foot)
    site_body: np.ndarray      # int64[k]: bodies whose joint force magnitude is an interaction site
    no_loop_torque: np.ndarray  # float64[m] zeros: the loop joints' torques in the interaction forces
    gait_q: np.ndarray         # int64[6]: hip, knee, ankle coordinates, right then left leg (-1: absent)
    cuff: np.ndarray           # int64[a, 3]: attachments (ATTACH_TREE body | ATTACH_LOOP loop, index, sign)
    acc0: np.ndarray           # float64[...]: the metric accumulator at a run's start (metrics.new_accumulator)
    drive: Any                 # control.wearer.DriveArrays: the wearer-space law's drive (no legs: none)
    effort_source: np.ndarray  # int64[e]: the effort joints the metrics measure: j >= 0 active joint j,
                               #   -1 - i drive actuator i (:func:`effort_joints`)
    effort_kind: np.ndarray    # int64[e]: their actuator kinds (actuators.NO_MOTOR ...)
    effort_limit: np.ndarray   # float64[e, 3]: their envelopes
    effort_motor: np.ndarray   # float64[e, 4]: their motor constants
    wearer_source: np.ndarray  # int64[w]: an active wearer's joints (controller rows: hip, knee,
                               #   ankle, each right then left; none for a passive wearer)
    muscle: Any                # walking.muscle_wearer.MuscleModel: the muscle wearer (on[0] = 0: impedance)


class WalkData(NamedTuple):
    """The walking part of a rollout's data: what one run writes (:func:`make_walk_data`,
    :func:`reset_walk_data`)."""

    tau: np.ndarray            # float64[n] scratch: generalized control forces
    Kimp: np.ndarray           # float64[n, n] scratch: control stiffness (implicit; stepping)
    Dimp: np.ndarray           # float64[n, n] scratch: control damping (implicit; stepping)
    joint_tau: np.ndarray      # float64[na] scratch: active joint torques
    joint_rate: np.ndarray     # float64[na] scratch: active joint rates
    joint_gain: np.ndarray     # float64[na, 2] scratch: active joint stiffness and damping
    joint_cmd: np.ndarray      # float64[na] scratch: active joint torques before the clip
    effort_tau: np.ndarray     # float64[e] scratch: the effort joints' delivered torques (N m)
    effort_rate: np.ndarray    # float64[e] scratch: their rates (rad/s)
    effort_cmd: np.ndarray     # float64[e] scratch: their commanded torques (N m)
    relief: np.ndarray         # float64[na] scratch: the device's torque at each active joint (N m;
                               #   its hip and knee under an assistance drive, else 0; taken off an
                               #   impedance wearer's own torque, not off a muscle wearer's)
    wearer_tau: np.ndarray     # float64[w] scratch: the active wearer's own joint torques (N m)
    wearer_rate: np.ndarray    # float64[w] scratch: their rates (rad/s)
    drive: Any                 # control.wearer.DriveData: the drive's scratch and outputs
    acc: np.ndarray            # float64[...]: the metric accumulator (starts as WalkModel.acc0)
    fext: np.ndarray           # float64[n, 3] scratch
    prev_mode: np.ndarray      # int64[c] scratch: the contact modes before a step (mode changes)
    tau_check: np.ndarray      # float64[n] scratch
    site_force: np.ndarray     # float64[k] scratch: force magnitude (N) at each site
    com: np.ndarray            # float64[4] scratch
    point: np.ndarray          # float64[2] scratch
    feet: np.ndarray           # float64[2]: foot in contact after the last step (0/1; stepping)
    last_contact: np.ndarray   # float64[1]: last time (s) a foot touched the ground
    counts: np.ndarray         # int64[1]: contact-mode changes (stepping)
    cuff_force: np.ndarray     # float64[a, 2]: force on the device at each attachment (N, world x, z)
    site_hold: np.ndarray      # float64[k] scratch: the sites' forces held through an impact step
    muscle: Any                # walking.muscle_wearer.MuscleData: muscles and reflexes (reset from
                               #   WalkModel.muscle.start)


# --- gait physics (issue 15)
ATTACH_TREE, ATTACH_LOOP = 0, 1
GAIT_JOINT_BODIES = ("thigh", "shank", "foot")      # hip, knee, ankle coordinates


def gait_coordinates(model: Model) -> np.ndarray:
    """int64[6]: the coordinates of hip, knee, ankle of the right then the left leg (-1
    where the model lacks the body)."""
    return np.array([model.body_names.index(f"{b}_{s}") if f"{b}_{s}" in model.body_names else -1
                     for s in ("r", "l") for b in GAIT_JOINT_BODIES], dtype=np.int64)


def attachment_joints(model: Model) -> np.ndarray:
    """int64[k, 3]: every joint between a device body (named ``wr*``, see
    :mod:`codesign.model.assemble`) and a human body -- the cuffs of the topology's
    ``attachment`` joints: (ATTACH_TREE, device body, +1) for a tree joint whose parent is
    human, (ATTACH_LOOP, loop, +1 / -1) for a loop closure whose body a / b is the device."""
    names = model.body_names

    def device(b):
        return b >= 0 and names[b].startswith("wr")

    def human(b):
        return b >= 0 and not names[b].startswith("wr")

    rows = [(ATTACH_TREE, b, 1) for b in range(model.n)
            if device(b) and human(int(model.parent[b]))]
    for k in range(model.n_loops):
        a, b = int(model.loop_body_a[k]), int(model.loop_body_b[k])
        if device(a) and human(b):
            rows.append((ATTACH_LOOP, k, 1))
        elif human(a) and device(b):
            rows.append((ATTACH_LOOP, k, -1))
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


@njit(cache=True, _nrt=False)
def cuff_forces(w, loop_force, wm, wd):
    """wd.cuff_force[k] = force (N, world x, z) on the device at attachment k: a tree
    joint's constraint force (w.joint_wrench of the last :func:`site_forces`, what the
    human parent exerts on the device body) or a loop closure's force (loop_force[2m]: on
    point a, its opposite on b)."""
    for k in range(wm.cuff.shape[0]):
        kind, i, sign = wm.cuff[k, 0], wm.cuff[k, 1], wm.cuff[k, 2]
        if kind == ATTACH_TREE:
            wd.cuff_force[k, 0] = w.joint_wrench[i, 1]
            wd.cuff_force[k, 1] = w.joint_wrench[i, 2]
        else:
            wd.cuff_force[k, 0] = sign * loop_force[2 * i]
            wd.cuff_force[k, 1] = sign * loop_force[2 * i + 1]


def effort_joints(ctrl, drive) -> np.ndarray:
    """int64[e]: the joints whose torques and rates the metrics measure (power, torque
    RMS, the actuators'): the drive's actuated joints (-1 - i for actuator i), then every
    active joint of the controller that is not DRIVEN (j). Under the thesis's law (no
    drive) the active joints in their order."""
    own = [j for j in range(ctrl.act_rows.shape[0]) if ctrl.act_kind[j] != act.DRIVEN]
    return np.array([-1 - i for i in range(drive.rows.shape[0])] + own, dtype=np.int64)


def wearer_joints(ctrl, active_wearer: bool) -> np.ndarray:
    """int64[w]: the controller rows of an active wearer's own joints, whose torques and
    rates the wearer's effort metrics measure: every active joint that is not DRIVEN (the
    wearer's hip, knee and ankle law; each right then left) -- none for a passive wearer."""
    rows = [j for j in range(ctrl.act_rows.shape[0]) if ctrl.act_kind[j] != act.DRIVEN] if active_wearer else []
    return np.array(rows, dtype=np.int64)


def make_walk(model: Model, ctrl, settings: RolloutSettings, standing_hip_height: float,
              site_bodies: tuple[str, ...] = (), upright_pitch: float = 0.0,
              drive=None, active_wearer: bool = False) -> WalkModel:
    """The walking part of a rollout's model: the compiled controller ``ctrl``
    (ControllerArrays) and its drive (:mod:`codesign.control.wearer`; None: the thesis's
    law), the checks' bounds, the coordinates, sites and attachments of ``model`` with
    interaction sites ``site_bodies``, the metric accumulator's start (window from
    max_time / 2) and its ground-reaction window (bins of settings.h),
    and, for an ``active_wearer``, the joints its effort metrics measure."""
    drive = no_drive(model.n) if drive is None else drive
    source = effort_joints(ctrl, drive)

    def effort(own, driven):
        return np.array([driven[-1 - s] if s < 0 else own[s] for s in source])

    return WalkModel(
        ctrl=ctrl, ws=walk_settings(settings, standing_hip_height, upright_pitch),
        wi=walk_indices(model), contact_foot=contact_feet(model),
        site_body=np.array([model.body_id(b) for b in site_bodies], dtype=np.int64),
        no_loop_torque=np.zeros(model.n_loops), gait_q=gait_coordinates(model),
        cuff=attachment_joints(model),
        acc0=mt.new_accumulator(len(site_bodies), 0.5 * settings.max_time, mt.grf_window_steps(settings.h),
                                settings.h,
                                mt.gait_sample_count(settings.max_time),
                                attachment_joints(model).shape[0] if site_bodies else 0),
        drive=drive, effort_source=source,
        effort_kind=effort(ctrl.act_kind, drive.kind).astype(np.int64).reshape(len(source)),
        effort_limit=effort(ctrl.act_limit, drive.limit).reshape(len(source), act.LIMIT_COLUMNS),
        effort_motor=effort(ctrl.act_motor, drive.motor).reshape(len(source), 4),
        wearer_source=wearer_joints(ctrl, active_wearer), muscle=make_muscle_model(False))


def with_muscle_wearer(wm: WalkModel, muscle: MuscleModel, standing_w: float) -> WalkModel:
    """``wm`` with the muscle wearer ``muscle`` (:mod:`codesign.walking.muscle_wearer`) and
    its accumulator's start marking the muscles on with their standing rate ``standing_w``
    (W, the reference of "net"): the accumulator's start with its metabolic rate on."""
    acc0 = wm.acc0.copy()
    acc0[mt.M_ON] = 1.0
    acc0[mt.M_STANDING] = standing_w
    return wm._replace(muscle=muscle, acc0=acc0)


def make_walk_data(wm: WalkModel, model: Model) -> WalkData:
    """A fresh walking data record for ``wm`` of the engine model ``model``, as
    :func:`reset_walk_data` leaves it."""
    n, n_contacts = model.n, model.n_contacts
    na = wm.ctrl.act_rows.shape[0]
    ne = wm.effort_source.shape[0]
    nw = wm.wearer_source.shape[0]
    k = wm.site_body.shape[0]
    return WalkData(
        tau=np.zeros(n), Kimp=np.zeros((n, n)), Dimp=np.zeros((n, n)),
        joint_tau=np.zeros(na), joint_rate=np.zeros(na), joint_gain=np.zeros((na, 2)),
        joint_cmd=np.zeros(na), effort_tau=np.zeros(ne), effort_rate=np.zeros(ne),
        effort_cmd=np.zeros(ne), relief=np.zeros(na), wearer_tau=np.zeros(nw),
        wearer_rate=np.zeros(nw), drive=make_drive_data(wm.drive, model),
        acc=wm.acc0.copy(), fext=np.zeros((n, 3)), prev_mode=np.zeros(n_contacts, dtype=np.int64),
        tau_check=np.zeros(n), site_force=np.zeros(k), com=np.zeros(4), point=np.zeros(2),
        feet=np.zeros(2), last_contact=np.zeros(1), counts=np.zeros(1, dtype=np.int64),
        cuff_force=np.zeros((wm.cuff.shape[0], 2)), site_hold=np.zeros(k),
        muscle=clone_muscle_data(wm.muscle.start))


def zero_arrays(record: tuple, keep: tuple[str, ...] = ()) -> None:
    """Set every array of a NamedTuple of arrays to 0 in place (nested NamedTuples field by
    field), but the fields ``keep``."""
    for name, value in zip(record._fields, record):
        if name in keep:
            continue
        if isinstance(value, tuple):
            zero_arrays(value)
        else:
            value[...] = 0


def copy_arrays(src: tuple, dst: tuple) -> None:
    """Copy every array of the NamedTuple ``src`` into the same field of ``dst`` (same
    shapes) in place; nested NamedTuples field by field."""
    for a, b in zip(src, dst):
        if isinstance(a, tuple):
            copy_arrays(a, b)
        else:
            b[...] = a


def clone_arrays(record: tuple) -> tuple:
    """A copy of a NamedTuple of arrays (nested NamedTuples copied field by field)."""
    return type(record)(*(clone_arrays(v) if isinstance(v, tuple) else v.copy() for v in record))


def reset_walk_data(wm: WalkModel, wd: WalkData) -> None:
    """Put ``wd`` back as :func:`make_walk_data` made it: scratch, clocks and counts 0, the
    accumulator at ``wm.acc0``, the muscles and reflexes at ``wm.muscle.start``."""
    zero_arrays(wd)
    wd.acc[:] = wm.acc0
    copy_arrays(wm.muscle.start, wd.muscle)


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


def lowered(model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(q with the base height set so the lowest contact point is at z = 0, float64[c]
    every contact point's height above that point (m), the lowest point's index)."""
    q = q.copy()
    iz = model.body_id("torso_z")
    q[iz] = 0.0
    heights = contact_heights(model, q)
    low = int(np.argmin(heights))
    q[iz] = -heights[low]
    return q, heights - heights[low], low


def contact_jacobian(model: Model, q: np.ndarray, qd: np.ndarray, points: np.ndarray) -> np.ndarray:
    """float64[2 k, n]: the world (vx, vz) Jacobian of the contact points ``points``
    (int[k]) at (q, qd), two rows per point."""
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, qd, w)
    J = np.zeros((2 * len(points), model.n))
    for k, i in enumerate(points):
        point_jacobian(model.arrays, w, model.contact_body[i], model.contact_xz[i, 0],
                       model.contact_xz[i, 1], J[2 * k:2 * k + 2])
    return J


def place_on_ground(model: Model, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Shift the base so the lowest contact point is at z = 0 with zero velocity.

    Returns (q, qd, index of the lowest contact point)."""
    q, _, low = lowered(model, q)
    qd = qd.copy()
    ix, iz = model.body_id("torso_x"), model.body_id("torso_z")
    v = contact_jacobian(model, q, qd, np.array([low])) @ qd
    qd[ix] -= v[0]      # the base prismatic columns are the world x and z axes
    qd[iz] -= v[1]
    return q, qd, low
