"""The wearer with muscles in the walking rollout (issue 45): Geyer & Herr 2010's reflex
controlled Hill muscles (:mod:`codesign.control.reflex`, :mod:`codesign.model.muscles`) drive
the human's hip, knee and ankle of both legs; a muscle metabolic model prices them
(:mod:`codesign.model.metabolics`). Compiled; the time-stepping rollout calls it
(docs/muscles.md, "In the rollout").

The evaluation setting ``wearer_model`` picks the wearer's joint torques: ``"impedance"``
(the default: the step impedance laws of :mod:`codesign.control.impedance`, bit for bit as
before) or ``"muscles"``. Under ``muscles``:

* once per time step h, before the controller (:func:`muscle_step`): the engine angles and
  rates of each leg's ankle, knee and hip become the paper's (ankle, knee, hip) angles,
  phi = offset + sign q with (offset, sign) = (pi/2, -1), (pi, +1), (pi, -1)
  (engine = SIGN x anatomical, :mod:`codesign.model.gait`: ankle = pi/2 - dorsiflexion,
  knee = pi - flexion, hip = pi - flexion, the hip's engine coordinate being the thigh's
  angle to the trunk, the paper's hip angle); the trunk pitch is the paper's theta
  (forward lean positive: theta = -(q_torso - upright), the engine's pitch is
  counter-clockwise with x forward); each leg's load is the vertical ground reaction of
  its foot's contact points over the last step (the stepping rollout's mean force; at the
  first step the start's, :func:`start_loads`); then one
  :func:`codesign.control.reflex.reflex_muscle_step` advances the muscles from t - h to t
  and computes the stimulation for [t, t + h];
* :func:`apply_muscle_torques` (from :func:`codesign.walking.rollout_base.control`) replaces
  the impedance torque of each of the six joints by the muscles' torque mapped to the
  engine coordinate, tau_q = sign tau_phi (virtual work: tau_phi dphi = tau_phi sign dq),
  held over the step, and reports zero stiffness and damping for them (the muscle torques
  are explicit); the torso's pitch assist, passive elements (the knee ligament) and the
  device stay as they are -- but an active wearer's device no longer has its torque
  taken off the wearer's joints (:func:`keep_muscle_torques`: that compensation models an
  impedance wearer keeping its motion; muscles respond through their reflexes);
* the muscles' metabolic rate at t (:func:`muscle_energy_rate`, per muscle by the
  ``metabolic_model``, Umberger 2010 by default: the excitation held over the last step,
  the activation, CE length and velocity after it) is in ``MuscleData.edot`` for the
  accumulator (metric ``metabolic_power``).

The muscle and reflex state (ring buffer of delayed signals, gait memory, activations, CE
lengths) lives in the rollout's data record and is reset from ``MuscleModel.start``, the
state :func:`make_muscle_model` builds at the start posture (muscles settled under the
pre-stimulation, the history filled; :func:`codesign.control.reflex.reflex_start`), so a
set-up replays the same bit for bit. The event-driven and soft rollouts
(:mod:`codesign.walking.rollout_event`) integrate with adaptive steps and call the
controller at trial times, so there the muscles are a sampled-data controller: a time guard
stops the integrator at every multiple of h (``MuscleData.tick``, within the integrator's
event tolerance), where :func:`codesign.walking.rollout_event.muscle_tick` takes the legs' loads from the contact forces
at that instant and makes the same :func:`muscle_step`; the torques are held between
ticks, so the reflex delays are whole numbers of ticks as in the stepping rollout.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from codesign.control.reflex import (GEYER_HERR_2010_DELAYS, N_MUSCLES, DelaySteps, LegMuscles, ReflexMemory,
                                     ReflexParams, SignalHistory, delay_steps, reflex_memory, reflex_muscle_step,
                                     reflex_params, reflex_start, signal_history)
from codesign.model.metabolics import UMBERGER_2010, MetabolicConstants, metabolic_rate, muscle_mass
from codesign.model.muscle_table import MuscleTable, muscle_table
from codesign.model.muscles import GEYER_HERR_2010, MuscleConstants, force_length, force_velocity

WEARER_MODELS = ("impedance", "muscles")
# the paper's joints in the order of reflex_muscle_step's (ankle, knee, hip) and their map
# from the engine coordinate: phi = PAPER_OFFSET + PAPER_SIGN q
PAPER_JOINTS = ("ankle", "knee", "hip")
PAPER_OFFSET = np.array([0.5 * math.pi, math.pi, math.pi])
PAPER_SIGN = np.array([-1.0, 1.0, -1.0])
# Geyer & Herr's soft joint limits (H. Geyer, nms_model_MechInit.m, 2006, section 1.6, the
# model of Geyer & Herr 2010) on the paper's (ankle, knee, hip) angles, rad: the ankle
# between 70 and 130 deg (20 deg of dorsiflexion, 40 of plantarflexion), the knee below
# 175 deg (5 deg of flexion), the hip below 230 deg (50 deg of extension); -inf / inf: none
SOFT_LIMIT_LOW = np.radians([70.0, -np.inf, -np.inf])
SOFT_LIMIT_UP = np.radians([130.0, 175.0, 230.0])
SOFT_LIMIT_K = 0.3 / math.radians(1.0)      # N m/rad: c_jointstop, 0.3 N m per degree
SOFT_LIMIT_W = math.radians(1.0)            # rad/s: w_max_jointstop, the relaxation speed
STANDING_SETTLE_S = 1.0   # s: the standing reference's muscles held still this long
# s: the reflexes run this long at the start posture held still before a walk starts (as if
# the person had stood there: the stance leg's force feedback has built its force); without
# it the muscles start from the pre-stimulation and the stance knee gives way in the first
# 0.1 s (docs/muscles.md, "In the rollout")
REFLEX_SETTLE_S = 0.3
# a muscle record's columns per leg (record_muscles): activations, torques, metabolic rates
RECORD_TORQUE = N_MUSCLES
RECORD_RATE = N_MUSCLES + 3
RECORD_WIDTH = 2 * N_MUSCLES + 3


class MuscleData(NamedTuple):
    """What a run writes of the muscles (arrays SI): the reflexes' history and memory, the
    muscles' state (:class:`codesign.control.reflex.LegMuscles`), and this step's inputs and
    outputs."""

    hist: SignalHistory
    mem: ReflexMemory
    mus: LegMuscles
    stim_held: np.ndarray   # float64[2, 7]: the stimulation held over the last step (Umberger's u)
    phi: np.ndarray         # float64[2, 3]: the paper's (ankle, knee, hip) angles (rad) at t
    phi_rate: np.ndarray    # float64[2, 3]: their rates (rad/s)
    load: np.ndarray        # float64[2]: each leg's vertical ground reaction (N) of the last step
    torque: np.ndarray      # float64[2, 3]: the muscles' torques on the paper's angles (N m), held
    rate: np.ndarray        # float64[2, 7]: each muscle's metabolic rate (W) at t
    edot: np.ndarray        # float64[1]: their sum (W)
    tick: np.ndarray        # float64[1]: the time of the muscles' next step (s; the event-driven
                            #   rollouts' clock)


class MuscleModel(NamedTuple):
    """The fixed numbers of the muscle wearer of one set-up (``on[0]`` = 0: the impedance
    wearer, every other field a placeholder of the right type)."""

    on: np.ndarray          # int64[1]: 1 muscles, 0 impedance
    table: MuscleTable
    cst: MuscleConstants
    p: ReflexParams
    steps: DelaySteps
    h: np.ndarray           # float64[1]: the control step (s)
    rows: np.ndarray        # int64[2, 3]: the controller's active row of each leg's (ankle, knee, hip)
    coord: np.ndarray       # int64[2, 3]: their engine coordinates
    sign: np.ndarray        # float64[3]: PAPER_SIGN
    offset: np.ndarray      # float64[3]: PAPER_OFFSET
    pitch: np.ndarray       # int64[1]: the torso's pitch coordinate
    upright: np.ndarray     # float64[1]: its upright value (rad)
    mass: np.ndarray        # float64[7]: each muscle's mass (kg, Umberger 2003)
    met: MetabolicConstants
    limit_low: np.ndarray   # float64[3]: the soft limits' lower paper angles (rad; -inf: none)
    limit_up: np.ndarray    # float64[3]: their upper paper angles (rad; inf: none)
    limit_k: np.ndarray     # float64[1]: their stiffness (N m/rad; 0: no soft limits)
    start: MuscleData       # the data record at a run's start (reset copies it)


def muscle_masses(table: MuscleTable, met: MetabolicConstants = UMBERGER_2010) -> np.ndarray:
    """float64[7] kg: (F_max / sigma) rho l_opt of each muscle (docs/muscles.md). The
    set-up of every design calls it, so it runs the kernel's Python function: nothing to
    compile in a fresh process (tests/walking/test_cold_start.py)."""
    return np.array([muscle_mass.py_func(table.f_max[i], table.l_opt[i], met.specific_tension, met.density)
                     for i in range(table.f_max.shape[0])])


def no_muscles() -> LegMuscles:
    """Both legs' muscle state, all zeros."""
    return LegMuscles(stim=np.zeros((2, N_MUSCLES)), act=np.zeros((2, N_MUSCLES)), l_ce=np.zeros((2, N_MUSCLES)),
                      v_ce=np.zeros((2, N_MUSCLES)), l_mtu=np.zeros((2, N_MUSCLES)), f_se=np.zeros((2, N_MUSCLES)))


