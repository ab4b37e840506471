"""Hard and soft ground contact against analytic solutions and conservation laws.

Every system here runs through the same compiled hybrid system (testing.contact_sim), so the
integrator is compiled once and then loaded from numba's disk cache by later processes.
"""

import numpy as np
import pytest

from codesign.dynamics import hybrid
from codesign.dynamics.contact_rows import INACTIVE, SLIP_NEG, SLIP_POS, STICK, make_settings
from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import center_of_mass, forward_kinematics
from codesign.dynamics.loops import loop_constraints
from codesign.dynamics.model import ModelBuilder, make_workspace
from codesign.dynamics.testing import examples
from codesign.dynamics.testing.contact_sim import simulate
from codesign.errors import UserError

G = 9.81
TIGHT = dict(rtol=1e-11, atol=1e-13)


def rod_drop(theta, mu, drop=0.3, length=1.0, mass=1.0):
    """Rod at angle theta, lowest end `drop` above the ground, released at rest; runs
    until shortly after the first impact."""
    model = examples.falling_rod(length=length, mass=mass)
    low = 0.5 * length * np.sin(theta)
    q0 = np.array([0.0, low + drop, -theta])  # end_b (+L/2) is the lower end for pitch -theta
    t_hit = np.sqrt(2 * drop / G)
    res = simulate(model, q0, t_end=t_hit + 1e-3, settings=make_settings(mu=mu), **TIGHT)
    return model, res, t_hit


def test_falling_rod_sticking_impact_matches_impulse_momentum():
    theta, L, m = np.pi / 6, 1.0, 1.0
    _, res, t_hit = rod_drop(theta, mu=1.0)
    assert res.success, res.message
    assert res.event_kind[0] == "touchdown" and res.event_contact[0] == 1
    assert res.event_t[0] == pytest.approx(t_hit, abs=1e-9)
    v0 = G * t_hit
    # Plastic, sticking impact at end point P = CoM + (L/2)(cos th, -sin th): angular
    # momentum about P is conserved, I_P = I + m L^2/4 = m L^2/3, so
    # omega+ = m (r x v-) / I_P with r = CoM - P = (L/2)(-cos th, sin th), v- = (0, -v0):
    r = 0.5 * L * np.array([-np.cos(theta), np.sin(theta)])
    omega = m * (r[0] * -v0 - r[1] * 0.0) / (m * L**2 / 3)
    v_com = omega * np.array([-r[1], r[0]])  # the CoM circles about the fixed point P
    # required friction ratio 0.742 < mu = 1: the stick assumption holds
    impulse = m * (v_com - np.array([0.0, -v0]))
    assert abs(impulse[0]) / impulse[1] < 1.0
    qd_after = res.event_x_after[0][3:]
    np.testing.assert_allclose(qd_after, [v_com[0], v_com[1], omega], rtol=1e-9, atol=1e-9)
    assert res.event_mode_after[0][1] == STICK and res.event_mode_after[0][0] == INACTIVE


def test_falling_rod_sliding_impact_matches_impulse_momentum():
    theta, L, m, mu = np.pi / 6, 1.0, 1.0, 0.3
    _, res, t_hit = rod_drop(theta, mu=mu)
    assert res.success, res.message
    v0 = G * t_hit
    inertia = m * L**2 / 12
    # P = CoM + rp, rp = (L/2)(cos th, -sin th). Impulse (Lt, Ln) with Lt = -s mu Ln, s the
    # slip direction of P after the impact; v_Pz+ = 0 fixes Ln:
    rp = 0.5 * L * np.array([np.cos(theta), -np.sin(theta)])
    consistent = []
    for s in (1.0, -1.0):
        lt_per_ln = -s * mu
        # dvz = Ln/m, domega = (rp_x Ln - rp_z Lt)/I, v_Pz = vz + omega rp_x = 0
        ln = v0 / (1 / m + rp[0] * (rp[0] - rp[1] * lt_per_ln) / inertia)
        lt = lt_per_ln * ln
        omega = (rp[0] * ln - rp[1] * lt) / inertia
        v = np.array([lt / m, -v0 + ln / m])
        v_px = v[0] - omega * rp[1]
        if ln > 0 and s * v_px >= 0:
            consistent.append((s, [v[0], v[1], omega]))
    # exactly one slip direction is consistent: the end skids away from the CoM (+x)
    assert [s for s, _ in consistent] == [1.0]
    qd_after = res.event_x_after[0][3:]
    np.testing.assert_allclose(qd_after, consistent[0][1], rtol=1e-9, atol=1e-9)
    assert res.event_mode_after[0][1] == SLIP_POS


