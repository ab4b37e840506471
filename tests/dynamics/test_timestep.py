"""Hard contacts and loops by time stepping (dynamics.testing.stepping.simulate) against analytic solutions.

The same systems as test_contact.py (event-driven model), here through the first-order
Moreau-Jean step. Every expected value is derived independently of the code (impulse-
momentum, Coulomb kinematics, lever rule, modal analysis), and every tolerance is either
the size of a first-order error derived in a comment or the documented perturbation of
the step's Delassus regularisation:

REG
    The step multiplies the diagonal of the contact Delassus matrix W by 1 + REG
    (step_settings(regularization=1e-6)), so the first step that loads a contact solves
    (W + REG diag W) P = b instead of W P = b: for the block on its two corners by symmetry
    P_n (W_11 + W_12 + REG W_11) = m g h, with W_11 = 1/m + x^2/I, W_12 = 1/m - x^2/I
    (x = half the width), a relative force deficit of REG (1 + m x^2 / I) / 2 (1.7 REG for
    these blocks). The deficit lets the block sink by ~REG g h^2, which the penetration
    correction (0.2 per step) pushes back, so the error decays like 0.8^k: below 1e-9
    after 100 steps. With the regularisation the time-stepping forces are exact.
"""

import numpy as np
import pytest
import scipy.linalg

from codesign.dynamics.testing import examples
from codesign.dynamics import timestep as ts
from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import center_of_mass, forward_kinematics
from codesign.dynamics.loops import loop_constraints
from codesign.dynamics.model import ModelBuilder, make_workspace
from codesign.dynamics.rnea import bias_forces
from codesign.dynamics.testing.stepping import passive_rollout, simulate
from codesign.dynamics.timestep import INACTIVE, SLIP_NEG, SLIP_POS, STICK

G = 9.81
REG = 1e-6            # step_settings' default regularization (module docstring above)
SETTLED = 100         # steps after which the regularisation's transient is below 1e-9


def first_step_deficit(mass, width, height):
    """Relative force deficit of the first loaded step of a block on its two bottom
    corners (module docstring): REG (1 + m x^2 / I) / 2, x = width / 2."""
    inertia = examples.box_inertia(mass, width, height)
    return REG * (1.0 + mass * (width / 2) ** 2 / inertia) / 2


def block_on_ground(com_x=0.0, slope=0.0, width=0.2, height=0.1, mass=2.0):
    """Block with contacts at its bottom corners, CoM com_x from the middle, resting on a
    ground of angle slope (its bottom on the ground line through the origin)."""
    b = ModelBuilder(gravity=G)
    b.add_floating_base("block", mass, (com_x, 0.0), examples.box_inertia(mass, width, height))
    b.add_contact("back", "block", (-width / 2, -height / 2))
    b.add_contact("front", "block", (width / 2, -height / 2))
    origin = height / 2 * np.array([-np.sin(slope), np.cos(slope)])
    return b.build(), np.array([origin[0], origin[1], slope])


