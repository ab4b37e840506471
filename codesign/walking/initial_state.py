"""The initial state of a rollout inside the nominal gait: the human joints at a phase of
Winter's gait, the added linkage's loops closed around them (loop-closure IK)."""

from __future__ import annotations

import numpy as np

from codesign.screening.kinematics import loop_residual_jacobian
from codesign.screening.screen import close_loops_kernel

HUMAN_JOINT_BODY = {"hip": "thigh", "knee": "shank", "ankle": "foot"}


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
