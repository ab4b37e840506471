"""The contact problem of one time step, solved (compiled): u = r + W P with Coulomb friction.

Given the loop-constrained Delassus matrix W (2c x 2c: the contacts' normals 0..c-1, then
their tangents c..2c-1), the row velocities r before the impulses, each normal's lower
bound and the friction coefficient mu, find impulses P (normals, tangents; N s) with

    u_n >= lower, P_n >= 0, P_n (u_n - lower) = 0;
    |P_t| <= mu P_n, u_t = 0 if |P_t| < mu P_n, else P_t = -mu P_n sign(u_t).

:func:`solve_contacts` guesses the contact modes (the last step's), solves exactly for
them (:func:`solve_active_set`, one dense solve) and checks every condition; when the guess
fails, projected block Gauss-Seidel (:func:`gauss_seidel`, one exact 2 x 2 Coulomb problem
per point) gives new modes (:func:`modes_of`) for another exact solve; when that fails,
Lemke's pivoting method (:mod:`codesign.dynamics.contact_lcp`) finishes the problem. The time step that
builds W and r and applies P is :func:`codesign.dynamics.timestep.step` (its module
docstring derives the problem). The kernels run without numba's runtime: scratch arrays
come from the caller's StepWorkspace, nothing is allocated.
"""

from __future__ import annotations

from numba import njit

from codesign.dynamics.contact_lcp import LEMKE_SOLVED, modes_of_basis, solve_lemke
from codesign.dynamics.contact_rows import INACTIVE, SLIP_NEG, SLIP_POS, STICK
from codesign.dynamics.linalg import lu_solve


@njit(cache=True, _nrt=False)
def _point_impulse(a, b, d, un0, ut0, mu):
    """Exact 2 x 2 Coulomb problem of one point: impulses (Pn, Pt) with
    u_n = un0 + a Pn + b Pt >= 0, Pn >= 0, Pn u_n = 0, |Pt| <= mu Pn, stick or maximal
    dissipation, for the positive definite block [[a, b], [b, d]]."""
    if un0 >= 0.0:
        return 0.0, 0.0          # separating without an impulse
    det = a * d - b * b
    if det > 1e-300 * (a * d + 1.0):
        pn = (-un0 * d + ut0 * b) / det
        pt = (-ut0 * a + un0 * b) / det
        if pn >= 0.0 and abs(pt) <= mu * pn:
            return pn, pt
    for s in (1.0, -1.0):        # slipping with u_t of sign s: Pt = -s mu Pn
        den = a - s * mu * b
        if den > 0.0:
            pn = -un0 / den
            if pn >= 0.0 and s * (ut0 + b * pn - d * s * mu * pn) >= 0.0:
                return pn, -s * mu * pn
    pn = -un0 / a                # frictionless fallback (not reached for det > 0)
    return pn, 0.0


@njit(cache=True, _nrt=False)
def gauss_seidel(W, r, lower, mu, P, c, tol, max_sweeps):
    """Projected block Gauss-Seidel on u = r + W P (contacts' normals 0..c-1, tangents
    c..2c-1) with u_n >= lower; P is the warm start and the result. Returns the number of
    sweeps (max_sweeps + 1 if it did not converge)."""
    for sweep in range(max_sweeps):
        change = 0.0
        scale = 1e-300
        for i in range(c):
            ni = i
            ti = c + i
            un = r[ni] - lower[i]
            ut = r[ti]
            for j in range(2 * c):
                un += W[ni, j] * P[j]
                ut += W[ti, j] * P[j]
            a = W[ni, ni]
            b = W[ni, ti]
            d = W[ti, ti]
            un0 = un - a * P[ni] - b * P[ti]
            ut0 = ut - b * P[ni] - d * P[ti]
            pn, pt = _point_impulse(a, b, d, un0, ut0, mu)
            change = max(change, abs(pn - P[ni]), abs(pt - P[ti]))
            P[ni] = pn
            P[ti] = pt
            scale = max(scale, abs(pn), abs(pt))
        if change <= tol * scale:
            return sweep + 1
    return max_sweeps + 1


@njit(cache=True, _nrt=False)
def _slip_sign(mode_i):
    """+1 for a point slipping forward (u_t > 0, P_t = -mu P_n), -1 backward."""
    return 1.0 if mode_i == SLIP_POS else -1.0


