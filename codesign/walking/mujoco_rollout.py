"""A design's walk in MuJoCo: its own controller, evaluated every MuJoCo step, on the
exported model (:mod:`codesign.walking.mujoco_model`), measured by this project's metric
accumulators (``codesign crosscheck``).

Per step of ``TIMESTEP`` (0.1 ms) from the keyframe (the evaluation's initial state) at t
= 0: the engine coordinates are read from MuJoCo (q[order] = qpos), the compiled control
law of the evaluation (:func:`codesign.walking.rollout_base.control`: the impedance laws,
the wearer-space drive, the actuators' saturation) gives the generalized forces tau,
MuJoCo applies them and steps (``mj_step``). As the stepping rollout treats the law's
damping implicitly (a stiff, damped ankle on a light foot is unstable explicitly at these
steps), the law's damping D_j on each of its rows (:func:`~codesign.control.impedance.control_gains`)
is handed to MuJoCo's implicit integrator as the row's joint or tendon damping for the
step, and ``qfrc_applied`` = tau + D qd (the law's torque less the damping MuJoCo then
adds, -D qd, implicitly); the stiffness stays explicit. Then the same checks as the
stepping rollout's (fall height and pitch, thrown up, airborne, a non-finite state) and
one metric sample at the step's start state, with MuJoCo's forces of that step: its
contact forces (each sphere's, from ``mj_contactForce``) as the ground reactions, its
connect equalities' forces as the loop forces, its accelerations ``qacc`` -- fed to the
engine's interaction-force pass (:func:`~codesign.walking.rollout_base.site_forces`,
:func:`~codesign.walking.rollout_base.cuff_forces`) and to the observation step every
rollout calls (:func:`~codesign.walking.accumulators.observe_sample`: the gait sample, as
the stepping rollout's, is the state after the step at t + h; the active wearer's own
torques and rates come from the same control law), and the finished accumulator is named
as an evaluation's (:func:`~codesign.walking.measure.named_metrics`: the same names, NaN
for the contact solver's health, which MuJoCo's walk has not). The ground reaction's
30-ms window takes the continuous contact force as the soft-contact peer's does (:func:`~codesign.walking.accumulators.accumulate_ground_force`).

The muscle wearer (``wearer_model = "muscles"``) is stepped as the stepping rollout steps
it, once per control step h of the set-up (h / ``TIMESTEP`` MuJoCo steps,
:func:`muscle_ticks`): :func:`~codesign.walking.muscle_wearer.muscle_step` at that step's
start state, each leg's load the normal force of its spheres in the MuJoCo step before (at
t = 0 the start record's), the torques held until the next.

What is not checked as the engine does: the loop closures' drift (MuJoCo's equalities
are soft: their largest residual is reported instead, ``max_loop_residual_m``), and a
contact point's depth under the floor (``max_penetration_m``).
"""

from __future__ import annotations

import math
import time as clock
from dataclasses import dataclass

import mujoco
import numpy as np

from codesign.control.impedance import control_gains, torso_pitch
from codesign.dynamics.kinematics import body_point_world, center_of_mass, forward_kinematics, point_kinematics
from codesign.dynamics.model import make_workspace
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt
from codesign.walking.mujoco_model import MujocoExport, row_target
from codesign.walking.muscle_wearer import MuscleModel, leg_loads, muscle_step
from codesign.walking.rollout_base import (OK, check_airborne, check_body, check_drive, control,
                                           cuff_forces, make_walk_data, site_forces, status_of)
from codesign.walking.measure import named_metrics


@dataclass(frozen=True)
class MujocoRollout:
    """A walk in MuJoCo: ``status``/``message`` as :class:`~codesign.walking.rollout.Rollout`'s,
    ``time`` s walked, ``metrics`` (the evaluation's names and units,
    :func:`~codesign.walking.measure.named_metrics`), ``record_times``
    float64[k] s and ``records`` float64[k, 2n] (engine state, NaN after the end),
    ``steps``, ``wall_s`` (s of wall time), ``max_loop_residual_m`` and
    ``max_penetration_m`` (m: the loop equalities' largest residual, the deepest contact
    point under the floor)."""

    status: str
    message: str
    time: float
    metrics: dict[str, float]
    record_times: np.ndarray
    records: np.ndarray
    steps: int
    wall_s: float
    max_loop_residual_m: float
    max_penetration_m: float


