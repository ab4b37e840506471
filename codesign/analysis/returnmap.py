"""Poincaré return (stride) maps of hybrid systems, their fixed points and exact Jacobians.

A gait is a fixed point of the stride map S: start on a section (for walkers: just after
heel strike), integrate with :mod:`codesign.dynamics.hybrid` until the section's guard
fires (its ``count``-th time: several other events may happen on the way) and apply the
jump. Its stability is given by the eigenvalues of dS (Floquet multipliers).

The exact Jacobian integrates the variational equation dF/dt = f_x F, F(t0) = I, with
the flow (augmented state z = [x, vec F], one compile of the integrator per model) and
crosses every event with the saltation matrix

    Xi = g_x + (f+ - g_x f-) h_x / (h_x f-)            (f-, h_x, g_x before the jump, f+ after)

so that F keeps the sensitivity at fixed time through intermediate events. At the
section event the stride map moves with the event time instead, which gives

    dS = g_x (I - f- h_x / (h_x f-)) F-  =  Xi F- + f+ dtau,   dtau = -h_x F- / (h_x f-).

f_x, h_x, g_x come from the model's analytic derivatives when it provides them and
otherwise from the complex step (x + i 1e-30 e_j: exact to round-off, no step to tune;
the model's functions must then be written for complex arrays too). Flows, guards and
jumps must be autonomous (no explicit time dependence) for the map to be a return map.

For comparison a central finite-difference Jacobian uses the step of the truncation /
round-off trade-off, h_j = (3 eps_S)^(1/3) max(1, |z_j|), eps_S the relative accuracy
of S (the integration tolerance), so its error is of order eps_S^(2/3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numba as nb
import numpy as np
import scipy.linalg
import scipy.optimize

from codesign.dynamics import hybrid

CS_STEP = 1e-30  # complex step


# ----------------------------------------------------------------------------- model / section
@dataclass(frozen=True)
class HybridModel:
    """A hybrid system with what the return-map analysis needs.

    flow, guards, jump: njit functions of the :mod:`codesign.dynamics.hybrid` contract.
    flow_jacobian(t, x, mode, p, J) fills J = df/dx (nx, nx); guard_gradient(t, x, mode,
    p, k, hx) fills hx = dh_k/dx (nx,); jump_jacobian(t, x, mode, p, k, G) fills G =
    dg_k/dx (nx, nx) at the pre-jump state. Any of the three may be None: complex step.
    """

    name: str
    flow: Callable
    guards: Callable
    jump: Callable
    n_guards: int
    nx: int
    p: Any
    state_names: tuple[str, ...]
    flow_jacobian: Callable | None = None
    guard_gradient: Callable | None = None
    jump_jacobian: Callable | None = None
    parameters: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Section:
    """A Poincaré section: the post-jump states of guard ``guard`` (its ``count``-th firing
    ends a stride), in coordinates z (nz,) of the section.

    embed(z) -> (x (nx,), mode (nm,)) builds the full state and mode on the section;
    embed_jacobian(z) -> dx/dz (nx, nz); project: indices of x that are z (the map's
    output z' = x[project]). ``t_max``: longest stride (s) before giving up.
    """

    guard: int
    names: tuple[str, ...]
    embed: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    embed_jacobian: Callable[[np.ndarray], np.ndarray]
    project: tuple[int, ...]
    count: int = 1
    t_max: float = 100.0

    @staticmethod
    def full_state(guard: int, mode, names: tuple[str, ...], count: int = 1, t_max: float = 100.0) -> "Section":
        """The section in all state coordinates (z = x) with a fixed mode."""
        nx = len(names)
        mode = np.atleast_1d(np.asarray(mode, dtype=np.int64))
        return Section(guard=guard, names=tuple(names), embed=lambda z: (np.asarray(z, float).copy(), mode.copy()),
                       embed_jacobian=lambda z: np.eye(nx), project=tuple(range(nx)), count=count, t_max=t_max)


@dataclass(frozen=True)
class Tolerances:
    """Integration tolerances of the analysis (DOPRI5 rtol/atol, event bracket in s)."""

    rtol: float = 1e-14
    atol: float = 1e-14
    event_tol: float = 1e-15

    def tightened(self, factor: float = 4.0) -> "Tolerances":
        """All tolerances divided by ``factor``. DOPRI5's global error is about
        proportional to the tolerance, so the change of a result under a 4x tightening is
        about 3/4 of its own error: the accuracy reported next to it."""
        return Tolerances(self.rtol / factor, self.atol / factor, self.event_tol / factor)


# ----------------------------------------------------------------------------- complex step
@nb.njit  # takes dispatchers: not cacheable
def cs_flow_jacobian(t, x, mode, pf, J):
    """J = df/dx by complex step; pf = (p, flow)."""
    p, flow = pf
    n = x.shape[0]
    xc = np.empty(n, np.complex128)
    fc = np.empty(n, np.complex128)
    for j in range(n):
        for i in range(n):
            xc[i] = x[i]
        xc[j] += 1j * CS_STEP
        flow(t, xc, mode, p, fc)
        for i in range(n):
            J[i, j] = fc[i].imag / CS_STEP


@nb.njit  # takes dispatchers: not cacheable
def cs_guard_gradient(t, x, mode, pg, k, hx):
    """hx = dh_k/dx by complex step; pg = (p, guards, n_guards)."""
    p, guards, ng = pg
    n = x.shape[0]
    xc = np.empty(n, np.complex128)
    gc = np.empty(ng, np.complex128)
    for j in range(n):
        for i in range(n):
            xc[i] = x[i]
        xc[j] += 1j * CS_STEP
        guards(t, xc, mode, p, gc)
        hx[j] = gc[k].imag / CS_STEP


@nb.njit  # takes dispatchers: not cacheable
def cs_jump_jacobian(t, x, mode, pj, k, G):
    """G = dg_k/dx by complex step on a copy of (x, mode); pj = (p, jump)."""
    p, jump = pj
    n = x.shape[0]
    xc = np.empty(n, np.complex128)
    for j in range(n):
        for i in range(n):
            xc[i] = x[i]
        xc[j] += 1j * CS_STEP
        mc = mode.copy()
        jump(t, xc, mc, p, k)
        for i in range(n):
            G[i, j] = xc[i].imag / CS_STEP


# ----------------------------------------------------------------------------- variational system
# P = (p, flow, guards, jump, fjac, pf, hgrad, pg, gjac, pj, nx, work)
# work = (J (nx,nx), G (nx,nx), fm (nx), fp (nx), hx (nx), dtau (nx), Ftmp (nx,nx))
@nb.njit  # takes dispatchers: not cacheable
def variational_flow(t, z, mode, P, zdot):
    """d/dt [x, vec F] = [f(x), f_x F] (F row-major after the nx state entries)."""
    p, flow, fjac, pf, nx, work = P[0], P[1], P[4], P[5], P[10], P[11]
    J = work[0]
    flow(t, z[:nx], mode, p, zdot[:nx])
    fjac(t, z[:nx], mode, pf, J)
    for i in range(nx):
        for j in range(nx):
            acc = 0.0
            for m in range(nx):
                acc += J[i, m] * z[nx + m * nx + j]
            zdot[nx + i * nx + j] = acc


@nb.njit  # takes dispatchers: not cacheable
def variational_guards(t, z, mode, P, g):
    P[2](t, z[:P[10]], mode, P[0], g)


@nb.njit  # takes dispatchers: not cacheable
def variational_jump(t, z, mode, P, k):
    """The model's jump on x and the saltation matrix on F (module docstring); stores
    dtau and f+ of this event in the work arrays for the section projection."""
    p, flow, jump, hgrad, pg, gjac, pj, nx, work = P[0], P[1], P[3], P[6], P[7], P[8], P[9], P[10], P[11]
    G, fm, fp, hx, dtau, Ft = work[1], work[2], work[3], work[4], work[5], work[6]
    x = z[:nx]
    flow(t, x, mode, p, fm)
    hgrad(t, x, mode, pg, k, hx)
    gjac(t, x, mode, pj, k, G)
    code = jump(t, x, mode, p, k)
    flow(t, x, mode, p, fp)
    hf = 0.0
    for i in range(nx):
        hf += hx[i] * fm[i]
    for j in range(nx):
        acc = 0.0
        for i in range(nx):
            acc += hx[i] * z[nx + i * nx + j]
        dtau[j] = -acc / hf
    # Gfm - f+
    for i in range(nx):
        gf = 0.0
        for m in range(nx):
            gf += G[i, m] * fm[m]
        fmg = gf - fp[i]
        for j in range(nx):
            acc = 0.0
            for m in range(nx):
                acc += G[i, m] * z[nx + m * nx + j]
            Ft[i, j] = acc + fmg * dtau[j]
    for i in range(nx):
        for j in range(nx):
            z[nx + i * nx + j] = Ft[i, j]
    return code


VARIATIONAL = hybrid.HybridSystem(variational_flow, variational_guards, variational_jump,
                                  hybrid.observe_nothing, 0)


def _variational_params(model: HybridModel):
    nx = model.nx
    p = model.p
    if model.flow_jacobian is not None:
        fjac, pf = model.flow_jacobian, p
    else:
        fjac, pf = cs_flow_jacobian, (p, model.flow)
    if model.guard_gradient is not None:
        hgrad, pg = model.guard_gradient, p
    else:
        hgrad, pg = cs_guard_gradient, (p, model.guards, model.n_guards)
    if model.jump_jacobian is not None:
        gjac, pj = model.jump_jacobian, p
    else:
        gjac, pj = cs_jump_jacobian, (p, model.jump)
    work = (np.zeros((nx, nx)), np.zeros((nx, nx)), np.zeros(nx), np.zeros(nx), np.zeros(nx), np.zeros(nx),
            np.zeros((nx, nx)))
    return (p, model.flow, model.guards, model.jump, fjac, pf, hgrad, pg, gjac, pj, nx, work)


# ----------------------------------------------------------------------------- stride map
@dataclass(frozen=True)
class Stride:
    """One stride from the section: z_next (nz,) the map's value, jacobian dS (nz, nz),
    period (s), x_end (nx,) full post-jump state, result: the integrator's result (its
    records hold [x, vec F] at the requested record times)."""

    z_next: np.ndarray
    jacobian: np.ndarray
    period: float
    x_end: np.ndarray
    result: hybrid.HybridResult


def stride(model: HybridModel, section: Section, z, tol: Tolerances = Tolerances(), record_times=None) -> Stride:
    """The stride map and its exact Jacobian at section coordinates z (see module doc)."""
    z = np.asarray(z, dtype=float)
    nx = model.nx
    x0, mode0 = section.embed(z)
    z0 = np.concatenate([x0, np.eye(nx).ravel()])
    P = _variational_params(model)
    terminal = np.zeros(model.n_guards, dtype=np.int64)
    terminal[section.guard] = section.count
    system = VARIATIONAL._replace(n_guards=model.n_guards)
    res = hybrid.solve_hybrid(system, z0, mode0, (0.0, section.t_max), P, record_times=record_times,
                              terminal=terminal, rtol=tol.rtol, atol=tol.atol, event_tol=tol.event_tol,
                              max_transitions=1000, chatter_window=1e-9, max_events=10_000)
    if res.status != hybrid.TERMINAL_EVENT:
        raise StrideError(f"{model.name}: no stride from z={z.tolist()} ({res.message})")
    work = P[11]
    dtau, fplus = work[5], work[3]
    F = res.x[nx:].reshape(nx, nx)
    dS_full = F + np.outer(fplus, dtau)
    idx = list(section.project)
    jac = dS_full[idx, :] @ section.embed_jacobian(z)
    return Stride(z_next=res.x[:nx][idx].copy(), jacobian=jac, period=res.t, x_end=res.x[:nx].copy(), result=res)


class StrideError(RuntimeError):
    """The section was not reached again (a fall, a stall, or t_max exceeded)."""


def fd_step(z, rel_accuracy: float) -> np.ndarray:
    """Central-difference steps from the truncation / round-off trade-off (per coordinate)."""
    eps = max(rel_accuracy, np.finfo(float).eps)
    return (3.0 * eps) ** (1.0 / 3.0) * np.maximum(1.0, np.abs(np.asarray(z, float)))


def jacobian_fd(model: HybridModel, section: Section, z, tol: Tolerances = Tolerances()) -> tuple[np.ndarray, np.ndarray]:
    """Central finite-difference Jacobian of the stride map; returns (J, steps)."""
    z = np.asarray(z, dtype=float)
    steps = fd_step(z, max(tol.rtol, tol.atol))
    J = np.empty((len(z), len(z)))
    for j, h in enumerate(steps):
        zp, zm = z.copy(), z.copy()
        zp[j] += h
        zm[j] -= h
        J[:, j] = (stride(model, section, zp, tol).z_next - stride(model, section, zm, tol).z_next) / (2 * h)
    return J, steps


def find_fixed_point(model: HybridModel, section: Section, guess, tol: Tolerances = Tolerances(),
                     warmup_strides: int = 0, xtol: float = 1e-15) -> np.ndarray:
    """Fixed point z* = S(z*) by Newton's method with the exact Jacobian (MINPACK hybrj
    through scipy.optimize.root), after ``warmup_strides`` forward strides from the guess
    (which approach a stable gait)."""
    z = np.asarray(guess, dtype=float)
    for _ in range(warmup_strides):
        z = stride(model, section, z, tol).z_next

    n = len(z)

    def residual(zz):
        try:
            s = stride(model, section, zz, tol)
        except StrideError:  # no stride from here (a fall): a large residual shrinks the trust region
            return np.full(n, 1e3), -np.eye(n)
        return s.z_next - zz, s.jacobian - np.eye(n)

    sol = scipy.optimize.root(residual, z, jac=True, method="hybr", options={"xtol": xtol})
    r = residual(sol.x)[0]
    if not np.all(np.isfinite(sol.x)) or np.abs(r).max() > 1e-10:
        raise StrideError(f"{model.name}: Newton did not converge from {np.asarray(guess).tolist()} "
                          f"(residual {np.abs(r).max():.3g}: {sol.message})")
    return sol.x


def sort_eigenvalues(lam) -> np.ndarray:
    """Eigenvalues by decreasing modulus, then real part, then imaginary part."""
    lam = np.asarray(lam, dtype=complex)
    order = np.lexsort((-lam.imag, -lam.real, -np.round(np.abs(lam), 12)))
    return lam[order]


def verdict(eigenvalues, margin: float = 1e-9) -> str:
    """'stable' (all |lambda| < 1), 'unstable' (some > 1) or 'marginal' (max within margin of 1)."""
    m = float(np.max(np.abs(eigenvalues)))
    if abs(m - 1.0) <= margin:
        return "marginal"
    return "stable" if m < 1.0 else "unstable"


@dataclass(frozen=True)
class Gait:
    """A period-one gait: fixed point, period (s), exact and FD Jacobians, their
    eigenvalues (sorted by decreasing modulus), FD steps, the fixed point's and the
    eigenvalues' change when all tolerances are tightened 4x (their accuracy), verdict."""

    fixed_point: np.ndarray
    period: float
    jacobian: np.ndarray
    jacobian_fd: np.ndarray
    eigenvalues: np.ndarray
    eigenvalues_fd: np.ndarray
    fd_steps: np.ndarray
    tightening_change: float
    eigenvalue_tightening_change: float
    verdict: str


