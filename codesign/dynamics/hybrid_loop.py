"""The hybrid integrator's main loop: steps, events, jumps, recording (compiled).

:func:`integrate` implements the contract, step control, event handling, arming rule,
chattering guard and recording described in :mod:`codesign.dynamics.hybrid` (which also
has the Python API, :func:`codesign.dynamics.hybrid.solve_hybrid`). The steps and dense
output come from :mod:`codesign.dynamics.hybrid_steppers`, event location from
:mod:`codesign.dynamics.hybrid_events`. It returns an :class:`Integration` record.

Pieces of the loop: :func:`find_event` (the earliest guard crossing in a trial step),
:func:`record_samples` (samples from a step's dense output), :func:`apply_events` (the
jumps at one instant, with the arming rule and the chattering guard); the per-guard
bookkeeping travels in a :class:`GuardState`.

:func:`integrate` takes the system's njit functions as arguments, so it is compiled once per
process and system; :func:`codesign.dynamics.specialize.specialize` rewrites it (and the
steppers and event location) into a disk-cacheable copy for one system.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from codesign.dynamics.hybrid_events import locate, search_excursion
from codesign.dynamics.hybrid_steppers import (DOPRI5, RK4, dopri_error, initial_step,
                                               interpolate, step)

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


class Settings(NamedTuple):
    """Integrator settings (a numba-typed named tuple; SI units).

    method: DOPRI5 | RK4 | SYMPLECTIC_EULER (:mod:`hybrid_steppers`). h: the fixed step
    (RK4, Euler) or the first step of DOPRI5 (<= 0: automatic). rtol/atol: DOPRI5
    tolerances. h_max: step bound. event_tol: width of the bracket an event time is
    located to (s). max_steps: bound on loop iterations. max_transitions /
    chatter_window: chattering guard. n_pos: number of positions for SYMPLECTIC_EULER.
    max_events: length of the event log.
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


class Integration(NamedTuple):
    """What :func:`integrate` returns (a numba named tuple; SI units; fields in this order,
    so it also unpacks like the plain tuple it replaces).

    status: a status code of this module; user_code: the code from jump/observe
    (TERMINATED) or the guard index (TERMINAL_EVENT, CHATTERING); t (s), x float64[nx],
    mode int64[nm]: where the run ended. rec_x float64[nr, nx], rec_mode int64[nr, nm]:
    the samples at ``record_times`` (rows >= n_rec unfilled: NaN / -1). Event log of the
    first ``Settings.max_events`` events: ev_t float64[me] (s), ev_k int64[me] (guard),
    ev_x_before / ev_x_after float64[me, nx], ev_mode_after int64[me, nm]. Counters:
    n_events (all events, logged or not), n_steps (accepted), n_rejected, n_flow (flow
    evaluations).
    """

    status: int
    user_code: int
    t: float
    x: np.ndarray
    mode: np.ndarray
    rec_x: np.ndarray
    rec_mode: np.ndarray
    n_rec: int
    ev_t: np.ndarray
    ev_k: np.ndarray
    ev_x_before: np.ndarray
    ev_x_after: np.ndarray
    ev_mode_after: np.ndarray
    n_events: int
    n_steps: int
    n_rejected: int
    n_flow: int


class GuardState(NamedTuple):
    """Per-guard bookkeeping of :func:`integrate` (arrays of length ng = number of guards).

    g_old: values at the last accepted point (or right after the last jump); g_new: values
    at the end of the trial step; g_tmp: scratch; armed / pending (bool): the arming rule
    (:mod:`codesign.dynamics.hybrid`; pending = disarmed by its own jump, excursion not yet
    seen); s_root: located crossing of each guard in this step as a step fraction (2.0:
    none); fired (int64): jumps applied per guard; bracket float64[4]: (a, b, fa, fb) of
    the crossing being located.
    """

    g_old: np.ndarray
    g_new: np.ndarray
    g_tmp: np.ndarray
    armed: np.ndarray
    pending: np.ndarray
    s_root: np.ndarray
    fired: np.ndarray
    bracket: np.ndarray


@nb.njit(cache=True)
def guard_state(ng):
    """A fresh :class:`GuardState` for ng guards (nothing armed, no crossing located)."""
    return GuardState(np.empty(ng), np.empty(ng), np.empty(ng), np.zeros(ng, dtype=np.bool_),
                      np.zeros(ng, dtype=np.bool_), np.full(ng, 2.0), np.zeros(ng, dtype=np.int64),
                      np.empty(4))


