"""Hybrid (event-driven) integrator: modes, flows, guards and jumps, compiled end to end.

This module is the contract and the Python API (:func:`solve_hybrid`, :func:`settings`);
the compiled pieces live one algorithm per module and are re-exported here:

* :mod:`codesign.dynamics.hybrid_steppers` -- DOPRI5 / RK4 / symplectic Euler steps, dense
  output, starting step;
* :mod:`codesign.dynamics.hybrid_events` -- event location (Illinois) and the post-jump
  excursion search;
* :mod:`codesign.dynamics.hybrid_loop` -- :func:`integrate` (the main loop), its
  :class:`Settings`, its result record :class:`Integration` and the status codes.

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
:func:`codesign.dynamics.specialize.specialize` gives a disk-cacheable integrator for one
system (what production rollouts use).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numba as nb
import numpy as np

from codesign.dynamics.hybrid_loop import (  # noqa: F401  (the integrator's API)
    CHATTERING, MAX_STEPS, NONFINITE, STATUS_NAMES, STEP_UNDERFLOW, SUCCESS, TERMINAL_EVENT,
    TERMINATED, Integration, Settings, integrate,
)
from codesign.dynamics.hybrid_steppers import DOPRI5, METHODS, RK4, SYMPLECTIC_EULER  # noqa: F401


@nb.njit  # its p may hold dispatchers (a system's parameters): not cacheable, see above
def observe_nothing(t, x, mode, p):
    """An ``observe`` that never stops the run."""
    return 0


@nb.njit  # its p may hold dispatchers (a system's parameters): not cacheable, see above
def no_guards(t, x, mode, p, g):
    """A ``guards`` for systems without events (use with a zero-length ``terminal``)."""
    return None


@nb.njit  # its p may hold dispatchers (a system's parameters): not cacheable, see above
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
    n_log = min(int(out.n_events), s.max_events)
    events = EventLog(out.ev_t[:n_log], out.ev_k[:n_log], out.ev_x_before[:n_log],
                      out.ev_x_after[:n_log], out.ev_mode_after[:n_log],
                      truncated=int(out.n_events) > s.max_events)
    status, user_code, t = int(out.status), int(out.user_code), float(out.t)
    return HybridResult(
        t=t, x=out.x, mode=out.mode, record_times=rt, records=out.rec_x,
        record_modes=out.rec_mode, events=events, status=status,
        message=status_message(status, user_code, t, s), user_code=user_code,
        n_steps=int(out.n_steps), n_rejected=int(out.n_rejected), n_flow_evals=int(out.n_flow),
    )
