"""A drivetrain's reflected inertia (armature N^2 J_rotor) in the engine, against
independent truths: the small-oscillation period of a geared pendulum, the acceleration
of a joint driven at constant torque, MuJoCo's joint armature step for step, and the
energy of a closed loop whose loop joint carries the rotor."""

import math

import numpy as np
import pytest

from codesign.dynamics import make_workspace
from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import forward_kinematics
from codesign.dynamics.loops import forward_dynamics, loop_constraints
from codesign.dynamics.model import ModelBuilder, with_armature
from codesign.dynamics.testing import examples as E
from codesign.dynamics.testing.flows import mechanical_energy
from codesign.dynamics.testing.rollouts import RK4, closed_loop_rollout, tree_rollout

# an 80-mm rotor behind a 64:1 gear (rotor inertia of the order of an AK80's)
N, J_ROTOR = 64.0, 5.0e-5
ARMATURE = N * N * J_ROTOR          # 0.2048 kg m^2


def _pendulum(mass=1.0, length=0.4, inertia=0.01, armature=ARMATURE, gravity=9.81):
    b = ModelBuilder(gravity=gravity)
    b.add_body("link", None, "revolute", (0.0, 0.0), mass, (0.0, -length), inertia, armature=armature)
    return b.build()


def test_geared_pendulum_small_oscillation_period():
    """T = 2 pi sqrt((I + N^2 J) / (m g l)), I about the pivot: measured from the zero
    crossings of a 1-mrad swing integrated by RK4 at 0.1 ms (amplitude correction 6e-8)."""
    mass, length, inertia = 1.0, 0.4, 0.01
    model = _pendulum(mass, length, inertia)
    expected = 2 * math.pi * math.sqrt((inertia + mass * length ** 2 + ARMATURE) / (mass * 9.81 * length))
    h, q, qd = 1e-4, np.array([1e-3]), np.zeros(1)
    w, k_q, k_v = make_workspace(model), np.zeros((5, 1)), np.zeros((5, 1))
    times, previous = [], q[0]
    for step in range(int(3.2 * expected / h)):
        assert tree_rollout(model.arrays, w, np.zeros(1), q, qd, h, 1, RK4, k_q, k_v) == 0
        if previous > 0.0 >= q[0]:                     # a downward zero crossing
            times.append(step * h + h * previous / (previous - q[0]))
        previous = q[0]
    period = np.diff(times).mean()
    assert abs(period / expected - 1.0) <= 1e-4
    # without the armature the same pendulum swings faster by the factor the formula says
    plain = 2 * math.pi * math.sqrt((inertia + mass * length ** 2) / (mass * 9.81 * length))
    assert period / plain == pytest.approx(math.sqrt(1 + ARMATURE / (inertia + mass * length ** 2)), rel=1e-4)


def test_constant_torque_accelerates_at_tau_over_inertia_plus_armature():
    """No gravity, at rest: qdd = tau / (I + N^2 J) from the articulated-body algorithm
    (a tree) and from the mass matrix (CRBA), to round-off."""
    mass, length, inertia, tau = 2.0, 0.3, 0.02, 12.0
    model = _pendulum(mass, length, inertia, gravity=0.0)
    w = make_workspace(model)
    q, qd = np.array([0.7]), np.zeros(1)
    assert forward_dynamics(model.arrays, q, qd, np.array([tau]), w, 0.0, 0.0, 1e-12) == 0
    expected = tau / (inertia + mass * length ** 2 + ARMATURE)
    assert w.qdd[0] == pytest.approx(expected, rel=1e-13)
    forward_kinematics(model.arrays, q, qd, w)
    mass_matrix(model.arrays, w)
    assert w.M[0, 0] == pytest.approx(inertia + mass * length ** 2 + ARMATURE, rel=1e-14)


