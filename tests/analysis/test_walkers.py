"""Return-map analysis against answers known independently: the rimless wheel by hand, the
simplest walker against Garcia et al. (1998), Bhounsule (2014) and a SciPy re-implementation,
the SLIP runner against energy conservation."""

import json

import numpy as np
import pytest
import scipy.integrate
from scipy.integrate import quad

from codesign.analysis import returnmap as R
from codesign.analysis import walkers as W
from codesign.cli import main

TOL = R.Tolerances()  # rtol = atol = 1e-14, event_tol = 1e-15


# ----------------------------------------------------------------------------- rimless wheel
def rimless_by_hand(lam2, mu, gamma, n):
    """Energy between strikes: theta_dot_-^2 = theta_dot_0^2 + 2 lam2 (cos(-pi/n + gamma) -
    cos(pi/n + gamma)) = theta_dot_0^2 + 4 lam2 sin(gamma) sin(pi/n); the strike multiplies
    theta_dot by mu. Fixed point: w*^2 = 4 mu^2 lam2 sin(gamma) sin(pi/n) / (1 - mu^2).
    Jacobian of (theta0, w0) -> (theta1, w1): theta1 = -pi/n always (row 0 is zero);
    dw1/dw0 = mu w0 / w_- = mu^2 at the fixed point; dw1/dtheta0 = -mu lam2 sin(theta0 +
    gamma) / w_- = mu^2 lam2 sin(pi/n - gamma) / w*. Eigenvalues 0 and mu^2."""
    w = np.sqrt(4 * mu**2 * lam2 * np.sin(gamma) * np.sin(np.pi / n) / (1 - mu**2))
    J = np.array([[0.0, 0.0], [mu**2 * lam2 * np.sin(np.pi / n - gamma) / w, mu**2]])
    # stride period: time from -pi/n to pi/n, dt = dtheta / theta_dot(theta)
    period = quad(lambda th: 1.0 / np.sqrt(w**2 + 2 * lam2 * (np.cos(-np.pi / n + gamma) - np.cos(th + gamma))),
                  -np.pi / n, np.pi / n, epsabs=1e-13, epsrel=1e-13, limit=200)[0]
    return np.array([-np.pi / n, w]), J, period


@pytest.fixture(scope="module")
def rimless_gait():
    model = W.rimless_model()
    return R.analyze_gait(model, W.rimless_section(model), [-np.pi / 6, 0.4], TOL)


def test_rimless_wheel_fixed_point_and_eigenvalue_four_ninths(rimless_gait):
    g = rimless_gait
    z, J, period = rimless_by_hand(2 / 3, 2 / 3, 0.2, 6)
    assert z[1] == pytest.approx(0.460341126609458, abs=1e-15)  # the value, by hand
    assert np.abs(g.fixed_point - z).max() <= 1e-11
    assert np.abs(g.jacobian - J).max() <= 1e-11
    assert abs(g.eigenvalues[0] - 4 / 9) <= 1e-11 and abs(g.eigenvalues[1]) <= 1e-11
    assert abs(g.period - period) <= 1e-10
    assert g.verdict == "stable"
    # finite differences: reported, visibly less accurate than the exact Jacobian
    err_fd = np.abs(g.eigenvalues_fd - g.eigenvalues).max()
    assert 1e-11 < err_fd < 1e-6
    assert g.tightening_change <= 1e-12 and g.eigenvalue_tightening_change <= 1e-12


def test_rimless_wheel_from_a_forward_simulation_and_on_other_slopes():
    model = W.rimless_model(slope=0.3)
    section = W.rimless_section(model)
    # the stable gait attracts: 30 strides from a faster start, then Newton
    z = R.find_fixed_point(model, section, [-np.pi / 6, 0.8], TOL, warmup_strides=30)
    z_hand, J, _ = rimless_by_hand(2 / 3, 2 / 3, 0.3, 6)
    assert np.abs(z - z_hand).max() <= 1e-11
    assert np.abs(R.stride(model, section, z, TOL).jacobian - J).max() <= 1e-11


# ----------------------------------------------------------------------------- simplest walker
# Garcia et al. (1998), gamma = 0.009 (as quoted in the Cornell group's code): long step
# (stable) theta = 0.20031090049483, theta' = -0.19983247291764, eigenvalues -0.191 +-
# 0.556i; short step (unstable) theta = 0.19393736960624, theta' = -0.20386692731962,
# eigenvalues 4.000, 0.459. Bhounsule (2014, simplestwalker.m) short step:
# [0.193937369810188, -0.203866927442012, 0.387874739620375, -0.015144260853193].
GARCIA = [((0.20031090049483, -0.19983247291764), (-0.191 + 0.556j, -0.191 - 0.556j)),
          ((0.19393736960624, -0.20386692731962), (4.000, 0.459))]
