"""Passive joint elements: springs, dampers and the exponential knee ligament (compiled).

Conventions and the ligament law (thesis 4.1.1) are in model.py's docstring. Loop-closure
joints carry springs/dampers on their relative angle theta_b - theta_a; a torque on a
loop joint acts +tau on body b and -tau on body a, i.e. generalized force
tau * (d theta_b/dq - d theta_a/dq).
"""

from __future__ import annotations

from numba import njit

from codesign.dynamics.kinematics import add_angle_jacobian


@njit(cache=True)
def joint_passive_torque(m, i, qi, qdi):
    """Passive generalized force of tree joint i at (qi, qdi) (N m or N)."""
    tau = -m.spring_k[i] * (qi - m.spring_rest[i]) - m.damping[i] * qdi
    k = m.ligament_k[i]
    if k != 0.0:
        side = m.ligament_side[i]
        pen = side * (qi - m.ligament_limit[i])
        if pen > 0.0:
            tau -= side * k * pen ** m.ligament_exponent[i] + m.ligament_damping[i] * qdi
    return tau


@njit(cache=True)
def add_loop_torque(m, w, loop, tau, out):
    """out[n] += generalized force of torque ``tau`` (N m) on loop joint ``loop``: +tau on
    body b, -tau on body a (after forward_kinematics)."""
    add_angle_jacobian(m, w, m.loop_body_b[loop], tau, out)
    add_angle_jacobian(m, w, m.loop_body_a[loop], -tau, out)


@njit(cache=True)
def loop_angle(m, w, loop):
    """(relative angle theta_b - theta_a (rad), its rate (rad/s)) of a loop joint (the
    world side contributes angle 0), after forward_kinematics."""
    a = m.loop_body_a[loop]
    b = m.loop_body_b[loop]
    th = 0.0
    om = 0.0
    if b >= 0:
        th += w.pose[b, 2]
        om += w.v[b, 0]
    if a >= 0:
        th -= w.pose[a, 2]
        om -= w.v[a, 0]
    return th, om


@njit(cache=True)
def loop_passive_torque(m, w, loop):
    """Spring/damper torque (N m) on loop joint ``loop`` (acts +tau on b, -tau on a)."""
    if m.loop_spring_k[loop] == 0.0 and m.loop_damping[loop] == 0.0:
        return 0.0
    th, om = loop_angle(m, w, loop)
    return -m.loop_spring_k[loop] * (th - m.loop_spring_rest[loop]) - m.loop_damping[loop] * om


@njit(cache=True)
def add_passive_forces(m, w, q, qd, out):
    """out[n] += passive generalized forces of every tree joint and loop joint at
    (q, qd) (after forward_kinematics for the same state)."""
    n = q.shape[0]
    for i in range(n):
        out[i] += joint_passive_torque(m, i, q[i], qd[i])
    for k in range(m.loop_body_a.shape[0]):
        tau = loop_passive_torque(m, w, k)
        if tau != 0.0:
            add_loop_torque(m, w, k, tau, out)