# --------------------------------------------------------------------------- sliding block
def test_sliding_block_stops_at_coulomb_distance_and_time():
    mu, v0, h, mass = 0.5, 2.0, 1e-3, 1.0
    model = examples.sliding_block(mass=mass)
    res = simulate(model, [0.0, 0.05, 0.0], [v0, 0.0, 0.0], t_end=0.6, h=h, mu=mu)
    assert res.status == ts.STEP_OK
    assert res.t.shape == (600,) and res.q.shape == res.v.shape == (600, 3)
    assert res.force.shape == (600, 2, 2) and res.mode.shape == (600, 2)
    a = mu * G
    t_stop, d_stop = v0 / a, v0**2 / (2 * a)
    stop = int(np.argmax(np.all(res.mode == STICK, axis=1)))   # first step that sticks
    sliding = slice(0, stop)
    assert np.all(res.mode[sliding] == SLIP_POS) and np.all(res.mode[stop:] == STICK)
    # The friction impulse removes mu g h of speed per step until the speed left is below
    # that: the step that sticks ends in [t_stop, t_stop + h).
    assert 0.0 <= res.t[stop] - t_stop < h
    # Exact discrete solution: v_k = v0 - k a h, x_k = h sum_j v_j (semi-implicit Euler);
    # with N h = t_stop + delta (delta in [0, h)) the stop distance is
    # x = d - v0 h / 2 + a delta (h - delta) / 2: the method lags the exact d by half a
    # step of travel, |x - d| <= v0 h / 2 (= 1 mm here), an O(h) error.
    np.testing.assert_allclose(res.v[sliding, 0], v0 - a * res.t[sliding], atol=1e-7)
    delta = res.t[stop] - t_stop
    x_final = res.q[-1, 0]
    assert x_final == pytest.approx(d_stop - v0 * h / 2 + a * delta * (h - delta) / 2, abs=1e-9)
    assert abs(x_final - d_stop) <= v0 * h / 2
    # at rest afterwards, on both corners, without rotation
    np.testing.assert_allclose(res.q[stop:, 0], x_final, atol=1e-10)
    np.testing.assert_allclose(res.q[-1, 1:], [0.05, 0.0], atol=1e-9)
    np.testing.assert_allclose(res.force[-1], [[mass * G / 2, 0.0], [mass * G / 2, 0.0]], rtol=1e-9, atol=1e-9)
    # While sliding the step's impulses are exactly Coulomb's: the normal forces carry the
    # weight and friction is -mu times it (up to the regularisation's transient).
    normal = res.force[sliding, :, 0].sum(axis=1)
    friction = res.force[sliding, :, 1].sum(axis=1)
    eps0 = first_step_deficit(mass, 0.2, 0.1)
    assert np.max(np.abs(normal / (mass * G) - 1)) <= 1.01 * eps0
    assert np.max(np.abs(friction / (-mu * mass * G) - 1)) <= 1.01 * eps0
    np.testing.assert_allclose(normal[SETTLED:], mass * G, rtol=1e-9)
    np.testing.assert_allclose(friction[SETTLED:], -mu * mass * G, rtol=1e-9)
    # friction at the sole pitches the load forward: the front corner carries more
    # (lever rule with the friction moment: N_front - N_back = mu m g (height/2) / (width/2))
    diff = res.force[sliding, 1, 0] - res.force[sliding, 0, 0]
    np.testing.assert_allclose(diff[SETTLED:], mu * mass * G * 0.05 / 0.1, rtol=1e-9)


def test_sliding_block_slip_path_and_friction_work():
    """The step's slip counters (issue 15): each corner's slip path is the block's travel
    and the friction impulses dissipate mu m g times it (v+ is the velocity of the step's
    travel, q+ = q + h v+); nothing accumulates once the block sticks; every step solved
    exactly."""
    from codesign.dynamics import contact_rows as ct

    mu, v0, h, mass = 0.5, 2.0, 1e-3, 1.0
    model = examples.sliding_block(mass=mass)
    q, v = np.array([0.0, 0.05, 0.0]), np.array([v0, 0.0, 0.0])
    sw = ts.make_step_workspace(model)
    k = 600
    rec_q, rec_v = np.zeros((k, 3)), np.zeros((k, 3))
    rec_f, rec_m = np.zeros((k, 2, 2)), np.zeros((k, 2), dtype=np.int64)
    code, _ = passive_rollout(model.arrays, make_workspace(model), sw,
                                 ct.make_settings("hard", mu=mu), ts.step_settings(h=h),
                                 q, v, k, rec_q, rec_v, rec_f, rec_m)
    assert code == ts.STEP_OK
    travel = q[0]
    np.testing.assert_allclose(sw.slip_path, [travel, travel], rtol=1e-12)
    # friction = -mu N up to the regularisation's transient (first_step_deficit)
    assert sw.friction_work.sum() == pytest.approx(mu * mass * G * travel, rel=1e-6)
    assert np.all(sw.friction_work > 0.0)
    np.testing.assert_allclose(sw.ut, 0.0, atol=1e-12)          # at rest, sticking
    assert sw.stats[ts.STAT_STEPS] == k and sw.stats[ts.STAT_APPROX] == 0


