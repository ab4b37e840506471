"""One step of the hybrid integrator's ODE methods and their dense output (compiled).

The methods of :mod:`codesign.dynamics.hybrid` (``Settings.method``); x float64[nx] is
the continuous state, ``K`` float64[7, nx] the stage derivatives (K[0] = f(t, x) on entry),
``h`` the step (s), ``flow(t, x, mode, p, xdot)`` the system's flow.

DOPRI5 (:func:`dopri_step`, :func:`dopri_error`, :func:`initial_step`)
    Dormand-Prince 5(4) with local extrapolation (the 5th-order solution is kept); error
    norm ``rms(err_i / (atol + rtol * max(|x_i|, |x_new_i|)))``; Hairer's starting step;
    Shampine's quartic dense output (the coefficients of Hairer's DOPRI5 and SciPy's RK45).
RK4 (:func:`rk4_step`)
    Classic fixed step; dense output the cubic Hermite interpolant through
    (x_n, f_n = K[0], x_n+1, f_n+1 = K[4]).
SYMPLECTIC_EULER (:func:`euler_step`)
    Semi-implicit Euler on x = [q (n_pos), v (n_pos), extra]: v += h a; q += h v_new;
    extra states by explicit Euler. Dense output: linear.

Functions taking ``flow`` are not cached on disk (a dispatcher argument is keyed per
process; :mod:`codesign.dynamics.specialize` makes a cacheable copy per system).
"""

from __future__ import annotations

import numba as nb
import numpy as np

# methods
DOPRI5 = 0
RK4 = 1
SYMPLECTIC_EULER = 2
METHODS = {"dopri5": DOPRI5, "rk4": RK4, "symplectic_euler": SYMPLECTIC_EULER}

# Dormand-Prince 5(4) tableau (Dormand & Prince 1980; Hairer, Norsett & Wanner, Table II.5.2)
_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [1 / 5, 0.0, 0.0, 0.0, 0.0, 0.0],
        [3 / 40, 9 / 40, 0.0, 0.0, 0.0, 0.0],
        [44 / 45, -56 / 15, 32 / 9, 0.0, 0.0, 0.0],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0.0, 0.0],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0.0],
        [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
    ]
)
# error weights: (5th-order b) - (4th-order b-hat), stage 7 = f(t+h, x_new) (FSAL)
_E = np.array(
    [71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40]
)
# Shampine's dense output: x(t + s h) = x + h sum_i K_i (P_i1 s + P_i2 s^2 + P_i3 s^3 + P_i4 s^4)
_P = np.array(
    [
        [1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
        [0.0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
        [0.0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
        [0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
        [0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423],
    ]
)


@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def dopri_step(flow, t, x, mode, p, h, K, x_new):
    """One Dormand-Prince step from (t, x) with K[0] = f(t, x) given: fills K[1..6]
    (K[6] = f(t+h, x_new), first-same-as-last) and the 5th-order x_new."""
    nx = x.shape[0]
    xs = np.empty(nx)
    for s in range(1, 7):
        for i in range(nx):
            acc = 0.0
            for j in range(s):
                acc += _A[s, j] * K[j, i]
            xs[i] = x[i] + h * acc
        if s == 6:
            x_new[:] = xs
        flow(t + _C[s] * h, xs, mode, p, K[s])

@nb.njit(cache=True)
def dopri_error(x, x_new, K, h, rtol, atol):
    nx = x.shape[0]
    acc = 0.0
    for i in range(nx):
        e = 0.0
        for j in range(7):
            e += _E[j] * K[j, i]
        e *= h
        sc = atol + rtol * max(abs(x[i]), abs(x_new[i]))
        acc += (e / sc) ** 2
    return np.sqrt(acc / max(nx, 1))

@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def rk4_step(flow, t, x, mode, p, h, K, x_new):
    """Classic RK4 with K[0] = f(t, x) given; uses K[1..3] as scratch."""
    nx = x.shape[0]
    xs = np.empty(nx)
    for i in range(nx):
        xs[i] = x[i] + 0.5 * h * K[0, i]
    flow(t + 0.5 * h, xs, mode, p, K[1])
    for i in range(nx):
        xs[i] = x[i] + 0.5 * h * K[1, i]
    flow(t + 0.5 * h, xs, mode, p, K[2])
    for i in range(nx):
        xs[i] = x[i] + h * K[2, i]
    flow(t + h, xs, mode, p, K[3])
    for i in range(nx):
        x_new[i] = x[i] + h / 6.0 * (K[0, i] + 2.0 * K[1, i] + 2.0 * K[2, i] + K[3, i])

@nb.njit(cache=True)
def euler_step(t, x, h, K, x_new, n_pos):
    """Semi-implicit Euler from K[0] = f(t, x): v += h a; q += h v_new; rest explicit."""
    nx = x.shape[0]
    for i in range(n_pos):
        x_new[n_pos + i] = x[n_pos + i] + h * K[0, n_pos + i]
        x_new[i] = x[i] + h * x_new[n_pos + i]
    for i in range(2 * n_pos, nx):
        x_new[i] = x[i] + h * K[0, i]

@nb.njit(cache=True)
def interpolate(method, x0, x1, K, h, s, out):
    """Dense output at t0 + s h, s in [0, 1] (DOPRI5: quartic; RK4: cubic Hermite with
    K[0] = f0 and K[4] = f1; Euler: linear)."""
    nx = x0.shape[0]
    if method == DOPRI5:
        b = np.empty(7)
        for j in range(7):
            b[j] = s * (_P[j, 0] + s * (_P[j, 1] + s * (_P[j, 2] + s * _P[j, 3])))
        for i in range(nx):
            acc = 0.0
            for j in range(7):
                acc += b[j] * K[j, i]
            out[i] = x0[i] + h * acc
    elif method == RK4:
        h00 = (1.0 + 2.0 * s) * (1.0 - s) ** 2
        h10 = s * (1.0 - s) ** 2
        h01 = s * s * (3.0 - 2.0 * s)
        h11 = s * s * (s - 1.0)
        for i in range(nx):
            out[i] = h00 * x0[i] + h10 * h * K[0, i] + h01 * x1[i] + h11 * h * K[4, i]
    else:
        for i in range(nx):
            out[i] = (1.0 - s) * x0[i] + s * x1[i]

@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def step(method, flow, t, x, mode, p, h, K, x_new, n_pos):
    if method == DOPRI5:
        dopri_step(flow, t, x, mode, p, h, K, x_new)
    elif method == RK4:
        rk4_step(flow, t, x, mode, p, h, K, x_new)
    else:
        euler_step(t, x, h, K, x_new, n_pos)

@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def initial_step(flow, t, x, mode, p, f0, rtol, atol, t_span):
    """Hairer, Norsett & Wanner (II.4) starting step for a 5th-order method."""
    nx = x.shape[0]
    d0 = 0.0
    d1 = 0.0
    for i in range(nx):
        sc = atol + rtol * abs(x[i])
        d0 += (x[i] / sc) ** 2
        d1 += (f0[i] / sc) ** 2
    d0 = np.sqrt(d0 / nx)
    d1 = np.sqrt(d1 / nx)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h0 = min(h0, t_span)
    x1 = x + h0 * f0
    f1 = np.empty(nx)
    flow(t + h0, x1, mode, p, f1)
    d2 = 0.0
    for i in range(nx):
        sc = atol + rtol * abs(x[i])
        d2 += ((f1[i] - f0[i]) / sc) ** 2
    d2 = np.sqrt(d2 / nx) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / 5.0)
    return min(100.0 * h0, h1, t_span)
