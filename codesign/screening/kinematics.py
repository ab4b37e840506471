"""Compiled planar kinematics on the engine's model arrays, for loop-closure IK and screening.

Inputs are the engine ``Model`` arrays (``parent``, ``joint_type``, ``joint_xz``, the loop
arrays; conventions in ``codesign.dynamics.model``): body frame i has its origin at joint
i, revolute coordinates are CCW relative angles, prismatic ones translate along the parent
x / z axis. ``pose[i] = (x, z, theta)`` is body i's origin and absolute angle in the world.

Loop closure c (engine convention): point ``xz_a`` of body a coincides with point ``xz_b``
of body b (body -1 = world, point in world coordinates); its residual is
``phi_c = r_a - r_b`` (2,) m and its relative angle ``theta_b - theta_a``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from codesign.dynamics.model import PRISMATIC_X, REVOLUTE


@njit(cache=True)
def forward_kinematics(parent, joint_type, joint_xz, q, pose):
    """Body poses (n, 3) = (x, z, theta) for coordinates q (n,). Writes ``pose``."""
    n = parent.shape[0]
    for i in range(n):
        p = parent[i]
        px, pz, pth = 0.0, 0.0, 0.0
        if p >= 0:
            px, pz, pth = pose[p, 0], pose[p, 1], pose[p, 2]
        c, s = np.cos(pth), np.sin(pth)
        x = px + c * joint_xz[i, 0] - s * joint_xz[i, 1]
        z = pz + s * joint_xz[i, 0] + c * joint_xz[i, 1]
        th = pth
        if joint_type[i] == REVOLUTE:
            th = pth + q[i]
        elif joint_type[i] == PRISMATIC_X:
            x += c * q[i]
            z += s * q[i]
        else:
            x -= s * q[i]
            z += c * q[i]
        pose[i, 0], pose[i, 1], pose[i, 2] = x, z, th


@njit(cache=True)
def world_point(pose, body, xz, out):
    """World position (2,) of point ``xz`` (body frame) of ``body`` (-1: xz is already world)."""
    if body < 0:
        out[0], out[1] = xz[0], xz[1]
        return
    c, s = np.cos(pose[body, 2]), np.sin(pose[body, 2])
    out[0] = pose[body, 0] + c * xz[0] - s * xz[1]
    out[1] = pose[body, 1] + s * xz[0] + c * xz[1]


@njit(cache=True)
def add_point_jacobian(parent, joint_type, pose, body, r, sign, jac, row):
    """Add ``sign`` x the 2 x n Jacobian of the point of ``body`` at world position r (2,)
    to rows ``row`` (x) and ``row + 1`` (z) of ``jac``. Body -1 (world) adds nothing."""
    j = body
    while j >= 0:
        th = pose[j, 2]
        if joint_type[j] == REVOLUTE:
            jac[row, j] += sign * (-(r[1] - pose[j, 1]))
            jac[row + 1, j] += sign * (r[0] - pose[j, 0])
        elif joint_type[j] == PRISMATIC_X:
            jac[row, j] += sign * np.cos(th)
            jac[row + 1, j] += sign * np.sin(th)
        else:
            jac[row, j] += sign * (-np.sin(th))
            jac[row + 1, j] += sign * np.cos(th)
        j = parent[j]


@njit(cache=True)
def add_angle_jacobian(parent, joint_type, body, sign, out):
    """Add ``sign`` x d(theta_body)/dq to ``out`` (n,)."""
    j = body
    while j >= 0:
        if joint_type[j] == REVOLUTE:
            out[j] += sign
        j = parent[j]


@njit(cache=True)
def loop_residual_jacobian(parent, joint_type, joint_xz, loop_a, loop_b, loop_xa, loop_xb, q, pose, phi, jac):
    """Loop-closure residual phi (2m,) m and its Jacobian jac (2m, n) at q (n,).

    Runs forward kinematics into ``pose`` first. Rows 2c, 2c+1 are loop c's x, z errors.
    """
    forward_kinematics(parent, joint_type, joint_xz, q, pose)
    jac[:, :] = 0.0
    ra = np.empty(2)
    rb = np.empty(2)
    for c in range(loop_a.shape[0]):
        world_point(pose, loop_a[c], loop_xa[c], ra)
        world_point(pose, loop_b[c], loop_xb[c], rb)
        phi[2 * c] = ra[0] - rb[0]
        phi[2 * c + 1] = ra[1] - rb[1]
        add_point_jacobian(parent, joint_type, pose, loop_a[c], ra, 1.0, jac, 2 * c)
        add_point_jacobian(parent, joint_type, pose, loop_b[c], rb, -1.0, jac, 2 * c)