def test_painleve_rod_jams_by_a_tangential_impact():
    """Painlevé's rod: its lower end sliding away from under the centre with mu above
    (1 + 3 cos^2 th) / (3 sin th cos th) (4/3 at its least) has no consistent contact mode
    (sliding needs a negative normal force, release a negative normal acceleration); Coulomb's
    law admits only an impulse that stops the end (Génot & Brogliato 1999). Checked by hand:
    the inconsistency, the impulse W^-1 (-v_P) inside the friction cone, the state after it
    and the energy it takes, 1/2 v_P^T W^-1 v_P."""
    theta, L, m, mu, v0 = np.arctan(2.0), 1.0, 1.0, 1.5, 1.0
    inertia = m * L**2 / 12
    rp = 0.5 * L * np.array([np.cos(theta), -np.sin(theta)])    # centre -> lower end (end_b)
    # sliding +x (friction -mu lambda_n): the end's normal acceleration per unit lambda_n
    a_per_lambda = 1 / m + (rp[0] * 1.0 - rp[1] * -mu) * rp[0] / inertia
    assert a_per_lambda == pytest.approx((1 + 3 * np.cos(theta)**2 - 3 * mu * np.sin(theta) * np.cos(theta)) / m)
    assert a_per_lambda < 0 and -G < 0          # lambda_n = G / a_per_lambda < 0; release: a_n = -G < 0
    # the plastic sticking impulse: W P = -v_P, W = I/m + (1/I) r_perp r_perp^T
    r_perp = np.array([-rp[1], rp[0]])
    W = np.eye(2) / m + np.outer(r_perp, r_perp) / inertia
    impulse = np.linalg.solve(W, -np.array([v0, 0.0]))
    assert impulse[1] > 0 and abs(impulse[0]) < mu * impulse[1]       # inside the cone: the end jams
    omega = (rp[0] * impulse[1] - rp[1] * impulse[0]) / inertia
    qd_after = np.array([v0 + impulse[0] / m, impulse[1] / m, omega])
    energy_taken = 0.5 * np.array([v0, 0.0]) @ np.linalg.solve(W, np.array([v0, 0.0]))

    model = examples.falling_rod(length=L, mass=m)
    q0 = np.array([0.0, 0.5 * L * np.sin(theta), -theta])
    res = simulate(model, q0, np.array([v0, 0.0, 0.0]), t_end=1e-3, settings=make_settings(mu=mu), **TIGHT)
    assert res.success, res.message
    assert res.stats["tangential_impacts"] == 1
    np.testing.assert_allclose(res.qd[0], qd_after, rtol=1e-9, atol=1e-12)
    kinetic = 0.5 * m * (qd_after[0]**2 + qd_after[1]**2) + 0.5 * inertia * qd_after[2]**2
    assert kinetic == pytest.approx(0.5 * m * v0**2 - energy_taken, rel=1e-12)
    assert res.modes[0][1] != SLIP_POS                  # after the impulse the end no longer slides
    # below the critical mu the same state slides on, without an impulse
    calm = simulate(model, q0, np.array([v0, 0.0, 0.0]), t_end=1e-3, settings=make_settings(mu=1.0), **TIGHT)
    assert calm.success and calm.stats["tangential_impacts"] == 0 and calm.modes[0][1] == SLIP_POS


def block_on_ground(com_x=0.0, slope=0.0, width=0.2, height=0.1, mass=2.0):
    b = ModelBuilder(gravity=G)
    b.add_floating_base("block", mass, (com_x, 0.0), examples.box_inertia(mass, width, height))
    b.add_contact("back", "block", (-width / 2, -height / 2))
    b.add_contact("front", "block", (width / 2, -height / 2))
    origin = height / 2 * np.array([-np.sin(slope), np.cos(slope)])
    return b.build(), np.array([origin[0], origin[1], slope])


