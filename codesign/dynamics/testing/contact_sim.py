"""Simulate an engine model with loop closures and ground contacts (tests and benchmarks).

Not the production path (the walking rollout, :mod:`codesign.walking.rollout_event`,
assembles its own system from the same contact pieces with its controller).

The hybrid system (``flow``, ``guards``, ``jump``, ``observe``) of ``codesign.dynamics.hybrid``
for a :class:`~codesign.dynamics.model.Model`, with the contact model chosen by the
settings vector (``contact_rows.make_settings``): hard contacts (``contact_event``, events)
or soft penalty contacts (``contact_soft``, no events). Both share one system so the
integrator is compiled once for either.

``p = (m, w, cw, s, tau)``: ``m`` = ``model.arrays``, ``w`` = ``make_workspace(model)``,
``cw`` = ``contact_event.make_contact_workspace(model)``, ``s`` the settings vector and
``tau`` float64[<= n] constant applied generalized forces (N m / N) on the first
``len(tau)`` coordinates (the only "controller" here: a test that needs another one
builds its own system, as the walking rollout does).

Compilation: ``p`` holds arrays only (no function values), so every function here is
``njit(cache=True)`` and the integrator is the disk-cacheable
:func:`codesign.dynamics.specialize.specialize` of this system: a new process loads
everything from numba's cache instead of compiling it again.

* :func:`run` -- initial contact modes, integration, contact forces at the record times.
* :func:`simulate` -- the Python wrapper returning a :class:`ContactSimResult` with
  ``status`` and ``message``.
* :func:`bench_contact_event`, :func:`bench_pantograph` -- figures for ``codesign bench
  engine`` (cost of one contact event; a closed-loop run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from codesign.dynamics import hybrid
from codesign.dynamics.contact_event import (NO_CONSISTENT_MODE, NOT_FINITE, TERMINATION_MESSAGES, cached,
                                             guard_applies, hard_dynamics, jump_impact, make_contact_workspace,
                                             read_forces, resolve_modes, tangential_impact, write_guards)
from codesign.dynamics.contact_rows import (CONTACT_MODEL, INACTIVE, MODE_NAMES, N_SETTINGS, SOFT,
                                            STICK, make_settings)
from codesign.dynamics.contact_soft import soft_dynamics
from codesign.dynamics.model import Model, make_workspace
from codesign.dynamics.specialize import specialize
from codesign.errors import UserError

# ----------------------------------------------------------------------------- the system
@njit(cache=True)
def evaluate(t, x, mode, p):
    """Dynamics at (t, x, mode) into the contact workspace (cw.qdd, cw.lam), cached on
    (t, x, mode): flow and guards at one point cost one solve.
    Returns False if the mass matrix is not positive definite."""
    m, w, cw, s, tau = p
    if cached(cw, t, x, mode):
        return True
    applied_forces(tau, cw.tau)
    if s[CONTACT_MODEL] == SOFT:
        return soft_dynamics(m, w, cw, s, t, x, mode)
    return hard_dynamics(m, w, cw, s, t, x, mode)


@njit(cache=True)
def flow(t, x, mode, p, xdot):
    """x = [q, qd] -> xdot = [qd, qdd]."""
    cw = p[2]
    n = cw.qdd.shape[0]
    if not evaluate(t, x, mode, p):
        xdot[:] = np.nan
        return
    xdot[:n] = x[n:]
    xdot[n:] = cw.qdd


@njit(cache=True)
def guards(t, x, mode, p, g):
    """2 guards per contact (contact module docstring); all 1 (never) for soft contact."""
    if p[3][CONTACT_MODEL] == SOFT:
        g[:] = 1.0
        return
    evaluate(t, x, mode, p)
    write_guards(p[0], p[2], p[3], mode, g)


@njit(cache=True)
def jump(t, x, mode, p, k):
    """Impact and/or new contact modes after guard k; 0 or a termination code."""
    m, w, cw, s, tau = p
    if s[CONTACT_MODEL] == SOFT:
        return 0
    g = np.empty(2 * mode.shape[0])
    guards(t, x, mode, p, g)
    if not guard_applies(m, s, mode, g, k):
        return 0
    code, forced = jump_impact(m, w, cw, s, x, mode, k)
    if code != 0 or forced == -2:
        return code
    return resolve(t, x, mode, p, forced)


@njit(cache=True)
def resolve(t, x, mode, p, forced):
    """The contact modes at (t, x) (``forced``: the contact that must leave its mode, or
    -1); in Painlevé's case one tangential impact and the modes resolved again
    (:mod:`codesign.dynamics.contact_event`). Returns 0 or a termination code."""
    m, w, cw, s, tau = p
    applied_forces(tau, cw.tau)
    code = resolve_modes(m, w, cw, s, t, x, mode, forced)
    if code != NO_CONSISTENT_MODE:
        return code
    code = tangential_impact(m, w, cw, s, x, mode)
    if code != 0:
        return code
    applied_forces(tau, cw.tau)
    return resolve_modes(m, w, cw, s, t, x, mode, -1)


@njit(cache=True)
def observe(t, x, mode, p):
    """Stops the run (NOT_FINITE) if the state is no longer finite."""
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return NOT_FINITE
    return 0


@njit(cache=True)
def initial_modes(t, x, mode, p):
    """Consistent contact modes at the start (hard contact: every point within TOL_H of
    the ground and not separating is resolved as at an event). Writes ``mode``; returns 0
    or a termination code."""
    m, w, cw, s, tau = p
    mode[:] = INACTIVE
    if s[CONTACT_MODEL] == SOFT:
        return 0
    return resolve(t, x, mode, p, -1)


@njit(cache=True)
def contact_forces(t, x, mode, p, out):
    """out[c, 2] = (lambda_n, lambda_t) of every contact at (t, x, mode): the ground's
    force on the body along the ground normal and tangent (N); 0 when not in contact."""
    evaluate(t, x, mode, p)
    read_forces(p[0], p[2], mode.shape[0], out)


@njit(cache=True)
def applied_forces(tau, out):
    """out[n] = the constant generalized forces: out[j] = tau[j] (N m / N) for
    j < len(tau), 0 beyond (none with an empty tau)."""
    out[:] = 0.0
    for j in range(min(out.shape[0], tau.shape[0])):
        out[j] = tau[j]


def system_integrator():
    """:func:`codesign.dynamics.hybrid.integrate` specialized to this system (disk-cached)."""
    return specialize(flow, guards, jump, observe)


@njit(cache=True)
def record_forces(p, record_times, rec_x, rec_mode, n_rec, forces):
    """forces[r] = :func:`contact_forces` at the recorded samples r < n_rec."""
    for r in range(n_rec):
        contact_forces(record_times[r], rec_x[r], rec_mode[r], p, forces[r])


def run(p, x0, mode0, resolve_initial, t0, t_end, record_times, settings):
    """Initial modes (if ``resolve_initial``), the integration, contact forces at the
    record times.

    Returns (out, forces, mode_initial): ``out`` the integrator's
    :class:`~codesign.dynamics.hybrid.Integration` record (status TERMINATED with the code
    if the initial modes cannot be resolved: the run then stops at t0), forces
    float64[nr, c, 2] (NaN where not recorded) and the initial modes int64[c].
    """
    c = mode0.shape[0]
    mode = mode0.copy()
    code = 0
    if resolve_initial:
        code = int(initial_modes(t0, x0, mode, p))
    terminal = np.zeros(2 * c, np.int64)
    out = system_integrator()(x0, mode, t0, t0 if code != 0 else t_end, p, record_times, terminal,
                       settings)
    forces = np.full((record_times.shape[0], c, 2), np.nan)
    record_forces(p, record_times, out.rec_x, out.rec_mode, out.n_rec, forces)
    if code != 0:
        out = out._replace(status=hybrid.TERMINATED, user_code=code)
    return out, forces, mode


# ----------------------------------------------------------------------------- Python API
@dataclass(frozen=True)
class ContactSimResult:
    """Outcome of :func:`simulate` (like SciPy's OdeResult).

    status / message / success / user_code: as :class:`hybrid.HybridResult` (a contact
    termination code has its own message). t float64[nr] record times (s); q, qd
    float64[nr, n]; modes int64[nr, c] (contact.INACTIVE/STICK/SLIP_POS/SLIP_NEG);
    forces float64[nr, c, 2] (normal, tangential ground force on the body, N). Rows
    after an early stop are NaN / -1. Events that changed the state or a mode:
    event_t (s), event_contact (index), event_kind (str: touchdown, release, stick-slip,
    slip-stop), event_mode_after int64[ne, c], event_x_after float64[ne, 2n]. t_final,
    x_final, mode_final: where the run ended. stats: impacts, mode resolutions, rank-deficient solves, LCP candidates
    tried, tangential impacts (Painlevé's case); n_steps, n_rejected, n_flow_evals: integrator counters.
    """

    status: int
    message: str
    user_code: int
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    modes: np.ndarray
    forces: np.ndarray
    event_t: np.ndarray
    event_contact: np.ndarray
    event_kind: tuple[str, ...]
    event_mode_after: np.ndarray
    event_x_after: np.ndarray
    t_final: float
    x_final: np.ndarray
    mode_final: np.ndarray
    stats: dict
    n_steps: int
    n_rejected: int
    n_flow_evals: int

    @property
    def success(self) -> bool:
        return self.status >= 0


def make_params(model: Model, settings: np.ndarray | None = None, tau=None) -> tuple:
    """The ``p`` tuple of the system for ``model`` (fresh workspaces; tau: constant
    generalized forces float64[<= n], none if omitted)."""
    s = make_settings() if settings is None else np.ascontiguousarray(settings, dtype=np.float64)
    if s.shape != (N_SETTINGS,):
        raise UserError(f"settings: shape {s.shape}; expected ({N_SETTINGS},) from contact.make_settings")
    tau = np.zeros(0) if tau is None else np.ascontiguousarray(tau, dtype=np.float64).reshape(-1)
    if tau.shape[0] > model.n:
        raise UserError(f"tau: {tau.shape[0]} values; expected at most n = {model.n}")
    return (model.arrays, make_workspace(model), make_contact_workspace(model), s, tau)


def _applied_events(ev_k, ev_xb, ev_xa, ev_ma, mode0):
    """Indices of the logged events that changed something (guards that crossed at the
    same instant as an earlier one but no longer applied are logged by the integrator
    as no-op jumps), and their kinds: touchdown, release, stick-slip, slip-stop."""
    keep, kinds = [], []
    before = np.asarray(mode0)
    for e, (k, after) in enumerate(zip(ev_k, ev_ma)):
        if np.array_equal(after, before) and np.array_equal(ev_xa[e], ev_xb[e]):
            continue
        i, which = divmod(int(k), 2)
        if before[i] == INACTIVE:
            kinds.append("touchdown")
        elif which == 0:
            kinds.append("release")
        elif before[i] == STICK:
            kinds.append("stick-slip")
        else:
            kinds.append("slip-stop")
        keep.append(e)
        before = after
    return np.array(keep, dtype=np.int64), tuple(kinds)


def simulate(model: Model, q0, qd0=None, t_end: float = 1.0, *, settings: np.ndarray | None = None,
             tau=None, record_times=None, mode0=None,
             t0: float = 0.0, method: str = "dopri5", **integrator) -> ContactSimResult:
    """Simulate ``model`` from (q0, qd0) at t0 to t_end (s) with ground contacts and loops.

    settings: ``contact.make_settings(...)`` (default: hard contact, mu = 1, flat ground
    at z = 0). tau: constant applied generalized forces float64[<= n] (N m / N) on the
    first len(tau) coordinates (none if omitted). record_times:
    sorted sample times (default: 101 evenly spaced). mode0: initial contact modes int[c]
    (default: resolved from the state: points on the ground and not separating are put
    in a consistent stick/slip/off combination). method and ``integrator`` keywords:
    ``hybrid.Settings`` fields (rtol, atol, h, h_max, event_tol, max_transitions,
    chatter_window, max_events, ...). A design that cannot be simulated returns a result
    with a failure status and message; only malformed input raises ``UserError``.
    """
    n, c = model.n, model.n_contacts
    q0 = np.ascontiguousarray(q0, dtype=np.float64).reshape(-1)
    qd0 = np.zeros(n) if qd0 is None else np.ascontiguousarray(qd0, dtype=np.float64).reshape(-1)
    if q0.shape != (n,) or qd0.shape != (n,):
        raise UserError(f"q0/qd0: shapes {q0.shape}/{qd0.shape}; expected ({n},) each")
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(qd0))):
        raise UserError("q0/qd0: non-finite values; expected finite numbers")
    if not t_end >= t0:
        raise UserError(f"t_end: {t_end}; expected >= t0 = {t0}")
    rt = (np.linspace(t0, t_end, 101) if record_times is None
          else np.ascontiguousarray(record_times, dtype=np.float64).reshape(-1))
    if rt.size and (np.any(np.diff(rt) < 0) or rt[0] < t0 or rt[-1] > t_end):
        raise UserError("record_times: expected sorted times within [t0, t_end]")
    resolve = mode0 is None
    m0 = np.zeros(c, np.int64) if resolve else np.ascontiguousarray(mode0, dtype=np.int64).reshape(-1)
    if m0.shape != (c,) or np.any((m0 < 0) | (m0 > 3)):
        raise UserError(f"mode0: {mode0!r}; expected {c} integers in 0..3")
    try:
        hs = hybrid.settings(method, **integrator)
    except (ValueError, TypeError) as exc:
        raise UserError(f"integrator: {exc}") from None
    p = make_params(model, settings, tau)
    out, forces, mode_initial = run(p, np.concatenate([q0, qd0]), m0, resolve, float(t0),
                                    float(t_end), rt, hs)
    status, user_code, t, x, mode = int(out.status), int(out.user_code), out.t, out.x, out.mode
    rec_x, rec_mode, ev_t, ev_k = out.rec_x, out.rec_mode, out.ev_t, out.ev_k
    ev_xb, ev_xa, ev_ma = out.ev_x_before, out.ev_x_after, out.ev_mode_after
    n_events, n_steps, n_rejected, n_flow = out.n_events, out.n_steps, out.n_rejected, out.n_flow
    if status == hybrid.TERMINATED and user_code in TERMINATION_MESSAGES:
        message = f"{TERMINATION_MESSAGES[user_code]} at t={float(t):.9g} s"
    else:
        message = hybrid.status_message(status, user_code, float(t), hs)
    n_log = min(int(n_events), hs.max_events)
    keep, kinds = _applied_events(ev_k[:n_log], ev_xb[:n_log], ev_xa[:n_log], ev_ma[:n_log], mode_initial)
    cw = p[2]
    return ContactSimResult(
        status=status, message=message, user_code=user_code, t=rt, q=rec_x[:, :n], qd=rec_x[:, n:],
        modes=rec_mode, forces=forces, event_t=ev_t[keep], event_contact=ev_k[keep] // 2,
        event_kind=kinds,
        event_mode_after=ev_ma[keep], event_x_after=ev_xa[keep], t_final=float(t), x_final=x,
        mode_final=mode, stats={"impacts": int(cw.stats[0]), "mode_resolutions": int(cw.stats[1]),
                                "rank_deficient_solves": int(cw.stats[2]),
                                "lcp_candidates": int(cw.stats[3]),
                                "tangential_impacts": int(cw.stats[4])},
        n_steps=int(n_steps), n_rejected=int(n_rejected), n_flow_evals=int(n_flow))


def mode_names(modes: np.ndarray) -> list[str]:
    """Readable names of a row of contact modes."""
    return [MODE_NAMES[int(k)] if k >= 0 else "-" for k in modes]


# ----------------------------------------------------------------------------- benchmarks
@njit(cache=True)
def _repeat_jump(p, x_pre, mode_pre, k, repeats, x, mode):
    """Apply the jump of guard k to copies of (x_pre, mode_pre) ``repeats`` times."""
    code = 0
    for _ in range(repeats):
        x[:] = x_pre
        mode[:] = mode_pre
        code = jump(0.0, x, mode, p, k)
    return code


@njit(cache=True)
def _repeat_flow(p, x, mode, repeats, xdot):
    """``repeats`` flow evaluations at distinct times (so the cache never hits)."""
    for r in range(repeats):
        flow(float(r), x, mode, p, xdot)


def _event_cases():
    """(name, model, x at touch-down, guard index) of the timed contact events."""
    theta = np.pi / 6
    rod = _examples().falling_rod()
    x_rod = np.array([0.0, 0.5 * np.sin(theta), -theta, 0.3, -2.0, 0.5])
    block = _examples().sliding_block()
    x_block = np.array([0.0, 0.05, 0.0, 0.5, -1.0, 0.0])   # lands flat on both corners at once
    return [("rod end touch-down (impact + LCP, 2 contacts)", rod, x_rod, 2),
            ("block lands flat (2 simultaneous contacts)", block, x_block, 0)]


def _examples():
    from codesign.dynamics.testing import examples
    return examples


def bench_contact_event(repeats: int = 2000) -> list[dict]:
    """Cost of one hard-contact event (the compiled jump: impulse with the extended
    Jacobian, active-set search of the touching contacts, new modes) next to one flow
    evaluation of the same model. Returns rows {case, event_s, flow_s, ratio}; compile
    time excluded (a warm-up call first)."""
    rows = []
    for name, model, x_pre, k in _event_cases():
        p = make_params(model, make_settings(mu=1.0))
        mode_pre = np.zeros(model.n_contacts, np.int64)
        x, mode, xdot = x_pre.copy(), mode_pre.copy(), np.zeros_like(x_pre)
        code = _repeat_jump(p, x_pre, mode_pre, k, 1, x, mode)
        if code != 0:
            raise RuntimeError(f"benchmark event {name!r} failed with code {code}")
        _repeat_flow(p, x_pre, mode_pre, 1, xdot)
        t0 = time.perf_counter()
        _repeat_jump(p, x_pre, mode_pre, k, repeats, x, mode)
        event_s = (time.perf_counter() - t0) / repeats
        t0 = time.perf_counter()
        _repeat_flow(p, x_pre, mode_pre, repeats, xdot)
        flow_s = (time.perf_counter() - t0) / repeats
        rows.append({"case": name, "event_s": event_s, "flow_s": flow_s, "ratio": event_s / flow_s})
    return rows


def bench_pantograph(t_end: float = 10.0, method: str = "dopri5", **integrator) -> dict:
    """The thesis's pantographic leg (Fig. 2.15, 2 loop rows, hip damping and knee spring
    as in codyn model 2.21) simulated for ``t_end`` s from its initial posture through
    :func:`simulate`. Returns {seconds, steps, flow_evals, closure_error_m} for the timed
    run (a short warm-up run compiles first). Integrator keywords as in simulate
    (default rtol 1e-8, atol 1e-10; pass method="rk4", h=1e-3 for a fixed step)."""
    ex = _examples()
    model, q0 = ex.pantograph_leg(), ex.pantograph_leg_q0()
    simulate(model, q0, t_end=0.01, method=method, **integrator)
    t0 = time.perf_counter()
    res = simulate(model, q0, t_end=t_end, method=method, **integrator)
    seconds = time.perf_counter() - t0
    if not res.success:
        raise RuntimeError(f"pantograph benchmark failed: {res.message}")
    return {"seconds": seconds, "steps": res.n_steps, "flow_evals": res.n_flow_evals,
            "closure_error_m": _closure_error(model, res.x_final[:model.n])}


def _closure_error(model: Model, q: np.ndarray) -> float:
    """Largest loop-closure residual |phi| (m) at configuration q."""
    from codesign.dynamics.kinematics import forward_kinematics
    from codesign.dynamics.loops import loop_constraints
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, np.zeros_like(q), w)
    loop_constraints(model.arrays, w, 0.0, 0.0)
    return float(np.max(np.abs(w.phi[:2 * model.n_loops]), initial=0.0))