# --------------------------------------------------------------------------- resting block
@pytest.mark.parametrize("com_x", [0.0, 0.03])
def test_resting_block_forces_follow_lever_rule(com_x):
    mass, width, height = 2.0, 0.2, 0.1
    model, q0 = block_on_ground(com_x=com_x, mass=mass, width=width, height=height)
    res = simulate(model, q0, t_end=0.5, mu=0.5)
    assert res.status == ts.STEP_OK and np.all(res.mode == STICK)
    x1, x2 = -width / 2, width / 2
    lever = mass * G * np.array([(x2 - com_x) / (x2 - x1), (com_x - x1) / (x2 - x1)])
    err = np.abs(res.force[:, :, 0] / lever - 1)
    # first loaded step: the regularisation's deficit (for com_x != 0 the corner loads
    # differ; measured 1.708e-6 against the symmetric block's 1.700e-6)
    assert np.max(err) <= 1.01 * first_step_deficit(mass, width, height)
    assert np.max(err[SETTLED:]) <= 1e-9
    assert np.max(np.abs(res.force[SETTLED:, :, 1])) <= 1e-9 * mass * G
    np.testing.assert_allclose(res.q[-1], q0, atol=1e-9)
    np.testing.assert_allclose(res.v[-1], 0.0, atol=1e-9)


def assert_every_step_solved(res):
    """The contact solver finished every step (issue 43): none beyond the velocity or
    impulse tolerance or the energy bound, and every residual below 1e-9 (m/s, N s, J)."""
    assert res.stats[ts.STAT_ABOVE_TOL] == 0 and res.stats[ts.STAT_ENERGY_ABOVE] == 0
    assert res.stats[ts.STAT_APPROX] == 0
    assert np.max(res.residual_max) < 1e-9, res.residual_max


# --------------------------------------------------------------------------- block on a slope
def test_block_on_slope_with_enough_friction_sticks_and_carries_the_weight():
    slope, mu, mass = 0.2, 0.5, 2.0          # tan 0.2 = 0.203 < mu
    model, q0 = block_on_ground(slope=slope, mass=mass)
    res = simulate(model, q0, t_end=0.5, mu=mu, slope=slope)
    assert res.status == ts.STEP_OK and np.all(res.mode == STICK)
    n = np.array([-np.sin(slope), np.cos(slope)])
    t = np.array([np.cos(slope), np.sin(slope)])
    total = (res.force[:, :, 0].sum(axis=1)[:, None] * n
             + res.force[:, :, 1].sum(axis=1)[:, None] * t)   # world (x, z), N
    err = np.linalg.norm(total - [0.0, mass * G], axis=1) / (mass * G)
    assert np.max(err) <= 1.01 * first_step_deficit(mass, 0.2, 0.1)
    assert np.max(err[SETTLED:]) <= 1e-9
    assert np.all(res.force[:, :, 0] > 0)
    # static friction holds: no creep beyond the regularisation's (REG g h per step ~ 1e-9 m/s)
    np.testing.assert_allclose(res.q[-1], q0, atol=1e-8)
    assert_every_step_solved(res)


def test_block_on_too_steep_slope_slides_with_coulomb_acceleration():
    slope, mu, mass, h = 0.5, 0.3, 2.0, 1e-3   # tan 0.5 = 0.546 > mu: it slides down
    model, q0 = block_on_ground(slope=slope, mass=mass)
    res = simulate(model, q0, t_end=0.5, h=h, mu=mu, slope=slope)
    assert res.status == ts.STEP_OK and np.all(res.mode == SLIP_NEG)
    a = G * (np.sin(slope) - mu * np.cos(slope))            # down the slope, m/s^2
    tangent = np.array([np.cos(slope), np.sin(slope)])
    speed = -res.v[:, :2] @ tangent                          # down-slope speed, m/s
    travel = -(res.q[:, :2] - q0[:2]) @ tangent              # down-slope distance, m
    # Constant acceleration: semi-implicit Euler's velocity v_k = a t_k is exact, the
    # position s_k = h sum_j v_j = a t_k (t_k + h) / 2 leads the exact a t^2/2 by a h t / 2
    # (0.53 mm at 0.5 s), the O(h) error of the method.
    np.testing.assert_allclose(speed, a * res.t, atol=1e-7)
    np.testing.assert_allclose(travel, a * res.t * (res.t + h) / 2, atol=1e-9)
    assert np.all(np.abs(travel - a * res.t**2 / 2) <= a * h * res.t / 2 + 1e-9)
    normal_speed = res.v[:, :2] @ np.array([-np.sin(slope), np.cos(slope)])
    np.testing.assert_allclose(normal_speed, 0.0, atol=1e-7)
    np.testing.assert_allclose(res.v[:, 2], 0.0, atol=1e-7)
    # the forces: N = m g cos a in total, friction up the slope at mu N
    normal = res.force[:, :, 0].sum(axis=1)
    friction = res.force[:, :, 1].sum(axis=1)
    np.testing.assert_allclose(normal[SETTLED:], mass * G * np.cos(slope), rtol=1e-9)
    np.testing.assert_allclose(friction, mu * normal, rtol=1e-12)
    assert_every_step_solved(res)