def test_sliding_block_stops_at_coulomb_distance_and_time():
    mu, v0 = 0.5, 2.0
    model = examples.sliding_block(mass=1.0)
    q0 = np.array([0.0, 0.05, 0.0])
    res = simulate(model, q0, np.array([v0, 0.0, 0.0]), t_end=0.6, **TIGHT,
                   settings=make_settings(mu=mu), record_times=np.linspace(0, 0.6, 61))
    assert res.success, res.message
    assert list(res.modes[0]) == [SLIP_POS, SLIP_POS]
    t_stop, d_stop = v0 / (mu * G), v0**2 / (2 * mu * G)
    assert res.event_kind[0] == "slip-stop"
    assert res.event_t[0] == pytest.approx(t_stop, abs=1e-9)
    assert list(res.mode_final) == [STICK, STICK]
    assert res.x_final[0] == pytest.approx(d_stop, abs=1e-9)
    np.testing.assert_allclose(res.x_final[3:], 0.0, atol=1e-9)
    # while sliding: normal forces carry the weight, friction is mu times it, backwards
    sliding = res.t < t_stop
    np.testing.assert_allclose(res.forces[sliding, :, 0].sum(axis=1), G, rtol=1e-9)
    np.testing.assert_allclose(res.forces[sliding, :, 1].sum(axis=1), -mu * G, rtol=1e-9)
    # friction at the sole pitches the load forward: the front corner carries more
    assert np.all(res.forces[sliding, 1, 0] > res.forces[sliding, 0, 0])


@pytest.mark.parametrize("com_x", [0.0, 0.03])
def test_resting_block_forces_sum_to_weight_lever_rule(com_x):
    mass, width = 2.0, 0.2
    model, q0 = block_on_ground(com_x=com_x, mass=mass, width=width)
    res = simulate(model, q0, t_end=0.5, settings=make_settings(mu=0.5), **TIGHT)
    assert res.success and len(res.event_t) == 0, res.message
    assert np.all(res.modes == STICK)
    x1, x2 = -width / 2, width / 2
    expected = mass * G * np.array([(x2 - com_x) / (x2 - x1), (com_x - x1) / (x2 - x1)])
    np.testing.assert_allclose(res.forces[:, :, 0], np.broadcast_to(expected, (101, 2)), rtol=1e-9)
    np.testing.assert_allclose(res.forces[:, :, 1], 0.0, atol=1e-9)
    np.testing.assert_allclose(res.q[-1], q0, atol=1e-9)


def test_block_resting_on_slope_total_contact_force_is_the_weight():
    slope, mass = 0.2, 2.0   # tan 0.2 = 0.203 < mu: it sticks
    model, q0 = block_on_ground(slope=slope, mass=mass)
    res = simulate(model, q0, t_end=0.5, settings=make_settings(mu=0.5, slope_rad=slope), **TIGHT)
    assert res.success and np.all(res.modes == STICK), res.message
    n = np.array([-np.sin(slope), np.cos(slope)])
    t = np.array([np.cos(slope), np.sin(slope)])
    total = res.forces[:, :, 0].sum(axis=1)[:, None] * n + res.forces[:, :, 1].sum(axis=1)[:, None] * t
    np.testing.assert_allclose(total, np.broadcast_to([0.0, mass * G], total.shape), atol=1e-9 * mass * G)
    assert np.all(res.forces[:, :, 0] > 0)
    np.testing.assert_allclose(res.q[-1], q0, atol=1e-9)


def test_block_on_too_steep_slope_slides_with_coulomb_acceleration():
    slope, mu, mass = 0.5, 0.3, 2.0   # tan 0.5 = 0.546 > mu: it slides down
    model, q0 = block_on_ground(slope=slope, mass=mass)
    res = simulate(model, q0, t_end=0.5, settings=make_settings(mu=mu, slope_rad=slope), **TIGHT)
    assert res.success and np.all(res.modes[1:] == SLIP_NEG), res.message
    a = G * (np.sin(slope) - mu * np.cos(slope))   # down the slope
    s = 0.5 * a * res.t**2
    np.testing.assert_allclose(res.q[:, 0] - q0[0], -s * np.cos(slope), atol=1e-9)
    np.testing.assert_allclose(res.q[:, 1] - q0[1], -s * np.sin(slope), atol=1e-9)