def analyze_gait(model: HybridModel, section: Section, guess, tol: Tolerances = Tolerances(),
                 warmup_strides: int = 0) -> Gait:
    """Fixed point from a guess, both Jacobians, Floquet multipliers, verdict."""
    z = find_fixed_point(model, section, guess, tol, warmup_strides)
    s = stride(model, section, z, tol)
    lam = sort_eigenvalues(scipy.linalg.eigvals(s.jacobian))
    J_fd, steps = jacobian_fd(model, section, z, tol)
    lam_fd = sort_eigenvalues(scipy.linalg.eigvals(J_fd))
    # convergence check: everything again at 4x tighter tolerances
    tight = tol.tightened()
    z_t = find_fixed_point(model, section, z, tight)
    lam_t = sort_eigenvalues(scipy.linalg.eigvals(stride(model, section, z_t, tight).jacobian))
    return Gait(fixed_point=z, period=s.period, jacobian=s.jacobian, jacobian_fd=J_fd, eigenvalues=lam,
                eigenvalues_fd=lam_fd, fd_steps=steps, tightening_change=float(np.abs(z_t - z).max()),
                eigenvalue_tightening_change=float(np.abs(lam_t - lam).max()), verdict=verdict(lam))


def analyze(model: HybridModel, section: Section, guesses, tol: Tolerances = Tolerances(),
            warmup_strides: int = 0) -> dict:
    """Analyse the gaits reached from each guess; returns the JSON-ready dictionary of
    :func:`gaits_to_json` (fixed points, eigenvalues exact and FD, verdicts)."""
    gaits = [analyze_gait(model, section, g, tol, warmup_strides) for g in guesses]
    return gaits_to_json(model, section, gaits, tol)