# --------------------------------------------------------------------------- falling rod
def rod_impact(theta, mu, v0, length=1.0, mass=1.0):
    """Velocities (x, z, pitch rate) of the rod of examples.falling_rod (pitch -theta, end
    b lowest) right after a plastic impact of end b at downward speed v0, by impulse and
    momentum (as in test_contact), and the end's contact mode."""
    inertia = mass * length**2 / 12
    rp = 0.5 * length * np.array([np.cos(theta), -np.sin(theta)])   # end b from the CoM
    # sticking: the end stops; angular momentum about it is conserved, I_P = m L^2 / 3
    omega = mass * (-rp[0] * -v0) / (mass * length**2 / 3)
    v_com = omega * np.array([rp[1], -rp[0]])                 # circles about the end
    impulse = mass * (v_com - [0.0, -v0])
    if abs(impulse[0]) <= mu * impulse[1]:
        return np.array([v_com[0], v_com[1], omega]), STICK
    # sliding in direction s: P_t = -s mu P_n, P_n fixed by v_Pz+ = 0; one s is consistent
    found = []
    for s in (1.0, -1.0):
        ln = v0 / (1 / mass + rp[0] * (rp[0] + rp[1] * s * mu) / inertia)
        lt = -s * mu * ln
        omega = (rp[0] * ln - rp[1] * lt) / inertia
        v = np.array([lt / mass, -v0 + ln / mass])
        if ln > 0 and s * (v[0] - omega * rp[1]) >= 0:
            found.append((np.array([v[0], v[1], omega]), SLIP_POS if s > 0 else SLIP_NEG))
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("mu, mode", [(1.0, STICK), (0.3, SLIP_POS)])
def test_falling_rod_impact_step_matches_impulse_momentum(mu, mode):
    """Drop height on the step grid: end b reaches the ground exactly at the end of step N,
    so the whole plastic impact happens in step N + 1."""
    theta, h = np.pi / 6, 1e-4
    model = examples.falling_rod()
    N = int(round(np.sqrt(2 * 0.3 / G) / h))
    drop = G * h * h * N * (N + 1) / 2       # h sum_{j=1..N} j g h: discrete free fall
    q0 = np.array([0.0, 0.5 * np.sin(theta) + drop, -theta])
    res = simulate(model, q0, t_end=(N + 2) * h, h=h, mu=mu)
    assert res.status == ts.STEP_OK
    # free fall up to step N (row N - 1): end b grazes the ground at its end (no impulse)
    assert np.max(np.abs(res.force[:N])) <= 1e-6 * G
    np.testing.assert_allclose(res.v[N - 1], [0.0, -G * N * h, 0.0], atol=1e-9)
    # step N + 1 (row N): impact of end b only
    assert res.mode[N, 0] == INACTIVE and res.mode[N, 1] == mode
    # Impulse-momentum is linear in the pre-impact velocity for a given mode, and the step
    # solves it exactly on v_free = v_N - g h: the discrete pre-impact speed V = g (N+1) h.
    V = G * (N + 1) * h
    expected_step, expected_mode = rod_impact(theta, mu, V)
    assert expected_mode == mode
    np.testing.assert_allclose(res.v[N], expected_step, rtol=10 * REG)
    # Against the continuous impact at v0 = sqrt(2 g drop) = g h sqrt(N (N+1)): the
    # discrete fall arrives slower, g N h, than v0 ~ g (N + 1/2) h (its position runs
    # ahead, see the slope test), and the impact step adds one step of gravity g h, so
    # V - v0 = g h (N + 1 - sqrt(N (N+1))) lies in (g h / 2, g h (1/2 + 1/(8N))) and every
    # component is off by the factor V / v0 - 1 < (g h / 2)(1 + 1/(4N)) / v0 (2e-4 at
    # h = 1e-4), the O(h) error of the impact time. Measured: 0.49-0.50 of g h / v0.
    v0 = np.sqrt(2 * G * drop)
    exact, _ = rod_impact(theta, mu, v0)
    assert G * h / 2 < V - v0 < G * h * (0.5 + 1 / (8 * N))
    err = np.abs(res.v[N] - exact)
    rel = G * h / 2 * (1 + 1 / (4 * N)) / v0
    assert np.all(err <= rel * np.abs(exact) + 10 * REG * np.abs(exact).max())