@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def find_event(flow, guards, method, t, h, t_step_end, x, x_new, K, mode, p, gs, event_tol,
               h_floor, xs):
    """The earliest guard crossing in the trial step [t, t + h] from x to x_new (guards at
    its end already in gs.g_new): every armed guard <= 0 at the end, and every pending one
    with a positive excursion inside, is located on the dense output (gs.s_root[k]).

    Returns (k_evt, s_evt, retry, have_f1, n_flow): the guard (-1: none) and step fraction
    of the earliest crossing (ties: lowest index); retry: a pending guard showed no
    excursion and DOPRI5 may shorten the step (h > h_floor) to look again; have_f1: RK4's
    K[4] = f(t_step_end, x_new) was evaluated (n_flow: flow evaluations made here).
    """
    ng = gs.g_new.shape[0]
    k_evt = -1
    s_evt = 2.0
    gs.s_root[:] = 2.0
    have_f1 = False
    retry = False
    n_flow = 0
    for k in range(ng):
        if gs.g_new[k] > 0.0 or not (gs.armed[k] or gs.pending[k]):
            continue
        if method == RK4 and not have_f1:
            flow(t_step_end, x_new, mode, p, K[4])
            n_flow += 1
            have_f1 = True
        if gs.armed[k]:
            gs.bracket[0] = 0.0
            gs.bracket[1] = 1.0
            gs.bracket[2] = gs.g_old[k]
            gs.bracket[3] = gs.g_new[k]
        elif not search_excursion(guards, method, k, t, h, x, x_new, K, mode, p, gs.g_new[k], xs,
                                  gs.g_tmp, gs.bracket):
            # no positive excursion seen: shorten the step (adaptive) or give up
            if method == DOPRI5 and h > h_floor:
                retry = True
            else:
                gs.pending[k] = False
            continue
        s_k = locate(guards, method, k, t, h, x, x_new, K, mode, p, gs.bracket[0], gs.bracket[1],
                     gs.bracket[2], gs.bracket[3], event_tol, xs, gs.g_tmp)
        gs.s_root[k] = s_k
        if s_k < s_evt:
            s_evt = s_k
            k_evt = k
    return k_evt, s_evt, retry, have_f1, n_flow


@nb.njit(cache=True)
def record_samples(method, t, h, x, x_new, K, mode, record_times, t_seg_end, last_segment, t_end,
                   rec_x, rec_mode, n_rec, xs):
    """Samples of the step [t, t + h] (x to x_new, stages K) strictly before t_seg_end (and up
    to t_end inclusive on the run's last segment) from the dense output into rec_x, rec_mode
    (the mode of the step). Returns the new number of samples n_rec."""
    nr = record_times.shape[0]
    while n_rec < nr and (record_times[n_rec] < t_seg_end or (last_segment and record_times[n_rec] <= t_end)):
        s = (record_times[n_rec] - t) / h
        if s >= 1.0:
            rec_x[n_rec] = x_new
        else:
            interpolate(method, x, x_new, K, h, s, xs)
            rec_x[n_rec] = xs
        rec_mode[n_rec] = mode
        n_rec += 1
    return n_rec


@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def apply_events(jump, observe, guards, k, t, x, mode, p, s_evt, h, event_tol, terminal, settings,
                 gs, ring, ev_t, ev_k, ev_xb, ev_xa, ev_ma, n_events, iters):
    """The jump of guard k at time t (x, mode in place), then, at the same instant, of every
    guard the arming rule makes fire next (crossed within event_tol of this event, or armed
    and pushed <= 0 by the jump; lowest index first), each logged in the event arrays
    (first ``settings.max_events``) and counted in ring (the chattering window).

    Returns (status, user_code, done, n_events, iters): done is True when the run must
    stop with that status (CHATTERING, TERMINATED, TERMINAL_EVENT, MAX_STEPS).
    """
    ng = terminal.shape[0]
    m_ev = settings.max_events
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
            # logged with x_after NaN: the jump is not applied
            return CHATTERING, k, True, n_events, iters
        code = jump(t, x, mode, p, k)
        if n_events <= m_ev:
            ev_xa[n_events - 1] = x
            ev_ma[n_events - 1] = mode
        gs.fired[k] += 1
        if code != 0:
            return TERMINATED, code, True, n_events, iters
        code = observe(t, x, mode, p)
        if code != 0:
            return TERMINATED, code, True, n_events, iters
        if terminal[k] > 0 and gs.fired[k] >= terminal[k]:
            return TERMINAL_EVENT, k, True, n_events, iters
        if iters > settings.max_steps:
            return MAX_STEPS, 0, True, n_events, iters
        guards(t, x, mode, p, gs.g_old)
        gs.armed[k] = False
        gs.pending[k] = True
        gs.s_root[k] = 2.0
        k_next = -1
        for j in range(ng):
            if j == k:
                continue
            # s_root 2.0 = no crossing located in this step: never "simultaneous", even
            # when the step is so short (h <= event_tol) that event_tol / h exceeds 1
            located = gs.s_root[j] <= 1.0 and gs.s_root[j] <= s_evt + event_tol / h
            if located or (gs.armed[j] and gs.g_old[j] <= 0.0):
                if k_next < 0:
                    k_next = j  # crossed at the same time, or pushed through by the jump
            elif gs.g_old[j] > 0.0 and not gs.armed[j]:
                gs.armed[j] = True
                gs.pending[j] = False
        k = k_next
    return SUCCESS, 0, False, n_events, iters