class _Contacts:
    """Where MuJoCo's contacts and loop forces are, per engine contact point and loop."""

    def __init__(self, mj, export: MujocoExport) -> None:
        model = export.model
        self.point_of_geom = np.full(mj.ngeom, -1, dtype=np.int64)
        for i, name in enumerate(model.contact_names):
            self.point_of_geom[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, name)] = i
        self.force6 = np.zeros(6)
        self.normal = np.zeros(model.n_contacts)
        self.tangent = np.zeros(model.n_contacts)
        self.loop_force = np.zeros(2 * model.n_loops)

    def read(self, mj, data) -> tuple[float, float]:
        """Fill normal, tangent (N, world z and x, on each point) and loop_force (N, world
        x, z, on each loop's point a) from the last step; returns (largest loop residual m,
        deepest penetration m)."""
        self.normal[:] = 0.0
        self.tangent[:] = 0.0
        depth = 0.0
        for k in range(data.ncon):
            con = data.contact[k]
            g1, g2 = int(con.geom[0]), int(con.geom[1])
            point, sign = self.point_of_geom[g2], 1.0
            if point < 0:
                point, sign = self.point_of_geom[g1], -1.0
            if point < 0 or con.efc_address < 0:
                continue
            mujoco.mj_contactForce(mj, data, k, self.force6)
            world = sign * (con.frame.reshape(3, 3).T @ self.force6[:3])   # on the point's sphere
            self.normal[point] += world[2]
            self.tangent[point] += world[0]
            depth = max(depth, float(con.includemargin - con.dist))    # the floor is the margin lower
        residual = 0.0
        rows = np.flatnonzero(data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        for r in rows[::3]:          # connect: three rows (x, y, z) of point a - point b
            loop = int(data.efc_id[r])
            self.loop_force[2 * loop] = data.efc_force[r]
            self.loop_force[2 * loop + 1] = data.efc_force[r + 2]
            residual = max(residual, float(np.abs(data.efc_pos[r:r + 3]).max()))
        return residual, depth


class _Damping:
    """The law's damping on MuJoCo's joints and tendons, step by step (module docstring)."""

    def __init__(self, mj, export: MujocoExport) -> None:
        model, ctrl = export.model, export.setup.p.model.walk.ctrl
        dof_of = np.empty(model.n, dtype=np.int64)
        dof_of[export.order] = np.arange(model.n)          # engine coordinate -> MuJoCo dof
        tendon_of = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_TENDON, name) for name in model.loop_names]

        def target(row):
            loop, index = row_target(model, row)
            return (-1, tendon_of[index]) if loop else (int(dof_of[index]), -1)

        self.act = np.array([target(r) for r in ctrl.act_rows], dtype=np.int64).reshape(-1, 2)
        self.dof0 = mj.dof_damping.copy()
        self.tendon0 = mj.tendon_damping.copy()
        for row, params in zip(ctrl.pas_rows, ctrl.pas_params):    # constant
            dof, tendon = target(row)
            if dof >= 0:
                self.dof0[dof] += params[2]
            else:
                self.tendon0[tendon] += params[2]
        ia = int(ctrl.assist_index[0])
        self.assist = (int(dof_of[ia]), float(ctrl.assist_params[1])) if ia >= 0 else (-1, 0.0)
        self.ctrl = ctrl
        self.K = np.zeros((model.n, model.n))
        self.D = np.zeros((model.n, model.n))

    def set(self, mj, joint_gain: np.ndarray, assist_active: bool, v: np.ndarray) -> np.ndarray:
        """Put this step's damping into ``mj``; returns D v (float64[n], engine order), the
        law's damping torque MuJoCo now adds (with the opposite sign) implicitly."""
        dof, tendon = self.dof0.copy(), self.tendon0.copy()
        for j in range(self.act.shape[0]):
            if self.act[j, 0] >= 0:
                dof[self.act[j, 0]] += joint_gain[j, 1]
            else:
                tendon[self.act[j, 1]] += joint_gain[j, 1]
        if assist_active and self.assist[0] >= 0:
            dof[self.assist[0]] += self.assist[1]
        mj.dof_damping[:] = dof
        mj.tendon_damping[:] = tendon
        control_gains(self.ctrl, joint_gain, assist_active, self.K, self.D)
        return self.D @ v


def muscle_ticks(muscle: MuscleModel, h: float) -> int:
    """MuJoCo steps of h (s) per step of the muscle wearer (0: the impedance wearer);
    ValueError unless its control step is a whole number of them."""
    if muscle.on[0] == 0:
        return 0
    ticks = int(round(float(muscle.h[0]) / h))
    if ticks < 1 or abs(ticks * h - float(muscle.h[0])) > 1e-9 * h:
        raise ValueError(f"the muscles' step {float(muscle.h[0])} s is not a whole number of MuJoCo steps of {h} s")
    return ticks


