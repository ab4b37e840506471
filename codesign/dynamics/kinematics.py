"""Forward kinematics, body-point kinematics and Jacobians, centre of mass (compiled).

Planar spatial algebra in WORLD coordinates at the world origin (Featherstone 2008,
ch. 2 and 4, written for the plane): a motion vector is (omega, vx, vz) -- the angular
velocity (counter-clockwise) and the velocity of the body point that is momentarily at the
world origin; a force vector is (moment about the origin, fx, fz). Working in one frame
removes every coordinate transform from the recursions: a joint's motion subspace S_i is
expressed in world coordinates once per configuration, and

    revolute at world point o:      S = (1, o_z, -o_x)
    prismatic along world unit d:   S = (0, d_x, d_z)
    v_i = v_parent + S_i qd_i,      c_i = Sdot_i qd_i = (v_i x S_i) qd_i

with the planar motion cross product v x m = (0, v_z m_0 - w m_2, -v_x m_0 + w m_1).

All functions take ``m`` (``Model.arrays``) and ``w`` (``make_workspace(model)``) and
write into ``w``; :func:`forward_kinematics` must be called first for the configuration
(q, qd) the other functions read.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False)
def forward_kinematics(m, q, qd, w):
    """Poses, motion subspaces, velocities and velocity-product accelerations.

    q, qd: float64[n]. Writes w.pose[n,3] (x, z, absolute angle of each body origin = its
    joint), w.S, w.v, w.c, w.abias [n,3] (world spatial vectors, see module docstring) and
    w.Iw[n,3,3] (world spatial inertia about the origin).
    """
    fk_arrays(m.parent, m.joint_type, m.joint_xz, m.mass, m.com_xz, m.inertia, q, qd,
              w.pose, w.rot, w.S, w.v, w.c, w.abias, w.Iw)


@njit(cache=True, inline="always")
def fk_arrays(parent, joint_type, joint_xz, mass, com_xz, inertia, q, qd,
              pose, rot, S, v, c, abias, Iw):
    """:func:`forward_kinematics` on plain arrays (the hot path: calls that pass the
    whole model/workspace tuples cost microseconds each in numba)."""
    n = q.shape[0]
    for i in range(n):
        p = parent[i]
        if p < 0:
            ox = 0.0
            oz = 0.0
            th = 0.0
            cs = 1.0
            sn = 0.0
            v0 = 0.0
            v1 = 0.0
            v2 = 0.0
            b1 = 0.0
            b2 = 0.0
        else:
            ox = pose[p, 0]
            oz = pose[p, 1]
            th = pose[p, 2]
            cs = rot[p, 0]
            sn = rot[p, 1]
            v0 = v[p, 0]
            v1 = v[p, 1]
            v2 = v[p, 2]
            b1 = abias[p, 1]
            b2 = abias[p, 2]
        jx = joint_xz[i, 0]
        jz = joint_xz[i, 1]
        jt = joint_type[i]
        if jt == 1:
            jx += q[i]
        elif jt == 2:
            jz += q[i]
        x = ox + cs * jx - sn * jz
        z = oz + sn * jx + cs * jz
        if jt == 0:
            th += q[i]
            cs = np.cos(th)
            sn = np.sin(th)
            s0 = 1.0
            s1 = z
            s2 = -x
        elif jt == 1:
            s0 = 0.0
            s1 = cs
            s2 = sn
        else:
            s0 = 0.0
            s1 = -sn
            s2 = cs
        pose[i, 0] = x
        pose[i, 1] = z
        pose[i, 2] = th
        rot[i, 0] = cs
        rot[i, 1] = sn
        S[i, 0] = s0
        S[i, 1] = s1
        S[i, 2] = s2
        qdi = qd[i]
        v0 += s0 * qdi
        v1 += s1 * qdi
        v2 += s2 * qdi
        v[i, 0] = v0
        v[i, 1] = v1
        v[i, 2] = v2
        # c = (v x S) qd; the angular part is always zero in the plane
        c1 = (v2 * s0 - v0 * s2) * qdi
        c2 = (-v1 * s0 + v0 * s1) * qdi
        c[i, 0] = 0.0
        c[i, 1] = c1
        c[i, 2] = c2
        abias[i, 0] = 0.0 if p < 0 else abias[p, 0]
        abias[i, 1] = b1 + c1
        abias[i, 2] = b2 + c2
        # world spatial inertia about the origin; cs, sn are now the body's own angle
        mi = mass[i]
        cx = x + cs * com_xz[i, 0] - sn * com_xz[i, 1]
        cz = z + sn * com_xz[i, 0] + cs * com_xz[i, 1]
        Iw[i, 0, 0] = inertia[i] + mi * (cx * cx + cz * cz)
        Iw[i, 0, 1] = -mi * cz
        Iw[i, 0, 2] = mi * cx
        Iw[i, 1, 0] = -mi * cz
        Iw[i, 1, 1] = mi
        Iw[i, 1, 2] = 0.0
        Iw[i, 2, 0] = mi * cx
        Iw[i, 2, 1] = 0.0
        Iw[i, 2, 2] = mi


@njit(cache=True, _nrt=False)
def body_point_world(w, body, px, pz, out):
    """World position out[0:2] (m) of point (px, pz) of ``body`` (body frame); body -1 =
    world (the point is then already in world coordinates). After forward_kinematics: its
    w.rot holds the cosine and sine of each body's angle (the same values, not recomputed)."""
    if body < 0:
        out[0] = px
        out[1] = pz
        return
    cs = w.rot[body, 0]
    sn = w.rot[body, 1]
    out[0] = w.pose[body, 0] + cs * px - sn * pz
    out[1] = w.pose[body, 1] + sn * px + cs * pz