@pytest.mark.parametrize("push", [0.6, 1.5])
def test_block_pushed_by_constant_force_sticks_or_slides_by_coulomb(push):
    """Constant applied forces (tau): a horizontal force push * mu m g on the block."""
    mu, mass = 0.5, 2.0
    model, q0 = block_on_ground(mass=mass)
    force = push * mu * mass * G
    res = simulate(model, q0, t_end=0.5, settings=make_settings(mu=mu), **TIGHT,
                   tau=np.array([force, 0.0, 0.0]))
    assert res.success, res.message
    if push < 1:   # static friction holds it: the ground's tangential force is -F
        assert np.all(res.modes == STICK)
        np.testing.assert_allclose(res.forces[:, :, 1].sum(axis=1), -force, rtol=1e-9)
        np.testing.assert_allclose(res.q[-1], q0, atol=1e-9)
    else:          # it slides with a = (F - mu m g) / m from the start
        assert np.all(res.modes == SLIP_POS) and len(res.event_t) == 0   # resolved at t0
        a = (force - mu * mass * G) / mass
        np.testing.assert_allclose(res.q[:, 0] - q0[0], 0.5 * a * res.t**2, atol=1e-9)


def ball(mass=1.0):
    b = ModelBuilder(gravity=G)
    b.add_floating_base("ball", mass, (0.0, 0.0), 1e-3)
    b.add_contact("point", "ball", (0.0, 0.0))
    return b.build()


def test_bouncing_ball_comes_to_rest_once_it_leaves_slower_than_the_rest_speed():
    """With a rest speed of 1 mm/s the ball bounces as Newton's law says while its
    rebound e^k v0 is faster, and rests on the ground after the first bounce slower than
    it: no Zeno chatter, the ground carries m g, and the held rebound decays as the drift
    stabilisation's critically damped response. By hand: bounce k at t_first + 2 v0/g e (1
    - e^(k-1)) / (1 - e); with e = 0.5, v0 = 4.43 m/s the 13th rebound (0.54 mm/s) rests."""
    e, h0, rest = 0.5, 1.0, 1e-3
    res = simulate(ball(), [0.0, h0, 0.0], t_end=3.0, **TIGHT, max_transitions=20, chatter_window=1e-2,
                   record_times=np.linspace(0.0, 3.0, 3001),
                   settings=make_settings(restitution=e, tol_v=1e-13, tol_h=1e-13, rest_speed=rest,
                                          baumgarte_d=20.0, baumgarte_p=20.0))
    assert res.success, res.message
    v0 = np.sqrt(2 * G * h0)
    n_bounces = int(np.ceil(np.log(rest / v0) / np.log(e)))       # the first k with e^k v0 < rest
    assert n_bounces == 13
    k = np.arange(n_bounces)
    expected = v0 / G + 2 * v0 / G * e * (1 - e**k) / (1 - e)
    np.testing.assert_allclose(res.event_t[:n_bounces], expected, atol=1e-8)
    # resting: the ground carries m g (m = 1 kg) plus the drift stabilisation's brake on
    # the last rebound, at most m 2 D v_rest = 0.04 N, gone within ~0.5 s (rate D = P = 20/s)
    resting = res.t > expected[-1] + 1e-3
    assert np.all(res.modes[resting, 0] != INACTIVE)
    assert np.all(np.abs(res.forces[resting, 0, 0] - G) <= 2 * 20.0 * rest)
    late = res.t > expected[-1] + 0.5
    np.testing.assert_allclose(res.forces[late, 0, 0], G, rtol=1e-6)
    # held, the last rebound v = e^13 v0 obeys the critically damped h'' + 2P h' + P^2 h = 0:
    # h = v t exp(-P t), at most v / (P e) (9.9 um) at t = 1/P
    v_last, tau = e**n_bounces * v0, res.t[resting] - expected[-1]
    np.testing.assert_allclose(res.q[resting, 1], v_last * tau * np.exp(-20.0 * tau), rtol=0.02, atol=1e-10)


def test_bouncing_ball_chatters_at_the_zeno_time():
    e, h0 = 0.5, 1.0
    res = simulate(ball(), [0.0, h0, 0.0], t_end=2.0, **TIGHT, max_transitions=20, chatter_window=1e-2,
                   settings=make_settings(restitution=e, tol_v=1e-13, tol_h=1e-13, rest_speed=1e-13))
    assert res.status == hybrid.CHATTERING, res.message
    v0 = np.sqrt(2 * G * h0)
    t_first = v0 / G
    t_zeno = t_first + 2 * e * v0 / (G * (1 - e))
    k = np.arange(len(res.event_t))
    expected = t_first + 2 * v0 / G * e * (1 - e**k) / (1 - e)
    np.testing.assert_allclose(res.event_t, expected, atol=1e-8)
    assert 0 < t_zeno - res.t_final < 2 * e * v0 / G * e**len(k) / (1 - e) + 1e-8
    assert all(kind == "touchdown" for kind in res.event_kind)


