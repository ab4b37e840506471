"""Ready-made pieces for the hybrid integrator: the passive multibody flow and energy.

``multibody_flow`` is a ``flow(t, x, mode, p, xdot)`` for codesign.dynamics.hybrid with
x = [q, qd] (2 n) and ``p = (m, w, tau, params)``: m = ``Model.arrays``, w = a workspace,
tau float64[n] constant applied generalized forces, params float64[3] = (Baumgarte alpha,
Baumgarte beta, rel_tol of the constrained solve). It adds the passive elements, then
runs ABA (tree) or the constrained dynamics (loops). Build p with :func:`flow_params`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from codesign.dynamics.aba import aba_arrays
from codesign.dynamics.kinematics import fk_arrays, forward_kinematics
from codesign.dynamics.loops import DEFAULT_REL_TOL, accelerations
from codesign.dynamics.passive import add_passive_forces, loop_angle, tree_passive_arrays


@njit(cache=True)
def multibody_flow(t, x, mode, p, xdot):
    """xdot = [qd, qdd] of the passive multibody system under constant tau (see module).

    Trees take a hot path on plain arrays (FK, passive, ABA); models with loops go
    through loops.accelerations (constrained solve).
    """
    tau = p[2]
    n = tau.shape[0]
    q = x[:n]
    qd = x[n:2 * n]
    if p[0].loop_body_a.shape[0] == 0:
        tree_flow_arrays(p[0].parent, p[0].joint_type, p[0].joint_xz, p[0].mass, p[0].com_xz,
                         p[0].inertia, p[0].gravity, p[0].spring_k, p[0].spring_rest,
                         p[0].damping, p[0].ligament_k, p[0].ligament_limit,
                         p[0].ligament_exponent, p[0].ligament_damping, p[0].ligament_side,
                         p[1].pose, p[1].rot, p[1].S, p[1].v, p[1].c, p[1].abias, p[1].Iw,
                         p[1].IA, p[1].pA, p[1].U, p[1].D, p[1].u, p[1].a, p[1].f, p[1].tau,
                         p[1].qdd, tau, q, qd, p[0].armature)
        qdd = p[1].qdd
    else:
        m, w, _, params = p
        forward_kinematics(m, q, qd, w)
        for i in range(n):
            w.tau[i] = tau[i]
        add_passive_forces(m, w, q, qd, w.tau)
        accelerations(m, w, w.tau, params[0], params[1], params[2])
        qdd = w.qdd
    for i in range(n):
        xdot[i] = qd[i]
        xdot[n + i] = qdd[i]


@njit(cache=True)
def tree_flow_arrays(parent, joint_type, joint_xz, mass, com_xz, inertia, gravity, spring_k,
                     spring_rest, damping, lig_k, lig_limit, lig_exp, lig_damp, lig_side,
                     pose, rot, S, v, c, abias, Iw, IA, pA, U, D, u, a, f, tau_total, qdd,
                     tau, q, qd, armature):
    """qdd of a tree (no loops) with passive elements, on plain arrays."""
    fk_arrays(parent, joint_type, joint_xz, mass, com_xz, inertia, q, qd, pose, rot, S, v, c, abias, Iw)
    for i in range(q.shape[0]):
        tau_total[i] = tau[i]
    tree_passive_arrays(spring_k, spring_rest, damping, lig_k, lig_limit, lig_exp, lig_damp,
                        lig_side, q, qd, tau_total)
    aba_arrays(parent, gravity[0], tau_total, f, False, Iw, S, v, c, IA, pA, U, D, u, a, qdd, armature)


def flow_params(model, tau=None, baumgarte_alpha: float = 0.0, baumgarte_beta: float = 0.0,
                rel_tol: float = DEFAULT_REL_TOL, n_extra_rows: int = 0):
    """The ``p`` tuple of :func:`multibody_flow` (a fresh workspace)."""
    from codesign.dynamics.model import make_workspace

    tau = np.zeros(model.n) if tau is None else np.ascontiguousarray(tau, dtype=np.float64)
    params = np.array([baumgarte_alpha, baumgarte_beta, rel_tol], dtype=np.float64)
    return (model.arrays, make_workspace(model, n_extra_rows), tau, params)


@njit(cache=True)
def mechanical_energy(m, w, q, qd):
    """(kinetic, potential) energy (J) at (q, qd): kinetic 1/2 sum v_i . I_i v_i, potential
    gravity m g z_com plus every spring's stored energy (linear springs 1/2 k (q - rest)^2,
    ligament k pen^(e+1) / (e+1), loop springs on the relative angle). Calls
    forward_kinematics."""
    forward_kinematics(m, q, qd, w)
    n = q.shape[0]
    g = m.gravity[0]
    kin = 0.0
    pot = 0.0
    for i in range(n):
        I = w.Iw[i]
        v0 = w.v[i, 0]
        v1 = w.v[i, 1]
        v2 = w.v[i, 2]
        kin += 0.5 * (v0 * (I[0, 0] * v0 + I[0, 1] * v1 + I[0, 2] * v2)
                      + v1 * (I[1, 0] * v0 + I[1, 1] * v1) + v2 * (I[2, 0] * v0 + I[2, 2] * v2))
        # I[0, 2] = m c_x, I[2, 2] = m: c_z m = -I[0, 1]
        pot += -g * I[0, 1]
        d = q[i] - m.spring_rest[i]
        pot += 0.5 * m.spring_k[i] * d * d
        if m.ligament_k[i] != 0.0:
            pen = m.ligament_side[i] * (q[i] - m.ligament_limit[i])
            if pen > 0.0:
                e = m.ligament_exponent[i]
                pot += m.ligament_k[i] * pen ** (e + 1.0) / (e + 1.0)
    for k in range(m.loop_body_a.shape[0]):
        if m.loop_spring_k[k] != 0.0:
            th, om = loop_angle(m, w, k)
            d = th - m.loop_spring_rest[k]
            pot += 0.5 * m.loop_spring_k[k] * d * d
    return kin, pot
