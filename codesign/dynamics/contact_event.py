"""Hard (rigid, unilateral, Coulomb) contact of body points with the ground (compiled).

Thesis 2.6.10 ("Contact modeling", hard contacts; used in 4.2.3 and chapter 5): a contact
point is either away from the ground or held on it by an equality constraint solved
together with the loop closures (2.6.9); at activation an impulse makes the point's
velocity consistent with the constraints, and the contact is released when its normal
force would become negative. Here its compiled pieces (dynamics in a mode, guards, impact,
mode search); ``codesign.walking.rollout_event`` and ``codesign.dynamics.testing.contact_sim``
assemble them into a hybrid system; ``contact_soft`` is the penalty alternative.

Ground, settings vector, mode codes and rows: :mod:`codesign.dynamics.contact_rows` (ground
line through (0, GROUND_Z) at angle SLOPE, height h = n . (p - (0, GROUND_Z)); mode int64[c]
per contact point, INACTIVE / STICK / SLIP_POS / SLIP_NEG).

Flow (constrained dynamics, thesis eq. 2.73-2.75 and 2.90)
    Rows K q̈ = k: 2 per loop closure, the normal row n.J of every active contact and
    the tangential row t.J of every sticking one. The forces enter as F lambda with F = K^T,
    except that a slipping contact's normal column is (n - s mu t).J (s = +-1 the slip
    direction): its friction is mu lambda_n along -s t. So

        M q̈ = tau + tau_passive - C(q, q̇) + F lambda,     K q̈ = k,

    k = -J̇q̇ - 2 D (K q̇) - P^2 phi (Baumgarte drift stabilisation with gains D, P in 1/s;
    phi = loop residual or contact height; the tangential rows have no position term).
    lambda solves (K M^-1 F) lambda = k - K M^-1 (tau - C): by pivoted Cholesky when the
    rows are independent and no contact slips (the common case), else as the
    minimum-norm least-squares solution (SVD), so a redundant set (a body standing on two
    sticking points has two equal tangential rows) neither fails nor picks an arbitrary split: the
    statically indeterminate friction is shared evenly (rank loss counted in ``stats``).

Guards (positive inside, two per contact, an event when one reaches 0 from above)
    inactive: [h, 1]; stick: [lambda_n, mu lambda_n - |lambda_t|];
    slip s:   [lambda_n, s v_t] (v_t the point's tangential velocity).

Jump
    * Touch-down (guard 0 of an inactive contact): impact. The touching set is the
      striking point, the active contacts and any other point within ``TOL_H`` of the
      ground that is not separating. Newton's impact law with restitution e (``RESTITUTION``,
      applied when the approach speed exceeds ``BOUNCE_MIN_SPEED``, else plastic) and
      Coulomb friction on the impulse: qd+ = qd- + M^-1 F Lambda with the rows of the loop
      closures (target 0) and of the touching contacts in their impulse modes. With
      every contact sticking this is the thesis's eq. 2.93-2.96: the dynamically
      consistent inverse of the Jacobian extended by the active contacts and the loops.
    * Then (and for every other guard) the acceleration-level mode of every touching
      contact is chosen again (see below); after an impact a point within TOL_H separating
      slower than REST_SPEED touches (unless no mode then fits), after a guard TOL_V.

Several contacts switching at once: an exact active-set search (an LCP by enumeration)
    For the touching contacts (at most ``MAX_TOUCHING``) every combination of
    {stick, slip+, slip-, off} is tried, in the order: fewest contacts off, then fewest
    slipping, then by contact index; the first combination whose solution satisfies all
    complementarity conditions is taken:
      stick: lambda_n >= 0, |lambda_t| <= mu lambda_n;
      slip s: lambda_n >= 0, and, if the point is not already sliding, s a_t >= 0;
      off: a_n >= 0 (the point accelerates away).
    A contact already sliding (|v_t| > TOL_V) may only keep sliding that way or leave.
    The contact whose guard fired must change its mode (else the event would repeat).
    Why enumeration: with <= 4 points per foot pair it costs at most 4^4 = 256 small
    solves at an event (never during flow) and it finds a consistent combination whenever
    one exists, unlike the thesis's sequential local resolution (2.6.10, "codyn does not
    solve the LCP"), which can leave a released contact pulling or a stuck one outside
    its friction cone. The same search is used on the impulses at an impact. When no
    combination is consistent (Painlevé's paradox: sliding needs a negative normal force,
    release a negative normal acceleration), Coulomb admits only an impulse (Génot &
    Brogliato 1999): :func:`tangential_impact`, then the modes again (docs/contacts.md);
    still none: ``NO_CONSISTENT_MODE``; more than ``MAX_TOUCHING`` touching: ``TOO_MANY_CONTACTS``.

Functions here take ``(m, w, cw, s)``: ``m`` the model's ``ModelArrays``, ``w`` its
engine ``Workspace``, ``cw`` a :class:`ContactWorkspace` (:func:`make_contact_workspace`),
``s`` the settings vector float64[N_SETTINGS]
(:func:`codesign.dynamics.contact_rows.make_settings`); x = [q (n), qd (n)].
None takes a dispatcher, so all are cached on disk.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from codesign.dynamics.contact_rows import (BAUMGARTE_D, BAUMGARTE_P, BOUNCE_MIN_SPEED, INACTIVE,
                                            MU, NO_POINT, REST_SPEED, RESTITUTION, SLIP_NEG, SLIP_POS,
                                            STICK, TOL_H, TOL_REL, TOL_V, contact_rows, loop_rows)
from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import forward_kinematics
from codesign.dynamics.linalg import ltl_factor, mass_solve, pivoted_cholesky_solve
from codesign.dynamics.passive import add_passive_forces
from codesign.dynamics.rnea import bias_forces

# termination codes returned by jump/observe (the integrator reports them)
NO_CONSISTENT_MODE = 31
TOO_MANY_CONTACTS = 32
NOT_FINITE = 33
TERMINATION_MESSAGES = {
    NO_CONSISTENT_MODE: "contact: no consistent stick/slip/release combination (Painleve-type paradox or tolerance)",
    TOO_MANY_CONTACTS: "contact: more touching points at one event than the exact search allows",
    NOT_FINITE: "contact: state became non-finite",
}
MAX_TOUCHING = 6

# ContactWorkspace.stats counters
STAT_IMPACTS = 0
STAT_RESOLUTIONS = 1
STAT_RANK_DEFICIENT = 2
STAT_CANDIDATES = 3
STAT_TANGENTIAL_IMPACTS = 4   # impulses taken where no acceleration-level mode was consistent
N_STATS = 5

ContactWorkspace = namedtuple(
    "ContactWorkspace",
    [
        "tau",        # [n] controller + passive generalized forces
        "rhs",        # [n] tau - C(q, qd) - g(q)
        "K",          # [R, n] all rows: loops (2m), normals (c), tangents (c)
        "bias",       # [R] K qd (impact) or J̇ q̇ (flow) per row
        "vel",        # [R] K qd per row
        "pos",        # [R] position residual per row (loop residual, contact height; 0 tangents)
        "goal",       # [R] required row value (acceleration or velocity)
        "Y",          # [n, R] M^-1 K^T
        "y0",         # [n] M^-1 rhs
        "G",          # [R, R] K M^-1 K^T
        "d",          # [R] K y0
        "lam",        # [R] multipliers of all rows (slip tangents = -s mu lambda_n)
        "value",      # [R] row values K y + bias after the last solve
        "qdd",        # [n] result of the last solve (acceleration or velocity jump)
        "trial",      # int64[c] mode combination being tried
        "best",       # int64[c] first consistent combination found
        "touching",   # int64[c] indices of the touching contacts
        "cache_x",    # [2n] state of the cached flow evaluation
        "cache_t",    # [1]
        "cache_mode",  # int64[c]
        "cache_ok",   # int64[1]: 1 if the cache holds (t, x, mode)
        "stats",      # int64[N_STATS]
    ],
)


def make_contact_workspace(model) -> ContactWorkspace:
    """Scratch arrays of the hard-contact model for an engine ``Model``."""
    n, c = model.n, model.n_contacts
    r = 2 * model.n_loops + 2 * c
    z = np.zeros
    return ContactWorkspace(
        tau=z(n), rhs=z(n), K=z((r, n)), bias=z(r), vel=z(r), pos=z(r), goal=z(r), Y=z((n, r)),
        y0=z(n), G=z((r, r)), d=z(r), lam=z(r), value=z(r), qdd=z(n),
        trial=np.zeros(c, np.int64), best=np.zeros(c, np.int64), touching=np.zeros(c, np.int64),
        cache_x=z(2 * n), cache_t=z(1), cache_mode=np.zeros(c, np.int64),
        cache_ok=np.zeros(1, np.int64), stats=np.zeros(N_STATS, np.int64))


# ---------------------------------------------------------------------------------------
# rows, mass matrix and right-hand side at a state


@njit(cache=True)
def _prepare(m, w, cw, s, x, rows_bias_is_velocity):
    """Kinematics, rows, mass matrix factor and Y = M^-1 K^T, G = K Y for state x.

    rows_bias_is_velocity: False for accelerations (bias = J̇q̇), True for impulses
    (bias = K qd, the row velocities before the impulse)."""
    n = w.M.shape[0]
    q = x[:n]
    qd = x[n:]
    forward_kinematics(m, q, qd, w)
    nl = 2 * m.loop_body_a.shape[0]
    loop_rows(m, w, cw.K, cw.bias, cw.vel, cw.pos)
    contact_rows(m, w, s, cw.K, cw.bias, cw.vel, cw.pos, nl)
    if rows_bias_is_velocity:
        cw.bias[:] = cw.vel
    mass_matrix(m, w)
    if ltl_factor(m.parent, w.M, w.L) != 0:
        return False
    R = cw.K.shape[0]
    col = np.empty(n)
    for r in range(R):
        col[:] = cw.K[r]
        mass_solve(m.parent, w.L, col)
        cw.Y[:, r] = col
    for a in range(R):
        for b in range(a, R):
            v = 0.0
            for j in range(n):
                v += cw.K[a, j] * cw.Y[j, b]
            cw.G[a, b] = v
            cw.G[b, a] = v
    return True


@njit(cache=True)
def _set_rhs(m, w, cw, rhs):
    """y0 = M^-1 rhs and d = K y0 (after _prepare)."""
    cw.y0[:] = rhs
    mass_solve(m.parent, w.L, cw.y0)
    R = cw.K.shape[0]
    for a in range(R):
        v = 0.0
        for j in range(cw.y0.shape[0]):
            v += cw.K[a, j] * cw.y0[j]
        cw.d[a] = v


# ---------------------------------------------------------------------------------------
# constrained solve for one combination of contact modes


@njit(cache=True)
def _solve_selection(cw, sel, nl, mu):
    """Multipliers of the loop rows and of the contact rows that ``sel`` (int64[c] modes)
    switches on, from the prepared G, d, bias and goal. Writes cw.lam [R] (generalized
    force = K^T lam; a slipping contact's tangent entry is -s mu lambda_n) and cw.value [R]
    (every row's value K y + bias after the solve). Returns the rank deficiency (0 = the
    selected rows are independent)."""
    c = sel.shape[0]
    R = cw.K.shape[0]
    idx = np.empty(R, np.int64)
    sec = np.full(R, -1, np.int64)
    coef = np.zeros(R)
    slipping = False
    r = 0
    for k in range(nl):
        idx[r] = k
        r += 1
    for i in range(c):
        if sel[i] == INACTIVE:
            continue
        idx[r] = nl + i
        if sel[i] == STICK:
            r += 1
            idx[r] = nl + c + i
        else:
            sec[r] = nl + c + i
            coef[r] = -mu if sel[i] == SLIP_POS else mu
            slipping = True
        r += 1
    cw.lam[:] = 0.0
    deficiency = 0
    if r > 0:
        A = np.empty((r, r))
        b = np.empty(r)
        for a in range(r):
            ra = idx[a]
            b[a] = cw.goal[ra] - cw.bias[ra] - cw.d[ra]
            for j in range(r):
                v = cw.G[ra, idx[j]]
                if sec[j] >= 0:
                    v += coef[j] * cw.G[ra, sec[j]]
                A[a, j] = v
        sol = np.empty(r)
        rank = -1
        if not slipping:
            # symmetric positive (semi)definite: pivoted Cholesky; its solution is the
            # unique one when the rows are independent
            Af = A.copy()
            rank = pivoted_cholesky_solve(Af, b, r, sol, np.empty(r, np.int64), np.empty(r), 1e-10)
        if rank != r:
            # redundant rows or slip columns: minimum-norm least squares (SVD)
            sol, _res, rank, _sv = np.linalg.lstsq(A, b, 1e-10)
        deficiency = r - rank
        for j in range(r):
            cw.lam[idx[j]] += sol[j]
            if sec[j] >= 0:
                cw.lam[sec[j]] += coef[j] * sol[j]
    for a in range(R):
        v = cw.d[a] + cw.bias[a]
        for b2 in range(R):
            v += cw.G[a, b2] * cw.lam[b2]
        cw.value[a] = v
    return deficiency


@njit(cache=True)
def _solution(cw):
    """cw.qdd = y0 + Y lam: the accelerations (flow) or velocity jump (impact)."""
    n = cw.qdd.shape[0]
    for j in range(n):
        v = cw.y0[j]
        for r in range(cw.lam.shape[0]):
            v += cw.Y[j, r] * cw.lam[r]
        cw.qdd[j] = v


@njit(cache=True)
def _consistent(cw, sel, nt, nl, s, impulse, f_tol, a_tol):
    """Complementarity conditions of the touching contacts cw.touching[:nt] under sel."""
    c = sel.shape[0]
    mu = s[MU]
    tol_v = s[TOL_V]
    for k in range(nt):
        i = cw.touching[k]
        rn = nl + i
        rt = nl + c + i
        mode = sel[i]
        if mode == INACTIVE:
            floor = cw.goal[rn] if impulse else 0.0
            if cw.value[rn] < floor - (tol_v if impulse else a_tol):
                return False
            continue
        ln = cw.lam[rn]
        if ln < -f_tol:
            return False
        if mode == STICK:
            if abs(cw.lam[rt]) > mu * ln + f_tol:
                return False
            continue
        sgn = 1.0 if mode == SLIP_POS else -1.0
        if impulse:
            if sgn * cw.value[rt] < -tol_v:
                return False
        elif not sgn * cw.vel[rt] > tol_v:   # not yet sliding that way: must accelerate that way
            if sgn * cw.value[rt] < -a_tol:
                return False
    return True


@njit(cache=True)
def _digit_mode(d):
    if d == 0:
        return STICK
    if d == 1:
        return SLIP_POS
    if d == 2:
        return SLIP_NEG
    return INACTIVE


@njit(cache=True)
def _search(cw, mode, nt, nl, s, impulse, forced, f_scale, a_scale):
    """Exact active-set search over the touching contacts (see module docstring).

    Tries every {stick, slip+, slip-, off} combination, fewest off first, then fewest
    slipping. Contacts not touching are off. ``forced`` (a contact index or -1) may not
    keep its current mode. On success cw.best holds the modes and cw.lam/value the solution
    (recomputed for the winner); returns True."""
    c = mode.shape[0]
    mu = s[MU]
    tol_v = s[TOL_V]
    total = 4 ** nt
    for n_off in range(nt + 1):
        for n_slip in range(nt - n_off + 1):
            for code in range(total):
                rest = code
                offs = 0
                slips = 0
                allowed = True
                for i in range(c):
                    cw.trial[i] = INACTIVE
                for k in range(nt):
                    dm = _digit_mode(rest % 4)
                    rest //= 4
                    i = cw.touching[k]
                    if dm == INACTIVE:
                        offs += 1
                    elif dm != STICK:
                        slips += 1
                    if i == forced and dm == mode[i]:
                        allowed = False
                    vt = cw.vel[nl + c + i]
                    if not impulse and abs(vt) > tol_v and dm != INACTIVE:
                        if dm != (SLIP_POS if vt > 0 else SLIP_NEG):
                            allowed = False
                    cw.trial[i] = dm
                if offs != n_off or slips != n_slip or not allowed:
                    continue
                cw.stats[STAT_CANDIDATES] += 1
                _solve_selection(cw, cw.trial, nl, mu)
                lam_max = 0.0
                for r in range(cw.lam.shape[0]):
                    lam_max = max(lam_max, abs(cw.lam[r]))
                f_tol = s[TOL_REL] * max(f_scale, lam_max)
                a_tol = s[TOL_REL] * a_scale
                if _consistent(cw, cw.trial, nt, nl, s, impulse, f_tol, a_tol):
                    cw.best[:] = cw.trial
                    return True
    return False


@njit(cache=True)
def _touching(cw, mode, nl, s, strike, speed):
    """Fill cw.touching with the contacts that take part in an event: ``strike`` (or -1),
    the active ones and the inactive ones within TOL_H of the ground, all not separating
    faster than ``speed`` (m/s). Returns their number."""
    c = mode.shape[0]
    nt = 0
    for i in range(c):
        rn = nl + i
        near = mode[i] != INACTIVE or cw.pos[rn] <= s[TOL_H]
        if i == strike or (near and cw.vel[rn] <= speed):
            cw.touching[nt] = i
            nt += 1
    return nt


# ---------------------------------------------------------------------------------------
# the hybrid system


@njit(cache=True)
def _forces_rhs(m, w, cw, x):
    """cw.tau += passive forces (cw.tau holds the controller's), cw.rhs = tau - C - g
    (after _prepare)."""
    n = cw.tau.shape[0]
    add_passive_forces(m, w, x[:n], x[n:], cw.tau)
    bias_forces(m, w)
    for j in range(n):
        cw.rhs[j] = cw.tau[j] - w.h[j]


@njit(cache=True)
def _acceleration_goals(cw, s, nl, c):
    """Baumgarte goals: -2 D vel - P^2 pos for loop and normal rows, -2 D vel for tangents."""
    D = s[BAUMGARTE_D]
    P2 = s[BAUMGARTE_P] ** 2
    R = cw.K.shape[0]
    for r in range(R):
        cw.goal[r] = -2.0 * D * cw.vel[r]
        if r < nl + c:
            cw.goal[r] -= P2 * cw.pos[r]


@njit(cache=True)
def _total_weight(m):
    total = 0.0
    for i in range(m.mass.shape[0]):
        total += m.mass[i]
    return total * max(m.gravity[0], 1.0)


@njit(cache=True)
def cached(cw, t, x, mode):
    """True if the workspace already holds the solution at (t, x, mode)."""
    if cw.cache_ok[0] != 1 or cw.cache_t[0] != t:
        return False
    for j in range(x.shape[0]):
        if cw.cache_x[j] != x[j]:
            return False
    for i in range(mode.shape[0]):
        if cw.cache_mode[i] != mode[i]:
            return False
    return True


@njit(cache=True)
def hard_dynamics(m, w, cw, s, t, x, mode):
    """Constrained dynamics in ``mode`` with the controller's forces in cw.tau: fills
    cw.qdd, cw.lam, cw.value and the cache. False if M is not positive definite."""
    nl = 2 * m.loop_body_a.shape[0]
    c = mode.shape[0]
    if not _prepare(m, w, cw, s, x, False):
        return False
    _forces_rhs(m, w, cw, x)
    _set_rhs(m, w, cw, cw.rhs)
    _acceleration_goals(cw, s, nl, c)
    if _solve_selection(cw, mode, nl, s[MU]) > 0:
        cw.stats[STAT_RANK_DEFICIENT] += 1
    _solution(cw)
    store_cache(cw, t, x, mode)
    return True


@njit(cache=True)
def store_cache(cw, t, x, mode):
    """Mark the workspace as holding the solution at (t, x, mode)."""
    cw.cache_x[:] = x
    cw.cache_t[0] = t
    cw.cache_mode[:] = mode
    cw.cache_ok[0] = 1


@njit(cache=True)
def write_guards(m, cw, s, mode, g):
    """g[2i], g[2i+1] of contact i (module docstring) from the last solve; g has 2c entries."""
    nl = 2 * m.loop_body_a.shape[0]
    c = mode.shape[0]
    for i in range(c):
        rn = nl + i
        rt = nl + c + i
        if mode[i] == INACTIVE:
            g[2 * i] = cw.pos[rn]
            g[2 * i + 1] = 1.0
        elif mode[i] == STICK:
            g[2 * i] = cw.lam[rn]
            g[2 * i + 1] = s[MU] * cw.lam[rn] - abs(cw.lam[rt])
        else:
            g[2 * i] = cw.lam[rn]
            g[2 * i + 1] = cw.vel[rt] if mode[i] == SLIP_POS else -cw.vel[rt]


@njit(cache=True)
def guard_applies(m, s, mode, g, k):
    """True if guard k (value g[k] at the current state and mode) is at its boundary within
    tolerance (TOL_H for heights, TOL_V for slip speeds, TOL_REL x weight for forces).
    Guards that crossed together are fired one after the other; one whose meaning changed
    with an earlier jump of the same instant (a contact that went from slip to stick) is
    clearly positive then and does not apply."""
    i = k // 2
    if mode[i] == INACTIVE:
        tol = s[TOL_H] if k % 2 == 0 else 0.0
    elif k % 2 == 1 and mode[i] != STICK:
        tol = s[TOL_V]
    else:
        tol = s[TOL_REL] * _total_weight(m)
    return g[k] <= tol


@njit(cache=True)
def impact(m, w, cw, s, x, mode, strike):
    """Impulse of the touch-down of contact ``strike``: x[n:] (qd) updated in place.

    Rows: loop closures (velocity 0), every touching contact in its impulse mode found by
    :func:`_search` (normal velocity -e v_n- for an approach faster than BOUNCE_MIN_SPEED,
    else 0; tangential 0 when sticking). Returns 0 or a termination code."""
    n = cw.qdd.shape[0]
    nl = 2 * m.loop_body_a.shape[0]
    c = mode.shape[0]
    cw.stats[STAT_IMPACTS] += 1
    cw.cache_ok[0] = 0
    if not _prepare(m, w, cw, s, x, True):
        return NOT_FINITE
    cw.y0[:] = 0.0
    cw.d[:] = 0.0
    cw.goal[:] = 0.0
    v_scale = 0.0
    for i in range(c):
        vn = cw.vel[nl + i]
        if -vn > s[BOUNCE_MIN_SPEED]:
            cw.goal[nl + i] = -s[RESTITUTION] * vn
        v_scale = max(v_scale, abs(vn), abs(cw.vel[nl + c + i]))
    nt = _touching(cw, mode, nl, s, strike, s[TOL_V])
    if nt > MAX_TOUCHING:
        return TOO_MANY_CONTACTS
    f_scale = _total_weight(m) / max(m.gravity[0], 1.0) * v_scale
    if not _search(cw, mode, nt, nl, s, True, NO_POINT, f_scale, 1.0):
        return NO_CONSISTENT_MODE
    _solve_selection(cw, cw.best, nl, s[MU])
    _solution(cw)
    for j in range(n):
        x[n + j] += cw.qdd[j]
    return 0


@njit(cache=True)
def tangential_impact(m, w, cw, s, x, mode):
    """Painlevé's case: :func:`impact` with no striking point (qd in place), counted; the
    caller then resolves the modes at the new state. Returns 0 or a termination code."""
    cw.stats[STAT_TANGENTIAL_IMPACTS] += 1
    return impact(m, w, cw, s, x, mode, NO_POINT)


@njit(cache=True)
def resolve_modes(m, w, cw, s, t, x, mode, forced):
    """Choose the acceleration-level mode of every touching contact (module docstring), the
    controller's forces at (t, x) in cw.tau; ``forced`` (contact index or -1) must leave its
    mode if any other consistent combination exists. Writes ``mode``; returns 0 or a code."""
    nl = 2 * m.loop_body_a.shape[0]
    c = mode.shape[0]
    cw.stats[STAT_RESOLUTIONS] += 1
    cw.cache_ok[0] = 0
    if not _prepare(m, w, cw, s, x, False):
        return NOT_FINITE
    _forces_rhs(m, w, cw, x)
    _set_rhs(m, w, cw, cw.rhs)
    _acceleration_goals(cw, s, nl, c)
    f_scale = _total_weight(m)
    a_scale = max(m.gravity[0], 1.0)
    for speed in (max(s[TOL_V], s[REST_SPEED]) if forced < 0 else s[TOL_V], s[TOL_V]):  # resting points in
        nt = _touching(cw, mode, nl, s, NO_POINT, speed)
        if nt > MAX_TOUCHING:
            return TOO_MANY_CONTACTS
        if (_search(cw, mode, nt, nl, s, False, forced, f_scale, a_scale)
                or (forced >= 0 and _search(cw, mode, nt, nl, s, False, NO_POINT, f_scale, a_scale))):
            mode[:] = cw.best
            return 0
        if speed == s[TOL_V]:
            break                  # searched at TOL_V already: a second search would repeat it
    return NO_CONSISTENT_MODE


@njit(cache=True)
def jump_impact(m, w, cw, s, x, mode, k):
    """First half of the jump of guard k = 2 i + j: the impact if contact i touches down.
    Returns (code, forced): a termination code (0 = go on) and the contact that must
    change its mode in the following :func:`resolve_modes` (-1: none; -2: nothing to
    resolve, the guard does not apply)."""
    i = k // 2
    cw.cache_ok[0] = 0
    if mode[i] != INACTIVE:
        return 0, i
    if k % 2 == 1:
        return 0, -2
    return impact(m, w, cw, s, x, mode, i), -1


@njit(cache=True)
def read_forces(m, cw, c, out):
    """out[c, 2] = (lambda_n, lambda_t) per contact from the last solve (N; ground on body)."""
    nl = 2 * m.loop_body_a.shape[0]
    for i in range(c):
        out[i, 0] = cw.lam[nl + i]
        out[i, 1] = cw.lam[nl + c + i]
