"""Hard contacts by time stepping: one velocity-level step of the planar model (compiled).

The event-driven hard-contact model (:mod:`codesign.dynamics.contact_event` with
:mod:`codesign.dynamics.hybrid`) is exact between events, but a walking biped breaks it:
four foot points with Coulomb friction meet Painleve configurations (no consistent
contact mode at the acceleration level), Zeno touch-downs and thousands of events per
simulated second. Time stepping (Moreau 1988, Jean 1999; Stewart & Trinkle 1996; the
book of Acary & Brogliato 2008, ch. 10) integrates the same hard contacts -- unilateral,
no penetration stiffness, plastic impacts, Coulomb friction -- with impulses over a step
instead of forces at an instant. The impulse problem is posed on a positive definite
Delassus matrix, so it has a solution in every configuration; impacts, sticking,
slipping and release come out of the same equations; a step costs the same whatever
happens in it. The price is first-order accuracy in h (the test suite bounds the error
against the event-driven model and analytic solutions).

One step of length h (s) from (q, v) at time t, with generalized forces tau(q, v) of the
caller (controller) and the model's passive elements::

    M~     = M(q) + h D + h^2 K                                  (n x n)
    v_free = v + M~^-1 h (tau + tau_passive - C(q, v) - g(q) - h K v)
    v+     = v_free + M~^-1 J^T P                                 (P: impulses, N s)
    q+     = q + h v+                                            (semi-implicit Euler)

K, D (n x n, symmetric positive semi-definite) are the caller's stiffness and damping
matrices of the linear part of tau (tau = ... - K q - D v) plus those of the model's
tree-joint springs, dampers and ligaments (:func:`codesign.dynamics.passive.passive_gains`): treating them
implicitly (linearly implicit Euler, as "stable PD control", Tan, Liu & Turk 2011) keeps
a stiff impedance on a light foot (and the toe spring: 122 N m/rad on ~1e-5 kg m^2,
h sqrt(k/I) ~ 3 at h = 1 ms) stable. Everything else (gravity, Coriolis, loop-joint
springs) is explicit.

Rows J (R = 2 m + 2 c): the loop closures (2 per loop, world x and z of point_a - point_b,
:func:`codesign.dynamics.loops.loop_constraints`), then the contact normals n.J_i and
tangents t.J_i of CONTACT (:func:`codesign.dynamics.contact_rows.contact_rows`; ground line
with slope and height from CONTACT's settings). Conditions on v+:

* loops: J_l v+ = -c_loop phi / h (equality; c_loop = 1 closes the linearized residual
  in one step);
* contact i with gap g_i (m, its height above the ground line):
  u_n = n.J_i v+ >= b_i with b_i = -g_i / h if g_i >= 0 (the point reaches the ground at
  most at the end of the step, to first order) and b_i = -c_pen g_i / h if it is below
  the ground (the point leaves at the speed that would remove a fraction c_pen of the
  penetration in one step; that speed stays in the state, so a start 1 mm deep makes a
  ~1 mm hop: place models on the ground -- the walking rollout does -- and the
  sub-0.1 mm penetrations of normal stepping are harmless);
  P_n >= 0 and P_n (u_n - b_i) = 0;
  |P_t| <= mu P_n; the tangent velocity u_t = t.J_i v+ is 0 if |P_t| < mu P_n, otherwise
  P_t = -mu P_n sign(u_t) (maximal dissipation).

Only the contact points that can reach the ground within the step enter its problem:
height <= h (|u_n| + ``reach_speed``), reach_speed = 10 m/s (1 cm at h = 1 ms); the
others get no impulse (a swing foot costs nothing). A point pushed down faster than
that by the other impulses would penetrate for one step and be pushed out by the
penetration correction.

M~ is factored as L^T L along the tree (:func:`codesign.dynamics.linalg.sparse_ltl`: the
pattern of the tree's ancestor pairs plus the fill of the caller's implicit rows, given
to :func:`make_step_workspace`; a step whose M~ leaves that pattern factors densely and
counts STAT_DENSE), so M~^-1 J^T = L^-1 (L^-T J^T) and G = J M~^-1 J^T = Y^T Y with
Y = L^-T J^T, whose column for a contact row stays on the point's branch.

Solution: the loop rows are eliminated exactly (Schur complement of G_ll = J_l M~^-1
J_l^T, Cholesky with a relative regularisation of 1e-12 for redundant rows), leaving the
contact problem u = r + W P on the loop-constrained Delassus matrix W (2c x 2c; its
diagonal raised by the relative ``regularization``, 1e-6, so that the impulses of
redundant points -- heel, ball and toe of a flat foot -- are unique and symmetric). It
is solved exactly by an active-set guess (the last step's contact modes) and one dense
solve, checked against every complementarity condition; when the guess fails, projected
block Gauss-Seidel (one 2 x 2 Coulomb problem per point, solved exactly: stick, slip +,
slip - or free) from the last impulses gives new modes for another exact solve; when that
fails too, Lemke's pivoting method on the problem's Stewart-Trinkle LCP
(:mod:`codesign.dynamics.contact_lcp`) finishes it, and its modes get the same exact
solve (PIVOTING = 1; :func:`codesign.dynamics.contact_solvers.solve_contacts`). The
legacy solver (PIVOTING = 0) keeps Gauss-Seidel's impulses instead (STAT_APPROX).

Every step's impulses are measured against the contact conditions
(:func:`record_residuals`, :func:`codesign.dynamics.contact_lcp.contact_residuals`): the
normal approach below its bound and the slip not met by maximal dissipation (m/s), the
negative normal impulse and the friction outside the cone (N s), and the work the
impulses do that an exact solution does not (J). A step is solved when the first two are
within TOL_VELOCITY (1e-6 m/s), the next two within TOL_IMPULSE (1e-6 N s) and the work
within TOL_ENERGY (1e-6 J); the statistics count the others (STAT_ABOVE_TOL,
STAT_ENERGY_ABOVE) and keep each residual's largest and its distribution over the steps
(res_max, res_hist). The residuals are those of the regularised problem: the 1e-6
relative raise of W's diagonal itself moves a point's velocity by 1e-6 W_ii P_i (~1e-7
m/s for a foot's 0.7-N s impulse of a 1-ms stance step), which no tolerance counts.

Forces for the caller: contact forces P_c / h (N, normal and tangent), loop forces
P_l / h (N, force on point a; -lambda on b), the acceleration (v+ - v) / h.

Slip for the caller: the tangential velocity u_t = t.J_i v+ of every point after the step
(0 for a point outside the step's problem) and, accumulated over the steps, each point's
slip path (sum of h |u_t| over the steps it carries an impulse, m) and the work its
friction impulse dissipates (sum of -P_t u_t, J; maximal dissipation makes each term
>= 0, a sticking point adds 0).

The soft law, stepped (SOFT_STIFFNESS > 0): the same step with the soft penalty law of
:mod:`codesign.dynamics.contact_soft` taken at the step's end in place of the hard
conditions (:mod:`codesign.dynamics.contact_soft_step`): the event-driven soft model's
forces without its stiff adaptive integration. Its one residual is the law's (N s).

The production caller is the walking rollout (:mod:`codesign.walking.stepping`); a
passive driver for tests and benchmarks is :mod:`codesign.dynamics.testing.stepping`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from codesign.dynamics import contact_lcp as lcp
from codesign.dynamics import contact_rows as ct
from codesign.dynamics.contact_soft_step import soft_residual, solve_soft
from codesign.dynamics.contact_solvers import APPROXIMATE, EXACT, solve_contacts
from codesign.dynamics import cycles as cy
from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import forward_kinematics
from codesign.dynamics.linalg import (cholesky, cholesky_backward, fill_pattern, sparse_l_solve,
                                      sparse_lt_solve, sparse_lt_solve2, sparse_ltl)
from codesign.dynamics.passive import add_passive_forces, passive_gains
from codesign.dynamics.rnea import bias_forces

# step settings vector
H = 0              # step length, s
LOOP_CORRECTION = 1  # fraction of a loop-closure residual removed per step
PENETRATION_CORRECTION = 2  # fraction of a penetration pushed out per step
PGS_TOL = 3        # relative impulse change that ends the Gauss-Seidel sweeps
PGS_MAX_SWEEPS = 4
REGULARIZATION = 5  # relative increase of the Delassus diagonal (unique impulses)
REACH_SPEED = 6     # m/s: a point higher than h (|v_n| + this) stays out of the step's contact problem
PIVOTING = 7        # 1: Lemke's method finishes what Gauss-Seidel's modes do not; 0: the legacy solver
TOL_VELOCITY = 8    # m/s: a step's gap and slip residuals (contact_lcp.RES_GAP, RES_SLIP) within it are solved
TOL_IMPULSE = 9     # N s: the same of its negative-impulse and cone residuals (RES_NEGATIVE, RES_CONE)
TOL_ENERGY = 10     # J: the bound on a step's |RES_WORK| (the energy its impulses add or remove wrongly)
SOFT_STIFFNESS = 11  # N/m: > 0 steps the soft law (contact_soft_step) instead of hard contacts
SOFT_DAMPING = 12    # N s/m: its normal damper
SOFT_VREG = 13       # m/s: its friction's regularisation
SOFT_EXPONENT = 14   # its spring's exponent n (1: linear; contact_soft.soft_normal_force)
SOFT_DISSIPATION = 15  # s/m: its Hunt-Crossley dissipation c
N_STEP_SETTINGS = 16

# step statistics (int64)
STAT_STEPS = 0
STAT_SWEEPS = 1
STAT_UNCONVERGED = 2   # approximate steps (STAT_APPROX) whose Gauss-Seidel hit PGS_MAX_SWEEPS
STAT_APPROX = 3        # steps that kept Gauss-Seidel's impulses (no exact active-set solve)
STAT_DENSE = 4         # steps whose M~ had a nonzero outside the workspace's pattern (factored densely)
STAT_PIVOTED = 5       # steps that called Lemke's method (Gauss-Seidel's modes did not solve exactly)
STAT_PIVOTS = 6        # Lemke's pivots, summed
STAT_ABOVE_TOL = 7     # steps whose impulses miss TOL_VELOCITY or TOL_IMPULSE (contact_residuals)
STAT_ENERGY_ABOVE = 8  # steps whose |RES_WORK| exceeds TOL_ENERGY
N_STEP_STATS = 9

# the residuals' distribution over the steps: a histogram of each residual (contact_lcp.RES_*)
# in quarter decades from 1e-15 (bin 0: at most 1e-15, exact to rounding) to 1e5 (the last
# bin holds everything above); walking.stepping.residual_quantile reads a quantile to a factor 10^0.25
HIST_DECADE_BINS = 4
HIST_LOG_MIN = -15.0
N_HIST_BINS = 1 + HIST_DECADE_BINS * 20

# contact modes reported per point (same codes as CONTACT)
INACTIVE = ct.INACTIVE
STICK = ct.STICK
SLIP_POS = ct.SLIP_POS
SLIP_NEG = ct.SLIP_NEG

STEP_OK = 0
STEP_MASS_NOT_PD = 1
STEP_NOT_FINITE = 2

StepWorkspace = namedtuple(
    "StepWorkspace",
    [
        "Mt",       # [n, n] M + h D + h^2 K, then its Cholesky factor (lower)
        "f",        # [n] h (tau + passive - C - g - h K v)
        "v_free",   # [n]
        "K",        # [R, n] rows: loops (2m), normals (c), tangents (c); a point out of reach keeps its old rows
        "src",      # int64[R] the rows of the step's problem (rows of K): loops, kept normals, kept tangents
        "sel",      # int64[c] contact points kept in the step's problem (first ca entries)
        "Pc",       # [2c] impulses of the kept points (normals, tangents)
        "mode_c",   # int64[c] their modes
        "bias",     # [R] scratch (J-dot q-dot of the rows, unused)
        "vel",      # [R] row velocities at v
        "pos",      # [R] loop residuals (m), contact heights (m), 0 for tangents
        "Y",        # [R, n] rows of M~^-1 J^T (row r = M~^-1 J_r^T)
        "G",        # [R, R] J M~^-1 J^T
        "Gl",       # [2m, 2m] Cholesky factor of the loop block (regularised)
        "Z",        # [2m, 2c + 1] Lg^-1 [G_lc, b_l] (G_ll = Lg Lg^T)
        "W",        # [2c, 2c] loop-constrained Delassus matrix of the contacts
        "r",        # [2c] contact row velocities before contact impulses
        "lower",    # [c] lower bound on each normal velocity
        "P",        # [2c] contact impulses (normals, tangents), N s; warm start
        "Pl",       # [2m] loop impulses, N s
        "force",    # [c, 2] contact forces (normal, tangent), N, of the last step
        "loop_force",  # [2m] loop forces on point a (world x, z), N, of the last step
        "mode",     # int64[c] contact mode of each point in the last step (guess of the next)
        "A",        # [2c, 2c] scratch of the exact active-set solve
        "b",        # [2c]
        "cols",     # int64[2c]
        "P_last",   # [2c] scratch of solve_contacts
        "qdd",      # [n] (v+ - v) / h of the last step
        "dv",       # [n] scratch: the impulses' velocity change
        "row_end",  # int64[R] scratch: 1 + the last nonzero column of each compact row
        "fac_ptr",  # int64[n+1] \ pattern of M~'s factor (linalg.fill_pattern): the tree and
        "fac_idx",  # int64[nnz] /  the implicit rows given to make_step_workspace
        "fac_mask",  # uint8[n, n] 1 on that pattern (lower triangle) and the diagonal
        "full_ptr",  # int64[n+1] \ the dense pattern, for a step whose M~ leaves the pattern
        "full_idx",  # int64[n(n-1)/2] /
        "stats",    # int64[N_STEP_STATS]
        "ut",       # [c] tangential velocity t.J v+ of each point after the last step, m/s
        "slip_path",      # [c] accumulated h |u_t| of each point while it carries an impulse, m
        "friction_work",  # [c] accumulated -P_t u_t of each point (friction dissipation), J
        "cycles",   # int64[cycles.N_PHASES] processor cycles spent per phase (codesign.dynamics.cycles)
        "lcp",      # contact_lcp.LcpScratch for c points (Lemke's method)
        "res",      # [contact_lcp.N_RESIDUALS] residuals of the last step's impulses (m/s, N s, J)
        "res_max",  # [N_RESIDUALS] their largest over the steps (RES_WORK: the largest |.|)
        "res_since",  # [N_RESIDUALS] their largest since the caller last zeroed it (records)
        "res_hist",   # int64[N_RESIDUALS, N_HIST_BINS] their distribution over the steps
    ],
)


def step_settings(h: float = 1e-3, loop_correction: float = 1.0,
                  penetration_correction: float = 0.2, pgs_tol: float = 1e-8,
                  pgs_max_sweeps: int = 100, regularization: float = 1e-6,
                  reach_speed: float = 10.0, pivoting: bool = True, tol_velocity: float = 1e-6,
                  tol_impulse: float = 1e-6, tol_energy: float = 1e-6, soft_stiffness: float = 0.0,
                  soft_damping: float = 0.0, soft_v_reg: float = 1e-2, soft_exponent: float = 1.0,
                  soft_dissipation: float = 0.0) -> np.ndarray:
    """float64[N_STEP_SETTINGS] of :func:`step` (h in s; the tolerances in m/s, N s, J:
    the module docstring; soft_stiffness > 0 (N/m^n) steps the soft law, its damping in N
    s/m, its exponent n and Hunt-Crossley dissipation in s/m)."""
    s = np.zeros(N_STEP_SETTINGS)
    s[H] = h
    s[LOOP_CORRECTION] = loop_correction
    s[PENETRATION_CORRECTION] = penetration_correction
    s[PGS_TOL] = pgs_tol
    s[PGS_MAX_SWEEPS] = pgs_max_sweeps
    s[REGULARIZATION] = regularization
    s[REACH_SPEED] = reach_speed
    s[PIVOTING] = 1.0 if pivoting else 0.0
    s[TOL_VELOCITY] = tol_velocity
    s[TOL_IMPULSE] = tol_impulse
    s[TOL_ENERGY] = tol_energy
    s[SOFT_STIFFNESS], s[SOFT_DAMPING], s[SOFT_VREG] = soft_stiffness, soft_damping, soft_v_reg
    s[SOFT_EXPONENT], s[SOFT_DISSIPATION] = soft_exponent, soft_dissipation
    return s


def make_step_workspace(model, implicit_rows: np.ndarray | None = None) -> StepWorkspace:
    """Scratch arrays of :func:`step` for ``model`` (nothing is allocated per step).

    ``implicit_rows`` (float64[k, n]): the rows whose outer products the caller's implicit
    stiffness and damping (step's Kimp, Dimp) are made of, besides the diagonal (the
    controller's joint rows); they set the sparsity pattern of M~'s factor. A step whose
    M~ has a nonzero outside that pattern is still exact: it factors densely and counts
    STAT_DENSE."""
    n, nl, c = model.n, 2 * model.n_loops, model.n_contacts
    R = nl + 2 * c
    z = np.zeros
    rows = np.zeros((0, n)) if implicit_rows is None else np.asarray(implicit_rows, dtype=np.float64)
    fac_ptr, fac_idx = fill_pattern(np.asarray(model.parent), rows)
    fac_mask = np.eye(n, dtype=np.uint8)
    for i in range(n):
        fac_mask[i, fac_idx[fac_ptr[i]:fac_ptr[i + 1]]] = 1
    full_ptr = np.array([i * (i - 1) // 2 for i in range(n + 1)], dtype=np.int64)
    full_idx = np.array([j for i in range(n) for j in range(i)], dtype=np.int64)
    return StepWorkspace(
        Mt=z((n, n)), f=z(n), v_free=z(n), K=z((R, n)), src=np.zeros(R, dtype=np.int64),
        sel=np.zeros(c, dtype=np.int64), Pc=z(2 * c), mode_c=np.zeros(c, dtype=np.int64),
        bias=z(R), vel=z(R), pos=z(R),
        Y=z((R, n)), G=z((R, R)), Gl=z((nl, nl)), Z=z((nl, 2 * c + 1)), W=z((2 * c, 2 * c)),
        r=z(2 * c), lower=z(c), P=z(2 * c), Pl=z(nl), force=z((c, 2)), loop_force=z(nl),
        mode=np.zeros(c, dtype=np.int64), A=z((2 * c, 2 * c)), b=z(2 * c),
        cols=np.zeros(2 * c, dtype=np.int64), P_last=z(2 * c), qdd=z(n), dv=z(n),
        row_end=np.zeros(R, dtype=np.int64),
        fac_ptr=fac_ptr, fac_idx=fac_idx, fac_mask=fac_mask, full_ptr=full_ptr, full_idx=full_idx,
        stats=np.zeros(N_STEP_STATS, dtype=np.int64), ut=z(c), slip_path=z(c),
        friction_work=z(c), cycles=np.zeros(cy.N_PHASES, dtype=np.int64),
        lcp=lcp.lcp_scratch(c), res=z(lcp.N_RESIDUALS), res_max=z(lcp.N_RESIDUALS),
        res_since=z(lcp.N_RESIDUALS),
        res_hist=np.zeros((lcp.N_RESIDUALS, N_HIST_BINS), dtype=np.int64))


# --------------------------------------------------------------------------- the step
@njit(cache=True, _nrt=False)
def _hist_bin(value):
    """The residual histogram's bin of a value >= 0 (module constants)."""
    if not value > 10.0 ** HIST_LOG_MIN:
        return 0
    b = 1 + int(math.floor(HIST_DECADE_BINS * (math.log10(value) - HIST_LOG_MIN)))
    return min(b, N_HIST_BINS - 1)


@njit(cache=True, _nrt=False)
def record_residuals(sw, ss, mu, ca):
    """Measure the residuals of the step's impulses (sw.Pc on the compact problem W, r,
    lower of ca points: :func:`codesign.dynamics.contact_lcp.contact_residuals`) into sw.res
    and add them to the walk's largest, the record's largest and the histogram; count a step
    beyond the velocity or impulse tolerance and one beyond the energy bound. An exact
    active-set solution was checked against every condition to 1e-9 m/s and 1e-12 of its
    largest impulse: measured all the same, so the statistics cover every step. Under the
    soft law (SOFT_STIFFNESS > 0) the one residual is the law's (N s, kept as RES_NEGATIVE)."""
    if ss[SOFT_STIFFNESS] > 0.0:
        res = sw.res
        res[:] = 0.0
        law = (ss[SOFT_STIFFNESS], ss[SOFT_DAMPING], ss[SOFT_EXPONENT], ss[SOFT_DISSIPATION])
        res[lcp.RES_NEGATIVE] = soft_residual(sw.W, sw.r, sw.lower, ss[H], law, mu, ss[SOFT_VREG], sw.Pc, ca)
    else:
        res = lcp.contact_residuals(sw.W, sw.r, sw.lower, mu, sw.Pc, ca, ss[TOL_IMPULSE], sw.res)
    for j in range(lcp.N_RESIDUALS):
        v = abs(res[j]) if j == lcp.RES_WORK else max(res[j], 0.0)
        sw.res_max[j] = max(sw.res_max[j], v)
        sw.res_since[j] = max(sw.res_since[j], v)
        sw.res_hist[j, _hist_bin(v)] += 1
    if (res[lcp.RES_GAP] > ss[TOL_VELOCITY] or res[lcp.RES_SLIP] > ss[TOL_VELOCITY]
            or res[lcp.RES_NEGATIVE] > ss[TOL_IMPULSE] or res[lcp.RES_CONE] > ss[TOL_IMPULSE]):
        sw.stats[STAT_ABOVE_TOL] += 1
    if abs(res[lcp.RES_WORK]) > ss[TOL_ENERGY]:
        sw.stats[STAT_ENERGY_ABOVE] += 1


@njit(cache=True, _nrt=False)
def step(m, w, sw, cs, ss, q, v, tau, Kimp, Dimp):
    """Advance (q, v) by one step of ss[H] seconds in place (module docstring).

    m: model arrays; w: engine workspace; sw: StepWorkspace; cs: CONTACT settings (mu,
    slope, ground height); ss: step settings; q, v: float64[n]; tau: float64[n] applied
    generalized forces at (t, q, v) (the model's passive forces are added here);
    Kimp, Dimp: float64[n, n] the implicit stiffness and damping of tau. Writes
    sw.force, sw.loop_force, sw.mode, sw.qdd, sw.ut and adds to sw.slip_path,
    sw.friction_work. Returns STEP_OK or an error code."""
    n = q.shape[0]
    h = ss[H]
    nl = 2 * m.loop_body_a.shape[0]
    c = m.contact_body.shape[0]
    t0 = cy.cycles()
    forward_kinematics(m, q, v, w)
    mass_matrix(m, w)
    bias_forces(m, w)
    f = sw.f
    for i in range(n):
        f[i] = tau[i]
    add_passive_forces(m, w, q, v, f)
    t1 = cy.add(sw.cycles, cy.DYNAMICS, t0)
    Mt = sw.Mt
    M = w.M
    bias = w.h
    mask = sw.fac_mask
    ptr = sw.fac_ptr
    idx = sw.fac_idx
    dense = False
    for i in range(n):   # the lower triangle of M~ (what the factorisation reads)
        kv = 0.0
        for j in range(n):
            kv += Kimp[i, j] * v[j]
        for j in range(i + 1):
            Mt[i, j] = M[i, j] + h * Dimp[i, j] + h * h * Kimp[i, j]
            if Mt[i, j] != 0.0 and mask[i, j] == 0:
                dense = True
        f[i] = h * (f[i] - bias[i] - h * kv)
    if dense:
        ptr = sw.full_ptr
        idx = sw.full_idx
        sw.stats[STAT_DENSE] += 1
    for i in range(n):   # the model's tree-joint springs, dampers and ligaments, implicitly
        k, d = passive_gains(m, i, q[i])
        Mt[i, i] += h * d + h * h * k
        f[i] -= h * h * k * v[i]
    if not sparse_ltl(Mt, n, ptr, idx):
        return STEP_MASS_NOT_PD
    vf = sw.v_free
    for i in range(n):
        vf[i] = f[i]
    sparse_lt_solve(Mt, n, ptr, idx, vf)
    sparse_l_solve(Mt, n, ptr, idx, vf)
    for i in range(n):
        vf[i] += v[i]
    t0 = cy.add(sw.cycles, cy.FACTOR, t1)
    # rows of every loop and contact; the contact problem keeps the points that can reach
    # the ground within the step (sel[:ca]); the others get no impulse
    ct.loop_rows(m, w, sw.K, sw.bias, sw.vel, sw.pos)
    ct.contact_rows(m, w, cs, sw.K, sw.bias, sw.vel, sw.pos, nl, h, ss[REACH_SPEED])
    ca = 0
    for i in range(c):
        if ct.in_reach(sw.pos[nl + i], sw.vel[nl + i], h, ss[REACH_SPEED]):
            sw.sel[ca] = i
            ca += 1
    Rc = nl + 2 * ca
    src = sw.src                 # compact rows K[src[r]]: loops, normals, tangents of sel
    for r in range(Rc):
        if r < nl:
            src[r] = r
        elif r < nl + ca:
            src[r] = nl + sw.sel[r - nl]
        else:
            src[r] = nl + c + sw.sel[r - nl - ca]
    t1 = cy.add(sw.cycles, cy.ROWS, t0)
    # Y = L^-T J^T (M~ = L^T L), G = J M~^-1 J^T = Y^T Y on the compact rows; a contact
    # row is nonzero on its point's branch only and so is its column of Y
    # (coordinates are numbered parents first, so Y[r] is zero from the row's last nonzero on)
    Y = sw.Y
    end = sw.row_end
    for r in range(Rc):
        kr = sw.K[src[r]]
        e = n
        while e > 0 and kr[e - 1] == 0.0:
            e -= 1
        end[r] = e
        for i in range(n):
            Y[r, i] = kr[i]
    # rows in pairs with the same branches -- a loop's x and z rows, a point's normal and
    # tangent -- solved together (sparse_lt_solve2); G in 2 x 2 blocks of rows (a, a + 1),
    # (b, b + 1): four independent sums, each over i ascending from 0 as a single dot
    # product (the terms past a row's end are exact zeros): the same G to the bit
    for r in range(0, nl, 2):
        sparse_lt_solve2(Mt, max(end[r], end[r + 1]), ptr, idx, Y[r], Y[r + 1])
    for j in range(ca):
        a = nl + j
        b = nl + ca + j
        sparse_lt_solve2(Mt, max(end[a], end[b]), ptr, idx, Y[a], Y[b])
    G = sw.G
    for a in range(0, Rc, 2):
        ea = max(end[a], end[a + 1])
        for b in range(0, a, 2):
            g00 = 0.0
            g01 = 0.0
            g10 = 0.0
            g11 = 0.0
            for i in range(min(ea, max(end[b], end[b + 1]))):
                y0 = Y[a, i]
                y1 = Y[a + 1, i]
                z0 = Y[b, i]
                z1 = Y[b + 1, i]
                g00 += y0 * z0
                g01 += y0 * z1
                g10 += y1 * z0
                g11 += y1 * z1
            G[a, b] = g00
            G[b, a] = g00
            G[a, b + 1] = g01
            G[b + 1, a] = g01
            G[a + 1, b] = g10
            G[b, a + 1] = g10
            G[a + 1, b + 1] = g11
            G[b + 1, a + 1] = g11
        g00 = 0.0
        g10 = 0.0
        g11 = 0.0
        for i in range(ea):
            y0 = Y[a, i]
            y1 = Y[a + 1, i]
            g00 += y0 * y0
            g10 += y1 * y0
            g11 += y1 * y1
        G[a, a] = g00
        G[a + 1, a] = g10
        G[a, a + 1] = g10
        G[a + 1, a + 1] = g11
    # loop block, G_ll = Lg Lg^T: X = Lg^-1 [G_lc, b_l] with b_l = target - J_l v_free, so that
    # W = G_cc - X_c^T X_c, r = J_c v_free + X_c^T x_b, P_l = Lg^-T (x_b - X_c P_c)
    if nl > 0:
        gmax = 0.0
        for a in range(nl):
            for b in range(nl):
                sw.Gl[a, b] = sw.G[a, b]
            gmax = max(gmax, sw.G[a, a])
        if not cholesky(sw.Gl, nl, 1e-12 * gmax):
            return STEP_NOT_FINITE
        Z = sw.Z
        for a in range(nl):
            for k in range(2 * ca):
                Z[a, k] = sw.G[a, nl + k]
            jv = 0.0
            for i in range(end[a]):     # (past a row's end its terms are exact zeros)
                jv += sw.K[a, i] * vf[i]
            Z[a, 2 * ca] = -ss[LOOP_CORRECTION] * sw.pos[a] / h - jv
        for a in range(nl):      # Z <- Lg^-1 Z, row by row: the columns' divisions overlap
            d = sw.Gl[a, a]
            for k in range(2 * ca + 1):
                s = Z[a, k]
                for b in range(a):
                    s -= sw.Gl[a, b] * Z[b, k]
                Z[a, k] = s / d
    # contact problem u = r + W P on the loop-constrained metric (compact, 2 ca unknowns)
    for a in range(2 * ca):
        ra = nl + a
        jv = 0.0
        for i in range(end[ra]):
            jv += sw.K[src[ra], i] * vf[i]
        for l in range(nl):
            jv += sw.Z[l, a] * sw.Z[l, 2 * ca]
        sw.r[a] = jv
        for b in range(a + 1):
            wab = sw.G[ra, nl + b]
            for l in range(nl):
                wab -= sw.Z[l, a] * sw.Z[l, b]
            sw.W[a, b] = wab
            sw.W[b, a] = wab
    if ss[SOFT_STIFFNESS] == 0.0:   # (the soft law's compliance makes its impulses unique)
        for a in range(2 * ca):
            sw.W[a, a] *= 1.0 + ss[REGULARIZATION]
    for j in range(ca):
        i = sw.sel[j]
        g = sw.pos[nl + i]
        sw.lower[j] = -g / h if g >= 0.0 else -ss[PENETRATION_CORRECTION] * g / h
        sw.Pc[j] = sw.P[i]               # warm start and mode guess of the kept points
        sw.Pc[ca + j] = sw.P[c + i]
        sw.mode_c[j] = sw.mode[i]
    mu = cs[ct.MU]
    t0 = cy.add(sw.cycles, cy.DELASSUS, t1)
    if ss[SOFT_STIFFNESS] > 0.0:     # the soft law (lower: the points' heights, m)
        for j in range(ca):
            sw.lower[j] = sw.pos[nl + sw.sel[j]]
        law = (ss[SOFT_STIFFNESS], ss[SOFT_DAMPING], ss[SOFT_EXPONENT], ss[SOFT_DISSIPATION])
        sweeps = solve_soft(sw.W, sw.r, sw.lower, h, law, mu, ss[SOFT_VREG], sw.Pc, sw.mode_c, ca, ss[PGS_TOL],
                            int(ss[PGS_MAX_SWEEPS]))
        pivots, outcome = 0, (APPROXIMATE if sweeps > ss[PGS_MAX_SWEEPS] else EXACT)
    else:
        sweeps, pivots, outcome = solve_contacts(sw.W, sw.r, sw.lower, mu, sw.Pc, sw.mode_c, ca,
                                                 ss[PGS_TOL], int(ss[PGS_MAX_SWEEPS]), sw.A, sw.b,
                                                 sw.cols, sw.P_last, ss[PIVOTING] != 0.0, sw.lcp)
    t1 = cy.add(sw.cycles, cy.CONTACT, t0)
    sw.stats[STAT_STEPS] += 1
    sw.stats[STAT_SWEEPS] += sweeps
    sw.stats[STAT_PIVOTS] += pivots
    if pivots > 0:
        sw.stats[STAT_PIVOTED] += 1
    if outcome == APPROXIMATE:   # (sweeps summed over rounds may pass the limit on an exact step)
        sw.stats[STAT_APPROX] += 1
        if sweeps > ss[PGS_MAX_SWEEPS]:
            sw.stats[STAT_UNCONVERGED] += 1
    record_residuals(sw, ss, mu, ca)
    for i in range(c):
        sw.P[i] = 0.0
        sw.P[c + i] = 0.0
        sw.mode[i] = INACTIVE
    for j in range(ca):
        i = sw.sel[j]
        sw.P[i] = sw.Pc[j]
        sw.P[c + i] = sw.Pc[ca + j]
        sw.mode[i] = sw.mode_c[j]
    # loop impulses and the new state
    for l in range(nl):
        pl = sw.Z[l, 2 * ca]
        for b in range(2 * ca):
            pl -= sw.Z[l, b] * sw.Pc[b]
        sw.Pl[l] = pl
    cholesky_backward(sw.Gl, nl, sw.Pl)
    for l in range(nl):
        sw.loop_force[l] = sw.Pl[l] / h
    dv = sw.dv                   # M~^-1 J^T P = L^-1 Y P, row by row (each dv[i] sums
    for i in range(n):           # the rows in order, as a dot product over them would)
        dv[i] = 0.0
    for r in range(Rc):
        pr = sw.Pl[r] if r < nl else sw.Pc[r - nl]
        for i in range(end[r]):
            dv[i] += Y[r, i] * pr
    sparse_l_solve(Mt, n, ptr, idx, dv)
    for i in range(n):
        vn = vf[i] + dv[i]
        sw.qdd[i] = (vn - v[i]) / h
        v[i] = vn
        q[i] += h * vn
    for i in range(c):
        sw.force[i, 0] = sw.P[i] / h
        sw.force[i, 1] = sw.P[c + i] / h
        sw.ut[i] = 0.0
    for j in range(ca):          # slip of the kept points: u_t = t.J v+ (rows at q)
        i = sw.sel[j]
        ut = 0.0
        for k in range(end[nl + ca + j]):
            ut += sw.K[src[nl + ca + j], k] * v[k]
        sw.ut[i] = ut
        if sw.P[i] > 0.0:
            sw.slip_path[i] += h * abs(ut)
            sw.friction_work[i] -= sw.P[c + i] * ut
    cy.add(sw.cycles, cy.UPDATE, t1)
    for i in range(n):
        if not (np.isfinite(q[i]) and np.isfinite(v[i])):
            return STEP_NOT_FINITE
    return STEP_OK
