"""The initial state of a rollout inside the nominal gait: the human joints at a phase of
Winter's gait, the added linkage's loops closed around them (loop-closure IK), and the
body put on the ground: its lowest contact point at rest (``initial_state = "lowest_point"``, the
default) or, from the pose the law walks (:func:`on_reference`), every contact point on
the ground at rest with the pelvis at the gait's speed (``initial_state = "gait"``,
:func:`gait_start`, issue 31)."""

from __future__ import annotations

import numpy as np

from codesign.screening.kinematics import loop_residual_jacobian
from codesign.walking.rollout_base import contact_jacobian, lowered
from codesign.screening.screen import close_loops_kernel

HUMAN_JOINT_BODY = {"hip": "thigh", "knee": "shank", "ankle": "foot"}
START_KINDS = ("lowest_point", "gait")   # WalkSettings.initial_state
# A contact point at most this high after the body is put on the ground is on it: the
# gait's angles put a foot flat to within a few millimetres (Winter's data are rounded to
# 0.1 deg: 0.1 deg over a 0.2-m foot is 0.35 mm); 3 mm of height is 9 N of a heel pad's
# 3 N/mm stiffness (Aerts et al., J Biomech 1995), nothing a rigid contact would feel.
GROUND_TOL = 3e-3   # m


def gait_configuration(model, gait, frequency: float, phase0: float, hip_height: float):
    """(q, qd) of the human joints at phase ``phase0`` of the right leg (left + 0.5)."""
    q = np.zeros(model.n)
    qd = np.zeros(model.n)
    q[model.body_id("torso_z")] = hip_height
    for side, shift in (("r", 0.0), ("l", 0.5)):
        ang = gait.angles(phase0 + shift)
        rate = gait.rates(phase0 + shift) * frequency
        for k, joint in enumerate(("hip", "knee", "ankle")):
            i = model.body_id(f"{HUMAN_JOINT_BODY[joint]}_{side}")
            q[i] = ang[k]
            qd[i] = rate[k]
    return q, qd


def on_reference(model, controller, q: np.ndarray, qd: np.ndarray, phase0: float,
                 step: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """q, qd (float64[n], copies) with every human joint the law servos (an active joint
    named hip, knee or ankle: :class:`codesign.control.impedance.Controller`) at its
    reference and the reference's rate at phase ``phase0`` of the right leg (left + 0.5):
    the pose the law walks, so that its stiff joints do not kick at t = 0 (human-thesis-walking's
    law is 4.6 kN m away from Winter's pose at phase 0.2). The rate is the reference's
    central difference over +-``step`` of phase times the gait frequency (the reference
    is C1)."""
    q = q.copy()
    qd = qd.copy()
    for joint in controller.active:
        if joint.name not in HUMAN_JOINT_BODY:
            continue
        for side, shift in (("r", 0.0), ("l", 0.5)):
            i = model.body_id(f"{HUMAN_JOINT_BODY[joint.name]}_{side}")
            phase = phase0 + shift
            q[i] = float(joint.reference(phase))
            slope = (joint.reference(phase + step) - joint.reference(phase - step)) / (2.0 * step)
            qd[i] = float(slope) * controller.frequency
    return q, qd


def close_wr_loops(model, q, qd, wr_coords, steps: int = 12, tol: float = 1e-10):
    """Loop-closure IK on the WR coordinates only (human coordinates held): a homotopy
    from the upright pose (where the loops close at 0) to ``q`` in ``steps`` stages, each
    closed by MODEL's damped Newton; WR rates from the loop velocity constraint
    J_wr qd_wr = -J_human qd_human (least squares). Returns (q, qd, residual m)."""
    a = model.arrays
    free = np.asarray(sorted(wr_coords), dtype=np.int64)
    r = 2 * model.n_loops
    pose, phi, jac = np.zeros((model.n, 3)), np.zeros(r), np.zeros((r, model.n))
    target = q.copy()
    cur = np.zeros(model.n)
    held = np.setdiff1d(np.arange(model.n), free)
    err = 0.0
    for k in range(1, steps + 1):
        cur[held] = target[held] * k / steps
        err = close_loops_kernel(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b,
                                 a.loop_xz_a, a.loop_xz_b, cur, free, tol, 50, 0.5, 1e-12,
                                 pose, phi, jac)
    loop_residual_jacobian(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b,
                           a.loop_xz_a, a.loop_xz_b, cur, pose, phi, jac)
    qd = qd.copy()
    qd[free] = 0.0
    rhs = -jac @ qd
    qd[free] = np.linalg.lstsq(jac[:, free], rhs, rcond=None)[0]
    return cur, qd, float(err)


def gait_start(model, q: np.ndarray, qd: np.ndarray, speed: float,
               ground_tol: float = GROUND_TOL) -> tuple[np.ndarray, np.ndarray, int]:
    """A start inside the gait without a kinematic landing (issue 31): the base lowered so the lowest
    contact point is at z = 0, the pelvis moving forward at ``speed`` (m/s; its vertical
    rate and every joint rate free), and the rates the least change (Euclidean, over
    the free coordinates) of the given ones that puts every contact point within
    ``ground_tol`` m of the ground at rest (J_c qd = 0, both directions): the stance foot
    neither sinks, lifts nor slides (the controller may still pull the joints towards
    its own references in the first steps: docs/walking.md). The contact points' Jacobian has no column of an added linkage's
    coordinates (the feet hang from the human's tree), so its rates are closed after.

    q, qd: float64[n] (a gait configuration, :func:`gait_configuration`). Returns (q,
    qd, index of the lowest contact point)."""
    q, heights, lowest = lowered(model, q)
    qd = qd.copy()
    J = contact_jacobian(model, q, qd, np.flatnonzero(heights <= ground_tol))
    ix = model.body_id("torso_x")
    qd[ix] = speed
    free = np.flatnonzero(np.arange(model.n) != ix)
    qd[free] += np.linalg.lstsq(J[:, free], -J @ qd, rcond=None)[0]   # minimum-norm change
    return q, qd, lowest