def test_tree_with_armature_matches_mujoco_step_for_step():
    """A 6-link branched chain with a different armature on every joint: MuJoCo's joint
    armature enters its mass matrix as ours does, so RK4 at 1 ms agrees to round-off."""
    mujoco = pytest.importorskip("mujoco")
    from codesign.dynamics.testing.peers import to_mjcf

    model = with_armature(E.serial_chain(6, branches=3), np.linspace(0.05, 0.3, 6))
    q, qd = np.linspace(0.2, 0.7, 6), np.linspace(-0.5, 0.5, 6)
    mj = mujoco.MjModel.from_xml_string(to_mjcf(model, 1e-3, "RK4"))
    data = mujoco.MjData(mj)
    data.qpos[:], data.qvel[:] = q, qd
    mujoco.mj_step(mj, data, 500)
    status = tree_rollout(model.arrays, make_workspace(model), np.zeros(6), q, qd, 1e-3, 500, RK4,
                          np.zeros((5, 6)), np.zeros((5, 6)))
    assert status == 0
    assert np.abs(q - data.qpos).max() < 1e-10 and np.abs(qd - data.qvel).max() < 1e-9
    plain = E.serial_chain(6, branches=3)
    q2, qd2 = np.linspace(0.2, 0.7, 6), np.linspace(-0.5, 0.5, 6)
    tree_rollout(plain.arrays, make_workspace(plain), np.zeros(6), q2, qd2, 1e-3, 500, RK4,
                 np.zeros((5, 6)), np.zeros((5, 6)))
    assert np.abs(q2 - q).max() > 1e-2                  # the armature changes the motion


def _relative_rate(model, w, q, qd, loop: int, eps: float = 1e-3) -> float:
    """d(theta_b - theta_a)/dt of loop joint ``loop`` by central differences of the
    bodies' absolute angles from forward kinematics (independent of the armature row)."""
    def angle(x):
        forward_kinematics(model.arrays, x, qd, w)
        a, b = model.loop_body_a[loop], model.loop_body_b[loop]
        return (w.pose[b, 2] if b >= 0 else 0.0) - (w.pose[a, 2] if a >= 0 else 0.0)
    change = angle(q + eps * qd) - angle(q - eps * qd)
    return math.remainder(change, 2 * math.pi) / (2 * eps)      # angles may wrap at +-pi


def test_a_loop_joint_rotor_keeps_the_closed_loop_energy():
    """Fig. 2.14's four-bar with a rotor (0.2 kg m^2) on its loop joint: the kinetic energy
    the armature adds is 1/2 a (theta_b' - theta_a')^2 with the relative rate from the
    bodies' angles, and the total energy -- the bodies' plus that rotor's -- stays
    constant over 2 s of RK4 (it would drift if the coupling row were wrong)."""
    arm = 0.2
    model = with_armature(E.closed_three_link(), loop_armature=np.array([arm]))
    plain = E.closed_three_link()
    m, w = model.arrays, make_workspace(model)
    q, qd = E.closed_three_link_q0(), np.array([0.8, -1.1, 0.6])
    forward_kinematics(m, q, qd, w)
    mass_matrix(m, w)
    with_rotor = w.M.copy()
    forward_kinematics(plain.arrays, q, qd, w)
    mass_matrix(plain.arrays, w)
    rate = _relative_rate(model, w, q, qd, 0)
    assert 0.5 * qd @ (with_rotor - w.M) @ qd == pytest.approx(0.5 * arm * rate ** 2, rel=1e-8)

    def energy(q, qd):
        return sum(mechanical_energy(m, w, q, qd)) + 0.5 * arm * _relative_rate(model, w, q, qd, 0) ** 2

    forward_kinematics(m, q, np.zeros(3), w)
    loop_constraints(m, w, 0.0, 0.0)                  # rows K at q: start on the loop's one DOF
    qd = 2.0 * np.linalg.svd(w.rows[:2])[2][-1]
    e0 = energy(q, qd)
    rotor0 = 0.5 * arm * _relative_rate(model, w, q, qd, 0) ** 2
    kinetic0 = mechanical_energy(m, w, q, qd)[0] + rotor0
    assert rotor0 > 0.05 * kinetic0 > 0                 # the rotor holds a real share
    status = closed_loop_rollout(m, w, np.zeros(3), q, qd, 1e-3, 2000, RK4, 0.0, 0.0, 1e-12,
                                 np.zeros((5, 3)), np.zeros((5, 3)))
    assert status == 0
    assert abs(energy(q, qd) - e0) / kinetic0 < 1e-7