def _data(hist: SignalHistory, mem: ReflexMemory, mus: LegMuscles) -> MuscleData:
    return MuscleData(hist, mem, mus, stim_held=mus.stim.copy(), phi=np.zeros((2, 3)), phi_rate=np.zeros((2, 3)),
                      load=np.zeros(2), torque=np.zeros((2, 3)), rate=np.zeros((2, N_MUSCLES)), edot=np.zeros(1),
                      tick=np.zeros(1))


def paper_state(q: np.ndarray, v: np.ndarray, coord: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(phi, phi_rate) float64[2, 3]: the paper's angles and rates of the engine state."""
    phi = PAPER_OFFSET + PAPER_SIGN * q[coord]
    return phi, PAPER_SIGN * v[coord]


def make_muscle_model(on: bool, rows: np.ndarray | None = None,
                      coord: np.ndarray | None = None, pitch: int = 0, upright: float = 0.0,
                      h: float = 1e-3, body_mass: float = 75.0, x0: np.ndarray | None = None,
                      load0: np.ndarray | None = None, reflex_settle_s: float = REFLEX_SETTLE_S,
                      soft_limits: bool = False, met: MetabolicConstants = UMBERGER_2010,
                      **reflex_changes: float) -> MuscleModel:
    """The muscle wearer's model: ``on`` False, a placeholder (the impedance wearer); else
    for the controller rows ``rows`` and engine coordinates ``coord`` (int[2, 3], per leg
    ankle, knee, hip), the torso's pitch coordinate and upright angle, control step ``h``
    (s; a delay that is not a whole number of steps is a UserError line), a person of
    ``body_mass`` kg, and the start state at x0 (float64[2n]) with the legs' loads load0
    (N): the muscles settled under the pre-stimulation, the reflexes' history filled
    (:func:`codesign.control.reflex.reflex_start`), then the reflexes and muscles run
    ``reflex_settle_s`` at that posture held still with those loads (the start's torques
    are the last step's). ``soft_limits``: Geyer & Herr's soft joint limits act
    (:func:`soft_limit_torque`). ``met``: the muscle metabolic model pricing them
    (:data:`codesign.model.metabolics.METABOLIC_MODELS`). ``reflex_changes``: reflex parameters by name
    (:func:`codesign.control.reflex.reflex_params`)."""
    table = muscle_table()
    p = reflex_params(body_mass, **reflex_changes)
    steps = delay_steps(GEYER_HERR_2010_DELAYS, h) if on else DelaySteps(0, 0, 0, 0)
    if on:
        n = x0.shape[0] // 2
        phi, phi_rate = paper_state(x0[:n], x0[n:], coord)
        trunk = -(x0[pitch] - upright)
        hist, mem, mus = reflex_start(table, GEYER_HERR_2010, p, steps, h, phi, phi_rate,
                                      np.asarray(load0, dtype=np.float64), trunk, -x0[n + pitch])
        start = _data(hist, mem, mus)
        start.load[:] = load0
        still = np.zeros((2, 3))
        for _ in range(int(round(reflex_settle_s / h))):
            reflex_muscle_step(table, GEYER_HERR_2010, p, steps, hist, mem, mus, h, phi, still, start.load, trunk,
                               0.0, start.torque)
        start.stim_held[:] = mus.stim
    else:
        rows = np.zeros((2, 3), dtype=np.int64)
        coord = np.zeros((2, 3), dtype=np.int64)
        mus = no_muscles()
        start = _data(signal_history(steps), reflex_memory(), mus)
    return MuscleModel(on=np.array([1 if on else 0], dtype=np.int64), table=table, cst=GEYER_HERR_2010, p=p,
                       steps=steps, h=np.array([h]), rows=np.asarray(rows, dtype=np.int64).reshape(2, 3),
                       coord=np.asarray(coord, dtype=np.int64).reshape(2, 3), sign=PAPER_SIGN.copy(),
                       offset=PAPER_OFFSET.copy(), pitch=np.array([pitch], dtype=np.int64),
                       upright=np.array([upright]), mass=muscle_masses(table, met), met=met,
                       limit_low=SOFT_LIMIT_LOW.copy(), limit_up=SOFT_LIMIT_UP.copy(),
                       limit_k=np.array([SOFT_LIMIT_K if on and soft_limits else 0.0]), start=start)


def clone_muscle_data(d: MuscleData) -> MuscleData:
    """A copy of a muscle data record (its arrays copied)."""
    return MuscleData(SignalHistory(*(a.copy() for a in d.hist)), ReflexMemory(*(a.copy() for a in d.mem)),
                      LegMuscles(*(a.copy() for a in d.mus)),
                      *(a.copy() for a in d[3:]))


@njit(cache=True, _nrt=False)
def muscle_energy_rate(table, cst, met, mass, mus, stim_held, rate) -> float:
    """The metabolic rate (W; the model ``met`` names, Umberger 2010 by default) of every
    muscle of both legs at the state ``mus`` after a step under ``stim_held`` (rate[2, 7]
    per muscle; returns their sum)."""
    total = 0.0
    for leg in range(2):
        for i in range(table.f_max.shape[0]):
            l_ce = mus.l_ce[leg, i]
            v_ce = mus.v_ce[leg, i]
            a = mus.act[leg, i]
            l_opt = table.l_opt[i]
            f_iso = force_length(l_ce / l_opt, cst.w, cst.c)     # the CE force as muscles.mtu_forces's
            f_ce = a * table.f_max[i] * f_iso * force_velocity(v_ce / (table.v_max[i] * l_opt), cst.k, cst.n)
            e = metabolic_rate(stim_held[leg, i], a, l_ce / l_opt, v_ce / l_opt, f_iso, f_ce, v_ce,
                               table.f_max[i], mass[i], table.slow_twitch[i], table.v_max[i], met)
            rate[leg, i] = e
            total += e
    return total


@njit(cache=True, _nrt=False)
def muscle_step(q, v, mm, md) -> None:
    """One control step of the muscle wearer at the state (q, v) of time t (module
    docstring); nothing for the impedance wearer (mm.on[0] = 0). md.load: the legs' loads,
    set by the rollout."""
    if mm.on[0] == 0:
        return
    for leg in range(2):
        for j in range(3):
            i = mm.coord[leg, j]
            md.phi[leg, j] = mm.offset[j] + mm.sign[j] * q[i]
            md.phi_rate[leg, j] = mm.sign[j] * v[i]
    ip = mm.pitch[0]
    for leg in range(2):
        for i in range(N_MUSCLES):
            md.stim_held[leg, i] = md.mus.stim[leg, i]
    reflex_muscle_step(mm.table, mm.cst, mm.p, mm.steps, md.hist, md.mem, md.mus, mm.h[0], md.phi, md.phi_rate,
                       md.load, -(q[ip] - mm.upright[0]), -v[ip], md.torque)
    md.edot[0] = muscle_energy_rate(mm.table, mm.cst, mm.met, mm.mass, md.mus, md.stim_held, md.rate)


@njit(cache=True, _nrt=False)
def next_tick(t: float, h: float) -> float:
    """The time (s) of the muscles' step after the one at t (s), on the grid k h: the
    integrator stops within its event tolerance of a tick, so t is rounded to its tick."""
    return (math.floor(t / h + 0.5) + 1.0) * h


@njit(cache=True, _nrt=False)
def soft_limit_torque(phi: float, rate: float, low: float, up: float, k: float) -> float:
    """Torque (N m, on the paper's angle) of a Geyer & Herr soft joint limit at the angle
    phi (rad) and its rate (rad/s): beyond a limit by p (rad), entering at p' (rad/s), it
    pushes back with k p (1 + p' / SOFT_LIMIT_W), never pulling (0 when the joint leaves
    faster than the relaxation speed), the law of the model's ground contact
    (nms_model_MechInit.m: a stop that relaxes at most at w_max_jointstop); 0 inside."""
    if phi > up:
        return -max(0.0, k * (phi - up) * (1.0 + rate / SOFT_LIMIT_W))
    if phi < low:
        return max(0.0, k * (low - phi) * (1.0 - rate / SOFT_LIMIT_W))
    return 0.0


@njit(cache=True, _nrt=False)
def apply_muscle_torques(mm, md, q, v, tau, joint_tau, joint_gain, joint_cmd) -> None:
    """Replace the impedance torque of each muscle joint (controller rows mm.rows, tree
    joints) in tau (float64[n]) and joint_tau by the muscles' held torque mapped to the
    engine coordinate, sign x torque; zero stiffness and damping (explicit). Geyer &
    Herr's soft joint limits, where on (mm.limit_k[0] > 0), at the state (q, v) go into
    tau only: a passive element of the skeleton, as the knee ligament, not the wearer's
    torque."""
    k = mm.limit_k[0]
    for leg in range(2):
        for j in range(3):
            r = mm.rows[leg, j]
            i = mm.coord[leg, j]
            torque = mm.sign[j] * md.torque[leg, j]
            tau[i] += torque - joint_tau[r]
            joint_tau[r] = torque
            joint_cmd[r] = torque
            joint_gain[r, 0] = 0.0
            joint_gain[r, 1] = 0.0
            if k > 0.0:
                phi = mm.offset[j] + mm.sign[j] * q[i]
                tau[i] += mm.sign[j] * soft_limit_torque(phi, mm.sign[j] * v[i], mm.limit_low[j], mm.limit_up[j], k)


@njit(cache=True, _nrt=False)
def record_muscles(md, rec_mus, k_first, k_end):
    """Store the muscle wearer's state after a :func:`muscle_step` in the records
    k_first..k_end-1 (those taken at that step's start): per leg each muscle's activation
    (rec_mus[k, leg, :7], Geyer & Herr's order, codesign.model.muscle_table.NAMES), the
    torques on the paper's (ankle, knee, hip) angles held over that step (rec_mus[k, leg,
    7:10], N m) and each muscle's metabolic rate over it (rec_mus[k, leg, 10:17], W;
    RECORD_WIDTH columns in all)."""
    for k in range(k_first, k_end):
        for leg in range(2):
            for i in range(N_MUSCLES):
                rec_mus[k, leg, i] = md.mus.act[leg, i]
                rec_mus[k, leg, RECORD_RATE + i] = md.rate[leg, i]
            for j in range(3):
                rec_mus[k, leg, RECORD_TORQUE + j] = md.torque[leg, j]


@njit(cache=True, _nrt=False)
def keep_muscle_torques(mm, tau, relief) -> None:
    """Undo the assistance drive's compensation on the muscle joints: an active wearer's
    device (:func:`codesign.control.wearer.drive_torques`) takes its human-joint equivalent
    off the wearer's hip and knee (the compensation model of an impedance wearer, its
    motion kept); muscles deliver their own torque and the device's adds to it, so the
    relief is given back to tau. It stays in relief as the device's torque at the joint
    (the wearer's own torque is the muscles', :func:`codesign.walking.rollout_base.control`)."""
    for leg in range(2):
        for j in range(3):
            tau[mm.coord[leg, j]] += relief[mm.rows[leg, j]]


@njit(cache=True, _nrt=False)
def leg_loads(force, slope, contact_foot, load) -> None:
    """load[2] = each foot's vertical ground reaction (N): the contact points' normal and
    tangential forces force[c, 2] on a ground of the given slope (rad), summed per foot
    (contact_foot[c]: 0 right, 1 left)."""
    ca = math.cos(slope)
    sa = math.sin(slope)
    load[0] = 0.0
    load[1] = 0.0
    for i in range(force.shape[0]):
        load[contact_foot[i]] += ca * force[i, 0] + sa * force[i, 1]


def start_loads(mode0: np.ndarray, contact_foot: np.ndarray, body_weight: float) -> np.ndarray:
    """float64[2]: the legs' loads at the start (N): the body weight shared equally by the
    feet with a contact point active in ``mode0``."""
    on = np.array([float(np.any((contact_foot == foot) & (mode0 != 0))) for foot in (0, 1)])
    return body_weight * on / max(on.sum(), 1.0)


def standing_rate(mm: MuscleModel, settle_s: float = STANDING_SETTLE_S, s0: float | None = None) -> float:
    """The muscles' metabolic rate (W, both legs) standing: upright (engine angles 0: the
    paper's ankle pi/2, knee and hip pi), every muscle under the pre-stimulation ``s0``
    (default the walker's own, mm.p.s0), held still ``settle_s`` so that activation and CE
    length settle (docs/muscles.md, "net of standing")."""
    from codesign.control.reflex import settle_muscles
    table, cst = mm.table, mm.cst
    s0 = mm.p.s0 if s0 is None else s0
    h = float(mm.h[0])
    mus = no_muscles()
    stim = np.full((2, N_MUSCLES), s0)
    mus.act[:] = s0
    mus.l_ce[:] = table.l_opt
    for leg in range(2):
        settle_muscles(table, cst, PAPER_OFFSET.copy(), stim[leg], h, int(round(settle_s / h)), mus.l_ce[leg],
                       mus.act[leg], mus.v_ce[leg], mus.l_mtu[leg], mus.f_se[leg])
    return float(muscle_energy_rate(table, cst, mm.met, mm.mass, mus, stim, np.zeros((2, N_MUSCLES))))


def muscle_rows(controller_active_names: tuple[str, ...], body_coord) -> tuple[np.ndarray, np.ndarray]:
    """(rows, coord) int64[2, 3] of the paper's (ankle, knee, hip) per leg: the row of
    the controller's active joint of that name (each has a row per leg, right first,
    :func:`codesign.control.impedance.compile_controller`) and its engine coordinate
    (``body_coord(joint, side)``)."""
    rows = np.zeros((2, 3), dtype=np.int64)
    coord = np.zeros((2, 3), dtype=np.int64)
    for leg, side in enumerate(("r", "l")):
        for j, name in enumerate(PAPER_JOINTS):
            rows[leg, j] = 2 * controller_active_names.index(name) + leg
            coord[leg, j] = body_coord(name, side)
    return rows, coord

