"""Passive joint elements: springs, dampers and the exponential knee ligament (compiled).

Conventions and the ligament law (thesis 4.1.1) are in model.py's docstring. Loop-closure
joints carry springs/dampers on their relative angle theta_b - theta_a; a torque on a
loop joint acts +tau on body b and -tau on body a, i.e. generalized force
tau * (d theta_b/dq - d theta_a/dq).
"""

from __future__ import annotations

from numba import njit

from codesign.dynamics.kinematics import add_angle_jacobian


@njit(cache=True, inline="always")
def _passive(spring_k, spring_rest, damping, lig_k, lig_limit, lig_exp, lig_damp, lig_side, qi, qdi):
    tau = -spring_k * (qi - spring_rest) - damping * qdi
    if lig_k != 0.0:
        pen = lig_side * (qi - lig_limit)
        if pen > 0.0:
            tau -= lig_side * lig_k * pen ** lig_exp + lig_damp * qdi
    return tau


@njit(cache=True, _nrt=False)
def joint_passive_torque(m, i, qi, qdi):
    """Passive generalized force of tree joint i at (qi, qdi) (N m or N)."""
    return _passive(m.spring_k[i], m.spring_rest[i], m.damping[i], m.ligament_k[i],
                    m.ligament_limit[i], m.ligament_exponent[i], m.ligament_damping[i],
                    m.ligament_side[i], qi, qdi)


@njit(cache=True, _nrt=False)
def add_loop_torque(m, w, loop, tau, out):
    """out[n] += generalized force of torque ``tau`` (N m) on loop joint ``loop``: +tau on
    body b, -tau on body a (after forward_kinematics)."""
    add_angle_jacobian(m, w, m.loop_body_b[loop], tau, out)
    add_angle_jacobian(m, w, m.loop_body_a[loop], -tau, out)


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def loop_passive_torque(m, w, loop):
    """Spring/damper torque (N m) on loop joint ``loop`` (acts +tau on b, -tau on a)."""
    if m.loop_spring_k[loop] == 0.0 and m.loop_damping[loop] == 0.0:
        return 0.0
    th, om = loop_angle(m, w, loop)
    return -m.loop_spring_k[loop] * (th - m.loop_spring_rest[loop]) - m.loop_damping[loop] * om


@njit(cache=True, _nrt=False)
def add_passive_forces(m, w, q, qd, out):
    """out[n] += passive generalized forces of every tree joint and loop joint at
    (q, qd) (after forward_kinematics for the same state)."""
    tree_passive_arrays(m.spring_k, m.spring_rest, m.damping, m.ligament_k, m.ligament_limit,
                        m.ligament_exponent, m.ligament_damping, m.ligament_side, q, qd, out)
    for k in range(m.loop_body_a.shape[0]):
        tau = loop_passive_torque(m, w, k)
        if tau != 0.0:
            add_loop_torque(m, w, k, tau, out)


@njit(cache=True, inline="always")
def tree_passive_arrays(spring_k, spring_rest, damping, lig_k, lig_limit, lig_exp, lig_damp,
                        lig_side, q, qd, out):
    """out[n] += passive forces of the tree joints (plain arrays, hot path)."""
    for i in range(q.shape[0]):
        out[i] += _passive(spring_k[i], spring_rest[i], damping[i], lig_k[i], lig_limit[i],
                           lig_exp[i], lig_damp[i], lig_side[i], q[i], qd[i])


@njit(cache=True, _nrt=False)
def passive_gains(m, i, qi):
    """(stiffness N m/rad, damping N m s/rad) of tree joint i's passive element at angle qi:
    -d tau/d q and -d tau/d qd of :func:`joint_passive_torque`
    (spring and damper; the ligament's power law differentiated where it is engaged)."""
    k = m.spring_k[i]
    d = m.damping[i]
    if m.ligament_k[i] != 0.0:
        pen = m.ligament_side[i] * (qi - m.ligament_limit[i])
        if pen > 0.0:
            e = m.ligament_exponent[i]
            k += m.ligament_k[i] * e * pen ** (e - 1.0)
            d += m.ligament_damping[i]
    return k, d