@pytest.mark.parametrize("mu", [1.0, 0.3])
def test_falling_rod_off_grid_impact_spreads_over_two_steps(mu):
    """Generic drop (0.3 m): the step that first reaches the ground lands end b on it at
    the step's end (u_n = -gap / h, module docstring), the next one stops it (u_n = 0).
    For an unchanged contact mode the two impulses compose to the single impact's, so after
    the second step the velocities match impulse-momentum to first order in h."""
    theta, h, drop = np.pi / 6, 1e-4, 0.3
    model = examples.falling_rod()
    q0 = np.array([0.0, 0.5 * np.sin(theta) + drop, -theta])
    t_hit = np.sqrt(2 * drop / G)
    res = simulate(model, q0, t_end=t_hit + 5 * h, h=h, mu=mu)
    assert res.status == ts.STEP_OK
    k = int(np.argmax(res.force[:, 1, 0] > 0))        # first loaded step (row)
    v0 = G * t_hit
    exact, mode = rod_impact(theta, mu, v0)
    assert res.mode[k, 1] == mode and res.mode[k + 1, 1] == mode
    assert np.all(res.mode[k:k + 2, 0] == INACTIVE)
    # Errors after step k + 1 (row k + 1), measured at 0.24-0.65 of the bound below:
    # (i) speed: the composed impact acts on
    # V + g h with V = g (k + 1) h the free speed of step k + 1 and one more step of
    # gravity; discrete free fall reaches the ground within h/2 of t_hit, so
    # |V + g h - v0| <= 1.5 g h (+ O(h^2)); (ii) geometry: the second step's rows are
    # evaluated at the pitch reached after the first, |dtheta| = h |omega_k|, which moves
    # the impact map by |d exact / d theta| |dtheta| to first order.
    V = G * (k + 1) * h
    assert abs(V + G * h - v0) <= 1.5 * G * h + 1e-12
    dtheta = abs(res.q[k, 2] - res.q[k - 1, 2])
    assert dtheta <= h * np.abs(exact[2]) * 1.01
    step = 1e-6
    slope = (rod_impact(theta + step, mu, v0)[0] - rod_impact(theta - step, mu, v0)[0]) / (2 * step)
    bound = np.abs(exact) * 1.5 * G * h / v0 + np.abs(slope) * dtheta + 10 * REG * np.abs(exact).max()
    err = np.abs(res.v[k + 1] - exact)
    assert np.all(err <= bound), (err, bound)


# --------------------------------------------------------------------------- closed loops
class Energy:
    """Kinetic + gravity + tree-spring energy (J) of a model, one workspace reused."""

    def __init__(self, model):
        self.model = model
        self.w = make_workspace(model)
        self.com = np.zeros(4)

    def __call__(self, q, v):
        model, w = self.model, self.w
        forward_kinematics(model.arrays, q, v, w)
        mass_matrix(model.arrays, w)
        center_of_mass(model.arrays, w, self.com)
        springs = 0.5 * np.sum(model.spring_k * (q - model.spring_rest) ** 2)
        return 0.5 * v @ w.M @ v + model.total_mass() * model.gravity * self.com[1] + springs


def closure_errors(model, qs):
    """Largest |phi| (m) of the loop closures at each configuration of qs [k, n]."""
    w = make_workspace(model)
    out = np.empty(len(qs))
    for j, q in enumerate(qs):
        forward_kinematics(model.arrays, q, np.zeros_like(q), w)
        loop_constraints(model.arrays, w, 0.0, 0.0)
        out[j] = np.max(np.abs(w.phi[: 2 * model.n_loops]))
    return out