def run_mujoco(export: MujocoExport, max_time: float, record_times: np.ndarray | None = None) -> MujocoRollout:
    """Walk the exported design in MuJoCo for ``max_time`` s under its own controller
    (module docstring); ``record_times`` float64[k] s where the state is recorded (the
    first step start at or after each). Never raises for a design that falls."""
    setup = export.setup
    model, order = export.model, export.order
    m = model.arrays
    wm = setup.p.model.walk
    wd = make_walk_data(wm, model)
    w = make_workspace(model)
    mj = mujoco.MjModel.from_xml_string(export.xml)
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    contacts = _Contacts(mj, export)
    damping = _Damping(mj, export)
    h = float(mj.opt.timestep)
    n, c = model.n, model.n_contacts
    rt = np.zeros(0) if record_times is None else np.asarray(record_times, dtype=np.float64)
    records = np.full((rt.shape[0], 2 * n), np.nan)
    x, x0 = np.zeros(2 * n), np.zeros(2 * n)
    q0, v0 = x0[:n], x0[n:]
    qdd, point, kin = np.zeros(n), np.zeros(2), np.zeros(6)
    loaded = np.zeros(c, dtype=np.int64)
    ut = np.zeros(c)
    feet_before = np.zeros(2)
    residual = depth = 0.0
    steps = int(math.floor(max_time / h + 0.5))
    tick = muscle_ticks(wm.muscle, h)
    code, k_rec, t = OK, 0, 0.0
    start = clock.perf_counter()
    for k in range(steps):
        t = k * h
        q0[order] = data.qpos
        v0[order] = data.qvel
        while k_rec < rt.shape[0] and rt[k_rec] <= t + 0.5 * h:
            records[k_rec] = x0
            k_rec += 1
        if tick and k % tick == 0:        # the muscle wearer's step (its loads: the last step's)
            if k > 0:
                leg_loads(np.stack([contacts.normal, contacts.tangent], axis=1), 0.0, wm.contact_foot,
                          wd.muscle.load)
            muscle_step(q0, v0, wm.muscle, wd.muscle)
        _, active = control(t, q0, v0, m, wm, wd, wd.tau)
        implicit = damping.set(mj, wd.joint_gain, active, v0)
        data.qfrc_applied[:] = (wd.tau + implicit)[order]
        mujoco.mj_step(mj, data)
        x[:n][order] = data.qpos
        x[n:][order] = data.qvel
        code = check_body(x, wm.wi, wm.ws)
        if code == OK:
            code = check_drive(wd)
        if code != OK:
            break
        # --- the step's forces (at its start state x0) into the metrics
        r, d = contacts.read(mj, data)
        residual, depth = max(residual, r), max(depth, d)
        qdd[order] = data.qacc
        feet_before[:] = wd.feet
        wd.feet[:] = 0.0
        loaded[:] = contacts.normal > 0.0
        for i in range(c):
            if loaded[i]:
                wd.feet[wm.contact_foot[i]] = 1.0
        code = check_airborne(t + h, wd.feet, wd.last_contact, wm.ws)
        if code != OK:
            break
        forward_kinematics(m, q0, v0, w)
        for foot in range(2):
            if feet_before[foot] == 1.0 and wd.feet[foot] == 0.0:
                ac.accumulate_liftoff(wd.acc, t, foot)
            if feet_before[foot] == 0.0 and wd.feet[foot] == 1.0:
                i = int(np.flatnonzero(loaded & (wm.contact_foot == foot))[0])
                body_point_world(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], point)
                ac.accumulate_touchdown(wd.acc, t, foot, point[0])
        grf = ac.accumulate_ground_force(wd.acc, t, float(contacts.normal.sum()))
        feet_loaded = sliding = 0.0
        pitch = math.nan
        cuff = math.nan
        if wm.site_body.shape[0] > 0 and ac.forces_window_open(wd.acc, t):
            site_forces(m, w, contacts.loop_force, contacts.normal, contacts.tangent, loaded, 0.0,
                        qdd, wm, wd)
            cuff_forces(w, contacts.loop_force, wm, wd)
            cuff = ac.accumulate_cuff_force(wd.acc, t, wd.cuff_force)
        if t >= wd.acc[mt.T_START]:
            center_of_mass(m, w, wd.com)
            for i in range(c):
                ut[i] = 0.0
                if loaded[i]:
                    point_kinematics(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], kin)
                    ut[i] = kin[2]
            feet_loaded, sliding = ac.foot_slip(loaded, ut, wm.contact_foot, mt.SLIP_SPEED)
            pitch = torso_pitch(x0, wm.ctrl)
        # the gait physics at the step's start state x0; the gait sample, as the stepping
        # rollout's, the state after the step at t + h
        ac.observe_sample(wd.acc, t, x0, wd.feet, grf, cuff, feet_loaded, sliding, pitch, 1.0 if active else 0.0,
                          t + h, x, 0.5 * h, wm, wd)
    wall = clock.perf_counter() - start
    if code == OK:
        t = steps * h
        while k_rec < rt.shape[0] and rt[k_rec] <= t + 0.5 * h:
            records[k_rec] = x
            k_rec += 1
    status, message = status_of(int(code), t + h if code != OK else t)
    walked = max_time if code == OK else t + h
    metrics = named_metrics(wd.acc, walked, setup)
    return MujocoRollout(status, message, walked, metrics, rt, records, k + 1 if steps else 0, wall,
                         residual, depth)
