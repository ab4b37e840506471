"""Geyer & Herr 2010's muscle-tendon unit (codesign/model/muscles.py) against truths written
out here: the paper's curves as it prints them (v_max < 0, m/s), their defining points, the
static force balance found by scipy's brentq, the activation step response, the moment arms
as the derivative of the MTU length, and each muscle's anatomical action."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from codesign.errors import UserError
from codesign.model import muscles as M
from codesign.model.muscle_table import MUSCLES, NAMES, check_muscle, muscle_table

C = M.GEYER_HERR_2010
W, N, K, EPS_REF = 0.56, 1.5, 5.0, 0.04   # the paper's shared constants, read again here


# ---- the paper's curves, as printed (F in N, lengths in m, v in m/s with v_max < 0)
def paper_fl(l_ce, l_opt):
    return math.exp(math.log(0.05) * abs((l_ce - l_opt) / (l_opt * W)) ** 3)


def paper_fv(v_ce, v_max_neg):
    if v_ce < 0:
        return (v_max_neg - v_ce) / (v_max_neg + K * v_ce)
    return N + (N - 1) * (v_max_neg + v_ce) / (7.56 * K * v_ce - v_max_neg)


def paper_fse(l_se, l_slack, f_max):
    eps = (l_se - l_slack) / l_slack
    return f_max * (eps / EPS_REF) ** 2 if eps > 0 else 0.0


def paper_fpe_star(l_ce, l_opt, f_max):
    return f_max * ((l_ce - l_opt) / (l_opt * W)) ** 2 if l_ce > l_opt else 0.0


def paper_fbe(l_ce, l_opt, f_max):
    l_min = l_opt * (1 - W)
    return f_max * ((l_min - l_ce) / (l_opt * W / 2)) ** 2 if l_ce < l_min else 0.0


@pytest.mark.parametrize("spec", MUSCLES, ids=NAMES)
def test_force_length_against_the_paper(spec):
    l_opt = spec.l_opt
    for x in (0.3, 0.5, 0.8, 1.0, 1.1, 1.3, 1.6):
        assert M.force_length(x, C.w, C.c) == pytest.approx(paper_fl(x * l_opt, l_opt), rel=1e-12)
    # the curve's defining points: 1 at l_opt, exp(c) = 0.05 at l_opt (1 +- w)
    assert M.force_length(1.0, C.w, C.c) == 1.0
    assert M.force_length(1.0 + W, C.w, C.c) == pytest.approx(0.05, rel=1e-12)
    assert M.force_length(1.0 - W, C.w, C.c) == pytest.approx(0.05, rel=1e-12)


@pytest.mark.parametrize("spec", MUSCLES, ids=NAMES)
def test_force_velocity_against_the_paper(spec):
    v_max_neg = -spec.v_max * spec.l_opt          # the paper's v_max < 0, m/s
    vmax = -v_max_neg
    for v in (-0.9, -0.5, -0.1, -0.01, 0.0, 0.01, 0.2, 0.7, 1.0):
        assert M.force_velocity(v, C.k, C.n) == pytest.approx(paper_fv(v * vmax, v_max_neg), rel=1e-12)
    # defining points: isometric 1, shortening at v_max 0, Hill's hyperbola at half speed
    # (1 - 1/2)/(1 + K/2), lengthening at v_max N
    assert M.force_velocity(0.0, C.k, C.n) == 1.0
    assert M.force_velocity(-1.0, C.k, C.n) == pytest.approx(0.0, abs=1e-15)
    assert M.force_velocity(-0.5, C.k, C.n) == pytest.approx(0.5 / 3.5, rel=1e-12)
    assert M.force_velocity(1.0, C.k, C.n) == pytest.approx(N, rel=1e-12)


def test_the_inverse_force_velocity_inverts_every_branch():
    for v0 in np.linspace(-1.0, 3.0, 81):
        f = M.force_velocity(v0, C.k, C.n)
        assert M.fv_inverse(f, C.k, C.n) == pytest.approx(v0, abs=1e-12)
    assert M.fv_inverse(-0.3, C.k, C.n) == -1.0       # no force: shortening at v_max
    assert M.fv_inverse(1e12, C.k, C.n) == M.V0_CAP   # no CE to hold it: the cap


def test_elastic_elements_reach_f_max_at_their_reference_strains():
    spec = MUSCLES[0]
    l_opt, l_slack = spec.l_opt, spec.l_slack
    assert M.tendon_force_norm(l_slack * (1 + EPS_REF), l_slack, C.eps_ref) == pytest.approx(1.0)
    assert M.tendon_force_norm(l_slack * 0.99, l_slack, C.eps_ref) == 0.0
    assert M.parallel_force_norm(1.0 + W, C.eps_pe) == pytest.approx(1.0)
    assert M.parallel_force_norm(0.99, C.eps_pe) == 0.0
    assert M.buffer_force_norm(1.0 - W - W / 2, C.w, C.eps_be) == pytest.approx(1.0)
    assert M.buffer_force_norm(1.0 - W + 1e-9, C.w, C.eps_be) == 0.0
    for x in (0.2, 0.5, 1.2):
        f_max = spec.f_max
        assert f_max * M.parallel_force_norm(x, C.eps_pe) == pytest.approx(paper_fpe_star(x * l_opt, l_opt, f_max))
        assert f_max * M.buffer_force_norm(x, C.w, C.eps_be) == pytest.approx(paper_fbe(x * l_opt, l_opt, f_max))


def settle(spec, l_mtu, act, l_ce0, steps=3000, dt=1e-3):
    l_ce = l_ce0
    for _ in range(steps):
        l_ce, v_ce = M.ce_step(l_ce, l_mtu, act, dt, spec.v_max, spec.l_opt, spec.l_slack, C)
    return l_ce, v_ce


@pytest.mark.parametrize("spec", MUSCLES, ids=NAMES)
@pytest.mark.parametrize("act", [0.02, 0.3, 1.0])
def test_an_isometric_mtu_settles_on_the_static_force_balance(spec, act):
    """Held at l_opt + l_slack under constant activation, the CE shortens against the
    tendon until A F_max f_l + F_pe* = F_se + F_be; that length by brentq on the paper's
    curves (v = 0, f_v = 1), independent of the module."""
    l_opt, l_slack, f_max = spec.l_opt, spec.l_slack, spec.f_max
    l_mtu = l_opt + l_slack

    def balance(x):
        return (paper_fse(l_mtu - x, l_slack, f_max) + paper_fbe(x, l_opt, f_max)
                - act * f_max * paper_fl(x, l_opt) - paper_fpe_star(x, l_opt, f_max))

    truth = brentq(balance, l_opt * (1 - 1.5 * W), l_opt, xtol=1e-15, rtol=1e-14)
    l_ce, v_ce = settle(spec, l_mtu, act, l_opt)
    assert l_ce == pytest.approx(truth, rel=1e-8, abs=1e-12)
    assert abs(v_ce) < 1e-6
    f_se, f_ce, f_pe, f_be = M.mtu_forces(l_ce, v_ce, l_mtu, act, f_max, spec.v_max, l_opt, l_slack, C)
    assert f_se > 0.0
    assert f_se == pytest.approx(f_ce + f_pe - f_be, rel=1e-6)


@pytest.mark.parametrize("spec", MUSCLES, ids=NAMES)
def test_zero_activation_leaves_only_the_passive_elements(spec):
    """A = 0: no CE force. Stretched beyond l_opt + l_slack the MTU settles where the
    tendon carries what the parallel element does (brentq); shorter, the tendon goes slack."""
    l_opt, l_slack, f_max = spec.l_opt, spec.l_slack, spec.f_max
    l_mtu = 1.25 * l_opt + l_slack * (1 + 0.5 * EPS_REF)
    truth = brentq(lambda x: paper_fse(l_mtu - x, l_slack, f_max) - paper_fpe_star(x, l_opt, f_max),
                   l_opt, l_mtu - l_slack, xtol=1e-15, rtol=1e-14)
    l_ce, v_ce = settle(spec, l_mtu, 0.0, l_opt)
    assert l_ce == pytest.approx(truth, rel=1e-8)
    f_se, f_ce, f_pe, f_be = M.mtu_forces(l_ce, v_ce, l_mtu, 0.0, f_max, spec.v_max, l_opt, l_slack, C)
    assert f_ce == 0.0 and f_be == 0.0
    assert f_se == pytest.approx(f_pe, rel=1e-6) and f_se > 0.01 * f_max

    short = l_opt + l_slack - 0.2 * l_opt
    l_ce, v_ce = settle(spec, short, 0.0, l_opt, steps=200)
    f_se, f_ce, f_pe, f_be = M.mtu_forces(l_ce, v_ce, short, 0.0, f_max, spec.v_max, l_opt, l_slack, C)
    assert f_ce == 0.0 and f_pe == 0.0
    assert f_se < 1e-9 * f_max


def test_activation_step_response_is_first_order():
    """S = 1 from A = 0: A(t) = 1 - exp(-t/tau) at every step (the step is the exact
    solution, so to round-off); and down again from 1 to S = 0.01."""
    dt, tau = 1e-3, C.tau
    act = 0.0
    for k in range(1, 101):
        act = M.activation_step(act, 1.0, dt, tau)
        assert act == pytest.approx(1.0 - math.exp(-k * dt / tau), abs=1e-13)
    start = 1.0
    act = start
    for k in range(1, 101):
        act = M.activation_step(act, 0.01, dt, tau)
        assert act == pytest.approx(0.01 + (start - 0.01) * math.exp(-k * dt / tau), abs=1e-13)


def test_one_leg_step_drives_all_muscles_together():
    table = muscle_table()
    phi = M.paper_angles(0.3, 0.2, 0.05)
    n = len(MUSCLES)
    l_ce, act, v_ce, l_mtu, f_se = table.l_opt.copy(), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    stim = np.linspace(0.1, 0.7, n)
    for _ in range(2000):
        M.muscles_step(table, C, phi, stim, 1e-3, l_ce, act, v_ce, l_mtu, f_se)
    for i, spec in enumerate(MUSCLES):
        alone, _ = settle(spec, l_mtu[i], stim[i], spec.l_opt, steps=2000)
        assert l_ce[i] == pytest.approx(alone, rel=1e-9)
        assert act[i] == pytest.approx(stim[i], rel=1e-12)


def test_mtu_length_is_l_opt_plus_l_slack_at_the_reference_angles():
    table = muscle_table()
    out = np.zeros(len(MUSCLES))
    for i, spec in enumerate(MUSCLES):
        phi = np.array([1.5, 2.8, 3.0])
        for a in spec.attachments:
            phi[a.joint] = a.phi_ref
        M.mtu_lengths(table, phi, out)
        assert out[i] == pytest.approx(spec.l_opt + spec.l_slack, abs=1e-15)


def test_torques_are_the_virtual_work_of_the_mtu_length_over_rho():
    """tau_j = -(1/rho_j) dl_mtu/dphi_j F: the moment arm is the length's derivative
    (central differences), scaled by rho as the paper does."""
    table = muscle_table()
    n = len(MUSCLES)
    phi = np.array([math.radians(95), math.radians(160), math.radians(170)])
    h = 1e-6
    for i, spec in enumerate(MUSCLES):
        force = np.zeros(n)
        force[i] = 1000.0
        tau = np.zeros(3)
        M.joint_torques(table, phi, force, tau)
        for a in spec.attachments:
            up, down = phi.copy(), phi.copy()
            up[a.joint] += h
            down[a.joint] -= h
            lu, ld = np.zeros(n), np.zeros(n)
            M.mtu_lengths(table, up, lu)
            M.mtu_lengths(table, down, ld)
            dl = (lu[i] - ld[i]) / (2 * h)
            assert tau[a.joint] == pytest.approx(-dl / a.rho * force[i], rel=1e-6)
        spanned = {a.joint for a in spec.attachments}
        assert all(tau[j] == 0.0 for j in range(3) if j not in spanned)


def test_each_muscle_has_its_anatomical_action():
    """On the paper's angles (ankle grows in plantarflexion, knee and hip grow in
    extension) near a standing pose: SOL, GAS plantarflex; TA dorsiflexes; VAS extends the
    knee, GAS and HAM flex it; GLU and HAM extend the hip, HFL flexes it."""
    table = muscle_table()
    phi = M.paper_angles(math.radians(10), math.radians(10), 0.0)
    expected = {"SOL": {0: +1}, "TA": {0: -1}, "GAS": {0: +1, 1: -1}, "VAS": {1: +1},
                "HAM": {1: -1, 2: +1}, "GLU": {2: +1}, "HFL": {2: -1}}
    for i, name in enumerate(NAMES):
        force = np.zeros(len(NAMES))
        force[i] = 100.0
        tau = np.zeros(3)
        M.joint_torques(table, phi, force, tau)
        for joint, sign in expected[name].items():
            assert np.sign(tau[joint]) == sign, (name, joint, tau)


def test_the_table_names_a_source_for_every_parameter_and_checks_ranges():
    for spec in MUSCLES:
        assert "Geyer & Herr 2010" in spec.source and spec.slow_twitch_source
    bad = MUSCLES[0]._replace(f_max=-1.0)
    with pytest.raises(UserError, match="muscle SOL: f_max = -1.0"):
        muscle_table((bad,))
    with pytest.raises(UserError, match="rho"):
        check_muscle(MUSCLES[1]._replace(attachments=(MUSCLES[1].attachments[0]._replace(rho=1.5),)))
    with pytest.raises(UserError, match="slow_twitch"):
        check_muscle(MUSCLES[2]._replace(slow_twitch=1.2))


def test_the_ce_step_solves_its_backward_euler_equation_as_brentq_does():
    """ce_step's root of g(x) = x - l_ce - dt v_ce(x) (Newton from a guess, safeguarded
    by bisection) against scipy's brentq on the same equation and
    bracket, for random states of the seven muscles (a quarter at A = 0, where a slack
    tendon makes v_ce jump) and random guesses of v_ce (half of them 0): within 2e-13 m
    (the solver's LENGTH_TOL, 1e-13, on either side)."""
    rng = np.random.default_rng(7)
    for spec in MUSCLES:
        l_opt, l_slack, v_max = spec.l_opt, spec.l_slack, spec.v_max
        for _ in range(400):
            act = 0.0 if rng.random() < 0.25 else rng.uniform(0.0, 1.0)
            l_ce = l_opt * rng.uniform(0.4, 1.6)
            l_mtu = l_slack * rng.uniform(0.95, 1.08) + l_ce * rng.uniform(0.8, 1.2)
            dt = 1e-3
            guess = 0.0 if rng.random() < 0.5 else rng.normal(0.0, 0.5 * v_max * l_opt)
            x, v = M.ce_step(l_ce, l_mtu, act, dt, v_max, l_opt, l_slack, C, guess)

            def g(y):
                return y - l_ce - dt * M.ce_velocity(y, l_mtu, act, v_max, l_opt, l_slack, C)

            lo, hi = max(l_ce - dt * v_max * l_opt, 1e-6 * l_opt), l_ce + dt * M.V0_CAP * v_max * l_opt
            truth = lo if g(lo) >= 0 else hi if g(hi) <= 0 else brentq(g, lo, hi, xtol=1e-16, rtol=1e-15)
            assert x == pytest.approx(truth, rel=0, abs=2e-13)
            assert v == pytest.approx((x - l_ce) / dt, rel=1e-12)


def test_the_step_residuals_slope_is_its_derivative():
    """step_residual_slope's g' against a central difference of step_residual (h = 1e-7
    l_opt) at random states of the seven muscles away from the elements' kinks (a tendon
    going slack, l_opt, l_min = l_opt (1 - w), and v0 = -1, 0, 1, V0_CAP where f_v's
    branches meet), within 1e-5; its g is step_residual's, bit for bit; fv_inverse_slope
    is fv_inverse's derivative on each branch, within 1e-6."""
    for f in (0.3, 0.9, 1.2, 1.45, 1.6, 3.0):
        numeric = (M.fv_inverse(f + 1e-7, K, N) - M.fv_inverse(f - 1e-7, K, N)) / 2e-7
        assert M.fv_inverse_slope(f, K, N) == pytest.approx(numeric, rel=1e-6)
    rng = np.random.default_rng(11)
    checked = 0
    for spec in MUSCLES:
        l_opt, l_slack, v_max = spec.l_opt, spec.l_slack, spec.v_max
        h = 1e-7 * l_opt
        for _ in range(300):
            act = rng.uniform(0.01, 1.0)
            l_ce = l_opt * rng.uniform(0.4, 1.6)
            l_mtu = l_slack * rng.uniform(0.95, 1.08) + l_ce * rng.uniform(0.8, 1.2)
            x = l_ce + 1e-3 * rng.normal(0.0, v_max * l_opt)
            args = (l_ce, l_mtu, act, 1e-3, v_max, l_opt, l_slack, C)
            v0 = M.ce_velocity(x, l_mtu, act, v_max, l_opt, l_slack, C) / (v_max * l_opt)
            length_kinks = (l_mtu - l_slack, l_opt, l_opt * (1 - W))
            if min(abs(x - k) for k in length_kinks) < 1e3 * h or \
                    min(abs(v0 - k) for k in (-1.0, 0.0, 1.0, M.V0_CAP)) < 1e-3:
                continue
            value, slope = M.step_residual_slope(x, *args)
            assert value == M.step_residual(x, *args)
            numeric = (M.step_residual(x + h, *args) - M.step_residual(x - h, *args)) / (2 * h)
            assert slope == pytest.approx(numeric, rel=1e-5, abs=1e-5)
            checked += 1
    assert checked > 1000