def modified_energy_error(model, q0, res, h):
    """E_k - (h/2) dV/dt_k - E_0 along a run from rest at q0. Symplectic Euler
    (v+ = v - h M^-1 grad V(q), q+ = q + h v+) conserves E - (h/2) v . grad V to O(h^2)
    (for the harmonic oscillator v^2 + q^2 - h q v exactly), so E itself oscillates within
    (h/2) max |dV/dt| without drift. dV/dt_k = (V(q_k) - V(q_k - h v_k)) / h = v_k . grad
    V(q_k) + O(h)."""
    energy = Energy(model)
    qs = np.vstack([q0, res.q])
    pot = np.array([energy(q, np.zeros_like(q)) for q in qs])
    e = np.array([energy(q, v) for q, v in zip(res.q, res.v)])
    power = np.diff(pot) / h
    return e - h / 2 * power - pot[0], e - pot[0], power


def test_closed_three_link_energy_oscillates_within_the_symplectic_band():
    """The rhombus four-bar (examples.closed_three_link): its closure manifold is a line in
    joint space (the coupler translates) and its reduced inertia is constant, so the step
    is exactly symplectic Euler on one coordinate."""
    model, q0 = examples.closed_three_link(), examples.closed_three_link_q0()
    h = 1e-3
    res = simulate(model, q0, t_end=3.0, h=h)
    assert res.status == ts.STEP_OK
    assert np.ptp(res.q[:, 0]) > 1.0                  # it swings (1.26 rad)
    # linear closure manifold: Euler steps along it stay on it (rounding only)
    assert np.max(closure_errors(model, res.q)) <= 1e-12
    mod, de, power = modified_energy_error(model, q0, res, h)
    # measured: max |mod| = 2.1e-5 J at h = 1e-3, 5.3e-6 at 5e-4, 2.1e-7 at 1e-4 (O(h^2),
    # ~21 h^2 J/s^2); 50 h^2 bounds it; E itself stays in the O(h) band (6.3e-3 J here,
    # against a kinetic energy of up to 3.7 J), and it does not drift: the last second's
    # band is the first's.
    assert np.max(np.abs(mod)) <= 50 * h**2
    assert np.max(np.abs(de)) <= h / 2 * np.max(np.abs(power)) + 50 * h**2
    second = int(round(1 / h))
    assert np.max(np.abs(de[-second:])) <= np.max(np.abs(de[:second])) * 1.01


def fast_mode_energy(model, q):
    """Energy (J) that gravity puts into the stiff mode of a closed model released at rest
    at q: with the closure's null space N (J N = 0), reduced mass N^T M N and spring N^T K N,
    a mode of frequency omega under modal gravity force f oscillates about its static
    deflection f / omega^2 with energy f^2 / (2 omega^2). Returns (energy, omega)."""
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, np.zeros_like(q), w)
    mass_matrix(model.arrays, w)
    bias_forces(model.arrays, w)                 # at rest: the gravity force g(q) = grad V
    loop_constraints(model.arrays, w, 0.0, 0.0)
    N = scipy.linalg.null_space(np.array(w.rows[: 2 * model.n_loops]))
    lam, phi = scipy.linalg.eigh(N.T @ np.diag(model.spring_k) @ N, N.T @ np.array(w.M) @ N)
    f = -(N @ phi[:, -1]) @ np.array(w.h)
    return f**2 / (2 * lam[-1]), np.sqrt(lam[-1])


