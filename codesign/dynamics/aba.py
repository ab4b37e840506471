"""Articulated-body algorithm: O(n) forward dynamics of the tree (compiled).

Featherstone's ``FDab`` in world coordinates (see kinematics.py), which needs no
coordinate transforms: inward pass U_i = IA_i S_i, D_i = S_i . U_i,
u_i = tau_i - S_i . pA_i, IA_parent += IA_i - U_i U_i^T / D_i,
pA_parent += pA_i + Ia_i c_i + U_i u_i / D_i; outward pass
qdd_i = (u_i - U_i . (a_parent + c_i)) / D_i, a_i = a_parent + c_i + S_i qdd_i,
with a_world = (0, 0, g).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def aba(m, w, tau, f_ext, use_f_ext, qdd):
    """qdd[n] = M^-1 (tau - C - g + J^T f_ext) after :func:`forward_kinematics`.

    tau: float64[n] generalized forces; f_ext: float64[n,3] external spatial forces per
    body (world frame, moment about the origin), read only if use_f_ext. Uses w.IA, w.pA,
    w.U, w.D, w.u, w.a. Returns 0, or 1 + the index of a body with a non-positive
    articulated inertia (D_i <= 0, e.g. a massless leaf). A joint's armature (the diagonal
    of ``m.armature``; a tree has no loop joints to couple coordinates) joins D_i.
    """
    return aba_arrays(m.parent, m.gravity[0], tau, f_ext, use_f_ext, w.Iw, w.S, w.v, w.c,
                      w.IA, w.pA, w.U, w.D, w.u, w.a, qdd, m.armature)


@njit(cache=True, inline="always")
def aba_arrays(parent, g, tau, f_ext, use_f_ext, Iw, S, v, c, IA, pA, U, Dv, uv, a, qdd, armature):
    """:func:`aba` on plain arrays (hot path); ``armature[n, n]``: its diagonal joins D_i."""
    n = tau.shape[0]
    for i in range(n):
        v0 = v[i, 0]
        v1 = v[i, 1]
        v2 = v[i, 2]
        I00 = Iw[i, 0, 0]
        I01 = Iw[i, 0, 1]
        I02 = Iw[i, 0, 2]
        I11 = Iw[i, 1, 1]
        h1 = I01 * v0 + I11 * v1
        h2 = I02 * v0 + I11 * v2
        pA[i, 0] = -v2 * h1 + v1 * h2
        pA[i, 1] = -v0 * h2
        pA[i, 2] = v0 * h1
        if use_f_ext:
            pA[i, 0] -= f_ext[i, 0]
            pA[i, 1] -= f_ext[i, 1]
            pA[i, 2] -= f_ext[i, 2]
        IA[i, 0, 0] = I00
        IA[i, 0, 1] = I01
        IA[i, 0, 2] = I02
        IA[i, 1, 0] = I01
        IA[i, 1, 1] = I11
        IA[i, 1, 2] = 0.0
        IA[i, 2, 0] = I02
        IA[i, 2, 1] = 0.0
        IA[i, 2, 2] = I11
    status = 0
    for i in range(n - 1, -1, -1):
        s0 = S[i, 0]
        s1 = S[i, 1]
        s2 = S[i, 2]
        A00 = IA[i, 0, 0]
        A01 = IA[i, 0, 1]
        A02 = IA[i, 0, 2]
        A11 = IA[i, 1, 1]
        A12 = IA[i, 1, 2]
        A22 = IA[i, 2, 2]
        U0 = A00 * s0 + A01 * s1 + A02 * s2
        U1 = A01 * s0 + A11 * s1 + A12 * s2
        U2 = A02 * s0 + A12 * s1 + A22 * s2
        D = s0 * U0 + s1 * U1 + s2 * U2 + armature[i, i]
        if D <= 0.0:
            if status == 0:
                status = i + 1
            D = 1e-300
        u = tau[i] - (s0 * pA[i, 0] + s1 * pA[i, 1] + s2 * pA[i, 2])
        U[i, 0] = U0
        U[i, 1] = U1
        U[i, 2] = U2
        Dv[i] = D
        uv[i] = u
        p = parent[i]
        if p >= 0:
            invD = 1.0 / D
            c1 = c[i, 1]
            c2 = c[i, 2]
            uD = u * invD
            # Ia = A - U U^T / D (symmetric); pa = pA + Ia c + U u / D  (c[0] = 0)
            Ia00 = A00 - U0 * U0 * invD
            Ia01 = A01 - U0 * U1 * invD
            Ia02 = A02 - U0 * U2 * invD
            Ia11 = A11 - U1 * U1 * invD
            Ia12 = A12 - U1 * U2 * invD
            Ia22 = A22 - U2 * U2 * invD
            IA[p, 0, 0] += Ia00
            IA[p, 0, 1] += Ia01
            IA[p, 0, 2] += Ia02
            IA[p, 1, 0] += Ia01
            IA[p, 1, 1] += Ia11
            IA[p, 1, 2] += Ia12
            IA[p, 2, 0] += Ia02
            IA[p, 2, 1] += Ia12
            IA[p, 2, 2] += Ia22
            pA[p, 0] += pA[i, 0] + Ia01 * c1 + Ia02 * c2 + U0 * uD
            pA[p, 1] += pA[i, 1] + Ia11 * c1 + Ia12 * c2 + U1 * uD
            pA[p, 2] += pA[i, 2] + Ia12 * c1 + Ia22 * c2 + U2 * uD
    for i in range(n):
        p = parent[i]
        if p < 0:
            a0 = 0.0
            a1 = 0.0
            a2 = g
        else:
            a0 = a[p, 0]
            a1 = a[p, 1]
            a2 = a[p, 2]
        a1 += c[i, 1]
        a2 += c[i, 2]
        qddi = (uv[i] - (U[i, 0] * a0 + U[i, 1] * a1 + U[i, 2] * a2)) / Dv[i]
        qdd[i] = qddi
        a[i, 0] = a0 + S[i, 0] * qddi
        a[i, 1] = a1 + S[i, 1] * qddi
        a[i, 2] = a2 + S[i, 2] * qddi
    return status