@njit(cache=True, _nrt=False)
def point_kinematics(w, body, px, pz, out):
    """Position, velocity and bias acceleration (J̇ q̇) of a body point, world frame.

    out: float64[6] = (x, z, vx, vz, ax_bias, az_bias) (m, m/s, m/s^2). The bias
    acceleration is the point's acceleration at qdd = 0 without gravity, i.e. J̇ q̇.
    Body -1 (world) gives a fixed point.
    """
    body_point_world(w, body, px, pz, out)
    if body < 0:
        for k in range(2, 6):
            out[k] = 0.0
        return
    x = out[0]
    z = out[1]
    om = w.v[body, 0]
    vx = w.v[body, 1] - om * z
    vz = w.v[body, 2] + om * x
    al = w.abias[body, 0]
    out[2] = vx
    out[3] = vz
    # classical acceleration = spatial acceleration at the point + omega x v_point
    out[4] = w.abias[body, 1] - al * z - om * vz
    out[5] = w.abias[body, 2] + al * x + om * vx


@njit(cache=True, _nrt=False)
def add_point_jacobian(m, w, body, x, z, scale, rows, r0):
    """rows[r0:r0+2, :] += scale * J, J the 2 x n Jacobian of the point of ``body`` that
    is at WORLD position (x, z) (m). Body -1 (world) adds nothing."""
    j = body
    while j >= 0:
        s0 = w.S[j, 0]
        rows[r0, j] += scale * (w.S[j, 1] - s0 * z)
        rows[r0 + 1, j] += scale * (w.S[j, 2] + s0 * x)
        j = m.parent[j]


@njit(cache=True, _nrt=False)
def point_jacobian(m, w, body, px, pz, J):
    """J[2,n]: Jacobian of point (px, pz) (body frame, m) of ``body``: (vx, vz) = J qd."""
    J[:, :] = 0.0
    pos = w.pts[0]
    body_point_world(w, body, px, pz, pos)
    add_point_jacobian(m, w, body, pos[0], pos[1], 1.0, J, 0)


@njit(cache=True, _nrt=False)
def add_angle_jacobian(m, w, body, scale, row):
    """row[:] += scale * d(theta_body)/dq: the absolute angle's Jacobian (1 for each
    revolute ancestor). Body -1 adds nothing."""
    j = body
    while j >= 0:
        row[j] += scale * w.S[j, 0]
        j = m.parent[j]


@njit(cache=True, _nrt=False)
def center_of_mass(m, w, out):
    """Whole-body centre of mass out[0:2] (m, world) and its velocity out[2:4] (m/s)."""
    n = m.mass.shape[0]
    total = 0.0
    for k in range(4):
        out[k] = 0.0
    for i in range(n):
        mi = m.mass[i]
        total += mi
        cs = w.rot[i, 0]     # cos, sin of the body angle (forward_kinematics)
        sn = w.rot[i, 1]
        x = w.pose[i, 0] + cs * m.com_xz[i, 0] - sn * m.com_xz[i, 1]
        z = w.pose[i, 1] + sn * m.com_xz[i, 0] + cs * m.com_xz[i, 1]
        om = w.v[i, 0]
        out[0] += mi * x
        out[1] += mi * z
        out[2] += mi * (w.v[i, 1] - om * z)
        out[3] += mi * (w.v[i, 2] + om * x)
    for k in range(4):
        out[k] /= total


@njit(cache=True, _nrt=False)
def com_jacobian(m, w, J):
    """J[2,n]: Jacobian of the whole-body centre of mass, (vx, vz)_com = J qd."""
    n = m.mass.shape[0]
    J[:, :] = 0.0
    total = 0.0
    for i in range(n):
        total += m.mass[i]
    for i in range(n):
        if m.mass[i] == 0.0:
            continue
        cs = w.rot[i, 0]     # cos, sin of the body angle (forward_kinematics)
        sn = w.rot[i, 1]
        x = w.pose[i, 0] + cs * m.com_xz[i, 0] - sn * m.com_xz[i, 1]
        z = w.pose[i, 1] + sn * m.com_xz[i, 0] + cs * m.com_xz[i, 1]
        add_point_jacobian(m, w, i, x, z, m.mass[i] / total, J, 0)
