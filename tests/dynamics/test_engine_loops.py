"""Loop closures, joint forces, passive elements: against hand-solved statics, closed
forms and exact identities (virtual work, KKT optimality)."""

import numpy as np
import pytest

from codesign.dynamics import ModelBuilder, make_workspace
from codesign.dynamics.testing import examples as E
from codesign.dynamics.testing.flows import flow_params, mechanical_energy, multibody_flow
from codesign.dynamics.joint_forces import add_loop_forces, joint_wrenches
from codesign.dynamics.kinematics import forward_kinematics
from codesign.dynamics.loops import (
    forward_dynamics, loop_constraints, prepare_mass, project_positions, project_velocities,
)
from codesign.dynamics.passive import add_loop_torque, add_passive_forces, joint_passive_torque

G = 9.81


def cross(a, b):
    """Planar moment a x b with x right, z up (counter-clockwise positive)."""
    return a[0] * b[1] - a[1] * b[0]


def test_loaded_four_bar_statics_match_free_body_diagrams():
    """A four-bar under gravity held still by a crank torque. Reference: the nine
    free-body equations (force and moment balance of crank, coupler, rocker) solved for
    the pin forces at A, B, C, D and the crank torque, written from the geometry alone."""
    lengths = dict(ground=0.5, crank=0.2, coupler=0.5, rocker=0.3)
    model = E.four_bar(**lengths, mass_per_m=2.0)
    q = E.four_bar_q0(**lengths, crank_angle=1.1)
    m, w = model.arrays, make_workspace(model)
    qd = np.zeros(3)
    # engine: find the crank torque and multiplier with qdd = 0 from h = S tau + K^T lam
    forward_kinematics(m, q, qd, w)
    prepare_mass(m, w)
    loop_constraints(m, w, 0.0, 0.0)
    assert np.abs(w.phi[:2]).max() < 1e-12
    B = np.column_stack([[1.0, 0.0, 0.0], w.rows[:2].T])
    tau_crank = np.linalg.solve(B, w.h)[0]
    tau = np.array([tau_crank, 0.0, 0.0])
    assert forward_dynamics(m, q, qd, tau, w, 0.0, 0.0, 1e-12) == 0
    assert np.abs(w.qdd).max() < 1e-10
    f_ext = np.zeros((3, 3))
    add_loop_forces(m, w, w.lam, np.zeros(1), f_ext)
    tau_check = np.empty(3)
    joint_wrenches(m, w, w.qdd, f_ext, tau_check)
    assert np.allclose(tau_check, tau, atol=1e-12)

    # free-body diagrams: unknowns FA(2) FB(2) FC(2) FD(2) tau
    th = np.cumsum(q)
    A = np.zeros(2)
    Bp = A + lengths["crank"] * np.array([np.cos(th[0]), np.sin(th[0])])
    C = Bp + lengths["coupler"] * np.array([np.cos(th[1]), np.sin(th[1])])
    D = np.array([lengths["ground"], 0.0])
    masses = [2.0 * lengths[k] for k in ("crank", "coupler", "rocker")]
    mids = [(A + Bp) / 2, (Bp + C) / 2, (C + D) / 2]
    weight = [np.array([0.0, -mk * G]) for mk in masses]
    rows, rhs = [], []

    def eq(coeffs, value):
        row = np.zeros(9)
        for idx, c in coeffs:
            row[idx] += c
        rows.append(row)
        rhs.append(value)

    FA, FB, FC, FD, TAU = (0, 1), (2, 3), (4, 5), (6, 7), 8
    # crank: FA - FB + W1 = 0 ; tau + (B-A) x (-FB) + (G1-A) x W1 = 0
    for d in range(2):
        eq([(FA[d], 1), (FB[d], -1)], -weight[0][d])
    rB = Bp - A
    eq([(TAU, 1), (FB[0], rB[1]), (FB[1], -rB[0])], -cross(mids[0] - A, weight[0]))
    # coupler: FB - FC + W2 = 0 ; (C-B) x (-FC) + (G2-B) x W2 = 0
    for d in range(2):
        eq([(FB[d], 1), (FC[d], -1)], -weight[1][d])
    rC = C - Bp
    eq([(FC[0], rC[1]), (FC[1], -rC[0])], -cross(mids[1] - Bp, weight[1]))
    # rocker: FC + FD + W3 = 0 ; (D-C) x FD + (G3-C) x W3 = 0
    for d in range(2):
        eq([(FC[d], 1), (FD[d], 1)], -weight[2][d])
    rD = D - C
    eq([(FD[0], -rD[1]), (FD[1], rD[0])], -cross(mids[2] - C, weight[2]))
    sol = np.linalg.solve(np.array(rows), np.array(rhs))

    assert tau_crank == pytest.approx(sol[TAU], abs=1e-10)
    assert np.allclose(w.joint_wrench[0], [sol[TAU], *sol[0:2]], atol=1e-10)
    assert np.allclose(w.joint_wrench[1], [0.0, *sol[2:4]], atol=1e-10)
    assert np.allclose(w.joint_wrench[2], [0.0, *sol[4:6]], atol=1e-10)
    assert np.allclose(w.lam[:2], sol[6:8], atol=1e-10)  # force of the ground pin on the rocker


