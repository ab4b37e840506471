"""Loop closures (thesis 2.6.9): constraints, constrained forward dynamics, projection.

A revolute loop-closure joint k makes point A (on body a) and point B (on body b)
coincide: phi_k = p_A - p_B = 0 (2 rows, world x and z). Differentiating twice gives the
acceleration constraint of eq. 2.73, K qdd = k, with K = J_A - J_B and
k = -(Jdot_A - Jdot_B) qd; drift is stabilised with Baumgarte's terms (configurable;
alpha = beta = 0 switches it off):

    k = -(Jdot_A - Jdot_B) qd - 2 alpha phidot - beta^2 phi.

The equations of motion (eq. 2.75) M qdd + C = tau + K^T lambda are solved as in
eq. 2.81-2.90: with M = L^T L (tree-sparse, linalg.ltl_factor), Y = L^-T K^T,
A = Y^T Y = K M^-1 K^T, b = k - K M^-1 (tau - C), A lambda = b, then
qdd = M^-1 (tau - C + K^T lambda). lambda_k (N, world axes) is the force that body b
exerts on body a at the loop point (body b feels -lambda_k). A is singular when the
constraint set is redundant (e.g. a planar loop closed twice, or a singular posture):
the pivoted solve keeps a maximal independent subset of rows and flags the others in
w.flags[0] (number of dropped rows) and w.flags[1] (rank) -- never an exception.

Rows are generic: other constraint sets (active contacts, CONTACT) append their rows
after the 2 m loop rows in w.rows / w.rows_rhs and call :func:`constrained_solve` with
the total row count.
"""

from __future__ import annotations

from numba import njit

from codesign.dynamics.aba import aba
from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import add_point_jacobian, forward_kinematics, point_kinematics
from codesign.dynamics.linalg import linv_mul, ltinv_mul, ltl_factor, mass_solve, pivoted_cholesky_solve
from codesign.dynamics.rnea import bias_forces

DEFAULT_REL_TOL = 1e-12


@njit(cache=True, _nrt=False)
def loop_constraints(m, w, alpha, beta):
    """Fill rows 0 .. 2m-1 of w.rows (K), w.rows_rhs (k), w.phi (m), w.phidot (m/s) for
    the loop closures, after forward_kinematics. Returns 2 m (the number of rows)."""
    nl = m.loop_body_a.shape[0]
    pa = w.pts[0]
    pb = w.pts[1]
    for k in range(nl):
        r = 2 * k
        a = m.loop_body_a[k]
        b = m.loop_body_b[k]
        point_kinematics(w, a, m.loop_xz_a[k, 0], m.loop_xz_a[k, 1], pa)
        point_kinematics(w, b, m.loop_xz_b[k, 0], m.loop_xz_b[k, 1], pb)
        w.rows[r, :] = 0.0
        w.rows[r + 1, :] = 0.0
        add_point_jacobian(m, w, a, pa[0], pa[1], 1.0, w.rows, r)
        add_point_jacobian(m, w, b, pb[0], pb[1], -1.0, w.rows, r)
        for d in range(2):
            phi = pa[d] - pb[d]
            phid = pa[2 + d] - pb[2 + d]
            w.phi[r + d] = phi
            w.phidot[r + d] = phid
            w.rows_rhs[r + d] = -(pa[4 + d] - pb[4 + d]) - 2.0 * alpha * phid - beta * beta * phi
    return 2 * nl


@njit(cache=True, _nrt=False)
def constrained_solve(m, w, n_rows, tau, rel_tol):
    """qdd with K qdd = k for the first n_rows of w.rows / w.rows_rhs.

    Needs (for the current state) w.L = factor of M (``ltl_factor``) and w.h = C + g
    (``bias_forces``). tau: float64[n] applied generalized forces. Writes w.qdd[n] and
    w.lam[:n_rows] (constraint forces, see module docstring), w.flags[0] (dropped rows),
    w.flags[1] (rank). Returns the number of dropped (dependent) rows.
    """
    n = tau.shape[0]
    parent = m.parent
    qdd = w.qdd
    for i in range(n):
        qdd[i] = tau[i] - w.h[i]
    mass_solve(parent, w.L, qdd)  # unconstrained accelerations
    return correct_to_rows(parent, w, n_rows, w.rows_rhs, qdd, rel_tol)


@njit(cache=True, _nrt=False)
def correct_to_rows(parent, w, n_rows, target, x, rel_tol):
    """x <- x + M^-1 G^T lam with (G M^-1 G^T) lam = target - G x, G = w.rows[:n_rows]:
    the smallest change of x in the mass metric that gives G x = target (the common core
    of the constrained accelerations, impacts and velocity projection). Needs w.L.
    lam -> w.lam[:n_rows]; sets w.flags[0] (dropped rows), w.flags[1] (rank); returns
    the number of dropped rows."""
    n = x.shape[0]
    if n_rows == 0:
        w.flags[0] = 0
        w.flags[1] = 0
        return 0
    Y = w.rows_y
    for s in range(n_rows):
        for i in range(n):
            Y[s, i] = w.rows[s, i]
        ltinv_mul(parent, w.L, Y[s])  # Y = L^-T G^T, so G M^-1 G^T = Y Y^T
    for s in range(n_rows):
        for t in range(s + 1):
            acc = 0.0
            for i in range(n):
                acc += Y[s, i] * Y[t, i]
            w.A[s, t] = acc
            w.A[t, s] = acc
        acc = 0.0
        for i in range(n):
            acc += w.rows[s, i] * x[i]
        w.tmp_r[s] = target[s] - acc
    rank = pivoted_cholesky_solve(w.A, w.tmp_r, n_rows, w.lam, w.perm, w.tmp_r2, rel_tol)
    corr = w.tmp_n  # M^-1 G^T lam = L^-1 (Y^T lam)
    for i in range(n):
        acc = 0.0
        for s in range(n_rows):
            acc += Y[s, i] * w.lam[s]
        corr[i] = acc
    linv_mul(parent, w.L, corr)
    for i in range(n):
        x[i] += corr[i]
    w.flags[0] = n_rows - rank
    w.flags[1] = rank
    return n_rows - rank