def test_bouncing_ball_with_bounce_threshold_comes_to_rest():
    e, h0 = 0.5, 1.0
    res = simulate(ball(), [0.0, h0, 0.0], t_end=2.0, **TIGHT,
                   settings=make_settings(restitution=e, bounce_min_speed=0.05))
    assert res.success, res.message
    assert list(res.mode_final) == [STICK]
    v0 = np.sqrt(2 * G * h0)
    n_bounces = int(np.ceil(np.log(0.05 / v0) / np.log(e)))   # first impact slower than 0.05 m/s
    assert len(res.event_t) == n_bounces + 1
    assert res.x_final[1] == pytest.approx(0.0, abs=1e-9)
    assert res.forces[-1, 0, 0] == pytest.approx(G, rel=1e-9)


def energy(model, x):
    """Kinetic + gravity + spring energy (J)."""
    n = model.n
    w = make_workspace(model)
    q, qd = x[:n], x[n:]
    forward_kinematics(model.arrays, q, qd, w)
    mass_matrix(model.arrays, w)
    com = np.zeros(4)
    center_of_mass(model.arrays, w, com)
    springs = 0.5 * np.sum(model.spring_k * (q - model.spring_rest) ** 2)
    return 0.5 * qd @ w.M @ qd + model.total_mass() * model.gravity * com[1] + springs


def closure_error(model, q):
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, np.zeros_like(q), w)
    loop_constraints(model.arrays, w, 0.0, 0.0)
    return np.max(np.abs(w.phi[: 2 * model.n_loops]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["closed_three_link", "pantograph_leg"])
def test_closed_loops_conserve_energy(name):
    if name == "closed_three_link":
        model, q0 = examples.closed_three_link(), examples.closed_three_link_q0()
    else:
        model, q0 = examples.pantograph_leg(hip_damping=0.0), examples.pantograph_leg_q0()
    res = simulate(model, q0, t_end=10.0, rtol=1e-12, atol=1e-14, record_times=np.linspace(0, 10, 201))
    assert res.success, res.message
    x = np.hstack([res.q, res.qd])
    e = np.array([energy(model, xi) for xi in x])
    assert np.ptp(res.q[:, 0]) > 0.1  # it swings
    assert np.max(np.abs(e - e[0])) <= 1e-8 * abs(e[0]), np.max(np.abs(e - e[0])) / abs(e[0])
    assert max(closure_error(model, q) for q in res.q) <= 1e-9


def test_soft_block_stops_near_coulomb_distance():
    mu, v0, mass, k = 0.5, 2.0, 1.0, 1e5
    model = examples.sliding_block(mass=mass)
    settle = mass * G / (2 * k)                       # static penetration of each corner
    q0 = np.array([0.0, 0.05 - settle, 0.0])
    v_reg = 1e-3
    s = make_settings(model="soft", mu=mu, stiffness=k, damping=2 * np.sqrt(k * mass / 2), v_reg=v_reg)
    res = simulate(model, q0, np.array([v0, 0.0, 0.0]), t_end=1.0, settings=s, rtol=1e-9, atol=1e-11)
    assert res.success and len(res.event_t) == 0, res.message
    d_stop = v0**2 / (2 * mu * G)
    # regularised Coulomb: at most v_reg^2 / (mu g) farther (module docstring), never shorter
    # than the normal-force transient allows
    assert -1e-4 <= res.x_final[0] - d_stop <= v_reg**2 / (mu * G) + 1e-4
    np.testing.assert_allclose(res.forces[-1, :, 0].sum(), mass * G, rtol=1e-6)


def test_bad_input_raises_user_error():
    model = examples.sliding_block()
    with pytest.raises(UserError):
        simulate(model, [0.0, 0.05])
    with pytest.raises(UserError):
        make_settings(mu=-1.0)
    with pytest.raises(UserError):
        make_settings(model="stiff")
