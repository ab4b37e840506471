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
    articulated inertia (D_i <= 0, e.g. a massless leaf).
    """
    n = tau.shape[0]
    IA = w.IA
    pA = w.pA
    for i in range(n):
        I = w.Iw[i]
        v0 = w.v[i, 0]
        v1 = w.v[i, 1]
        v2 = w.v[i, 2]
        h0 = I[0, 0] * v0 + I[0, 1] * v1 + I[0, 2] * v2
        h1 = I[1, 0] * v0 + I[1, 1] * v1
        h2 = I[2, 0] * v0 + I[2, 2] * v2
        pA[i, 0] = -v2 * h1 + v1 * h2
        pA[i, 1] = -v0 * h2
        pA[i, 2] = v0 * h1
        if use_f_ext:
            pA[i, 0] -= f_ext[i, 0]
            pA[i, 1] -= f_ext[i, 1]
            pA[i, 2] -= f_ext[i, 2]
        for r in range(3):
            for s in range(3):
                IA[i, r, s] = I[r, s]
    status = 0
    for i in range(n - 1, -1, -1):
        s0 = w.S[i, 0]
        s1 = w.S[i, 1]
        s2 = w.S[i, 2]
        A = IA[i]
        U0 = A[0, 0] * s0 + A[0, 1] * s1 + A[0, 2] * s2
        U1 = A[1, 0] * s0 + A[1, 1] * s1 + A[1, 2] * s2
        U2 = A[2, 0] * s0 + A[2, 1] * s1 + A[2, 2] * s2
        D = s0 * U0 + s1 * U1 + s2 * U2
        if D <= 0.0:
            if status == 0:
                status = i + 1
            D = 1e-300
        u = tau[i] - (s0 * pA[i, 0] + s1 * pA[i, 1] + s2 * pA[i, 2])
        w.U[i, 0] = U0
        w.U[i, 1] = U1
        w.U[i, 2] = U2
        w.D[i] = D
        w.u[i] = u
        p = m.parent[i]
        if p >= 0:
            invD = 1.0 / D
            c1 = w.c[i, 1]
            c2 = w.c[i, 2]
            uD = u * invD
            # Ia = A - U U^T / D (symmetric); pa = pA + Ia c + U u / D  (c[0] = 0)
            Ia00 = A[0, 0] - U0 * U0 * invD
            Ia01 = A[0, 1] - U0 * U1 * invD
            Ia02 = A[0, 2] - U0 * U2 * invD
            Ia11 = A[1, 1] - U1 * U1 * invD
            Ia12 = A[1, 2] - U1 * U2 * invD
            Ia22 = A[2, 2] - U2 * U2 * invD
            P = IA[p]
            P[0, 0] += Ia00
            P[0, 1] += Ia01
            P[0, 2] += Ia02
            P[1, 0] += Ia01
            P[1, 1] += Ia11
            P[1, 2] += Ia12
            P[2, 0] += Ia02
            P[2, 1] += Ia12
            P[2, 2] += Ia22
            pA[p, 0] += pA[i, 0] + Ia01 * c1 + Ia02 * c2 + U0 * uD
            pA[p, 1] += pA[i, 1] + Ia11 * c1 + Ia12 * c2 + U1 * uD
            pA[p, 2] += pA[i, 2] + Ia12 * c1 + Ia22 * c2 + U2 * uD
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
        a1 += w.c[i, 1]
        a2 += w.c[i, 2]
        qddi = (w.u[i] - (w.U[i, 0] * a0 + w.U[i, 1] * a1 + w.U[i, 2] * a2)) / w.D[i]
        qdd[i] = qddi
        w.a[i, 0] = a0 + w.S[i, 0] * qddi
        w.a[i, 1] = a1 + w.S[i, 1] * qddi
        w.a[i, 2] = a2 + w.S[i, 2] * qddi
    return status
