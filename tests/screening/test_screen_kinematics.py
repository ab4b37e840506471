"""Screening kinematics and IK: against the engine (peer), finite differences, a four-bar's
analytic toggle positions and the pantographic leg."""

import numpy as np
import pytest

from codesign.dynamics.testing import examples
from codesign.dynamics.kinematics import forward_kinematics as engine_fk
from codesign.dynamics.loops import loop_constraints
from codesign.dynamics.model import ModelBuilder, make_workspace
from codesign.screening.kinematics import loop_residual_jacobian
from codesign.screening.screen import PASS, ScreenSettings, check_configuration, close_loops


def _residual_jacobian(model, q):
    a = model.arrays
    r = 2 * model.n_loops
    phi, jac, pose = np.zeros(r), np.zeros((r, model.n)), np.zeros((model.n, 3))
    loop_residual_jacobian(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b, a.loop_xz_a,
                           a.loop_xz_b, np.asarray(q, dtype=float), pose, phi, jac)
    return phi, jac


def _engine_residual_jacobian(model, q):
    w = make_workspace(model)
    engine_fk(model.arrays, np.asarray(q, dtype=float), np.zeros(model.n), w)
    rows = loop_constraints(model.arrays, w, 0.0, 0.0)
    return w.phi[:rows].copy(), w.rows[:rows].copy()


def test_residual_and_jacobian_match_the_engine_and_finite_differences():
    rng = np.random.default_rng(3)
    for _ in range(5):
        model = examples.random_tree(rng, 9, n_loops=3, floating=True)
        q = rng.uniform(-1, 1, model.n)
        phi, jac = _residual_jacobian(model, q)
        phi_e, jac_e = _engine_residual_jacobian(model, q)
        assert phi == pytest.approx(phi_e, abs=1e-12)
        assert jac == pytest.approx(jac_e, abs=1e-12)
        h = 1e-6
        fd = np.column_stack([(_residual_jacobian(model, q + h * e)[0] - _residual_jacobian(model, q - h * e)[0]) / (2 * h)
                              for e in np.eye(model.n)])
        assert jac == pytest.approx(fd, abs=1e-8)


def test_ik_closes_the_pantographic_leg_to_1e_10_m():
    model = examples.pantograph_leg()
    q0 = examples.pantograph_leg_q0()
    target = q0 + np.array([0.25, -0.3, 0.0, 0.0])  # move hip and knee; ankle and par follow
    q, err = close_loops(model, target, fixed=[0, 1], q_start=q0)
    phi_e, _ = _engine_residual_jacobian(model, q)  # independent check with the engine's kinematics
    assert err <= 1e-10 and np.abs(phi_e).max() <= 1e-10
    assert q[:2] == pytest.approx(target[:2], abs=0)
    assert np.abs(q[2:] - q0[2:]).max() > 0.05  # the dependent joints did move


# Grashof crank-rocker: ground g, crank a (shortest), coupler b, rocker c.
G, A, B, C = 0.5, 0.2, 0.5, 0.3


def _four_bar():
    """crank (q0, absolute), coupler (q1, relative to the crank), rocker (q2, absolute,
    pivot at (G, 0)); the loop joins the coupler's end and the rocker's end."""
    b = ModelBuilder()
    b.add_body("crank", None, "revolute", (0, 0), A, (A / 2, 0), A**3 / 12)
    b.add_body("coupler", "crank", "revolute", (A, 0), B, (B / 2, 0), B**3 / 12)
    b.add_body("rocker", None, "revolute", (G, 0), C, (C / 2, 0), C**3 / 12)
    b.add_loop_closure("pin", "coupler", (B, 0), "rocker", (C, 0))
    return b.build()


def _elbow_up(theta):
    """Closed configuration with the coupler-rocker pin above the crank-pivot line."""
    pa = A * np.array([np.cos(theta), np.sin(theta)])
    d = np.array([G, 0.0]) - pa
    L = np.linalg.norm(d)
    x = (B**2 - C**2 + L**2) / (2 * L)
    y = np.sqrt(B**2 - x**2)
    e = d / L
    pin = pa + x * e + y * np.array([-e[1], e[0]])
    if pin[1] < 0:
        pin = pa + x * e - y * np.array([-e[1], e[0]])
    cp = np.arctan2(*(pin - pa)[::-1])
    return np.array([theta, cp - theta, np.arctan2(*(pin - [G, 0])[::-1])])


def _flagged_crank_angles(act_tree, act_loop, extra):
    """Sweep the crank once around (1 deg steps plus ``extra`` angles), IK warm-started,
    and return the crank angles where the checks flag a singularity (eps 1e-6)."""
    model = _four_bar()
    settings = ScreenSettings(eps=1e-6)
    angles = np.unique(np.concatenate([np.deg2rad(np.arange(0.0, 360.0, 1.0)), extra]))
    q = _elbow_up(angles[0])
    flagged = []
    for theta in angles:
        target = q.copy()
        target[0] = theta
        q, err = close_loops(model, target, fixed=[0], q_start=q)
        assert err <= 1e-11
        code, _margin, _ = check_configuration(model, q, grounded=[], observed=[2], act_tree=act_tree,
                                               act_loop=act_loop, settings=settings)
        if code != PASS:
            flagged.append(theta)
    return flagged


# Dead centre (the rocker stops whatever drives it): crank and coupler collinear, the pin at
# a + b (extended) or |a - b| (folded) from the crank pivot:
# cos(theta_e) = ((a+b)^2 + g^2 - c^2) / (2 (a+b) g); folded, the pin is at (a-b) u(theta):
# cos(theta_f) = ((a-b)^2 + g^2 - c^2) / (2 (a-b) g). Pin above the ground line (our branch):
# theta_e = +acos(.), theta_f = -acos(.) mod 2 pi.
THETA_E = np.arccos(((A + B) ** 2 + G**2 - C**2) / (2 * (A + B) * G))
THETA_F = 2 * np.pi - np.arccos(((A - B) ** 2 + G**2 - C**2) / (2 * (A - B) * G))


def test_four_bar_toggle_positions_flagged_exactly_at_the_analytic_crank_angles():
    """Crank actuated, rocker observed: flagged at the two dead centres and nowhere else."""
    assert np.rad2deg([THETA_E, THETA_F]) == pytest.approx([21.787, 213.557], abs=1e-3)
    flagged = _flagged_crank_angles([0], [], [THETA_E, THETA_F])
    assert flagged == pytest.approx([THETA_E, THETA_F], abs=1e-12)


def test_four_bar_actuated_at_the_loop_pin():
    """Actuated loop-closure joint (coupler-rocker angle, eq. 5.20 reading): besides the dead
    centres it cannot drive where its own angle is stationary, i.e. where the transmission
    angle mu is extreme: cos(mu) = (b^2 + c^2 - |A D|^2) / (2 b c) with
    |A D|^2 = a^2 + g^2 - 2 a g cos(theta), stationary at theta = 0 and pi."""
    flagged = _flagged_crank_angles([], [0], [THETA_E, THETA_F, np.pi])
    assert flagged == pytest.approx([0.0, THETA_E, np.pi, THETA_F], abs=1e-12)
