"""The soft contact law stepped with implicit forces (contact_soft_step, timestep's
SOFT_STIFFNESS) against its own equations, static and steady-state truths, and the
event-driven soft model integrated to 1e-9."""

import numpy as np
import pytest

from codesign.dynamics import timestep as ts
from codesign.dynamics.contact_rows import make_settings
from codesign.dynamics.contact_soft_step import normal_impulse, tangent_impulse
from codesign.dynamics.testing import examples
from codesign.dynamics.testing.contact_sim import simulate as simulate_event
from codesign.dynamics.testing.stepping import simulate

G = 9.81
K, V_REG = 1e5, 1e-2


def soft(mass):
    """Step keywords of the soft law with a damping ratio ~1 for a block on two points."""
    return {"soft_stiffness": K, "soft_damping": 2 * np.sqrt(K * mass / 2), "soft_v_reg": V_REG,
            "pgs_max_sweeps": 3000}


def test_scalar_impulses_meet_the_implicit_law():
    rng = np.random.default_rng(3)
    h, k, d, mu = 1e-3, K, 1e3, 0.8
    jumps = 0
    for _ in range(2000):
        a, w, g = rng.normal(0, 0.5), rng.uniform(0.05, 5.0), rng.normal(0, 2e-3)
        p = normal_impulse(a, w, g, h, k, d, 1.0, 0.0, 0.0)
        u = a + w * p
        assert p >= 0.0
        if g + h * u < -1e-15:                 # below the ground at the step's end: the law
            assert p == pytest.approx(h * max(0.0, -k * (g + h * u) - d * u), abs=1e-12)
        elif p > 0.0:                          # the law's jump: the point lands on the ground
            assert g + h * u == pytest.approx(0.0, abs=1e-15)
            assert p <= h * max(0.0, -k * g - (h * k + d) * u) + 1e-12
            jumps += 1
        at = rng.normal(0, 0.05)
        pt = tangent_impulse(at, w, p, mu, V_REG)
        ut = at + w * pt
        assert pt == pytest.approx(-mu * p * np.clip(ut / V_REG, -1, 1), abs=1e-12)
    assert jumps > 0


def test_block_settles_at_its_static_penetration():
    mass = 2.0
    model = examples.sliding_block(mass=mass)
    q0 = np.array([0.0, 0.05, 0.0])              # its bottom on the ground
    res = simulate(model, q0, t_end=1.0, mu=0.5, **soft(mass))
    assert res.status == ts.STEP_OK
    assert res.stats[ts.STAT_ABOVE_TOL] == 0 and res.stats[ts.STAT_APPROX] == 0
    sink = mass * G / (2 * K)                    # each corner carries half the weight
    assert res.q[-1, 1] - 0.05 == pytest.approx(-sink, rel=1e-6)
    np.testing.assert_allclose(res.force[-1, :, 0], mass * G / 2, rtol=1e-6)
    assert np.max(np.abs(res.v[-1])) < 1e-9


def test_block_on_a_slope_creeps_at_the_regularised_speed():
    slope, mu, mass = 0.2, 0.5, 2.0                # tan 0.2 = 0.203 < mu: Coulomb would stick
    model = examples.sliding_block(mass=mass)
    origin = 0.05 * np.array([-np.sin(slope), np.cos(slope)])
    q0 = np.array([origin[0], origin[1], slope])
    res = simulate(model, q0, t_end=1.0, mu=mu, slope=slope, **soft(mass))
    assert res.status == ts.STEP_OK and res.stats[ts.STAT_ABOVE_TOL] == 0
    tangent = np.array([np.cos(slope), np.sin(slope)])
    creep = res.v[-100:, :2] @ tangent           # m/s along the slope (up is +)
    # friction mu lambda_n u / v_reg carries m g sin: u = v_reg tan(slope) / mu, down the slope
    np.testing.assert_allclose(creep, -V_REG * np.tan(slope) / mu, rtol=1e-6)


def test_falling_block_converges_to_the_event_driven_soft_model():
    """Dropped from 2 cm sliding at 0.3 m/s: lands on both corners, pitches on its
    friction, slides to creep. Against the adaptive integrator (rtol 1e-9): the position
    error falls at first order in h; the block's pitch mode (~690 rad/s on the two
    springs) is damped by the implicit step at h = 1 ms (h omega ~ 0.7), an error of at
    most 1 mrad that falls with h."""
    mass, mu = 1.0, 0.5
    model = examples.sliding_block(mass=mass)
    q0, v0 = np.array([0.0, 0.07, 0.0]), np.array([0.3, 0.0, 0.0])
    kw = soft(mass)
    s = make_settings(model="soft", mu=mu, stiffness=K, damping=kw["soft_damping"], v_reg=V_REG)
    position, pitch = [], []
    for h in (1e-3, 2.5e-4, 6.25e-5):
        res = simulate(model, q0, v0, t_end=0.2, h=h, mu=mu, **kw)
        ref = simulate_event(model, q0, v0, 0.2, settings=s, record_times=res.t, rtol=1e-9, atol=1e-11)
        assert ref.success, ref.message
        error = np.max(np.abs(res.q - ref.q), axis=0)
        position.append(max(error[0], error[1]))
        pitch.append(error[2])
    assert position[0] < 5e-4                       # m, at the walking rollout's 1 ms
    assert position[0] / position[1] > 3.0 and position[1] / position[2] > 3.0   # first order
    assert pitch[0] < 1e-3 and pitch[2] < 0.5 * pitch[0]   # rad