def test_hanging_chain_root_joint_carries_the_whole_weight():
    model = E.serial_chain(4)
    m, w = model.arrays, make_workspace(model)
    q = np.zeros(4)
    forward_kinematics(m, q, q, w)
    tau = np.empty(4)
    joint_wrenches(m, w, np.zeros(4), np.zeros((4, 3)), tau)
    assert np.allclose(w.joint_wrench[:, 2], [4 * G, 3 * G, 2 * G, G], atol=1e-12)
    assert np.allclose(w.joint_wrench[:, :2], 0.0, atol=1e-12)


def redundant_three_link():
    """Fig. 2.14's loop closed twice by the same pin: two dependent rows."""
    base = E.closed_three_link()
    b = ModelBuilder()
    for i in range(3):
        b.add_body(base.body_names[i], None if i == 0 else base.body_names[i - 1], "revolute",
                   base.joint_xz[i], base.mass[i], base.com_xz[i], base.inertia[i])
    for name in ("pcl", "pcl_again"):
        b.add_loop_closure(name, "p3", base.loop_xz_a[0], None, base.loop_xz_b[0])
    return base, b.build()


def test_redundant_loop_set_is_flagged_and_gives_the_same_motion():
    single, double = redundant_three_link()
    q = E.closed_three_link_q0()
    qd = np.array([0.3, -0.6, 0.3])  # a parallelogram motion: K qd = 0
    w1, w2 = make_workspace(single), make_workspace(double)
    tau = np.array([0.5, 0.0, -0.2])
    assert forward_dynamics(single.arrays, q, qd, tau, w1, 0.0, 0.0, 1e-12) == 0
    dropped = forward_dynamics(double.arrays, q, qd, tau, w2, 0.0, 0.0, 1e-12)
    assert dropped == 2 and w2.flags[0] == 2 and w2.flags[1] == 2
    assert np.allclose(w2.qdd, w1.qdd, atol=1e-10)
    # the total pin force is the same, however it is split between the two copies
    assert np.allclose(w2.lam[0:2] + w2.lam[2:4], w1.lam[0:2], atol=1e-9)


def test_constrained_accelerations_satisfy_kkt_with_baumgarte():
    """With Baumgarte terms on a drifted state: K qdd = k exactly, and qdd minimises the
    acceleration energy (Gauss): M qdd + h - tau lies in the row space of K."""
    model = E.pantograph_leg()
    q = E.pantograph_leg_q0() + np.array([0.0, 1e-3, -2e-3, 0.0])  # off the manifold
    qd = np.array([0.4, -0.3, 0.2, 0.1])
    m, w = model.arrays, make_workspace(model)
    tau = np.array([0.01, 0.0, 0.0, 0.0])
    assert forward_dynamics(m, q, qd, tau, w, 5.0, 10.0, 1e-12) == 0
    K, k = w.rows[:2].copy(), w.rows_rhs[:2].copy()
    assert np.abs(w.phi[:2]).max() > 1e-5
    assert np.allclose(K @ w.qdd, k, atol=1e-9)
    resid = w.M @ w.qdd + w.h - tau - K.T @ w.lam[:2]
    assert np.abs(resid).max() < 1e-9


def test_projection_onto_the_constraint_manifold():
    model = E.pantograph_leg()
    m, w = model.arrays, make_workspace(model)
    q0 = E.pantograph_leg_q0()
    q = q0 + np.array([0.02, -0.03, 0.01, 0.04])
    err = project_positions(m, q, w, 1e-13, 30, 1e-12)
    assert err <= 1e-13
    assert np.abs(q - q0).max() < 0.2
    qd = np.array([0.3, 1.0, -0.5, 0.2])
    qd_before = qd.copy()
    assert project_velocities(m, q, qd, w, 1e-12) == 0
    forward_kinematics(m, q, qd, w)
    prepare_mass(m, w)
    loop_constraints(m, w, 0.0, 0.0)
    K, M = w.rows[:2], w.M
    assert np.abs(K @ qd).max() < 1e-12
    # closest in the kinetic-energy metric: M (qd - qd_before) in the row space of K
    d = M @ (qd - qd_before)
    coef = np.linalg.lstsq(K.T, d, rcond=None)[0]
    assert np.abs(K.T @ coef - d).max() < 1e-12


