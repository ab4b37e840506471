"""The time step's contact problem finished by Lemke's method (issue 43), against truths
made by hand: complementary bases enumerated, a block pushed at and above mu m g, three
coplanar points of a flat foot landing, a rimless wheel's collision, and the residuals."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from codesign.dynamics import contact_lcp as cl
from codesign.dynamics import contact_solvers as cs
from codesign.dynamics.contact_rows import INACTIVE, STICK

DATA = Path(__file__).resolve().parent / "data"


def rigid_body_problem(mass, inertia, points, v, force, h, mu, gaps=None, regularization=1e-6):
    """The contact problem u = r + W P of one step of a free planar rigid body (x, z, pitch;
    CoM at the origin of its frame, no rotation at the step's start) with contact points
    at body offsets ``points`` [(x, z)] on a flat ground (normal +z, tangent +x), velocity v
    (vx, vz, w), an applied force (fx, fz, moment) and gravity 9.81 m/s^2: W = J M^-1 J^T
    (its diagonal raised by the relative ``regularization``, as the step does), r = J
    v_free and the normals' lower bounds -gap / h (gaps default 0: on the ground)."""
    minv = np.diag([1.0 / mass, 1.0 / mass, 1.0 / inertia])
    c = len(points)
    J = np.zeros((2 * c, 3))
    for i, (px, pz) in enumerate(points):
        J[i] = [0.0, 1.0, px]           # normal: z velocity of the point (w x r)_z = w px
        J[c + i] = [1.0, 0.0, -pz]      # tangent: x velocity, (w x r)_x = -w pz
    v_free = np.asarray(v, float) + h * minv @ (np.asarray(force, float) + [0.0, -9.81 * mass, 0.0])
    W = J @ minv @ J.T
    W[np.diag_indices(2 * c)] *= 1.0 + regularization
    gaps = np.zeros(c) if gaps is None else np.asarray(gaps, float)
    return W, J @ v_free, -gaps / h, J, minv, v_free


def lemke_impulses(W, r, lower, mu):
    """Impulses (N s) of solve_lemke, asserting that it solved."""
    c = len(lower)
    P = np.zeros(2 * c)
    status, _ = cl.solve_lemke(W, r, lower, mu, P, c, cl.lcp_scratch(c))
    assert status == cl.LEMKE_SOLVED
    return P


def residuals(W, r, lower, mu, P, tol_impulse=1e-9):
    out = np.zeros(cl.N_RESIDUALS)
    cl.contact_residuals(W, r, lower, mu, P, len(lower), tol_impulse, out)
    return out


def enumerate_solutions(A, q):
    """Every solution z of the LCP w = q + A z >= 0, z >= 0, z.w = 0, by trying each of the
    2^k complementary bases (an independent truth for small k)."""
    k = len(q)
    found = []
    for chosen in itertools.product((False, True), repeat=k):
        S = np.array(chosen)
        z = np.zeros(k)
        if S.any():
            try:
                z[S] = np.linalg.solve(A[np.ix_(S, S)], -q[S])
            except np.linalg.LinAlgError:
                continue
        w = q + A @ z
        if z.min() >= -1e-9 and w.min() >= -1e-9:
            found.append(z)
    return found


def random_feasible_problem(rng, c):
    """A contact problem of c points on a random 3-DOF rigid body-like W (rank 2c from a
    random 2c x (2c + 1) Jacobian and mass matrix) with random row velocities and bounds."""
    Jm = rng.normal(size=(2 * c, 2 * c + 1))
    W = Jm @ Jm.T
    return W, rng.normal(size=2 * c), 0.1 * rng.normal(size=c), float(rng.uniform(0.2, 1.5))


def test_lemke_finds_the_enumerated_solution_of_random_problems():
    """For random positive definite W (up to 3 points: 2^12 bases) the LCP solution is
    unique in its impulses when the enumeration finds one set of impulses; Lemke's impulses
    equal it to 1e-9 and satisfy every condition (residuals below 1e-9)."""
    rng = np.random.default_rng(43)
    checked = 0
    for _ in range(120):
        c = int(rng.integers(1, 4))
        W, r, lower, mu = random_feasible_problem(rng, c)
        k = 4 * c
        A, q = np.zeros((k, k)), np.zeros(k)
        cl.lcp_of_contacts(W, r, lower, mu, c, A, q)
        impulses = {tuple(np.round(np.r_[z[:c], z[c:2 * c] - z[2 * c:3 * c]], 7))
                    for z in enumerate_solutions(A, q)}
        assert impulses, "every problem with W positive definite has a solution"
        P = lemke_impulses(W, r, lower, mu)
        res = residuals(W, r, lower, mu, P)
        assert res[:cl.RES_WORK].max() < 1e-9 and abs(res[cl.RES_WORK]) < 1e-9
        if len(impulses) == 1:
            assert np.allclose(P, np.array(impulses.pop()), atol=1e-6)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("ratio", [0.5, 1.0, 1.5])
def test_block_pushed_sideways_sticks_up_to_mu_m_g_and_slides_beyond(ratio):
    """A 2-kg block resting on two bottom corners, pushed horizontally through its centre of
    mass... at the ground's height (no tipping moment about the contact line) with F =
    ratio mu m g: sticks with friction impulse -F h while F <= mu m g, slides beyond with
    friction -mu m g h and speed (F - mu m g) h / m after one step; the normal impulses
    carry the weight m g h. By hand, to 1e-5 relative: the step's relative 1e-6 raise of W's
    diagonal moves the impulses by that order (velocities by ~1e-8 m/s)."""
    m, mu, h, g = 2.0, 0.6, 1e-3, 9.81
    half_w, half_h = 0.1, 0.05
    F = ratio * mu * m * g
    points = [(-half_w, -half_h), (half_w, -half_h)]
    W, r, lower, J, minv, v_free = rigid_body_problem(m, m * (4 * half_w ** 2 + 4 * half_h ** 2) / 12,
                                                      points, (0, 0, 0), (F, 0.0, F * half_h), h, mu)
    P = lemke_impulses(W, r, lower, mu)
    v_plus = v_free + minv @ J.T @ P
    assert P[:2].sum() == pytest.approx(m * g * h, rel=1e-5)
    friction = P[2:].sum()
    if ratio <= 1.0:
        assert friction == pytest.approx(-F * h, rel=1e-5)
        assert abs(v_plus[0]) < 1e-7
    else:
        assert friction == pytest.approx(-mu * m * g * h, rel=1e-5)
        assert v_plus[0] == pytest.approx((F - mu * m * g) * h / m, rel=1e-5)
    assert abs(v_plus[1]) < 1e-7 and abs(v_plus[2]) < 1e-7
    res = residuals(W, r, lower, mu, P)     # at the cone's edge (ratio 1) to Lemke's round-off
    assert res[:cl.RES_WORK].max() < 1e-7 and abs(res[cl.RES_WORK]) < 1e-9


def test_flat_foot_landing_on_three_coplanar_points_is_unique_and_symmetric():
    """A foot (0.8 kg, heel, ball and toe on one line at -0.1, 0, +0.1 m under the CoM)
    landing flat at 1 m/s: three points, one rigid body -- the normal rows are redundant and
    W is singular but for the step's relative 1e-6 regularisation. The plastic landing's
    impulses: heel = toe by symmetry, summing to m v0 with no rotation; the regularised
    problem picks, as the regularisation goes to 0, the split minimising sum W_ii P_i^2:
    heel / ball = W_ball / W_heel. Residuals below 1e-9; the same impulses from the exact
    active-set route (solve_contacts) and from Lemke's method. The landing's sum and the
    velocities to 1e-5 relative (the regularisation's own order, 1e-6 W_ii P_i)."""
    m, I, v0, h, mu = 0.8, 0.8 * 0.25 ** 2 / 12, 1.0, 1e-3, 1.0
    points = [(-0.1, -0.03), (0.0, -0.03), (0.1, -0.03)]
    W, r, lower, J, minv, v_free = rigid_body_problem(m, I, points, (0, -v0, 0), (0, 0, 0), h, mu)
    P = lemke_impulses(W, r, lower, mu)
    assert P[0] == pytest.approx(P[2], rel=1e-9)
    assert P[:3].sum() == pytest.approx(m * (v0 + 9.81 * h), rel=1e-5)
    w_heel, w_ball = 1 / m + 0.1 ** 2 / I, 1 / m
    assert P[0] / P[1] == pytest.approx(w_ball / w_heel, rel=1e-4)
    assert np.abs(P[3:]).max() < 1e-12
    v_plus = v_free + minv @ J.T @ P
    assert np.abs(v_plus).max() < 1e-5
    assert residuals(W, r, lower, mu, P)[:cl.RES_WORK].max() < 1e-9
    route = np.zeros(6)
    mode = np.array([INACTIVE] * 3)
    sweeps, pivots, outcome = cs.solve_contacts(W, r, lower, mu, route, mode, 3, 1e-8, 100,
                                                np.zeros((6, 6)), np.zeros(6),
                                                np.zeros(6, dtype=np.int64), np.zeros(6), True,
                                                cl.lcp_scratch(3))
    assert outcome == cs.EXACT
    assert np.allclose(route, P, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("half_angle_deg", [15.0, 30.0])
def test_rimless_wheel_collision_keeps_angular_momentum_about_the_new_foot(half_angle_deg):
    """A rimless wheel (hub mass 1 kg with inertia 0.05 kg m^2 about it, spokes of 1 m, 2a
    between neighbours) pivoting on its back spoke at angular speed w-, the front spoke
    touching the ground: the plastic collision keeps the angular momentum about the front
    foot, so w+ = w- (I + m l^2 cos 2a) / (I + m l^2) (McGeer 1990), the back foot leaves
    and the front one sticks (mu = 1). One step of 1 us (gravity negligible: 1e-5 of w);
    the front foot's velocity after the impact within 1e-5 m/s of 0 (the regularisation's
    1e-6 W_ii P_i)."""
    m, I, length, h, mu = 1.0, 0.05, 1.0, 1e-6, 1.0
    a = math.radians(half_angle_deg)
    back = (-length * math.sin(a), -length * math.cos(a))
    front = (length * math.sin(a), -length * math.cos(a))
    w_minus = -1.2                               # rolling forward (+x): clockwise
    # the back foot at rest: v_hub = w x (hub - back) = w (-(0 - back_z), 0 - back_x)...
    v_hub = (-w_minus * (0.0 - back[1]), w_minus * (0.0 - back[0]))
    W, r, lower, J, minv, v_free = rigid_body_problem(m, I, [back, front], (*v_hub, w_minus),
                                                      (0, 0, 0), h, mu)
    P = lemke_impulses(W, r, lower, mu)
    v_plus = v_free + minv @ J.T @ P
    expected = w_minus * (I + m * length ** 2 * math.cos(2 * a)) / (I + m * length ** 2)
    assert v_plus[2] == pytest.approx(expected, rel=1e-4)
    assert P[0] < 1e-12 * P[1]                    # the back foot leaves without an impulse
    u = J @ v_plus
    assert abs(u[1]) < 1e-5 and abs(u[3]) < 1e-5  # the front foot stops and sticks
    assert u[0] > 0.0                             # the back foot lifts off
    mode = np.zeros(2, dtype=np.int64)
    cs.modes_of(P, mu, 2, mode)
    assert list(mode) == [INACTIVE, STICK]


def test_a_walking_problem_gauss_seidel_leaves_unconverged_is_finished_to_tolerance():
    """The first contact problem that the legacy solver left unconverged in the walk of
    docs/designs/wearer-t05.json (step 141: the three points of one flat foot and the toe of
    the other, W's condition number 1.8e7; captured with its warm start into
    data/unconverged_contact_problem.npz): Gauss-Seidel spends its 100 sweeps creeping along
    the redundant friction rows and keeps approximate impulses; the pivoting solver
    finishes it exactly (residuals below 1e-12), the flat foot's indeterminate friction
    shared evenly, as the regularised problem's unique solution asks."""
    d = np.load(DATA / "unconverged_contact_problem.npz")
    W, r, lower, mu = d["W"], d["r"], d["lower"], float(d["mu"])
    c = len(lower)
    outcomes = {}
    for pivoting in (False, True):
        P, mode = d["P"].copy(), d["mode"].copy()
        sweeps, pivots, outcome = cs.solve_contacts(W, r, lower, mu, P, mode, c, 1e-8, 100,
                                                    np.zeros((2 * c, 2 * c)), np.zeros(2 * c),
                                                    np.zeros(2 * c, dtype=np.int64), np.zeros(2 * c),
                                                    pivoting, cl.lcp_scratch(c))
        outcomes[pivoting] = (sweeps, pivots, outcome, P)
    assert outcomes[False][0] > 100 and outcomes[False][2] == cs.APPROXIMATE
    sweeps, pivots, outcome, P = outcomes[True]
    assert outcome == cs.EXACT and pivots > 0
    res = residuals(W, r, lower, mu, P, 1e-6)
    assert res[:cl.RES_WORK].max() < 1e-12 and abs(res[cl.RES_WORK]) < 1e-12
    assert P[c:c + 2] == pytest.approx([P[c], P[c]], rel=1e-6)   # heel and ball share the friction
    legacy = residuals(W, r, lower, mu, outcomes[False][3], 1e-6)
    assert 1e-9 < legacy[cl.RES_SLIP] < 1e-6      # what the legacy solver left: measured, small


def test_residuals_of_wrong_impulses_are_measured_in_physical_units():
    """contact_residuals of impulses made wrong on purpose, by hand: one point with W =
    diag(1/m, 1/m) (m = 2 kg), r = (-0.1, 0.2) m/s, lower 0: a normal impulse of 0.1 N s
    leaves u_n = -0.05 m/s (gap residual 0.05 m/s); a friction impulse of 0.2 N s beyond
    mu P_n = 0.05 (cone residual 0.15 N s) pushing along the slip (slip residual |u_t| =
    0.3 m/s); the work P_n (u_n - 0) + P_t u_t + mu P_n |u_t| = -0.005 + 0.06 + 0.0075 J."""
    W = np.diag([0.5, 0.5])
    P = np.array([0.1, 0.2])
    res = residuals(W, np.array([-0.1, 0.2]), np.zeros(1), 0.5, P)
    assert res[cl.RES_GAP] == pytest.approx(0.05)
    assert res[cl.RES_NEGATIVE] == 0.0
    assert res[cl.RES_CONE] == pytest.approx(0.15)
    assert res[cl.RES_SLIP] == pytest.approx(0.3)
    assert res[cl.RES_WORK] == pytest.approx(0.1 * -0.05 + 0.2 * 0.3 + 0.5 * 0.1 * 0.3)