BHOUNSULE_SHORT = np.array([0.193937369810188, -0.203866927442012, 0.387874739620375, -0.015144260853193])


@pytest.fixture(scope="module")
def simplest():
    model = W.simplest_model(0.009)
    section = W.simplest_section(model)
    gaits = [R.analyze_gait(model, section, g, TOL) for g in W.simplest_guesses(model)]
    return model, section, gaits


def scipy_stride(z, gamma):
    """The same stride with SciPy's DOP853 and its event location (independent code)."""

    def f(t, x):
        s = np.sin(x[0] - gamma)
        return [x[1], s, x[3], s + np.sin(x[2]) * (x[1] ** 2 - np.cos(x[0] - gamma))]

    def midstance(t, x):
        return x[0]

    def heelstrike(t, x):
        return 2 * x[0] - x[2]

    midstance.terminal, midstance.direction = True, -1
    heelstrike.terminal, heelstrike.direction = True, -1
    kw = dict(method="DOP853", rtol=1e-13, atol=1e-13)
    a = scipy.integrate.solve_ivp(f, (0, 20), z, events=midstance, **kw)
    b = scipy.integrate.solve_ivp(f, (a.t[-1], 20), a.y[:, -1], events=heelstrike, **kw)
    th, thd = b.y[0, -1], b.y[1, -1]
    c = np.cos(2 * th)
    return np.array([-th, c * thd, -2 * th, c * (1 - c) * thd])


def test_simplest_walker_two_gaits_match_the_literature(simplest):
    _, _, (long_step, short_step) = simplest
    for gait, (fp, lam) in zip((long_step, short_step), GARCIA):
        # Garcia's fixed points are quoted to 1e-10
        assert np.abs(gait.fixed_point[:2] - fp).max() <= 3e-10
        # the post-strike relations phi = 2 theta, phi' = theta' (1 - cos 2 theta)
        th, thd, phi, phid = gait.fixed_point
        assert abs(phi - 2 * th) <= 1e-14 and abs(phid - thd * (1 - np.cos(2 * th))) <= 1e-14
        # their eigenvalues are given to ~3 digits
        assert np.abs(gait.eigenvalues[:2] - np.array(lam)).max() <= 5e-3
        # the 4-d map's image is the 2-d post-strike manifold: two zero multipliers
        assert np.abs(gait.eigenvalues[2:]).max() <= 1e-12
        # 12 significant digits: the change under a 4x tightening (~ the error) is below 5e-13
        assert gait.tightening_change <= 1e-13 and gait.eigenvalue_tightening_change <= 5e-13
    assert long_step.verdict == "stable" and short_step.verdict == "unstable"
    assert np.abs(short_step.fixed_point - BHOUNSULE_SHORT).max() <= 1e-12


def test_simplest_walker_against_an_independent_scipy_stride_map(simplest):
    _, _, gaits = simplest
    for gait in gaits:
        z = gait.fixed_point
        assert np.abs(scipy_stride(z, 0.009) - z).max() <= 1e-11
        # Richardson-extrapolated central differences of SciPy's map (error ~1e-9)
        def fd(h):
            return np.column_stack([(scipy_stride(z + h * e, 0.009) - scipy_stride(z - h * e, 0.009)) / (2 * h)
                                    for e in np.eye(4)])
        J = (4 * fd(5e-5) - fd(1e-4)) / 3
        assert np.abs(J - gait.jacobian).max() <= 1e-6
        lam = R.sort_eigenvalues(np.linalg.eigvals(J))
        assert np.abs(lam[:2] - gait.eigenvalues[:2]).max() <= 1e-7


def test_heel_strikes_happen_after_mid_stance_never_at_the_scuff(simplest):
    model, section, (long_step, short_step) = simplest
    for gait in (long_step, short_step):
        ev = R.stride(model, section, gait.fixed_point, TOL).result.events
        assert list(ev.guard) == [0, 1]  # mid-stance, then heel strike
        assert ev.x_before[1, 0] < -0.19  # heel strike with the stance leg well forward


@pytest.mark.slow
def test_complex_step_derivatives_equal_the_analytic_ones(simplest):
    model, section, (long_step, _) = simplest
    cs = W.simplest_model(0.009, analytic=False)
    J = R.stride(cs, section, long_step.fixed_point, TOL).jacobian
    assert np.abs(J - long_step.jacobian).max() <= 1e-12


