"""Fixed-step rollouts (semi-implicit Euler, RK4), the whole loop in one compiled function.

The generic route is codesign.dynamics.hybrid.integrate with flows.multibody_flow (events,
recording, any model). Each flow call there has to take the model and workspace arrays out
of its ``p`` tuple again, and in numba every array taken out of a tuple or passed across a
call boundary costs a reference-count update (about 30 ns each on the benchmark machine,
~60 arrays per call). This kernel does that once per rollout and keeps the arrays in
registers across steps, which is what a fixed-step simulation of a tree (the thesis's
2.7.4 benchmark, or any open-chain rollout without events) needs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from codesign.dynamics.aba import aba_arrays
from codesign.dynamics.kinematics import fk_arrays, forward_kinematics
from codesign.dynamics.loops import accelerations
from codesign.dynamics.passive import add_passive_forces, tree_passive_arrays

SYMPLECTIC_EULER = 0
RK4 = 1


@njit(cache=True, inline="always")
def _finite(q, qd):
    """Every coordinate and velocity finite (NaN and +-inf fail; O(n), next to O(n) dynamics)."""
    for i in range(q.shape[0]):
        if not (np.isfinite(q[i]) and np.isfinite(qd[i])):
            return False
    return True


@njit(cache=True)
def tree_rollout(m, w, tau, q, qd, h, n_steps, method, k_q, k_v):
    """Integrate a tree (no loop closures) n_steps of h seconds in place.

    m = Model.arrays, w = make_workspace(model); tau float64[n] constant applied forces
    (passive elements are added); q, qd float64[n] state, updated in place; method
    SYMPLECTIC_EULER (qd += h qdd; q += h qd) or RK4; k_q, k_v float64[5, n] scratch.
    Returns 0, or 1 + the step at which the state stopped being finite.
    """
    parent = m.parent
    joint_type = m.joint_type
    joint_xz = m.joint_xz
    mass = m.mass
    com_xz = m.com_xz
    inertia = m.inertia
    g = m.gravity[0]
    spring_k = m.spring_k
    spring_rest = m.spring_rest
    damping = m.damping
    lig_k = m.ligament_k
    lig_limit = m.ligament_limit
    lig_exp = m.ligament_exponent
    lig_damp = m.ligament_damping
    lig_side = m.ligament_side
    pose = w.pose
    rot = w.rot
    S = w.S
    v = w.v
    c = w.c
    abias = w.abias
    Iw = w.Iw
    IA = w.IA
    pA = w.pA
    U = w.U
    D = w.D
    u = w.u
    a = w.a
    f = w.f
    tt = w.tau
    qdd = w.qdd
    n = q.shape[0]
    for step in range(n_steps):
        if method == SYMPLECTIC_EULER:
            fk_arrays(parent, joint_type, joint_xz, mass, com_xz, inertia, q, qd, pose, rot, S, v, c, abias, Iw)
            for i in range(n):
                tt[i] = tau[i]
            tree_passive_arrays(spring_k, spring_rest, damping, lig_k, lig_limit, lig_exp, lig_damp, lig_side, q, qd, tt)
            aba_arrays(parent, g, tt, f, False, Iw, S, v, c, IA, pA, U, D, u, a, qdd, m.armature)
            for i in range(n):
                qd[i] += h * qdd[i]
                q[i] += h * qd[i]
        else:
            # stages: k_q[s] = velocity, k_v[s] = acceleration at stage s; row 4 = stage state
            for s in range(4):
                if s == 0:
                    for i in range(n):
                        k_q[4, i] = q[i]
                        k_v[4, i] = qd[i]
                else:
                    cs = 0.5 * h if s < 3 else h
                    for i in range(n):
                        k_q[4, i] = q[i] + cs * k_q[s - 1, i]
                        k_v[4, i] = qd[i] + cs * k_v[s - 1, i]
                qs = k_q[4]
                vs = k_v[4]
                fk_arrays(parent, joint_type, joint_xz, mass, com_xz, inertia, qs, vs, pose, rot, S, v, c, abias, Iw)
                for i in range(n):
                    tt[i] = tau[i]
                tree_passive_arrays(spring_k, spring_rest, damping, lig_k, lig_limit, lig_exp, lig_damp, lig_side, qs, vs, tt)
                aba_arrays(parent, g, tt, f, False, Iw, S, v, c, IA, pA, U, D, u, a, qdd, m.armature)
                for i in range(n):
                    k_q[s, i] = vs[i]
                    k_v[s, i] = qdd[i]
            for i in range(n):
                q[i] += h / 6.0 * (k_q[0, i] + 2.0 * k_q[1, i] + 2.0 * k_q[2, i] + k_q[3, i])
                qd[i] += h / 6.0 * (k_v[0, i] + 2.0 * k_v[1, i] + 2.0 * k_v[2, i] + k_v[3, i])
        if not _finite(q, qd):
            return step + 1
    return 0


@njit(cache=True)
def closed_loop_rollout(m, w, tau, q, qd, h, n_steps, method, alpha, beta, rel_tol, k_q, k_v):
    """Fixed-step rollout of any model (loop closures included: constrained dynamics with
    Baumgarte alpha, beta) in place; same arguments and return value as
    :func:`tree_rollout`. Nothing is projected: the loop error is what the integrator and
    the Baumgarte terms leave."""
    n = q.shape[0]
    tt = w.tau
    qdd = w.qdd
    for step in range(n_steps):
        n_stages = 1 if method == SYMPLECTIC_EULER else 4
        for s in range(n_stages):
            if s == 0:
                for i in range(n):
                    k_q[4, i] = q[i]
                    k_v[4, i] = qd[i]
            else:
                cs = 0.5 * h if s < 3 else h
                for i in range(n):
                    k_q[4, i] = q[i] + cs * k_q[s - 1, i]
                    k_v[4, i] = qd[i] + cs * k_v[s - 1, i]
            qs = k_q[4]
            vs = k_v[4]
            forward_kinematics(m, qs, vs, w)
            for i in range(n):
                tt[i] = tau[i]
            add_passive_forces(m, w, qs, vs, tt)
            accelerations(m, w, tt, alpha, beta, rel_tol)
            for i in range(n):
                k_q[s, i] = vs[i]
                k_v[s, i] = qdd[i]
        if method == SYMPLECTIC_EULER:
            for i in range(n):
                qd[i] += h * k_v[0, i]
                q[i] += h * qd[i]
        else:
            for i in range(n):
                q[i] += h / 6.0 * (k_q[0, i] + 2.0 * k_q[1, i] + 2.0 * k_q[2, i] + k_q[3, i])
                qd[i] += h / 6.0 * (k_v[0, i] + 2.0 * k_v[1, i] + 2.0 * k_v[2, i] + k_v[3, i])
        if not _finite(q, qd):
            return step + 1
    return 0