def test_passive_elements_and_ligament_law():
    b = ModelBuilder()
    b.add_body("thigh", None, "revolute", (0, 0), 1.0, (0, -0.2), 0.1)
    b.add_body("shank", "thigh", "revolute", (0, -0.4), 1.0, (0, -0.2), 0.1, spring_k=3.0,
               spring_rest=0.1, damping=0.5, ligament_k=1e6, ligament_limit=np.radians(-2),
               ligament_exponent=3.0, ligament_damping=1e2, ligament_side=-1.0)
    model = b.build()
    m = model.arrays
    lim = np.radians(-2)
    # inside the range: spring + damper only
    assert joint_passive_torque(m, 1, 0.3, 2.0) == pytest.approx(-3.0 * 0.2 - 0.5 * 2.0)
    # past the limit (q < lim on side -1): + 1e6 pen^3 - 1e2 qd
    q, qd = lim - 0.01, -0.5
    expected = -3.0 * (q - 0.1) - 0.5 * qd + 1e6 * 0.01**3 - 1e2 * qd
    assert joint_passive_torque(m, 1, q, qd) == pytest.approx(expected, rel=1e-12)
    # energy: the ligament's potential derivative is minus its elastic torque
    w = make_workspace(model)
    h = 1e-6
    e = [mechanical_energy(m, w, np.array([0.0, q + s]), np.zeros(2))[1] for s in (-h, h)]
    elastic = -3.0 * (q - 0.1) + 1e6 * 0.01**3
    grav = -G * 1.0 * 0.2 * np.sin(q)  # shank CoM 0.2 below the knee
    assert -(e[1] - e[0]) / (2 * h) == pytest.approx(elastic + grav, rel=1e-6)


def test_loop_joint_torque_does_the_work_of_the_relative_rotation():
    """An actuated loop joint: generalized force . qd = tau (omega_b - omega_a)."""
    model = E.pantograph_leg()
    m, w = model.arrays, make_workspace(model)
    rng = np.random.default_rng(4)
    q, qd = rng.normal(size=4), rng.normal(size=4)
    forward_kinematics(m, q, qd, w)
    gen = np.zeros(4)
    add_loop_torque(m, w, 0, 2.5, gen)
    a, b = model.loop_body_a[0], model.loop_body_b[0]
    assert gen @ qd == pytest.approx(2.5 * (qd[: b + 1].sum() - qd[: a + 1].sum()), rel=1e-12)


def test_closed_loop_flow_conserves_energy_over_a_short_rk4_run():
    """Fig. 2.14's loop without damping, fixed-step RK4 (h = 1e-4 s, 1 s): the flow is
    conservative and keeps the loop closed (independent of the adaptive integrator)."""
    model = E.closed_three_link()
    p = flow_params(model)
    q = E.closed_three_link_q0()
    x = np.concatenate([q, np.zeros(3)])
    m, w = p[0], p[1]
    e0 = sum(mechanical_energy(m, w, x[:3], x[3:]))
    k1, k2, k3, k4 = (np.empty(6) for _ in range(4))
    mode = np.zeros(1, dtype=np.int64)
    h = 1e-4
    for _ in range(10000):
        multibody_flow(0.0, x, mode, p, k1)
        multibody_flow(0.0, x + 0.5 * h * k1, mode, p, k2)
        multibody_flow(0.0, x + 0.5 * h * k2, mode, p, k3)
        multibody_flow(0.0, x + h * k3, mode, p, k4)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    e1 = sum(mechanical_energy(m, w, x[:3], x[3:]))
    forward_kinematics(m, x[:3], x[3:], w)
    loop_constraints(m, w, 0.0, 0.0)
    assert abs(e1 - e0) / abs(e0) < 1e-9
    assert np.abs(w.phi[:2]).max() < 1e-9
    assert np.abs(x[:3] - q).max() > 0.1  # it did move


def test_passive_forces_include_loop_springs():
    b = ModelBuilder(gravity=0.0)
    b.add_body("a", None, "revolute", (0, 0), 1.0, (0.5, 0), 0.1)
    b.add_body("b", None, "revolute", (1, 0), 1.0, (0.5, 0), 0.1)
    b.add_loop_closure("ab", "a", (1, 0), "b", (0, 0), spring_k=2.0, spring_rest=0.0, damping=0.0)
    model = b.build()
    m, w = model.arrays, make_workspace(model)
    q = np.array([0.0, 0.3])
    forward_kinematics(m, q, np.zeros(2), w)
    out = np.zeros(2)
    add_passive_forces(m, w, q, np.zeros(2), out)
    assert np.allclose(out, [2.0 * 0.3, -2.0 * 0.3])