@njit(cache=True, _nrt=False)
def prepare_mass(m, w):
    """w.M (CRBA), its factor w.L and w.h = C + g, after forward_kinematics. Sets
    w.flags[2] (nonzero if M is not positive definite) and returns it."""
    mass_matrix(m, w)
    status = ltl_factor(m.parent, w.M, w.L)
    w.flags[2] = status
    bias_forces(m, w)
    return status


@njit(cache=True, _nrt=False)
def forward_dynamics(m, q, qd, tau, w, alpha, beta, rel_tol):
    """Accelerations w.qdd[n] of the model at (q, qd) under generalized forces tau[n]
    (N m / N; passive elements NOT included -- add them with add_passive_forces).

    Tree without loops: ABA (O(n)). With loops: K qdd = k with Baumgarte (alpha, beta)
    and multipliers in w.lam[:2m]. Returns 0 if fine, else the number of dependent
    constraint rows dropped (flagged) or -1 if the mass matrix / articulated inertia is
    not positive definite.
    """
    forward_kinematics(m, q, qd, w)
    return accelerations(m, w, tau, alpha, beta, rel_tol)


@njit(cache=True, _nrt=False)
def accelerations(m, w, tau, alpha, beta, rel_tol):
    """:func:`forward_dynamics` after forward_kinematics has been run for the state."""
    if m.loop_body_a.shape[0] == 0:
        status = aba(m, w, tau, w.f, False, w.qdd)
        return -1 if status != 0 else 0
    if prepare_mass(m, w) != 0:
        return -1
    r = loop_constraints(m, w, alpha, beta)
    return constrained_solve(m, w, r, tau, rel_tol)


@njit(cache=True, _nrt=False)
def constraint_impulse(m, w, n_rows, target, qd_minus, qd_plus, rel_tol):
    """Post-impact velocity for the constraint rows G = w.rows[:n_rows] (thesis 2.6.10).

    Dynamically consistent inverse: qd+ = qd- + M^-1 G^T P with
    (G M^-1 G^T) P = target - G qd-, so that G qd+ = target (zeros for a plastic impact;
    -e G qd- for restitution e). Needs w.L (the mass factor at the impact configuration).
    Writes qd_plus[n] and the impulses P to w.lam[:n_rows] (N s). Returns the number of
    dependent rows dropped (flagged in w.flags[0]).
    """
    for i in range(qd_minus.shape[0]):
        w.tmp_n2[i] = qd_minus[i]
    dropped = correct_to_rows(m.parent, w, n_rows, target, w.tmp_n2, rel_tol)
    for i in range(qd_minus.shape[0]):
        qd_plus[i] = w.tmp_n2[i]
    return dropped


@njit(cache=True, _nrt=False)
def project_velocities(m, q, qd, w, rel_tol):
    """qd <- the closest velocity (in the kinetic-energy metric) with K qd = 0 (in place).
    Returns the number of dependent loop rows."""
    forward_kinematics(m, q, qd, w)
    prepare_mass(m, w)
    r = loop_constraints(m, w, 0.0, 0.0)
    if r == 0:
        return 0
    for s in range(r):
        w.rows_rhs[s] = 0.0
    return constraint_impulse(m, w, r, w.rows_rhs, qd, qd, rel_tol)


@njit(cache=True, _nrt=False)
def project_positions(m, q, w, tol, max_iter, rel_tol):
    """q <- a nearby configuration with |phi| <= tol (m), by Gauss-Newton steps
    dq = -M^-1 K^T (K M^-1 K^T)^-1 phi (in place). Returns the final max |phi| (m).

    q float64[n] (rad / m); tol (m); max_iter Newton steps; rel_tol of the pivoted
    Cholesky of K M^-1 K^T (dependent rows dropped).

    Not the same algorithm as the screening's loop-closure IK
    (:func:`codesign.screening.screen.close_loops_kernel`, also used by the walking
    rollout's initial state): this one moves every coordinate, takes the minimum-norm
    step in the mass-matrix metric (the dynamically consistent projection, what a
    constraint impulse would do), undamped and without a step cap; that one moves only a
    chosen subset of coordinates (the others held), in the Euclidean metric, with
    Levenberg damping of K K^T and a step-length cap, on position-only kinematics. The
    two give different configurations for the same start, so neither replaces the other.
    """
    n = q.shape[0]
    zero_v = w.tmp_n2
    err = 0.0
    for it in range(max_iter + 1):
        for i in range(n):
            zero_v[i] = 0.0
        forward_kinematics(m, q, zero_v, w)
        r = loop_constraints(m, w, 0.0, 0.0)
        err = 0.0
        for s in range(r):
            err = max(err, abs(w.phi[s]))
        if err <= tol or it == max_iter or r == 0:
            break
        prepare_mass(m, w)
        for s in range(r):
            w.rows_rhs[s] = -w.phi[s]
        for i in range(n):
            w.qdd[i] = 0.0
        correct_to_rows(m.parent, w, r, w.rows_rhs, w.qdd, rel_tol)  # K dq = -phi
        for i in range(n):
            q[i] += w.qdd[i]
    return err
