"""Composite-rigid-body algorithm: the joint-space mass matrix (compiled).

Featherstone's ``HandC`` mass-matrix part in world coordinates: composite inertias
Ic_i = I_i + sum of children (no transforms needed), M_ij = S_j . (Ic_i S_i) for j an
ancestor of i (or i itself); then the drivetrains' constant reflected inertia
``m.armature`` (:mod:`codesign.dynamics.model`).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, _nrt=False)
def mass_matrix(m, w):
    """w.M[n,n] (kg, kg m, kg m^2) after :func:`forward_kinematics`. Uses w.IA as the
    composite inertias. Entries for non-ancestor pairs are zero, except where a loop
    joint's armature couples two coordinates."""
    n = m.parent.shape[0]
    Ic = w.IA
    M = w.M
    for i in range(n):
        for r in range(3):
            for s in range(3):
                Ic[i, r, s] = w.Iw[i, r, s]
    M[:, :] = 0.0
    for i in range(n - 1, -1, -1):
        s0 = w.S[i, 0]
        s1 = w.S[i, 1]
        s2 = w.S[i, 2]
        F0 = Ic[i, 0, 0] * s0 + Ic[i, 0, 1] * s1 + Ic[i, 0, 2] * s2
        F1 = Ic[i, 1, 0] * s0 + Ic[i, 1, 1] * s1 + Ic[i, 1, 2] * s2
        F2 = Ic[i, 2, 0] * s0 + Ic[i, 2, 1] * s1 + Ic[i, 2, 2] * s2
        M[i, i] = s0 * F0 + s1 * F1 + s2 * F2
        j = m.parent[i]
        while j >= 0:
            Mij = w.S[j, 0] * F0 + w.S[j, 1] * F1 + w.S[j, 2] * F2
            M[i, j] = Mij
            M[j, i] = Mij
            j = m.parent[j]
        p = m.parent[i]
        if p >= 0:
            for r in range(3):
                for s in range(3):
                    Ic[p, r, s] += Ic[i, r, s]
    for k in range(m.armature_value.shape[0]):      # its nonzero entries: none, or a few
        M[m.armature_ij[k, 0], m.armature_ij[k, 1]] += m.armature_value[k]