# --------------------------------------------------------------------------- Hunt-Crossley
# The nonlinear law lambda_n = k x^n (1 + c v) + d v (contact_soft.soft_normal_force) of a
# SCONE-like heel: Hertz's exponent, Simbody's k = (4/3) sqrt(R) E for R = 0.04 m and the
# plane-sphere modulus 7.07e5 Pa, c = 1.5 x a dissipation of 1 s/m.
HC_K, HC_N, HC_C = 4.0 / 3.0 * np.sqrt(0.04) * 7.07e5, 1.5, 1.5


def test_hunt_crossley_impulses_meet_the_implicit_law():
    rng = np.random.default_rng(5)
    h = 1e-3
    roots = jumps = 0
    for d in (0.0, 300.0):                       # Hunt-Crossley alone, and with a damper
        for _ in range(2000):
            a, w, g = rng.normal(0, 0.5), rng.uniform(0.05, 5.0), rng.normal(0, 5e-3)
            p = normal_impulse(a, w, g, h, HC_K, d, HC_N, HC_C, rng.uniform(0.0, 0.5))   # any start
            u = a + w * p
            x, v = -(g + h * u), -u
            assert p >= 0.0
            if x > 1e-15:                        # below the ground at the step's end: the law
                law = h * max(0.0, HC_K * x ** HC_N * (1 + HC_C * v) + d * v)
                assert p == pytest.approx(law, rel=1e-12, abs=1e-15)
                roots += p > 0.0
            elif p > 0.0:                        # only the damper's jump lands a point
                assert d > 0.0 and x == pytest.approx(0.0, abs=1e-15) and p <= d * g + 1e-15
                jumps += 1
    assert roots > 500 and jumps > 0


def test_block_on_a_hertz_spring_settles_at_its_static_penetration():
    """Its bounce on the two springs (~100 rad/s, damping ratio ~0.07 from c) has died
    out within 3 s to a micron's billionth."""
    mass = 2.0
    model = examples.sliding_block(mass=mass)
    res = simulate(model, np.array([0.0, 0.05, 0.0]), t_end=3.0, mu=0.5, soft_stiffness=HC_K,
                   soft_damping=0.0, soft_exponent=HC_N, soft_dissipation=HC_C, soft_v_reg=V_REG,
                   pgs_max_sweeps=3000)
    assert res.status == ts.STEP_OK and res.stats[ts.STAT_APPROX] == 0
    sink = (mass * G / 2 / HC_K) ** (1 / HC_N)   # each corner: k x^1.5 = m g / 2
    assert res.q[-1, 1] - 0.05 == pytest.approx(-sink, rel=1e-6)
    np.testing.assert_allclose(res.force[-1, :, 0], mass * G / 2, rtol=1e-6)


def test_hunt_crossley_restitution_against_its_exact_energy_integral():
    """A weightless block striking flat on both corners at v_in: m v dv/dx = -k x^n (1 + c v)
    separates into v dv / (1 + c v) = -(k/m) x^n dx, whose integral over the contact closes
    (x = 0 at touch-down and lift-off), so c v - ln(1 + c v) takes the same value at v_in and
    at -v_out whatever k, n and m: the rebound speed, exactly. Event-driven to 1e-10 and
    stepped at h = 1e-5 s."""
    from scipy.optimize import brentq
    mass, v_in = 1.0, 0.3
    model = examples.sliding_block(mass=mass, gravity=0.0)
    q0, v0 = np.array([0.0, 0.0501, 0.0]), np.array([0.0, -v_in, 0.0])
    energy = HC_C * v_in - np.log1p(HC_C * v_in)
    v_out = brentq(lambda v: -HC_C * v - np.log1p(-HC_C * v) - energy, 0.0, v_in)
    assert abs(v_out / v_in - (1 - 2 / 3 * HC_C * v_in)) < 0.1   # Hunt & Crossley's small-c estimate
    s = make_settings(model="soft", mu=0.5, stiffness=HC_K, damping=0.0, v_reg=V_REG,
                      exponent=HC_N, dissipation=HC_C)
    ref = simulate_event(model, q0, v0, 0.05, settings=s, record_times=[0.05], rtol=1e-10, atol=1e-12)
    assert ref.success, ref.message
    assert ref.qd[-1, 1] == pytest.approx(v_out, rel=1e-6)
    res = simulate(model, q0, v0, t_end=0.05, h=1e-5, mu=0.5, soft_stiffness=HC_K, soft_damping=0.0,
                   soft_exponent=HC_N, soft_dissipation=HC_C, soft_v_reg=V_REG, pgs_max_sweeps=3000)
    assert res.v[-1, 1] == pytest.approx(v_out, rel=1e-2)     # implicit Euler's own loss: < 1 %