def test_pantograph_leg_keeps_energy_but_its_unresolved_knee_mode():
    """The pantographic leg without hip damping: a parallelogram loop (linear closure
    manifold) with the knee spring treated implicitly (backward Euler on the spring: the
    step's M~ = M + h^2 K). The spring makes a 400 rad/s mode that the step damps by
    1 / (1 + h^2 omega^2) in energy per step (h omega = 0.4 at h = 1 ms: gone in ~50 ms);
    that mode's energy at release is lost, the rest is conserved like symplectic Euler."""
    model, q0 = examples.pantograph_leg(hip_damping=0.0), examples.pantograph_leg_q0()
    h = 1e-3
    res = simulate(model, q0, t_end=3.0, h=h)
    assert res.status == ts.STEP_OK
    assert np.ptp(res.q[:, 0]) > 0.5                  # it swings (0.81 rad)
    assert np.max(closure_errors(model, res.q)) <= 1e-12
    lost, omega = fast_mode_energy(model, q0)
    assert 390 < omega < 410 and lost > 1e-5          # 400 rad/s, 2.55e-5 J (of 5.4e-3 J kinetic)
    mod, de, power = modified_energy_error(model, q0, res, h)
    # After the knee mode has died out (t >= 0.5 s: (1 + 0.16)^-500 ~ 1e-32), the
    # modified energy sits at -lost. Remainders: O(h^2) of the symplectic estimate and the
    # slow mode's adiabatic coupling into the damped one; measured max |mod + lost| =
    # 1.1e-6 J at h = 1e-3 and 5.2e-7 J at h = 5e-4 (first order; 0.02 % of the 5.4e-3 J
    # kinetic energy), bounded here by 0.2 lost = 5.1e-6 J.
    late = res.t >= 0.5
    assert np.max(np.abs(mod[late] + lost)) <= 0.2 * lost
    # Energy is never created: E stays below E_0 plus the symplectic band (measured max
    # E - E_0 = 8.8e-6 J against a band of 3.4e-5 J).
    assert np.max(de) <= h / 2 * np.max(np.abs(power)) + 1e-9


def test_four_bar_closure_residual_is_second_order_per_step():
    """A non-parallelogram four-bar (examples.four_bar): each step closes the linearized
    loop exactly (J v+ = -phi / h with loop_correction = 1), leaving the Taylor remainder
    of phi(q + h v+): the loop point is sum_j l_j (cos, sin)(Theta_j) with link angles
    Theta_j = q_1 + ... + q_j, whose second derivative along the step has norm at most
    sum_j l_j Thetadot_j^2, so |phi_k| <= h^2 / 2 sum_j l_j (cumsum v_k)_j^2."""
    model, q0 = examples.four_bar(), examples.four_bar_q0()
    h = 1e-3
    res = simulate(model, q0, t_end=3.0, h=h)
    assert res.status == ts.STEP_OK
    lengths = np.array([0.2, 0.5, 0.3])              # crank, coupler, rocker (to the pin)
    bound = 0.5 * h**2 * (np.cumsum(res.v, axis=1) ** 2 @ lengths)
    phi = closure_errors(model, res.q)
    assert np.all(phi <= bound + 1e-14)               # measured: at most 0.93 of it
    assert np.max(phi) > 1e-6                         # not trivially closed (2.1e-5 m)


def test_contact_rows_within_reach_leave_the_others_and_match_the_full_rows():
    """contact_rows with a time step h computes the Jacobian rows of the points in reach
    only (issue 16: a swing foot's rows are never used); those rows and every point's pos,
    vel and bias equal the full call's, and the rows of the point out of reach keep what
    they held (a marker). Rod tilted 0.3 rad, centre 0.1504 m up: end_a 2.6 mm above the
    ground (in reach at h = 1 ms: 1 ms x (|v_n| + 10 m/s) ~ 1 cm), end_b 0.30 m (not)."""
    from codesign.dynamics import contact_rows as ct

    model = examples.falling_rod()
    m = model.arrays
    w = make_workspace(model)
    cs = ct.make_settings("hard")
    c, n = 2, model.n
    forward_kinematics(m, np.array([0.0, 0.1504, 0.3]), np.array([0.2, -0.5, 1.0]), w)
    full = [np.zeros((2 * c, n)), np.zeros(2 * c), np.zeros(2 * c), np.zeros(2 * c)]
    ct.contact_rows(m, w, cs, *full, 0)
    part = [np.full((2 * c, n), 7.0), np.zeros(2 * c), np.zeros(2 * c), np.zeros(2 * c)]
    ct.contact_rows(m, w, cs, *part, 0, 1e-3, 10.0)
    reach = [ct.in_reach(full[3][i], full[2][i], 1e-3, 10.0) for i in range(c)]
    assert reach == [True, False]          # end_a at 2.6 mm, end_b 0.30 m above the ground
    for k in (1, 2, 3):
        assert np.array_equal(part[k], full[k])
    assert np.array_equal(part[0][[0, 2]], full[0][[0, 2]]) and np.any(full[0][0] != 0.0)
    assert np.all(part[0][[1, 3]] == 7.0)
