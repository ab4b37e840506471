"""The soft (penalty) contact law solved inside a time step (compiled): implicit forces.

The soft model (:mod:`codesign.dynamics.contact_soft`, thesis eq. 2.91) applies, at every
contact point below the ground (height g < 0),

    lambda_n = max(0, -k g - d v_n),    lambda_t = -mu lambda_n clip(v_t / v_reg, -1, 1).

Integrated explicitly (the event-driven peer's adaptive Dormand-Prince), its regularised
friction is stiff: below v_reg a loaded foot point is a damper of mu lambda_n / v_reg
(~3e4 N s/m for 400 N) on a light foot, which bounds the step near 1e-5 s and makes a
10-s walk of a co-design cost minutes. Here the same law is taken at the end of the step
(implicit Euler in the contact forces; the time step of :mod:`codesign.dynamics.timestep`
is otherwise unchanged), with impulses P = h lambda on the step's contact problem
u = r + W P (u: the points' normal and tangent velocities after the step, m/s):

    P_n = h max(0, -k (g + h u_n) - d u_n)   while the point ends the step below the
          ground (g + h u_n < 0), else 0;
    P_t = -mu P_n clip(u_t / v_reg, -1, 1).

The nonlinear (Hunt-Crossley) normal law of :func:`codesign.dynamics.contact_soft.soft_normal_force`,
P_n = h max(0, k x^n (1 + c v) + d v) at the step's end (x = -(g + h u_n), v = -u_n), is
taken the same way; its scalar equation has no closed form and is solved by Newton's
method inside its bracket.

A damper on an implicit step is stable for any h, so the step stays at the walking
rollout's 1 ms. Where the normal law jumps (a point arriving at the ground, whose damper
force starts at d |u_n| > 0), the equation may have no root; the step then lands the point
exactly on the ground (u_n = -g / h), the impulse inside the jump: the set-valued reading
of the same law.

Solution: Gauss-Seidel over the points, each of its two equations solved exactly given
the other impulses (the scalar maps are monotone: one root, or the jump), until the
largest change is below ``tol`` times the largest impulse; after half the sweep limit,
each update is under-relaxed by half (points of one foot landing together can otherwise
trade the law's jump back and forth). The residual returned is the
largest |P - law(u(P))| over the rows (N s), the measure of a step solved.
"""

from __future__ import annotations

from numba import njit

from codesign.dynamics.contact_soft import soft_normal_law
from codesign.dynamics.contact_solvers import modes_of


@njit(cache=True, _nrt=False)
def normal_impulse(a, w, g, h, k, d, n, c, guess):
    """The normal impulse (N s) of one point whose normal velocity after the step is
    u = a + w P (a: m/s without its own impulse, w > 0: s/kg), for height g (m) at the
    step's start, step h (s) and the law's stiffness k (N/m^n), damping d (N s/m),
    exponent n and dissipation c (s/m; :func:`codesign.dynamics.contact_soft.soft_normal_force`).
    Linear (n = 1, c = 0): the closed form; otherwise the one root of P - h f(u(P)), which
    rises with P at a slope >= 1, by Newton's method kept inside its bracket, started from
    ``guess`` (N s: the point's last impulse, so that a converging sweep costs a step or two)."""
    if g + h * a >= 0.0:
        return 0.0               # ends the step above the ground without an impulse
    landed = (-g / h - a) / w    # the impulse that ends the step on the ground
    if n == 1.0 and c == 0.0:
        cc = h * (h * k + d)
        p = (-h * k * g - cc * a) / (1.0 + cc * w)
        if g + h * (a + w * p) < 0.0:
            return max(p, 0.0)
        return landed            # the jump: the point ends the step on the ground
    if landed <= max(0.0, d * g):
        return landed            # the damper's jump (an arriving point, d > 0)
    lo, hi = 0.0, landed
    p = min(max(guess, lo), hi)
    for _ in range(100):
        u = a + w * p
        force, by_depth, by_speed = soft_normal_law(-(g + h * u), -u, k, d, n, c)
        phi = p - h * force
        if phi < 0.0:
            lo = p
        else:
            hi = p
        step = p - phi / (1.0 + h * w * (h * by_depth + by_speed))    # phi' >= 1
        if not lo < step < hi:
            step = 0.5 * (lo + hi)
        if abs(step - p) <= 1e-13 * max(abs(step), 1e-300):
            return step          # Newton's last step: the root to rounding
        p = step
    return p


