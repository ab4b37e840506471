"""The contact problem of one time step as a linear complementarity problem, solved by
Lemke's pivoting method, and the residual of any impulses against its conditions (compiled).

The problem (:mod:`codesign.dynamics.contact_solvers`): impulses P (normals 0..c-1, then
tangents c..2c-1; N s) with row velocities u = r + W P (m/s) and

    u_n >= lower, P_n >= 0, P_n (u_n - lower) = 0;
    |P_t| <= mu P_n, u_t = 0 if |P_t| < mu P_n, else P_t = -mu P_n sign(u_t).

In the plane the Coulomb cone has two edges, so the Stewart-Trinkle (1996) formulation is
exact, not a polyhedral approximation: write P_t = b+ - b- with b+, b- >= 0 and add the
slip speed s >= 0. The unknowns z = (P_n, b+, b-, s) (4c) and w = q + A z with

    w_n  = (r_n - lower) + W_nn P_n + W_nt (b+ - b-)   >= 0  _|_ P_n >= 0
    w_+  =  r_t + W_tn P_n + W_tt (b+ - b-) + s        >= 0  _|_ b+  >= 0
    w_-  = -r_t - W_tn P_n - W_tt (b+ - b-) + s        >= 0  _|_ b-  >= 0
    w_s  =  mu P_n - b+ - b-                           >= 0  _|_ s   >= 0

are the conditions above (a point sliding forward, u_t > 0, has w_+ > 0, so b+ = 0, and
s = u_t > 0, so b- = mu P_n: maximal dissipation). For W positive semi-definite this LCP has
a solution and Lemke's method finds it (Anitescu & Potra 1997, Theorem 4; Stewart & Trinkle
1996); the caller's W is positive definite (its diagonal is raised by a relative 1e-6,
:mod:`codesign.dynamics.timestep`), which also makes the impulses of redundant coplanar
points (heel, ball and toe of a flat foot) unique. Degenerate pivots (ties in the ratio
test, e.g. the symmetric points of a flat foot) are broken by the lexicographic rule, under
which Lemke's method cannot cycle (Cottle, Pang & Stone 1992, 4.9); a pivot limit guards
against round-off regardless.

:func:`contact_residuals` measures how far any impulses are from the conditions, in
physical units (the RES_* entries): the time step records them for every step that did not
end on an exact active-set solution (docs/contacts.md).

The kernels run without numba's runtime: scratch arrays come from the caller.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from codesign.dynamics.contact_rows import INACTIVE, SLIP_NEG, SLIP_POS, STICK

# residuals of one step's impulses (contact_residuals' out)
RES_GAP = 0       # m/s: the largest normal approach below its bound, max(lower - u_n, 0)
RES_NEGATIVE = 1  # N s: the largest negative normal impulse, max(-P_n, 0)
RES_CONE = 2      # N s: the largest friction impulse outside the cone, max(|P_t| - mu P_n, 0)
RES_SLIP = 3      # m/s: the largest slip not met by maximal dissipation (|u_t| of a point
                  #      whose friction is inside the cone by more than the impulse
                  #      tolerance, or does not oppose the slip)
RES_WORK = 4      # J: the work of the impulses that an exact solution does not do:
                  #    sum P_n (u_n - lower) + (P_t u_t + mu P_n |u_t|) (0 when exact; > 0:
                  #    energy added against the contact conditions, < 0: removed)
N_RESIDUALS = 5

LEMKE_SOLVED = 0
LEMKE_RAY = 1         # no pivot row: ray termination (not reached for W positive semi-definite)
LEMKE_MAX_PIVOTS = 2  # the pivot limit was hit (round-off)


class LcpScratch(NamedTuple):
    """Scratch arrays of :func:`solve_lemke` for up to c contact points (k = 4c unknowns)."""

    T: np.ndarray       # float64[k, 2k + 2] the tableau
    basis: np.ndarray   # int64[k] the basic variable of each row
    A: np.ndarray       # float64[k, k] the LCP's matrix
    qv: np.ndarray      # float64[k] the LCP's vector
    z: np.ndarray       # float64[k] the solution


def lcp_scratch(c: int) -> LcpScratch:
    """:class:`LcpScratch` for up to c contact points."""
    k = 4 * c
    return LcpScratch(np.zeros((k, 2 * k + 2)), np.zeros(k, dtype=np.int64), np.zeros((k, k)),
                      np.zeros(k), np.zeros(k))


@njit(cache=True, _nrt=False)
def lcp_of_contacts(W, r, lower, mu, c, A, qv):
    """Fill the Stewart-Trinkle LCP (A z + qv, 4c unknowns: P_n, b+, b-, s; module docstring)
    of the contact problem u = r + W P with c points."""
    k = 4 * c
    for i in range(k):
        qv[i] = 0.0
        for j in range(k):
            A[i, j] = 0.0
    for i in range(c):
        qv[i] = r[i] - lower[i]
        qv[c + i] = r[c + i]
        qv[2 * c + i] = -r[c + i]
        for j in range(c):
            A[i, j] = W[i, j]                     # normal rows
            A[i, c + j] = W[i, c + j]
            A[i, 2 * c + j] = -W[i, c + j]
            A[c + i, j] = W[c + i, j]             # b+ rows: u_t + s
            A[c + i, c + j] = W[c + i, c + j]
            A[c + i, 2 * c + j] = -W[c + i, c + j]
            A[2 * c + i, j] = -W[c + i, j]        # b- rows: -u_t + s
            A[2 * c + i, c + j] = -W[c + i, c + j]
            A[2 * c + i, 2 * c + j] = W[c + i, c + j]
        A[c + i, 3 * c + i] = 1.0
        A[2 * c + i, 3 * c + i] = 1.0
        A[3 * c + i, i] = mu                      # s rows: mu P_n - b+ - b-
        A[3 * c + i, c + i] = -1.0
        A[3 * c + i, 2 * c + i] = -1.0


@njit(cache=True, _nrt=False)
def _pivot(T, k, row, col):
    """Gauss-Jordan pivot of the tableau T (k rows, its first 2k + 2 columns) on T[row, col]."""
    width = 2 * k + 2
    d = T[row, col]
    for j in range(width):
        T[row, j] /= d
    for i in range(k):
        if i != row:
            f = T[i, col]
            if f != 0.0:
                for j in range(width):
                    T[i, j] -= f * T[row, j]
                T[i, col] = 0.0


@njit(cache=True, _nrt=False)
def _lex_row(T, basis, k, col, rhs):
    """The leaving row for the entering column col: the minimum ratio rhs_i / T[i, col] over
    the rows with a positive entry; among ties the artificial variable's row (its leaving
    ends the method), else the lexicographic minimum of the rows of the initial basis's
    inverse (columns 0..k-1) divided by the same entry. -1 if no row qualifies."""
    scale = 0.0
    for i in range(k):
        scale = max(scale, abs(T[i, col]))
    eps = 1e-11 * scale
    best = -1
    for i in range(k):
        if T[i, col] <= eps:
            continue
        if best < 0:
            best = i
            continue
        a = T[i, rhs] / T[i, col]
        b = T[best, rhs] / T[best, col]
        tie = 1e-12 * (1.0 + abs(a) + abs(b))
        if a < b - tie:
            best = i
        elif a <= b + tie and basis[best] != 2 * k:
            if basis[i] == 2 * k:
                best = i
                continue
            for j in range(k):          # lexicographic tie-break
                a = T[i, j] / T[i, col]
                b = T[best, j] / T[best, col]
                if a < b - 1e-14 * (abs(a) + abs(b)):
                    best = i
                    break
                if a > b + 1e-14 * (abs(a) + abs(b)):
                    break
    return best


@njit(cache=True, _nrt=False)
def lemke(A, qv, k, T, basis, z, max_pivots):
    """Solve the LCP w = qv + A z >= 0, z >= 0, w.z = 0 (k unknowns) by Lemke's method with
    the covering vector of ones and lexicographic pivoting. Writes z[:k]; returns
    (LEMKE_* status, pivots). Variables in the tableau: w_j = j, z_j = k + j, z_0 = 2k."""
    zero = 2 * k
    rhs = 2 * k + 1
    for i in range(k):
        z[i] = 0.0
    worst = 0
    for i in range(k):
        if qv[i] < qv[worst]:
            worst = i
    if k == 0 or qv[worst] >= 0.0:
        return LEMKE_SOLVED, 0
    for i in range(k):               # w - A z - e z0 = qv
        for j in range(2 * k + 2):
            T[i, j] = 0.0
        T[i, i] = 1.0
        for j in range(k):
            T[i, k + j] = -A[i, j]
        T[i, zero] = -1.0
        T[i, rhs] = qv[i]
        basis[i] = i
    _pivot(T, k, worst, zero)        # z0 enters at the most negative qv, w_worst leaves
    leaving = basis[worst]
    basis[worst] = zero
    pivots = 1
    while pivots < max_pivots:
        entering = leaving + k if leaving < k else leaving - k   # the complement
        row = _lex_row(T, basis, k, entering, rhs)
        if row < 0:
            return LEMKE_RAY, pivots
        _pivot(T, k, row, entering)
        leaving = basis[row]
        basis[row] = entering
        pivots += 1
        if leaving == zero:
            for i in range(k):
                if k <= basis[i] < 2 * k:
                    z[basis[i] - k] = max(T[i, rhs], 0.0)
            return LEMKE_SOLVED, pivots
    return LEMKE_MAX_PIVOTS, pivots


@njit(cache=True, _nrt=False)
def solve_lemke(W, r, lower, mu, P, c, lcp):
    """Impulses P (2c: normals, tangents) of the contact problem by Lemke's method on its
    Stewart-Trinkle LCP (module docstring). Returns (LEMKE_* status, pivots); P is written
    only when solved. lcp: :class:`LcpScratch` for at least c points."""
    k = 4 * c
    lcp_of_contacts(W, r, lower, mu, c, lcp.A, lcp.qv)
    z = lcp.z
    status, pivots = lemke(lcp.A, lcp.qv, k, lcp.T, lcp.basis, z, 50 * k + 10)
    if status == LEMKE_SOLVED:
        for i in range(c):
            P[i] = z[i]
            P[c + i] = z[c + i] - z[2 * c + i]
    return status, pivots


@njit(cache=True, _nrt=False)
def _is_basic(lcp, k, var):
    """True if the LCP's unknown z_var (0..k-1) is in Lemke's final basis."""
    for r in range(k):
        if lcp.basis[r] == k + var:
            return True
    return False


@njit(cache=True, _nrt=False)
def modes_of_basis(lcp, c, mode):
    """The contact modes of Lemke's final basis (lcp.basis): a point whose normal impulse
    is not basic is INACTIVE; one whose slip speed is basic slides (b- basic: friction along
    -t, so sliding along +t, SLIP_POS; else SLIP_NEG); the others STICK. Read from the
    basis rather than from the impulses' values, a point at the cone's edge or with a
    vanishing load gets the mode its equations were solved in."""
    k = 4 * c
    for i in range(c):
        if not _is_basic(lcp, k, i):
            mode[i] = INACTIVE
        elif not _is_basic(lcp, k, 3 * c + i):
            mode[i] = STICK
        else:
            mode[i] = SLIP_POS if _is_basic(lcp, k, 2 * c + i) else SLIP_NEG


@njit(cache=True, _nrt=False)
def contact_residuals(W, r, lower, mu, P, c, tol_impulse, out):
    """Residuals (out[RES_*], module docstring) of impulses P against the contact
    problem u = r + W P with c points: each the largest over the points, the work summed.
    tol_impulse (N s): how far inside the cone a point's friction may be and still count
    as on its edge (the slip residual)."""
    for j in range(N_RESIDUALS):
        out[j] = 0.0
    for i in range(c):
        un = r[i]
        ut = r[c + i]
        for j in range(2 * c):
            un += W[i, j] * P[j]
            ut += W[c + i, j] * P[j]
        pn = P[i]
        pt = P[c + i]
        out[RES_GAP] = max(out[RES_GAP], lower[i] - un)
        out[RES_NEGATIVE] = max(out[RES_NEGATIVE], -pn)
        out[RES_CONE] = max(out[RES_CONE], abs(pt) - mu * max(pn, 0.0))
        inside = mu * max(pn, 0.0) - abs(pt) > tol_impulse
        if inside or pt * ut > 0.0:
            out[RES_SLIP] = max(out[RES_SLIP], abs(ut))
        out[RES_WORK] += pn * (un - lower[i]) + pt * ut + mu * max(pn, 0.0) * abs(ut)
    return out
