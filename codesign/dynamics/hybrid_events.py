"""Event location of the hybrid integrator on a step's dense output (compiled).

:func:`locate` brackets the root of one guard by the Illinois method (a regula falsi that
halves the retained end's value after two moves on the same side; plain bisection after
100 iterations) until the bracket is at most ``event_tol`` seconds wide, and returns its
right end, where the guard is <= 0 (SimSect's STOP_TYPE_RIGHT).
:func:`search_excursion` looks, on ``N_SAMPLES`` interior points of the step, for the
positive excursion of a guard that its own jump left <= 0 (the arming rule of
:mod:`codesign.dynamics.hybrid`).

Arguments shared by both: ``guards(t, x, mode, p, g)`` the system's guards; ``method``
the integration method (:mod:`codesign.dynamics.hybrid_steppers`); ``k`` the guard index;
the step [t, t + h] (s) from x0 to x1 float64[nx] with stages K float64[7, nx];
xs float64[nx] and gs float64[ng] scratch. Positions within the step are fractions
s in [0, 1] (time t + s h). Not cached on disk (they take a dispatcher).
"""

from __future__ import annotations

import numba as nb

from codesign.dynamics.hybrid_steppers import interpolate

# interior samples searched for the positive excursion of a guard right after its own jump
N_SAMPLES = 16


@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def locate(guards, method, k, t, h, x0, x1, K, mode, p, a, b, fa, fb, event_tol, xs, gs):
    """Illinois root of guard k on the dense output of the step [t, t+h].

    a < b are step fractions with fa = g_k(t + a h) > 0 and fb = g_k(t + b h) <= 0.
    Returns the right end b of a bracket [a, b] with (b - a) h <= event_tol (or no
    representable progress left) and g_k(t + b h) <= 0.
    """
    tol = event_tol / h if h > 0 else 1.0
    side = 0
    for it in range(200):
        if b - a <= tol:
            break
        if it < 100:
            c = b - fb * (b - a) / (fb - fa)
            if not (c > a and c < b):
                c = 0.5 * (a + b)
        else:  # safeguard: plain bisection
            c = 0.5 * (a + b)
        if c <= a or c >= b:
            break
        interpolate(method, x0, x1, K, h, c, xs)
        guards(t + c * h, xs, mode, p, gs)
        fc = gs[k]
        if fc <= 0.0:
            b, fb = c, fc
            if side == -1:
                fa *= 0.5
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb *= 0.5
            side = 1
    return b


@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def search_excursion(guards, method, k, t, h, x0, x1, K, mode, p, g_end, xs, gs, out):
    """A guard disarmed by its own jump and still <= 0 at the step end: look for a
    positive excursion on N_SAMPLES interior points of the dense output. On success
    writes the crossing bracket (a, b, fa, fb) into out[0:4] and returns True."""
    a = -1.0
    fa = 0.0
    for m in range(1, N_SAMPLES):
        s = m / N_SAMPLES
        interpolate(method, x0, x1, K, h, s, xs)
        guards(t + s * h, xs, mode, p, gs)
        if a < 0.0:
            if gs[k] > 0.0:
                a = s
                fa = gs[k]
        elif gs[k] <= 0.0:
            out[0] = a
            out[1] = s
            out[2] = fa
            out[3] = gs[k]
            return True
    if a < 0.0:
        return False
    out[0] = a
    out[1] = 1.0
    out[2] = fa
    out[3] = g_end
    return True
