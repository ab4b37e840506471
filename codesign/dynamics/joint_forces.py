"""Constraint forces transmitted across every tree joint (thesis 5.3.3) (compiled).

Given the motion (q, qd, qdd) -- e.g. from constrained forward dynamics -- and every
external force on the bodies (loop-closure multipliers, loop-joint torques, contact
forces), RNEA's inward pass gives the spatial force f_i that the parent transmits to body i
across joint i. It is reported as a joint wrench (world axes): the moment about the joint
point o_i and the force,

    wrench_i = (n_O - (o_x f_z - o_z f_x), f_x, f_z),

i.e. what the parent exerts on the child. For a revolute joint the force is the joint's
constraint (bearing) force and the moment equals the applied joint torque (actuator +
passive); for a prismatic joint the force along the axis equals the applied force. The
human hip and knee loads of the thesis are these wrenches at the human joints.
"""

from __future__ import annotations

from numba import njit

from codesign.dynamics.kinematics import body_point_world
from codesign.dynamics.passive import loop_passive_torque
from codesign.dynamics.rnea import rnea_pass


@njit(cache=True, _nrt=False)
def add_point_force(f_ext, body, x, z, fx, fz):
    """f_ext[body] += spatial force of (fx, fz) (N) applied at WORLD point (x, z) (m).
    Body -1 (world) is ignored."""
    if body < 0:
        return
    f_ext[body, 0] += x * fz - z * fx
    f_ext[body, 1] += fx
    f_ext[body, 2] += fz


@njit(cache=True, _nrt=False)
def add_loop_forces(m, w, lam, loop_tau, f_ext):
    """Add to f_ext[n,3] what every loop joint exerts on its two bodies: the constraint
    force lam[2k:2k+2] on body a at point A and its opposite on body b at point B, and the
    loop-joint torque loop_tau[k] + its passive torque (+ on b, - on a). After
    forward_kinematics and the dynamics solve that produced lam."""
    pa = w.pts[0]
    for k in range(m.loop_body_a.shape[0]):
        a = m.loop_body_a[k]
        b = m.loop_body_b[k]
        fx = lam[2 * k]
        fz = lam[2 * k + 1]
        if a >= 0:
            body_point_world(w, a, m.loop_xz_a[k, 0], m.loop_xz_a[k, 1], pa)
            add_point_force(f_ext, a, pa[0], pa[1], fx, fz)
        if b >= 0:
            body_point_world(w, b, m.loop_xz_b[k, 0], m.loop_xz_b[k, 1], pa)
            add_point_force(f_ext, b, pa[0], pa[1], -fx, -fz)
        t = loop_tau[k] + loop_passive_torque(m, w, k)
        if b >= 0:
            f_ext[b, 0] += t
        if a >= 0:
            f_ext[a, 0] -= t


@njit(cache=True, _nrt=False)
def joint_wrenches(m, w, qdd, f_ext, tau_check):
    """w.joint_wrench[n,3] = (moment about the joint point (N m), fx, fz (N)) that each
    parent exerts on its child, world axes, after forward_kinematics for (q, qd).

    qdd: float64[n] the accelerations; f_ext: float64[n,3] all external spatial forces
    (add_point_force / add_loop_forces). tau_check[n] receives S_i . f_i, the generalized
    force each joint must supply (equal to the applied tree-joint forces when the inputs
    are consistent -- a useful check).
    """
    rnea_pass(m, w, qdd, f_ext, True, tau_check)
    n = qdd.shape[0]
    for i in range(n):
        ox = w.pose[i, 0]
        oz = w.pose[i, 1]
        fx = w.f[i, 1]
        fz = w.f[i, 2]
        w.joint_wrench[i, 0] = w.f[i, 0] - (ox * fz - oz * fx)
        w.joint_wrench[i, 1] = fx
        w.joint_wrench[i, 2] = fz