def _pairs(lam) -> list[list[float]]:
    return [[float(v.real), float(v.imag)] for v in lam]


def gaits_to_json(model: HybridModel, section: Section, gaits: list[Gait], tol: Tolerances) -> dict:
    """The documented JSON object of ``codesign analyze walker ... --json``:

    ``fixed_points``: [[z...], ...] one section state per gait (names in ``state_names``);
    ``eigenvalues`` / ``eigenvalues_fd``: per fixed point a list of [re, im] pairs (exact
    variational + saltation / central finite differences), sorted by decreasing modulus;
    ``gaits``: per fixed point an object with ``fixed_point``, ``period_s``,
    ``jacobian``, ``jacobian_fd`` (row-major lists), ``eigenvalues``, ``eigenvalues_fd``,
    ``max_abs_eigenvalue``, ``verdict`` ("stable" | "unstable" | "marginal"),
    ``fd_steps``, ``jacobian_fd_max_difference`` (max |J_fd - J|),
    ``fixed_point_tightening_change`` and ``eigenvalue_tightening_change`` (max change
    when every tolerance is tightened 4x: about the numerical error of the numbers).
    Plus ``model``, ``parameters``, ``state_names``, ``section_guard`` and ``tolerances``.
    """
    return {
        "model": model.name,
        "parameters": dict(model.parameters),
        "state_names": list(section.names),
        "section_guard": section.guard,
        "tolerances": {"rtol": tol.rtol, "atol": tol.atol, "event_tol": tol.event_tol},
        "fixed_points": [[float(v) for v in g.fixed_point] for g in gaits],
        "eigenvalues": [_pairs(g.eigenvalues) for g in gaits],
        "eigenvalues_fd": [_pairs(g.eigenvalues_fd) for g in gaits],
        "gaits": [
            {
                "fixed_point": [float(v) for v in g.fixed_point],
                "period_s": g.period,
                "jacobian": g.jacobian.tolist(),
                "jacobian_fd": g.jacobian_fd.tolist(),
                "eigenvalues": _pairs(g.eigenvalues),
                "eigenvalues_fd": _pairs(g.eigenvalues_fd),
                "max_abs_eigenvalue": float(np.max(np.abs(g.eigenvalues))),
                "verdict": g.verdict,
                "fd_steps": g.fd_steps.tolist(),
                "jacobian_fd_max_difference": float(np.abs(g.jacobian_fd - g.jacobian).max()),
                "fixed_point_tightening_change": g.tightening_change,
                "eigenvalue_tightening_change": g.eigenvalue_tightening_change,
            }
            for g in gaits
        ],
    }