# ----------------------------------------------------------------------------- SLIP
@pytest.fixture(scope="module")
def slip():
    model = W.slip_model()
    section = W.slip_section(model)
    return model, section, R.analyze_gait(model, section, [1.0], TOL)


def test_slip_conserves_energy_over_a_stride(slip):
    model, section, gait = slip
    rt = np.linspace(0.0, gait.period, 301)[:-1]
    s = R.stride(model, section, gait.fixed_point, TOL, record_times=rt)
    x0, mode0 = section.embed(gait.fixed_point)
    e0 = W.slip_energy(model, x0, mode0)
    energies = [W.slip_energy(model, x[:5], m) for x, m in zip(s.result.records, s.result.record_modes)]
    assert np.abs(np.array(energies) / e0 - 1).max() <= 1e-10
    assert abs(W.slip_energy(model, s.x_end, s.result.mode) / e0 - 1) <= 1e-10
    # all four charts visited in SimSect's order: touchdown, bottom, liftoff, apex
    assert list(s.result.events.guard) == [1, 2, 3, 0]
    assert set(s.result.record_modes[:, 0]) == {0, 1, 2, 3}


def test_slip_apex_fixed_point(slip):
    model, section, gait = slip
    y = gait.fixed_point[0]
    assert np.cos(np.deg2rad(22.0)) < y < 1.0  # above touchdown height, below the start
    assert abs(R.stride(model, section, gait.fixed_point, TOL).z_next[0] - y) <= 1e-12
    # exact multiplier (complex-step derivatives through 4 events) vs a Richardson FD
    def fd(h):
        return (R.stride(model, section, [y + h], TOL).z_next[0] - R.stride(model, section, [y - h], TOL).z_next[0]) / (2 * h)
    lam_fd = (4 * fd(5e-5) - fd(1e-4)) / 3
    assert abs(lam_fd - gait.eigenvalues[0].real) <= 1e-7
    assert gait.verdict == "stable" and abs(gait.eigenvalues[0]) < 1


# ----------------------------------------------------------------------------- CLI
def test_cli_json_shape_and_values(capsys, rimless_gait):
    assert main(["analyze", "walker", "rimless", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["state_names"] == ["theta", "theta_dot"]
    assert np.allclose(out["fixed_points"], [rimless_gait.fixed_point], atol=1e-13)
    (pairs,) = out["eigenvalues"]
    assert pairs[0][0] == pytest.approx(4 / 9, abs=1e-11) and pairs[0][1] == 0.0
    assert len(out["eigenvalues_fd"][0]) == 2 and out["gaits"][0]["verdict"] == "stable"
    assert np.array(out["gaits"][0]["jacobian"]).shape == (2, 2)


def test_cli_report_and_user_errors(capsys):
    assert main(["analyze", "walker", "rimless", "--slope", "0.3"]) == 0
    text = capsys.readouterr().out
    assert "STABLE" in text and "eigenvalues (finite differences)" in text
    assert main(["analyze", "walker", "slip", "--slope", "0.1"]) == 2
    assert "--slope" in capsys.readouterr().err
    assert main(["analyze", "walker", "rimless", "--guess", "1,x"]) == 2
    assert main(["analyze", "walker", "rimless", "--slope", "-1"]) == 2


def test_cli_report_prints_readable_numbers_not_python_reprs(capsys):
    """Parameters, tolerances, coordinates and finite-difference steps as ``name = value``
    text rounded to 6 digits; --json keeps full precision."""
    assert main(["analyze", "walker", "slip"]) == 0
    text = capsys.readouterr().out
    assert "specific_energy = 22.31" in text and "22.310000000000002" not in text
    assert "parameters: mass = 80, stiffness = 20000, rest_length = 1, gravity = 9.81," in text
    assert "coordinates apex_height\n" in text
    assert "tolerances: rtol = 1e-14, atol = 1e-14, event_tol = 1e-15\n" in text
    assert "(central differences, steps 3.1e-05)" in text
    assert not any(c in text for c in "{}[]'"), text
    assert main(["analyze", "walker", "rimless"]) == 0
    text = capsys.readouterr().out
    assert "slope = 0.2, lambda2 = 0.666667, mu = 0.666667, spokes = 6" in text
    assert "coordinates theta, theta_dot\n" in text and "steps 3.1e-05, 3.1e-05)" in text
    assert not any(c in text for c in "{}[]'"), text
    assert main(["analyze", "walker", "slip", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parameters"]["specific_energy"] == 9.81 * 1.0 + 0.5 * 5.0**2   # 22.310000000000002


def test_cli_walker_help_states_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "walker", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "before Newton (default 0)" in text and "rtol = atol (default 1e-14)" in text
