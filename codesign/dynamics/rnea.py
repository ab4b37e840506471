"""Recursive Newton-Euler: inverse dynamics and bias forces (compiled).

Featherstone's ``ID`` in world coordinates (see kinematics.py): outward pass
a_i = a_parent + S_i qdd_i + c_i with a_world = (0, 0, +g) (gravity as a fictitious upward
acceleration of the base), f_i = I_i a_i + v_i x* I_i v_i - f_ext_i; inward pass
tau_i = S_i . f_i, f_parent += f_i. f_i is the force the parent transmits to body i
across joint i (world frame, moment about the world origin).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, _nrt=False)
def rnea_pass(m, w, qdd, f_ext, use_f_ext, tau):
    """Inverse dynamics after :func:`forward_kinematics` for the current (q, qd).

    qdd: float64[n]; f_ext: float64[n,3] external spatial forces on each body (world
    frame, moment about the origin), read only if use_f_ext; writes tau[n] (N m or N) and
    w.a, w.f (joint-transmitted spatial forces, before the inward accumulation has been
    undone: w.f[i] is the total force transmitted by joint i).
    """
    n = qdd.shape[0]
    g = m.gravity[0]
    for i in range(n):
        p = m.parent[i]
        if p < 0:
            a0 = 0.0
            a1 = 0.0
            a2 = g
        else:
            a0 = w.a[p, 0]
            a1 = w.a[p, 1]
            a2 = w.a[p, 2]
        a0 += w.S[i, 0] * qdd[i] + w.c[i, 0]
        a1 += w.S[i, 1] * qdd[i] + w.c[i, 1]
        a2 += w.S[i, 2] * qdd[i] + w.c[i, 2]
        w.a[i, 0] = a0
        w.a[i, 1] = a1
        w.a[i, 2] = a2
        I = w.Iw[i]
        v0 = w.v[i, 0]
        v1 = w.v[i, 1]
        v2 = w.v[i, 2]
        # h = I v (momentum), f = I a + v x* h
        h0 = I[0, 0] * v0 + I[0, 1] * v1 + I[0, 2] * v2
        h1 = I[1, 0] * v0 + I[1, 1] * v1
        h2 = I[2, 0] * v0 + I[2, 2] * v2
        f0 = I[0, 0] * a0 + I[0, 1] * a1 + I[0, 2] * a2 - v2 * h1 + v1 * h2
        f1 = I[1, 0] * a0 + I[1, 1] * a1 - v0 * h2
        f2 = I[2, 0] * a0 + I[2, 2] * a2 + v0 * h1
        if use_f_ext:
            f0 -= f_ext[i, 0]
            f1 -= f_ext[i, 1]
            f2 -= f_ext[i, 2]
        w.f[i, 0] = f0
        w.f[i, 1] = f1
        w.f[i, 2] = f2
    for i in range(n - 1, -1, -1):
        tau[i] = w.S[i, 0] * w.f[i, 0] + w.S[i, 1] * w.f[i, 1] + w.S[i, 2] * w.f[i, 2]
        p = m.parent[i]
        if p >= 0:
            w.f[p, 0] += w.f[i, 0]
            w.f[p, 1] += w.f[i, 1]
            w.f[p, 2] += w.f[i, 2]


@njit(cache=True, _nrt=False)
def bias_forces(m, w):
    """w.h[n] = C(q, qd) + g(q): Coriolis, centrifugal and gravity generalized forces
    (Pinocchio's ``nonLinearEffects``), after :func:`forward_kinematics`."""
    w.tmp_n[:] = 0.0
    rnea_pass(m, w, w.tmp_n, w.f, False, w.h)


@njit(cache=True, _nrt=False)
def inverse_dynamics(m, w, qdd, tau):
    """tau[n] = M qdd + C + g (no external forces), after :func:`forward_kinematics`."""
    rnea_pass(m, w, qdd, w.f, False, tau)
