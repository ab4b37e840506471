"""Periodic control signals on a normalised phase ``t`` in [0, 1) (thesis 4.1.1, Table 4.1).

Three kinds, each a function of the gait phase only:

``CONSTANT``  f(t) = v
``STEP``      f(t) = v1 on the arc [t1, t2) of the phase circle, v2 elsewhere.
              The transition times are encoded differentially: parameters (t1, dt) in
              [0, 1]^2 give t2 = t1 + dt, taken modulo 1, so the "v1" arc may wrap through
              t = 0 (dt = 0: always v2, dt = 1: always v1). Thesis Table 5.2 lists exactly
              two transition parameters in (0, 1) per step signal; this is our reading.
``PPOLY``     piecewise monotone cubic Hermite through N points (x_i, y_i), closed
              periodically (the segment after the last point runs to x_0 + 1), hence
              f(0) = f(1) and f is C^1 on the circle. The x positions are encoded
              differentially with N + 1 parameters dx_j >= 0 (thesis 4.1.2):
              x_i = sum_{j<=i} dx_j / sum_{j<=N} dx_j, i = 0..N-1.

Monotone cubic Hermite (Fritsch and Carlson, 1980): on every interval the cubic is
monotone whenever the data are, so the signal never overshoots its data points. The knot
derivatives are Fritsch and Butland's weighted harmonic mean of the neighbouring secants
(zero at a local extremum or next to a flat interval) -- the choice of SciPy's
``PchipInterpolator`` and MATLAB's ``pchip``. It always lies inside the Fritsch--Carlson
monotonicity region (alpha, beta <= 3), so no separate limiting step is needed. Here the
neighbours are taken cyclically, which is what makes the closed signal periodic.

Compiled use: a set of signals is packed into a :class:`SignalTable` (plain arrays) and
evaluated inside njit code by :func:`table_value`; the knot derivatives are computed once
at decode time, not per evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numba import njit

CONSTANT = 0
STEP = 1
PPOLY = 2
KIND_NAMES = {"constant": CONSTANT, "step": STEP, "ppoly": PPOLY}


# --------------------------------------------------------------------------- compiled kernels
@njit(cache=True, _nrt=False)
def periodic_pchip_slopes(x: np.ndarray, y: np.ndarray, n: int, m: np.ndarray) -> None:
    """Knot derivatives of the closed monotone cubic through ``n`` points.

    x: float64[>=n] increasing knots in [0, 1] (repeats allowed: a zero-length gap makes a
    jump); y: float64[>=n] values; m: float64[>=n] written with dy/dt at each knot.
    """
    for k in range(n):
        if n == 1:
            m[k] = 0.0
            continue
        kp = k - 1 if k > 0 else n - 1
        kn = k + 1 if k < n - 1 else 0
        h_prev = x[k] - x[kp] if k > 0 else x[k] + 1.0 - x[kp]
        h_next = x[kn] - x[k] if k < n - 1 else x[kn] + 1.0 - x[k]
        if h_prev <= 0.0 or h_next <= 0.0:
            m[k] = 0.0
            continue
        d_prev = (y[k] - y[kp]) / h_prev
        d_next = (y[kn] - y[k]) / h_next
        if d_prev == 0.0 or d_next == 0.0 or (d_prev > 0.0) != (d_next > 0.0):
            m[k] = 0.0
            continue
        w_prev = 2.0 * h_next + h_prev
        w_next = h_next + 2.0 * h_prev
        m[k] = (w_prev + w_next) / (w_prev / d_prev + w_next / d_next)


@njit(cache=True, _nrt=False)
def ppoly_value(x: np.ndarray, y: np.ndarray, m: np.ndarray, n: int, phase: float) -> float:
    """Closed monotone cubic Hermite at ``phase`` (any real; wrapped to [0, 1))."""
    p = phase
    if p < 0.0 or p >= 1.0:     # (the floor only where it changes p: the controller's phases are in [0, 1))
        p -= np.floor(p)
    if n == 1:
        return y[0]
    k = n - 1
    for i in range(n):
        if x[i] <= p:
            k = i
        else:
            break
    if p < x[0]:  # before the first knot: the wrap-around segment, shifted one period back
        xa = x[n - 1] - 1.0
    else:
        xa = x[k]
    kn = k + 1 if k < n - 1 else 0
    h = x[kn] - x[k] if k < n - 1 else x[kn] + 1.0 - x[k]
    if h <= 0.0:
        return y[k]
    s = (p - xa) / h
    s2 = s * s
    s3 = s2 * s
    return ((2.0 * s3 - 3.0 * s2 + 1.0) * y[k] + (s3 - 2.0 * s2 + s) * h * m[k]
            + (-2.0 * s3 + 3.0 * s2) * y[kn] + (s3 - s2) * h * m[kn])


@njit(cache=True, _nrt=False)
def step_value(t1: float, dt: float, v1: float, v2: float, phase: float) -> float:
    """``v1`` on the phase arc [t1, t1 + dt) (mod 1), ``v2`` elsewhere."""
    u = phase - t1
    if u < 0.0 or u >= 1.0:
        u -= np.floor(u)
    return v1 if u < dt else v2


@njit(cache=True, _nrt=False)
def table_value(kind: np.ndarray, npts: np.ndarray, x: np.ndarray, y: np.ndarray,
                m: np.ndarray, i: int, phase: float) -> float:
    """Value of signal ``i`` of a packed table (see :class:`SignalTable`) at ``phase``."""
    k = kind[i]
    if k == CONSTANT:
        return y[i, 0]
    if k == STEP:
        return step_value(x[i, 0], x[i, 1], y[i, 0], y[i, 1], phase)
    return ppoly_value(x[i], y[i], m[i], npts[i], phase)


@njit(cache=True, _nrt=False)
def _table_values(kind, npts, x, y, m, i, phases, out):
    for j in range(phases.shape[0]):
        out[j] = table_value(kind, npts, x, y, m, i, phases[j])


# --------------------------------------------------------------------------- decoding
def differential_knots(dx: Sequence[float]) -> np.ndarray:
    """x_i = sum_{j<=i} dx_j / sum_j dx_j for i = 0..len(dx)-2 (thesis 4.1.2).

    ``dx``: N + 1 non-negative numbers -> N knots in [0, 1]. All zero -> equally spaced
    (the limit of equal dx), so every parameter vector decodes to a valid signal.
    """
    d = np.asarray(dx, dtype=np.float64)
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"dx: need N + 1 >= 2 values, got shape {d.shape}")
    d = np.maximum(d, 0.0)
    total = d.sum()
    if not total > 0.0:
        d = np.ones_like(d)
        total = d.sum()
    return np.minimum(np.cumsum(d[:-1]) / total, 1.0)


@dataclass(frozen=True)
class Signal:
    """One decoded periodic signal.

    kind: CONSTANT | STEP | PPOLY. Arrays (float64):
      CONSTANT: x = [], y = [v], slopes = [0]
      STEP:     x = [t1, dt], y = [v1, v2], slopes = [0, 0]
      PPOLY:    x = knots[N] in [0, 1], y = values[N], slopes = dy/dphase at the knots[N]
    """

    kind: int
    x: np.ndarray
    y: np.ndarray
    slopes: np.ndarray

    @property
    def n_points(self) -> int:
        return int(self.y.size)

    def __call__(self, phase) -> np.ndarray:
        """Values at ``phase`` (array-like, any real: wrapped to [0, 1))."""
        table = SignalTable.pack([self])
        phases = np.atleast_1d(np.asarray(phase, dtype=np.float64)).ravel()
        out = np.empty_like(phases)
        _table_values(table.kind, table.npts, table.x, table.y, table.m, 0, phases, out)
        return out.reshape(np.shape(phase))


def constant(value: float) -> Signal:
    return Signal(CONSTANT, np.zeros(0), np.array([float(value)]), np.zeros(1))


def step(t1: float, dt: float, v1: float, v2: float) -> Signal:
    """Step signal; ``t1`` and ``dt`` are clipped to [0, 1]."""
    x = np.clip(np.array([t1, dt], dtype=np.float64), 0.0, 1.0)
    return Signal(STEP, x, np.array([float(v1), float(v2)]), np.zeros(2))


def ppoly(dx: Sequence[float], y: Sequence[float]) -> Signal:
    """Closed monotone cubic through len(y) points with differential x encoding ``dx``
    (len(dx) == len(y) + 1)."""
    yv = np.asarray(y, dtype=np.float64)
    if len(dx) != yv.size + 1:
        raise ValueError(f"ppoly: need len(dx) == len(y) + 1, got {len(dx)} and {yv.size}")
    x = differential_knots(dx)
    m = np.zeros_like(yv)
    periodic_pchip_slopes(x, yv, yv.size, m)
    return Signal(PPOLY, x, yv, m)


def n_parameters(kind: int, n_points: int = 0) -> int:
    """Number of optimised numbers of a signal of this kind (ppoly: 2N + 1)."""
    return {CONSTANT: 1, STEP: 4, PPOLY: 2 * n_points + 1}[kind]


def parameter_names(prefix: str, kind: int, n_points: int = 0) -> list[str]:
    """Stable names of a signal's parameters, in decode order.

    constant: ``prefix.v``; step: ``prefix.t1, prefix.dt, prefix.v1, prefix.v2``;
    ppoly: ``prefix.dx0..dxN, prefix.y0..y{N-1}``.
    """
    if kind == CONSTANT:
        return [f"{prefix}.v"]
    if kind == STEP:
        return [f"{prefix}.{s}" for s in ("t1", "dt", "v1", "v2")]
    if kind == PPOLY:
        return ([f"{prefix}.dx{j}" for j in range(n_points + 1)]
                + [f"{prefix}.y{j}" for j in range(n_points)])
    raise ValueError(f"unknown signal kind {kind}")


def decode(kind: int, values: Sequence[float], n_points: int = 0) -> Signal:
    """Signal from its parameters in :func:`parameter_names` order."""
    v = [float(a) for a in values]
    if len(v) != n_parameters(kind, n_points):
        raise ValueError(f"signal kind {kind}: expected {n_parameters(kind, n_points)} "
                         f"parameters, got {len(v)}")
    if kind == CONSTANT:
        return constant(v[0])
    if kind == STEP:
        return step(*v)
    return ppoly(v[: n_points + 1], v[n_points + 1:])


@dataclass(frozen=True)
class SignalTable:
    """Signals packed into arrays for compiled code (row i = signal i).

    kind: int64[s]; npts: int64[s]; x, y, m: float64[s, P] with P the largest point count
    (unused entries zero). Evaluate with ``table_value(kind, npts, x, y, m, i, phase)``.
    """

    kind: np.ndarray
    npts: np.ndarray
    x: np.ndarray
    y: np.ndarray
    m: np.ndarray

    @staticmethod
    def pack(signals: Sequence[Signal]) -> "SignalTable":
        s = len(signals)
        width = max([2] + [sig.y.size for sig in signals])
        kind = np.zeros(s, np.int64)
        npts = np.zeros(s, np.int64)
        x = np.zeros((s, width))
        y = np.zeros((s, width))
        m = np.zeros((s, width))
        for i, sig in enumerate(signals):
            kind[i] = sig.kind
            npts[i] = sig.y.size
            x[i, : sig.x.size] = sig.x
            y[i, : sig.y.size] = sig.y
            m[i, : sig.slopes.size] = sig.slopes
        return SignalTable(kind, npts, x, y, m)

    def arrays(self) -> tuple:
        """(kind, npts, x, y, m) for compiled code."""
        return (self.kind, self.npts, self.x, self.y, self.m)