@njit(cache=True, _nrt=False)
def tangent_impulse(a, w, pn, mu, v_reg):
    """The friction impulse (N s) of one point with normal impulse pn whose tangent
    velocity after the step is u = a + w P: P = -mu pn clip(u / v_reg, -1, 1)."""
    if pn <= 0.0:
        return 0.0
    bound = mu * pn
    damping = bound / v_reg      # N s per (m/s): the law below v_reg
    p = -damping * a / (1.0 + damping * w)
    return min(bound, max(-bound, p))


@njit(cache=True, _nrt=False)
def _row_velocity(W, r, P, row, n2):
    u = r[row]
    for j in range(n2):
        u += W[row, j] * P[j]
    return u


@njit(cache=True, _nrt=False)
def _normal_law(W, r, gap, h, law, P, i, c):
    """The normal impulse the law gives point i given every other impulse in P (N s);
    law = (k, d, n, c) of :func:`normal_impulse`."""
    an = _row_velocity(W, r, P, i, 2 * c) - W[i, i] * P[i]
    return normal_impulse(an, W[i, i], gap[i], h, law[0], law[1], law[2], law[3], P[i])


@njit(cache=True, _nrt=False)
def _tangent_law(W, r, mu, v_reg, P, i, c, pn):
    """The friction impulse the law gives point i with normal impulse pn (N s)."""
    t = c + i
    at = _row_velocity(W, r, P, t, 2 * c) - W[t, t] * P[t]
    return tangent_impulse(at, W[t, t], pn, mu, v_reg)


@njit(cache=True, _nrt=False)
def soft_residual(W, r, gap, h, law, mu, v_reg, P, c):
    """The largest |P - law(u(P))| over the 2c rows (N s): 0 for impulses that meet the
    implicit soft law exactly."""
    worst = 0.0
    for i in range(c):
        worst = max(worst, abs(P[i] - _normal_law(W, r, gap, h, law, P, i, c)))
        worst = max(worst, abs(P[c + i] - _tangent_law(W, r, mu, v_reg, P, i, c, P[i])))
    return worst


@njit(cache=True, _nrt=False)
def solve_soft(W, r, gap, h, law, mu, v_reg, P, mode, c, tol, max_sweeps):
    """Impulses P (float64[2c]: normals, tangents; warm start and result) of c points of
    heights gap (float64[c], m) on the step's problem u = r + W P under the implicit soft
    law (module docstring; ``law`` = (k, d, n, c) of :func:`normal_impulse`); mode
    (int64[c]) gets each point's mode (INACTIVE without a normal impulse, STICK below
    v_reg, SLIP_POS / SLIP_NEG at the friction bound). Returns the number of sweeps
    (max_sweeps + 1 if Gauss-Seidel did not converge)."""
    sweeps = max_sweeps + 1
    for sweep in range(max_sweeps):
        change = 0.0
        scale = 1e-300
        omega = 1.0 if 2 * sweep < max_sweeps else 0.5
        for i in range(c):
            pn = P[i] + omega * (_normal_law(W, r, gap, h, law, P, i, c) - P[i])
            change = max(change, abs(pn - P[i]))
            P[i] = pn
            pt = P[c + i] + omega * (_tangent_law(W, r, mu, v_reg, P, i, c, pn) - P[c + i])
            change = max(change, abs(pt - P[c + i]))
            P[c + i] = pt
            scale = max(scale, abs(pn))
        if change <= tol * scale:
            sweeps = sweep + 1
            break
    modes_of(P, mu, c, mode)
    return sweeps
