"""Passive time-stepping runs of a model (tests and benchmarks, not the production path).

:func:`passive_rollout` (compiled) runs :func:`codesign.dynamics.timestep.step` without
applied forces (gravity, passive elements, loops and ground contacts only) and records
every step; :func:`simulate` is its Python wrapper returning a :class:`TimeStepResult`.
The walking rollout drives ``timestep.step`` itself (:mod:`codesign.walking.rollout`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from codesign.dynamics.contact_rows import make_settings
from codesign.dynamics.model import make_workspace
from codesign.dynamics.timestep import STEP_OK, make_step_workspace, step, step_settings
from codesign.errors import UserError


@njit(cache=True)
def passive_rollout(m, w, sw, cs, ss, q, v, n_steps, rec_q, rec_v, rec_force, rec_mode):
    """``n_steps`` steps of :func:`step` without applied forces (tau = 0, Kimp = Dimp = 0:
    gravity, the model's passive elements, loops and contacts only); q, v float64[n]
    advance in place. Row k of rec_q, rec_v [n_steps, n], rec_force [n_steps, c, 2]
    (normal, tangent, N) and rec_mode int64[n_steps, c] receives the state, contact forces
    and modes after step k, i.e. at t = (k + 1) h. Returns (STEP_OK or the failing step's
    code, steps completed); the rows of a failed step and after it are left untouched."""
    n = q.shape[0]
    c = m.contact_body.shape[0]
    tau = np.zeros(n)
    Kimp = np.zeros((n, n))
    Dimp = np.zeros((n, n))
    for k in range(n_steps):
        code = step(m, w, sw, cs, ss, q, v, tau, Kimp, Dimp)
        if code != STEP_OK:
            return code, k
        for i in range(n):
            rec_q[k, i] = q[i]
            rec_v[k, i] = v[i]
        for i in range(c):
            rec_force[k, i, 0] = sw.force[i, 0]
            rec_force[k, i, 1] = sw.force[i, 1]
            rec_mode[k, i] = sw.mode[i]
    return STEP_OK, n_steps


@dataclass(frozen=True)
class TimeStepResult:
    """Outcome of :func:`simulate`, one row per step (the initial state is not repeated).

    t float64[k] end time of each step (s): h, 2 h, ..., k h; q, v float64[k, n] the
    state after each step (rad or m, rad/s or m/s); force float64[k, c, 2] the contact
    forces over each step (impulse / h, N: along the ground normal, along its tangent);
    mode int64[k, c] the contact modes (INACTIVE, STICK, SLIP_POS, SLIP_NEG); status
    STEP_OK (0) or the code of the step that failed (``timestep.STEP_*``) (its row and later ones are NaN / -1);
    stats int64[timestep.N_STEP_STATS] the contact solver's counters (STAT_PIVOTED,
    STAT_ABOVE_TOL, ...); residual_max float64[contact_lcp.N_RESIDUALS] each contact
    residual's largest over the steps (m/s, N s, N s, m/s, J).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    force: np.ndarray
    mode: np.ndarray
    status: int
    stats: np.ndarray
    residual_max: np.ndarray


def simulate(model, q0, v0=None, t_end: float = 1.0, h: float = 1e-3, mu: float = 1.0,
             slope: float = 0.0, **step_kw) -> TimeStepResult:
    """Passive time-stepping run of ``model`` from (q0, v0) (float64[n]; v0 default 0) over
    round(t_end / h) steps of h seconds, with ground contacts of friction coefficient mu on
    a ground line of angle ``slope`` (rad) through the origin (``contact_rows.make_settings``)
    and no applied forces (:func:`passive_rollout`). ``step_kw``: the other keywords of
    :func:`~codesign.dynamics.timestep.step_settings` (loop_correction, penetration_correction, pgs_tol, ...)."""
    n, c = model.n, model.n_contacts
    q = np.array(q0, dtype=np.float64).reshape(-1)
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=np.float64).reshape(-1)
    if q.shape != (n,) or v.shape != (n,):
        raise UserError(f"q0/v0: shapes {q.shape}/{v.shape}; expected ({n},) each")
    if not (h > 0 and t_end >= 0):
        raise UserError(f"h, t_end: {h!r}, {t_end!r}; expected h > 0 and t_end >= 0")
    k = int(round(t_end / h))
    rec_q, rec_v = np.full((k, n), np.nan), np.full((k, n), np.nan)
    rec_force = np.full((k, c, 2), np.nan)
    rec_mode = np.full((k, c), -1, dtype=np.int64)
    sw = make_step_workspace(model)
    code, _ = passive_rollout(model.arrays, make_workspace(model), sw,
                              make_settings("hard", mu=mu, slope_rad=slope),
                              step_settings(h=h, **step_kw), q, v, k, rec_q, rec_v, rec_force,
                              rec_mode)
    return TimeStepResult(t=h * np.arange(1, k + 1), q=rec_q, v=rec_v, force=rec_force,
                          mode=rec_mode, status=int(code), stats=sw.stats.copy(),
                          residual_max=sw.res_max.copy())
