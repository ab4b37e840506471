"""A foot rolling over its heel onto its ball, and over its ball onto its heel (issue 31),
by time stepping, against a hand computation: the human model's foot (its mass, centre of
mass and inertia, its heel and ball contact points; the toe held to it: a rigid foot)
released on one end with the other end up.

Truths (rigid-body mechanics, independent of the engine):

* Rocker phase: the foot pivots about the sticking end A, so its energy gives the angular
  speed, omega(theta)^2 = 2 m g (z_G(theta_0) - z_G(theta)) / I_A, I_A = I_G + m |AG|^2,
  and it lands flat at T = int dtheta / omega (quadrature).
* Landing: a plastic impact at the other end B. An impulse at B alone would turn the foot
  on about B at omega+ = omega- (I_G + m AG . BG) / (I_G + m |BG|^2) (Housner, BSSA
  53(2), 1963); for a foot, whose centre of mass lies between heel and ball with
  AG . BG < -I_G / m, that ratio is negative: the end A would have to sink, so both ends
  take impulses and the foot stops dead, flat. Its linear and angular momentum then fix
  the normal impulses (both ends at the sole's height, so the tangential split drops out
  of the moment about G): P_A + P_B = m v_z-, and x_A P_A + x_B P_B = I_G omega- - z_s
  m v_x- (x, z_s: the ends from G; signs as coded).

Tolerances: the discrete rocker phase is first order in h (test_timestep.py's module
docstring): the landing within two steps, omega- within the speed two steps of the
landing's angular acceleration give; the impact is linear in the velocity it receives, so
its impulses match the momentum balance on that velocity to the share of the steps'
weight in the window."""

import numpy as np
import pytest
from scipy.integrate import quad

from codesign.dynamics import timestep as ts
from codesign.dynamics.model import ModelBuilder
from codesign.dynamics.testing.stepping import simulate
from codesign.dynamics.timestep import INACTIVE, STICK
from codesign.model.anthropometry import human_geometry

G = 9.81


def rigid_foot():
    """The human's foot and toe as one rigid body (origin at the ankle), heel and ball
    contacts: (model, mass, com (2,), inertia about the com, heel (2,), ball (2,))."""
    H = human_geometry()
    m_f, m_t = H.foot.mass, H.toe.mass
    toe_com = H.toe_joint_xz + H.toe.com_xz
    mass = m_f + m_t
    com = (m_f * H.foot.com_xz + m_t * toe_com) / mass
    inertia = (H.foot.inertia + m_f * np.sum((H.foot.com_xz - com) ** 2)
               + H.toe.inertia + m_t * np.sum((toe_com - com) ** 2))
    b = ModelBuilder(gravity=G)
    b.add_floating_base("foot", mass, tuple(com), inertia)
    b.add_contact("heel", "foot", tuple(H.heel_xz))
    b.add_contact("ball", "foot", tuple(H.toe_joint_xz))
    return b.build(), mass, com, inertia, H.heel_xz.astype(float), H.toe_joint_xz.astype(float)


def rotate(theta, r):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([c * r[0] - s * r[1], s * r[0] + c * r[1]])


def rocker_and_landing(pivot: str):
    """Release the rigid foot on ``pivot`` ("heel" or "ball") with the other end up by
    0.25 rad; (hand quantities, time-stepping result, h)."""
    model, m, com, inertia, heel, ball = rigid_foot()
    a, b = (heel, ball) if pivot == "heel" else (ball, heel)
    theta0 = 0.25 if pivot == "heel" else -0.25                  # toe up / heel up
    h = 1e-4
    q0 = np.array([*(-rotate(theta0, a)), theta0])               # the pivot at the origin, on the ground
    res = simulate(model, q0, t_end=0.5, h=h, mu=5.0)            # friction enough to stick
    assert res.status == ts.STEP_OK
    ag, bg = com - a, com - b
    i_a = inertia + m * ag @ ag

    def speed(theta):                                            # rad/s, magnitude
        return np.sqrt(2 * m * G * (rotate(theta0, ag)[1] - rotate(theta, ag)[1]) / i_a)

    landing = quad(lambda th: 1.0 / speed(th), *sorted((0.0, theta0)), limit=200)[0]
    hand = dict(m=m, inertia=inertia, a=a, b=b, com=com, ag=ag, bg=bg, landing=landing,
                omega_flat=speed(0.0), alpha_flat=m * G * abs(ag[0]) / i_a,
                housner=(inertia + m * ag @ bg) / (inertia + m * bg @ bg))
    return hand, res, h


@pytest.mark.parametrize("pivot", ["heel", "ball"])
def test_the_foot_rolls_over_one_end_and_lands_flat_on_the_other(pivot):
    hand, res, h = rocker_and_landing(pivot)
    ia, ib = (0, 1) if pivot == "heel" else (1, 0)               # contact columns: heel 0, ball 1
    strike = int(np.argmax(res.mode[:, ib] != INACTIVE))
    assert strike > 0 and np.all(res.mode[:strike, ia] == STICK)
    assert np.all(res.mode[:strike, ib] == INACTIVE)
    assert abs(res.t[strike] - hand["landing"]) <= 2 * h
    omega_minus = res.v[strike - 1, 2]                           # the last rocker step
    assert abs(abs(omega_minus) - hand["omega_flat"]) <= 2 * h * hand["alpha_flat"] + 1e-3 * hand["omega_flat"]
    # Housner's single impulse would sink the pivot: the foot stops dead, flat
    assert hand["housner"] < 0
    after = strike + 2                                           # an off-grid impact spreads over two steps
    assert np.all(res.mode[after] == STICK)
    assert np.max(np.abs(res.v[after])) <= 1e-6 * hand["omega_flat"]
    assert abs(res.q[after, 2]) <= 1e-4                          # flat (the ends within 1e-4 rad)
    # the normal impulses of the window, less the weight the ends carry at rest (lever rule)
    m, com, a, b = hand["m"], hand["com"], hand["a"], hand["b"]
    window = slice(strike - 1, after + 1)
    steps = after + 1 - (strike - 1)
    v_g = res.v[strike - 1, :2] + res.v[strike - 1, 2] * np.array([-com[1], com[0]])
    pz = -m * v_g[1]                                             # P_A + P_B, N s
    moment = hand["inertia"] * -omega_minus                     # about G: sum r x P = I_G (0 - omega-)
    px = -m * v_g[0]
    zs = (a - com)[1]
    xa, xb = (a - com)[0], (b - com)[0]
    # r x P = x P_z - z P_x; both ends at z_s: xa Pa + xb Pb - zs px = moment
    p_b = (moment + zs * px - xa * pz) / (xb - xa)
    p_a = pz - p_b
    assert p_a > 0 and p_b > 0
    rest_a = m * G * xb / (xb - xa)
    rest_b = m * G * -xa / (xb - xa)
    measured_a = res.force[window, ia, 0].sum() * h - rest_a * h * steps
    measured_b = res.force[window, ib, 0].sum() * h - rest_b * h * steps
    tol = 2 * m * G * h + 2e-3 * pz
    assert abs(measured_a - p_a) <= tol and abs(measured_b - p_b) <= tol