@nb.njit  # takes dispatchers: not cacheable (codesign.dynamics.hybrid docstring)
def integrate(flow, guards, jump, observe, x0, mode0, t0, t_end, p, record_times, terminal, settings):
    """Integrate a hybrid system from (t0, x0, mode0) to t_end (:mod:`codesign.dynamics.hybrid`).

    Arguments: flow, guards, jump, observe: njit functions (the hybrid contract); x0
    float64[nx]; mode0 int64[nm]; t0, t_end (s); p: any numba value; record_times
    float64[nr] sorted within [t0, t_end]; terminal int64[ng]: its LENGTH is the number of
    guards, terminal[k] > 0 stops the run (status TERMINAL_EVENT) right after the
    terminal[k]-th jump of guard k; settings: :class:`Settings`.

    Returns an :class:`Integration` record: final time/state/mode, the samples at
    record_times, the event log and the counters.
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
    gs = guard_state(ng)
    g_old = gs.g_old
    g_new = gs.g_new
    g_tmp = gs.g_tmp
    armed = gs.armed
    pending = gs.pending

    rec_x = np.full((nr, nx), np.nan)
    rec_mode = np.full((nr, nm), -1, dtype=np.int64)
    n_rec = 0
    ev_t = np.full(m_ev, np.nan)
    ev_k = np.full(m_ev, -1, dtype=np.int64)
    ev_xb = np.full((m_ev, nx), np.nan)
    ev_xa = np.full((m_ev, nx), np.nan)
    ev_ma = np.full((m_ev, nm), -1, dtype=np.int64)
    ring = np.full(settings.max_transitions + 1, -np.inf)
    n_events = np.int64(0)   # not a literal: apply_events compiles once (for int64), not twice
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
            h = initial_step(flow, t, x, mode, p, K[0], rtol, atol, t_end - t0)
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
        step(method, flow, t, x, mode, p, h, K, x_new, n_pos)
        if method == DOPRI5:
            n_flow += 6
            err = dopri_error(x, x_new, K, h, rtol, atol)
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
        k_evt, s_evt, retry, have_f1, n_f = find_event(flow, guards, method, t, h, t_step_end, x,
                                                       x_new, K, mode, p, gs, event_tol, h_floor, xs)
        n_flow += n_f
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
            n_rec = record_samples(method, t, h, x, x_new, K, mode, record_times, t_seg_end,
                                   last_segment, t_end, rec_x, rec_mode, n_rec, xs)

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
        step(method, flow, t, x, mode, p, h_evt, K_evt, x_evt, n_pos)
        n_flow += 6 if method == DOPRI5 else (3 if method == RK4 else 0)
        guards(t + h_evt, x_evt, mode, p, g_tmp)
        if g_tmp[k_evt] > 0.0:
            interpolate(method, x, x_new, K, h, s_evt, x_evt)
        t = t + h_evt
        x[:] = x_evt
        if method == DOPRI5:
            err_prev_rejected = False
        # this event and any guard that fires at the same instant after it
        status, user_code, done, n_events, iters = apply_events(
            jump, observe, guards, k_evt, t, x, mode, p, s_evt, h, event_tol, terminal, settings,
            gs, ring, ev_t, ev_k, ev_xb, ev_xa, ev_ma, n_events, iters)
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
    return Integration(status, user_code, t, x, mode, rec_x, rec_mode, n_rec, ev_t, ev_k, ev_xb,
                       ev_xa, ev_ma, n_events, n_steps, n_rejected, n_flow)