@njit(cache=True, _nrt=False)
def solve_active_set(W, r, lower, mu, P, mode, c, A, b, cols):
    """Exact solution of the contact problem for the contact modes ``mode`` (INACTIVE:
    P = 0; STICK: u_n = lower, u_t = 0; SLIP_POS / SLIP_NEG: u_n = lower and
    P_t = -/+ mu P_n): one dense linear solve. Writes P; returns True if the solution
    satisfies every condition of the modes (P_n >= 0, the friction cone, slip directions,
    u_n >= lower at inactive points), i.e. solves the complementarity problem."""
    k = 0
    for i in range(c):            # equations and unknowns: normals of loaded points, tangents of stuck ones
        if mode[i] != INACTIVE:
            cols[k] = i
            k += 1
    for i in range(c):
        if mode[i] == STICK:
            cols[k] = c + i
            k += 1
    for e in range(k):
        re = cols[e]
        for u in range(k):
            ru = cols[u]
            a = W[re, ru]
            if ru < c and mode[ru] != STICK:      # slipping: P_t folded into P_n
                a -= _slip_sign(mode[ru]) * mu * W[re, c + ru]
            A[e, u] = a
        b[e] = (lower[re] if re < c else 0.0) - r[re]
    if not lu_solve(A, b, k):
        return False
    for j in range(2 * c):
        P[j] = 0.0
    for u in range(k):
        P[cols[u]] = b[u]
    for i in range(c):
        if mode[i] == SLIP_POS or mode[i] == SLIP_NEG:
            P[c + i] = -_slip_sign(mode[i]) * mu * P[i]
    # check the conditions (velocities with the tolerance of the solve)
    pscale = 1e-12
    for j in range(2 * c):
        pscale = max(pscale, abs(P[j]))
    for i in range(c):
        if mode[i] == INACTIVE:
            un = r[i]
            for j in range(2 * c):
                un += W[i, j] * P[j]
            if un < lower[i] - 1e-9 * (1.0 + abs(lower[i])):
                return False
            continue
        if P[i] < -1e-12 * pscale:
            return False
        if mode[i] == STICK:
            if abs(P[c + i]) > mu * P[i] + 1e-12 * pscale:
                return False
        else:
            ut = r[c + i]
            for j in range(2 * c):
                ut += W[c + i, j] * P[j]
            if _slip_sign(mode[i]) * ut < -1e-9:
                return False
    return True


@njit(cache=True, _nrt=False)
def modes_of(P, mu, c, mode):
    """Contact modes of impulses P: INACTIVE without normal impulse, STICK inside the
    friction cone, SLIP_POS / SLIP_NEG on it (P_t = -mu P_n: slipping forward)."""
    for i in range(c):
        pn = P[i]
        pt = P[c + i]
        if pn <= 0.0:
            mode[i] = INACTIVE
        elif abs(pt) < mu * pn * (1.0 - 1e-9):
            mode[i] = STICK
        else:
            mode[i] = SLIP_POS if pt < 0.0 else SLIP_NEG


@njit(cache=True, _nrt=False)
def _copy(src, dst, k):
    """dst[:k] = src[:k] (no temporary: the stepping kernels run without numba's runtime)."""
    for j in range(k):
        dst[j] = src[j]


# outcome of solve_contacts
EXACT = 0         # an exact active-set solution (every condition checked)
PIVOTED = 1       # Lemke's impulses (its modes' exact solve failed its check: round-off)
APPROXIMATE = 2   # Gauss-Seidel's impulses (the legacy solver, or Lemke's method failed)


@njit(cache=True, _nrt=False)
def solve_contacts(W, r, lower, mu, P, mode, c, tol, max_sweeps, A, b, cols, P_last,
                   pivoting, lcp):
    """The contact problem u = r + W P (module docstring). Guess the modes (the last
    step's; a free point that would sink sticks) and solve exactly; if a condition fails,
    run Gauss-Seidel from the last impulses and solve exactly for its modes. If that fails
    too: with ``pivoting``, Lemke's method on the problem's LCP
    (:func:`codesign.dynamics.contact_lcp.solve_lemke`), whose modes are solved exactly
    once more (the same solve as above, so an exact answer does not depend on which route
    found its modes) and otherwise its own impulses kept; without (the legacy solver), up
    to two more Gauss-Seidel rounds, then Gauss-Seidel's impulses.
    mode: int64[c], in: last step's modes, out: the modes of P. Returns (sweeps, pivots,
    outcome): the Gauss-Seidel sweeps used (max_sweeps + 1 marks a legacy problem that
    Gauss-Seidel did not converge on and no exact solve fixed), Lemke's pivots and EXACT,
    PIVOTED or APPROXIMATE. A, b, cols, P_last: scratch of 2c rows (P_last holds the
    impulses to fall back on); lcp: contact_lcp.LcpScratch for c points."""
    for i in range(c):
        if mode[i] == INACTIVE and r[i] < lower[i]:
            mode[i] = STICK
    _copy(P, P_last, 2 * c)
    if solve_active_set(W, r, lower, mu, P, mode, c, A, b, cols):
        return 0, 0, EXACT
    sweeps = 0
    _copy(P_last, P, 2 * c)
    for _ in range(3):
        used = gauss_seidel(W, r, lower, mu, P, c, tol, max_sweeps)
        sweeps += min(used, max_sweeps)
        modes_of(P, mu, c, mode)
        _copy(P, P_last, 2 * c)
        if solve_active_set(W, r, lower, mu, P, mode, c, A, b, cols):
            return sweeps, 0, EXACT
        _copy(P_last, P, 2 * c)
        if pivoting:
            status, pivots = solve_lemke(W, r, lower, mu, P, c, lcp)
            if status != LEMKE_SOLVED:
                _copy(P_last, P, 2 * c)
                return sweeps, pivots, APPROXIMATE
            _copy(P, P_last, 2 * c)
            for attempt in range(2):     # the modes of Lemke's basis, then of its impulses
                if attempt == 0:
                    modes_of_basis(lcp, c, mode)
                else:
                    modes_of(P_last, mu, c, mode)
                if solve_active_set(W, r, lower, mu, P, mode, c, A, b, cols):
                    return sweeps, pivots, EXACT
                _copy(P_last, P, 2 * c)
            modes_of(P, mu, c, mode)
            return sweeps, pivots, PIVOTED
        if used <= max_sweeps:
            return sweeps, 0, APPROXIMATE
    return max_sweeps + 1, 0, APPROXIMATE
