"""Hybrid (event-driven) integrator: modes, flows, guards and jumps, compiled end to end.

Organised like SimSect (Saranli, CSE-TR-436-00, sections 3.1-3.3): a *system* is four
njit functions passed as ARGUMENTS to the compiled :func:`integrate`:

``flow(t, x, mode, p, xdot) -> None``
    x float64[nx], mode int64[nm] (discrete state, e.g. per-contact state), p any numba
    value passed through untouched (model arrays, scratch, accumulators). Writes xdot.
    It must be a pure function of (t, x, mode, p): it is called at trial points out of
    chronological order (SimSect 3.5.4), so it may not switch anything itself.
``guards(t, x, mode, p, g) -> None``
    Writes g float64[ng]. Positive-inside: guard k *fires* when g[k] goes from > 0 to
    <= 0 (one direction only, SimSect's "boundary function" h - C > 0 inside a patch).
    A guard that does not apply in the current mode returns a constant: +1 or -1
    (see "Arming rule" for the difference).
``jump(t, x, mode, p, k) -> int``
    The transition of guard k, applied in place to x and mode. Returns 0 to continue or
    a nonzero code to terminate (a fall ...); the code is returned as ``user_code``.
``observe(t, x, mode, p) -> int``
    Called after every accepted step and after every jump (metric accumulation, fall
    checks); nonzero terminates with that ``user_code``.

Methods (``method`` setting)
    DOPRI5: adaptive Dormand-Prince 5(4), local extrapolation, error norm
    ``rms(err_i / (atol + rtol * max(|x_i|, |x_new_i|))) <= 1``, step factor
    ``0.9 err^(-1/5)`` clipped to [0.2, 10] (no growth right after a rejection),
    Hairer's starting step, Shampine's quartic dense output (4th order, the same
    coefficients as Hairer's DOPRI5 and SciPy's RK45).
    RK4: classic fixed step ``h``; between steps a cubic Hermite interpolant through
    (x_n, f_n, x_n+1, f_n+1) is the dense output.
    SYMPLECTIC_EULER: semi-implicit Euler on x = [q (n_pos), v (n_pos), extra]:
    v += h a; q += h v_new; any extra states (accumulators) by explicit Euler. Dense
    output: linear interpolation.

Events
    After every accepted step the guards are evaluated at the step end. Every *armed*
    guard with g <= 0 there is located on the step's dense output by the Illinois
    method to a time bracket of width <= ``event_tol`` (the returned event time is the
    right end of the bracket, where g <= 0: SimSect's STOP_TYPE_RIGHT). The earliest
    root wins (ties: the lowest guard index). The state at the event is then recomputed
    by one step of the method itself from the step start to the event time (so it
    carries the method's own order, not the interpolant's), the jump is applied and the
    integration restarts there (should round-off leave the guard > 0 at that state, the
    dense-output state is used instead: a jump always sees its guard <= 0). Fixed-step
    methods locate events the same way on their
    interpolants and then return to their grid t0 + i h with one partial step.
    Guards crossing and re-crossing within a single step are not seen (as in any
    sign-based event detection): bound ``h_max`` to resolve short excursions.

Arming rule (no refiring, no infinite loops)
    A guard is *armed* while its value at the last accepted point was > 0; only armed
    guards fire. The guard whose jump was just applied is disarmed whatever its
    post-jump value (it sits at ~0 within round-off) and re-arms once seen > 0: at the
    end of an accepted step, or, while the step ends with it still <= 0, on 16 interior
    points of the step's dense output (a short positive excursion such as a small
    bounce; DOPRI5 also shortens the step, down to max(event_tol, 1e-12) s, to find it).
    All other guards are re-evaluated right after a jump. One fires next, at the same
    time (lowest index first, each jump seeing the state the previous one left), if its
    crossing was located within event_tol of this event (simultaneous: at ~0 the sign of
    its value is round-off, so a jump must itself check whether it still applies, e.g.
    whether a contact still approaches), or if it was armed and the jump made it <= 0.
    A disarmed guard that is > 0 is armed. Guards <= 0 at t0 start disarmed.
    Mode-dependent guards: a guard that does not apply in the current mode returns a
    constant. +1 keeps it armed, so it fires at once if it is <= 0 right after a jump
    into a mode where it applies; -1 keeps it disarmed, so it must first be seen > 0 in
    such a mode (e.g. a heel-strike guard that starts negative at mid-stance).

Chattering guard
    More than ``max_transitions`` events within ``chatter_window`` seconds stops the run
    with status CHATTERING before the offending jump is applied (SimSect's
    maxChartCount counts transitions over the whole run; a sliding window lets long
    walking simulations run while catching Zeno behaviour). ``max_steps`` bounds the
    total number of loop iterations (accepted + rejected steps + events), so a run
    always ends.

Recording
    ``record_times`` (sorted, in [t0, t_end]) are sampled exactly at those times from
    the dense output of the step covering them (DOPRI5: 4th-order interpolant, error of
    the order of the tolerance). At an event time the post-jump state is recorded
    (right-continuous trajectory). Samples after an early stop stay NaN.

numba caching: functions that take dispatchers as arguments are NOT cached. numba 0.68
keys such a specialisation by the dispatchers' per-process identity, so an on-disk entry
is never reused by another process, and re-saving the index of a later process fails
with "ReferenceError: underlying object has vanished" (checked). So :func:`integrate`
and its helpers compile once per process and system (a few seconds); the systems' own
functions (flow, guards, ...) that take plain arrays are cached as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numba as nb
import numpy as np

# ----------------------------------------------------------------------------- constants
# methods
DOPRI5 = 0
RK4 = 1
SYMPLECTIC_EULER = 2
METHODS = {"dopri5": DOPRI5, "rk4": RK4, "symplectic_euler": SYMPLECTIC_EULER}

# status codes (>= 0: normal end, < 0: failure)
SUCCESS = 0  # reached t_end
TERMINATED = 1  # jump() or observe() returned a nonzero code (see user_code)
TERMINAL_EVENT = 2  # a terminal guard fired its requested number of times (jump applied)
CHATTERING = -1  # more than max_transitions events within chatter_window
MAX_STEPS = -2  # max_steps loop iterations used up
STEP_UNDERFLOW = -3  # adaptive step below 16 ulp of t (or a non-finite state)
NONFINITE = -4  # a fixed-step method produced NaN/inf

STATUS_NAMES = {
    SUCCESS: "SUCCESS",
    TERMINATED: "TERMINATED",
    TERMINAL_EVENT: "TERMINAL_EVENT",
    CHATTERING: "CHATTERING",
    MAX_STEPS: "MAX_STEPS",
    STEP_UNDERFLOW: "STEP_UNDERFLOW",
    NONFINITE: "NONFINITE",
}

# interior samples searched for the positive excursion of a guard right after its own jump
N_SAMPLES = 16

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


class Settings(NamedTuple):
    """Integrator settings (a numba-typed named tuple; SI units).

    method: DOPRI5 | RK4 | SYMPLECTIC_EULER. h: the fixed step (RK4, Euler) or the first
    step of DOPRI5 (<= 0: automatic). rtol/atol: DOPRI5 tolerances. h_max: step bound.
    event_tol: width of the bracket an event time is located to (s). max_steps: bound
    on loop iterations. max_transitions / chatter_window: chattering guard. n_pos:
    number of positions for SYMPLECTIC_EULER. max_events: length of the event log.
    """

    method: int = DOPRI5
    h: float = 0.0
    rtol: float = 1e-8
    atol: float = 1e-10
    h_max: float = np.inf
    event_tol: float = 1e-12
    max_steps: int = 10_000_000
    max_transitions: int = 100
    chatter_window: float = 1e-3
    n_pos: int = 0
    max_events: int = 1000


# ----------------------------------------------------------------------------- kernels
@nb.njit  # takes dispatchers: not cacheable (module docstring)
def _dopri_step(flow, t, x, mode, p, h, K, x_new):
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
def _dopri_error(x, x_new, K, h, rtol, atol):
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


@nb.njit  # takes dispatchers: not cacheable (module docstring)
def _rk4_step(flow, t, x, mode, p, h, K, x_new):
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
def _euler_step(t, x, h, K, x_new, n_pos):
    """Semi-implicit Euler from K[0] = f(t, x): v += h a; q += h v_new; rest explicit."""
    nx = x.shape[0]
    for i in range(n_pos):
        x_new[n_pos + i] = x[n_pos + i] + h * K[0, n_pos + i]
        x_new[i] = x[i] + h * x_new[n_pos + i]
    for i in range(2 * n_pos, nx):
        x_new[i] = x[i] + h * K[0, i]


@nb.njit(cache=True)
def _interpolate(method, x0, x1, K, h, s, out):
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


@nb.njit  # takes dispatchers: not cacheable (module docstring)
def _step(method, flow, t, x, mode, p, h, K, x_new, n_pos):
    if method == DOPRI5:
        _dopri_step(flow, t, x, mode, p, h, K, x_new)
    elif method == RK4:
        _rk4_step(flow, t, x, mode, p, h, K, x_new)
    else:
        _euler_step(t, x, h, K, x_new, n_pos)


@nb.njit  # takes dispatchers: not cacheable (module docstring)
def _locate(guards, method, k, t, h, x0, x1, K, mode, p, a, b, fa, fb, event_tol, xs, gs):
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
        _interpolate(method, x0, x1, K, h, c, xs)
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


@nb.njit  # takes dispatchers: not cacheable (module docstring)
def _search_excursion(guards, method, k, t, h, x0, x1, K, mode, p, g_end, xs, gs, out):
    """A guard disarmed by its own jump and still <= 0 at the step end: look for a
    positive excursion on N_SAMPLES interior points of the dense output. On success
    writes the crossing bracket (a, b, fa, fb) into out[0:4] and returns True."""
    a = -1.0
    fa = 0.0
    for m in range(1, N_SAMPLES):
        s = m / N_SAMPLES
        _interpolate(method, x0, x1, K, h, s, xs)
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


@nb.njit  # takes dispatchers: not cacheable (module docstring)
def _initial_step(flow, t, x, mode, p, f0, rtol, atol, t_span):
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


@nb.njit  # takes dispatchers: not cacheable (module docstring)
def integrate(flow, guards, jump, observe, x0, mode0, t0, t_end, p, record_times, terminal, settings):
    """Integrate a hybrid system from (t0, x0, mode0) to t_end (see the module docstring).

    Arguments: flow, guards, jump, observe: njit functions (module docstring); x0
    float64[nx]; mode0 int64[nm]; t0, t_end (s); p: any numba value; record_times
    float64[nr] sorted within [t0, t_end]; terminal int64[ng]: its LENGTH is the number of
    guards, terminal[k] > 0 stops the run (status TERMINAL_EVENT) right after the
    terminal[k]-th jump of guard k; settings: :class:`Settings`.

    Returns a tuple ``(status, user_code, t, x, mode, rec_x, rec_mode, n_rec, ev_t, ev_k,
    ev_x_before, ev_x_after, ev_mode_after, n_events, n_steps, n_rejected, n_flow)``:
    final time/state/mode; rec_x float64[nr, nx] and rec_mode int64[nr, nm] (rows >= n_rec
    unfilled: NaN / -1); the event log (first ``max_events`` events: time, guard index,
    state before and after the jump, mode after); counters.
    """
    method = settings.method
    rtol = settings.rtol
    atol = settings.atol
    h_max = settings.h_max
    event_tol = settings.event_tol
    n_pos = settings.n_pos
    nx = x0.shape[0]
    nm = mode0.shape[0]
    ng = terminal.shape[0]
    nr = record_times.shape[0]
    m_ev = settings.max_events

    x = x0.copy()
    mode = mode0.copy()
    t = t0
    x_new = np.empty(nx)
    x_evt = np.empty(nx)
    xs = np.empty(nx)
    K = np.zeros((7, nx))
    K_evt = np.zeros((7, nx))
    g_old = np.empty(ng)
    g_new = np.empty(ng)
    g_tmp = np.empty(ng)
    armed = np.zeros(ng, dtype=np.bool_)
    pending = np.zeros(ng, dtype=np.bool_)  # disarmed by its own jump, excursion not yet seen
    bracket = np.empty(4)
    s_root = np.full(ng, 2.0)  # located crossing (step fraction) of each guard in this step
    fired = np.zeros(ng, dtype=np.int64)

    rec_x = np.full((nr, nx), np.nan)
    rec_mode = np.full((nr, nm), -1, dtype=np.int64)
    n_rec = 0
    ev_t = np.full(m_ev, np.nan)
    ev_k = np.full(m_ev, -1, dtype=np.int64)
    ev_xb = np.full((m_ev, nx), np.nan)
    ev_xa = np.full((m_ev, nx), np.nan)
    ev_ma = np.full((m_ev, nm), -1, dtype=np.int64)
    ring = np.full(settings.max_transitions + 1, -np.inf)
    n_events = 0
    n_steps = 0
    n_rejected = 0
    n_flow = 0
    status = SUCCESS
    user_code = 0

    # samples at t0 itself (before anything happens)
    while n_rec < nr and record_times[n_rec] <= t0:
        rec_x[n_rec] = x
        rec_mode[n_rec] = mode
        n_rec += 1

    flow(t, x, mode, p, K[0])
    n_flow += 1
    guards(t, x, mode, p, g_old)
    for k in range(ng):
        armed[k] = g_old[k] > 0.0

    if method == DOPRI5:
        h = settings.h
        if h <= 0.0 and t_end > t0:
            h = _initial_step(flow, t, x, mode, p, K[0], rtol, atol, t_end - t0)
            n_flow += 1
    else:
        h = settings.h
    h_fixed = settings.h
    h_floor = max(event_tol, 1e-12)  # shortest step used to look for a post-jump excursion
    grid_i = 0  # fixed-step grid index of t (t = t0 + grid_i h on the grid)
    t_next = t0
    err_prev_rejected = False
    err = 0.0
    iters = 0
    done = False

    while not done:
        if t >= t_end:
            status = SUCCESS
            break
        iters += 1
        if iters > settings.max_steps:
            status = MAX_STEPS
            break
        # ---- step size
        if method == DOPRI5:
            h = min(h, h_max)
            if t + h >= t_end or t_end - (t + h) < 1e-12 * h:
                h = t_end - t
            if h <= 16.0 * np.finfo(np.float64).eps * max(abs(t), 1.0):
                status = STEP_UNDERFLOW
                break
        else:
            t_next = min(t0 + (grid_i + 1) * h_fixed, t_end)
            h = t_next - t
            if h <= 0.0:  # t already on the next grid point (after an event): advance grid
                grid_i += 1
                continue
        # ---- trial step
        _step(method, flow, t, x, mode, p, h, K, x_new, n_pos)
        if method == DOPRI5:
            n_flow += 6
            err = _dopri_error(x, x_new, K, h, rtol, atol)
            if not (err <= 1.0):  # also catches NaN
                n_rejected += 1
                if np.isfinite(err):
                    h *= max(0.2, 0.9 * err ** -0.2)
                else:
                    h *= 0.2
                err_prev_rejected = True
                continue
        else:
            n_flow += 4 if method == RK4 else 0
            finite = True
            for i in range(nx):
                if not np.isfinite(x_new[i]):
                    finite = False
            if not finite:
                status = NONFINITE
                break
        n_steps += 1
        t_step_end = t + h if method == DOPRI5 else t_next  # fixed steps stay on the grid
        # ---- events in this step?
        guards(t_step_end, x_new, mode, p, g_new)
        k_evt = -1
        s_evt = 2.0
        s_root[:] = 2.0
        have_f1 = False
        retry = False
        for k in range(ng):
            if g_new[k] > 0.0 or not (armed[k] or pending[k]):
                continue
            if method == RK4 and not have_f1:
                flow(t_step_end, x_new, mode, p, K[4])
                n_flow += 1
                have_f1 = True
            if armed[k]:
                bracket[0] = 0.0
                bracket[1] = 1.0
                bracket[2] = g_old[k]
                bracket[3] = g_new[k]
            elif not _search_excursion(guards, method, k, t, h, x, x_new, K, mode, p, g_new[k], xs, g_tmp, bracket):
                # no positive excursion seen: shorten the step (adaptive) or give up
                if method == DOPRI5 and h > h_floor:
                    retry = True
                else:
                    pending[k] = False
                continue
            s_k = _locate(guards, method, k, t, h, x, x_new, K, mode, p, bracket[0], bracket[1],
                          bracket[2], bracket[3], event_tol, xs, g_tmp)
            s_root[k] = s_k
            if s_k < s_evt:
                s_evt = s_k
                k_evt = k
        if retry and (k_evt < 0 or s_evt > 0.25):
            n_steps -= 1
            n_rejected += 1
            h *= 0.25
            err_prev_rejected = True
            continue
        # ---- samples strictly before the end of this segment
        t_seg_end = t + s_evt * h if k_evt >= 0 else t_step_end
        last_segment = k_evt < 0 and t_step_end >= t_end
        if n_rec < nr and (record_times[n_rec] < t_seg_end or last_segment):
            if method == RK4 and not have_f1:
                flow(t_step_end, x_new, mode, p, K[4])
                n_flow += 1
                have_f1 = True
            while n_rec < nr and (record_times[n_rec] < t_seg_end or (last_segment and record_times[n_rec] <= t_end)):
                s = (record_times[n_rec] - t) / h
                if s >= 1.0:
                    rec_x[n_rec] = x_new
                else:
                    _interpolate(method, x, x_new, K, h, s, xs)
                    rec_x[n_rec] = xs
                rec_mode[n_rec] = mode
                n_rec += 1

        if k_evt < 0:
            # ---- plain accepted step
            t = t_step_end
            x[:] = x_new
            if method == DOPRI5:
                K[0] = K[6]
                fac = 10.0 if not err_prev_rejected else 1.0
                h = h * min(fac, max(0.2, 0.9 * err ** -0.2)) if err > 0 else h * fac
            else:
                grid_i += 1
                flow(t, x, mode, p, K[0])
                n_flow += 1
            err_prev_rejected = False
            for k in range(ng):
                g_old[k] = g_new[k]
                if not armed[k] and g_new[k] > 0.0:
                    armed[k] = True
                    pending[k] = False
            code = observe(t, x, mode, p)
            if code != 0:
                status = TERMINATED
                user_code = code
                break
            continue

        # ---- event: state at the event by one step of the method itself; if round-off
        # leaves the guard > 0 there, the dense-output state (where it is <= 0) is used,
        # so a jump always sees its own guard <= 0
        h_evt = s_evt * h
        K_evt[0] = K[0]
        _step(method, flow, t, x, mode, p, h_evt, K_evt, x_evt, n_pos)
        n_flow += 6 if method == DOPRI5 else (3 if method == RK4 else 0)
        guards(t + h_evt, x_evt, mode, p, g_tmp)
        if g_tmp[k_evt] > 0.0:
            _interpolate(method, x, x_new, K, h, s_evt, x_evt)
        t = t + h_evt
        x[:] = x_evt
        if method == DOPRI5:
            err_prev_rejected = False
        k = k_evt
        # event loop: this event and any armed guard <= 0 right after a jump
        while k >= 0:
            n_events += 1
            iters += 1
            slot = (n_events - 1) % ring.shape[0]
            oldest = ring[(slot + 1) % ring.shape[0]]
            ring[slot] = t
            if n_events <= m_ev:
                ev_t[n_events - 1] = t
                ev_k[n_events - 1] = k
                ev_xb[n_events - 1] = x
            if n_events > settings.max_transitions and t - oldest <= settings.chatter_window:
                status = CHATTERING  # logged with x_after NaN: the jump is not applied
                user_code = k
                done = True
                break
            code = jump(t, x, mode, p, k)
            if n_events <= m_ev:
                ev_xa[n_events - 1] = x
                ev_ma[n_events - 1] = mode
            fired[k] += 1
            if code != 0:
                status = TERMINATED
                user_code = code
                done = True
                break
            code = observe(t, x, mode, p)
            if code != 0:
                status = TERMINATED
                user_code = code
                done = True
                break
            if terminal[k] > 0 and fired[k] >= terminal[k]:
                status = TERMINAL_EVENT
                user_code = k
                done = True
                break
            if iters > settings.max_steps:
                status = MAX_STEPS
                done = True
                break
            guards(t, x, mode, p, g_old)
            armed[k] = False
            pending[k] = True
            s_root[k] = 2.0
            k_next = -1
            for j in range(ng):
                if j == k:
                    continue
                # s_root 2.0 = no crossing located in this step: never "simultaneous", even
                # when the step is so short (h <= event_tol) that event_tol / h exceeds 1
                located = s_root[j] <= 1.0 and s_root[j] <= s_evt + event_tol / h
                if located or (armed[j] and g_old[j] <= 0.0):
                    if k_next < 0:
                        k_next = j  # crossed at the same time, or pushed through by the jump
                elif g_old[j] > 0.0 and not armed[j]:
                    armed[j] = True
                    pending[j] = False
            k = k_next
        if done:
            break
        flow(t, x, mode, p, K[0])
        n_flow += 1

    # samples at exactly t_end when the loop ended there without a last step (t0 == t_end)
    if status == SUCCESS:
        while n_rec < nr and record_times[n_rec] <= t_end:
            rec_x[n_rec] = x
            rec_mode[n_rec] = mode
            n_rec += 1
    return (status, user_code, t, x, mode, rec_x, rec_mode, n_rec, ev_t, ev_k, ev_xb, ev_xa, ev_ma,
            n_events, n_steps, n_rejected, n_flow)


@nb.njit(cache=True)
def observe_nothing(t, x, mode, p):
    """An ``observe`` that never stops the run."""
    return 0


@nb.njit(cache=True)
def no_guards(t, x, mode, p, g):
    """A ``guards`` for systems without events (use with a zero-length ``terminal``)."""
    return None


@nb.njit(cache=True)
def no_jump(t, x, mode, p, k):
    """A ``jump`` for systems without events."""
    return 0


# ----------------------------------------------------------------------------- Python API
class HybridSystem(NamedTuple):
    """The four njit functions of a hybrid system and its number of guards."""

    flow: Callable
    guards: Callable
    jump: Callable
    observe: Callable
    n_guards: int


@dataclass(frozen=True)
class EventLog:
    """Events in order: t (s) float64[ne], guard int64[ne], x_before/x_after float64[ne, nx],
    mode_after int64[ne, nm] (the event that stopped a run as CHATTERING is logged with
    x_after NaN: its jump was not applied). ``truncated``: more events than logged."""

    t: np.ndarray
    guard: np.ndarray
    x_before: np.ndarray
    x_after: np.ndarray
    mode_after: np.ndarray
    truncated: bool


@dataclass(frozen=True)
class HybridResult:
    """Outcome of :func:`solve_hybrid` (like SciPy's OdeResult).

    t, x, mode: where the run ended. record_times float64[nr], records float64[nr, nx],
    record_modes int64[nr, nm]: samples (rows after an early stop are NaN / -1).
    events: :class:`EventLog`. status: one of the module's status codes; message: one
    line explaining it; user_code: code from jump/observe (TERMINATED) or the guard index
    (TERMINAL_EVENT, CHATTERING). success: status >= 0.
    """

    t: float
    x: np.ndarray
    mode: np.ndarray
    record_times: np.ndarray
    records: np.ndarray
    record_modes: np.ndarray
    events: EventLog
    status: int
    message: str
    user_code: int
    n_steps: int
    n_rejected: int
    n_flow_evals: int

    @property
    def success(self) -> bool:
        return self.status >= 0


def settings(method: str = "dopri5", **kw) -> Settings:
    """Build :class:`Settings` from a method name and keyword overrides (checked)."""
    if method not in METHODS:
        raise ValueError(f"method: {method!r} is not known; expected one of {sorted(METHODS)}")
    s = Settings(method=METHODS[method], **kw)
    s = s._replace(
        h=float(s.h), rtol=float(s.rtol), atol=float(s.atol), h_max=float(s.h_max),
        event_tol=float(s.event_tol), chatter_window=float(s.chatter_window),
        max_steps=int(s.max_steps), max_transitions=int(s.max_transitions), n_pos=int(s.n_pos),
        max_events=int(s.max_events),
    )
    if s.method != DOPRI5 and not s.h > 0:
        raise ValueError(f"h: {s.h} for method {method}; expected a fixed step > 0")
    if s.method == SYMPLECTIC_EULER and s.n_pos <= 0:
        raise ValueError("n_pos: symplectic_euler needs the number of positions (x = [q, v, ...])")
    if s.max_transitions < 1 or s.max_events < 0:
        raise ValueError("max_transitions >= 1 and max_events >= 0 expected")
    return s


def status_message(status: int, user_code: int, t: float, s: Settings) -> str:
    """One line explaining a status code."""
    if status == SUCCESS:
        return "reached t_end"
    if status == TERMINATED:
        return f"stopped by the model (code {user_code}) at t={t:.9g} s"
    if status == TERMINAL_EVENT:
        return f"terminal guard {user_code} fired at t={t:.9g} s"
    if status == CHATTERING:
        return (f"chattering: more than {s.max_transitions} transitions within "
                f"{s.chatter_window:g} s (last: guard {user_code} at t={t:.9g} s); "
                "the jump was not applied")
    if status == MAX_STEPS:
        return f"max_steps={s.max_steps} loop iterations used up at t={t:.9g} s"
    if status == STEP_UNDERFLOW:
        return f"step size underflow (or non-finite state) at t={t:.9g} s"
    if status == NONFINITE:
        return f"non-finite state at t={t:.9g} s"
    return f"unknown status {status}"


def solve_hybrid(system: HybridSystem, x0, mode0, t_span: tuple[float, float], p, *,
                 record_times=None, terminal=None, method: str = "dopri5", **kw) -> HybridResult:
    """Integrate ``system`` over ``t_span`` from (x0, mode0); returns a :class:`HybridResult`.

    record_times: sorted sample times in t_span (default: none). terminal: int per guard
    (see :func:`integrate`). Remaining keywords are :class:`Settings` fields.
    """
    t0, t_end = float(t_span[0]), float(t_span[1])
    if not t_end >= t0:
        raise ValueError(f"t_span: {t_span}; expected t0 <= t_end")
    x0 = np.ascontiguousarray(x0, dtype=np.float64).copy()
    mode0 = np.atleast_1d(np.ascontiguousarray(mode0, dtype=np.int64)).copy()
    rt = np.zeros(0) if record_times is None else np.ascontiguousarray(record_times, dtype=np.float64)
    if rt.size and (np.any(np.diff(rt) < 0) or rt[0] < t0 or rt[-1] > t_end):
        raise ValueError("record_times: expected sorted times within t_span")
    term = np.zeros(system.n_guards, dtype=np.int64) if terminal is None else np.asarray(terminal, dtype=np.int64)
    if term.shape != (system.n_guards,):
        raise ValueError(f"terminal: expected {system.n_guards} integers, one per guard")
    s = settings(method, **kw)
    out = integrate(system.flow, system.guards, system.jump, system.observe, x0, mode0, t0, t_end,
                    p, rt, term, s)
    (status, user_code, t, x, mode, rec_x, rec_mode, n_rec, ev_t, ev_k, ev_xb, ev_xa, ev_ma,
     n_events, n_steps, n_rejected, n_flow) = out
    n_log = min(int(n_events), s.max_events)
    events = EventLog(ev_t[:n_log], ev_k[:n_log], ev_xb[:n_log], ev_xa[:n_log], ev_ma[:n_log],
                      truncated=int(n_events) > s.max_events)
    return HybridResult(
        t=float(t), x=x, mode=mode, record_times=rt, records=rec_x, record_modes=rec_mode,
        events=events, status=int(status), message=status_message(int(status), int(user_code), float(t), s),
        user_code=int(user_code), n_steps=int(n_steps), n_rejected=int(n_rejected), n_flow_evals=int(n_flow),
    )
