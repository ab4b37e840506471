"""Morphology: parameters -> joints, bars and composed WR bodies, checked by hand; assembly."""

import numpy as np
import pytest

from codesign.errors import UserError
from codesign.model.anthropometry import human_geometry
from codesign.model.assemble import assemble
from codesign.model.human import build_human, upright_configuration
from codesign.model.morphology import (BOUNDS, build_morphology, compose_inertia, human_com_upright, mass_report,
                                       parameter_space)
from codesign.screening.kinematics import forward_kinematics, loop_residual_jacobian, world_point
from codesign.screening.examples import TWO_FOUR_BARS, params_from_positions
from codesign.topology.catalog import Joint, Topology

# a ternary link: wr1 carries joints 1, 4, 5 (the catalog's topology 4)
WITH_TRIANGLE = Topology(4, ("wr1", "wr2", "wr3", "wr4"), (
    Joint(1, ("torso", "wr1"), "attachment", False),
    Joint(2, ("thigh", "wr2"), "attachment", False),
    Joint(3, ("shank", "wr3"), "attachment", False),
    Joint(4, ("wr1", "wr2"), "wearable", True),
    Joint(5, ("wr1", "wr4"), "wearable", False),
    Joint(6, ("wr3", "wr4"), "wearable", True)), ((1, 3),))


def hip_positions(h):
    """TWO_FOUR_BARS joints around the hip: every joint behind the body axis or on it."""
    hip = np.array([0.0, h.hip_height])
    return {1: hip + [-0.10, 0.10], 5: hip + [-0.10, -0.20], 2: hip + [0.0, -0.20],
            3: hip + [-0.05, -0.30], 6: hip + [-0.10, -0.55], 4: hip + [0.0, -0.60]}


def test_parameter_space_follows_table_5_2():
    names = [(p.name, p.low, p.high) for p in parameter_space(TWO_FOUR_BARS)]
    assert len(names) == 12
    assert ("j1_s", 0.0, 1.0) in names and ("j1_dx", -0.15, 0.15) in names
    assert ("j5_x", -0.15, 0.15) in names and ("j5_z", 0.1, 1.3) in names
    assert BOUNDS["z"] == (0.1, 1.3)


def test_binary_links_by_hand():
    """Joint 1 (actuator, 2 kg) at T on the torso, joint 5 (passive, 0.5 kg) at W; wr1 is
    the bar T-W (0.7 kg/m). Computed here by hand, not with compose_inertia."""
    h = human_geometry()
    pos = hip_positions(h)
    m = build_morphology(TWO_FOUR_BARS, (1, 3), params_from_positions(TWO_FOUR_BARS, h, pos))
    wr1 = next(b for b in m.bodies if b.name == "wr1")
    # origin at joint 1 (its tree joint); bar 0.30 m along -z: 0.21 kg at z = -0.15
    # wr1 carries actuator 1; joint 5 (wr1-wr2, loop closure) belongs to its second link, wr2
    bar = 0.7 * 0.30
    mass = 2.0 + bar
    com_z = bar * (-0.15) / mass
    inertia = (0.5 * 2.0 * 0.05**2 + 2.0 * com_z**2
               + bar * 0.30**2 / 12 + bar * (-0.15 - com_z) ** 2)
    assert wr1.mass == pytest.approx(mass, rel=1e-12)
    assert wr1.com_xz == pytest.approx([0.0, com_z], abs=1e-12)
    assert wr1.inertia == pytest.approx(inertia, rel=1e-12)
    wr2 = next(b for b in m.bodies if b.name == "wr2")
    # wr2: passive joint 2 (0.5 kg, its tree joint = origin) + joint 5 (0.5 kg at W) + bar W-A 0.10 m
    bar2 = 0.7 * 0.10
    assert wr2.mass == pytest.approx(0.5 + 0.5 + bar2, rel=1e-12)
    com2 = (0.5 * np.array([-0.10, 0.0]) + bar2 * np.array([-0.05, 0.0])) / wr2.mass
    assert wr2.com_xz == pytest.approx(com2, abs=1e-12)
    i2 = (2 * 0.5 * 0.5 * 0.05**2 + 0.5 * com2 @ com2 + 0.5 * (com2[0] + 0.10) ** 2
          + bar2 * 0.10**2 / 12 + bar2 * (com2[0] + 0.05) ** 2)
    assert wr2.inertia == pytest.approx(i2, rel=1e-12)
    assert m.longest_link == pytest.approx(0.30)


def test_ternary_link_is_a_triangle_of_bars():
    h = human_geometry()
    pos = {1: (-0.10, 1.05), 2: (0.0, 0.75), 3: (0.0, 0.30), 4: (-0.10, 0.80), 5: (0.05, 0.90), 6: (-0.10, 0.40)}
    m = build_morphology(WITH_TRIANGLE, (1, 3), params_from_positions(WITH_TRIANGLE, h, pos))
    tri = [b for b in m.bars if b.link == "wr1"]
    assert sorted(b.joints for b in tri) == [(1, 4), (1, 5), (4, 5)]
    perimeter = sum(np.hypot(*(np.array(pos[a]) - pos[b])) for a, b in ((1, 4), (1, 5), (4, 5)))
    wr1 = next(b for b in m.bodies if b.name == "wr1")
    # wr1 owns the actuator at 1 (attachment); 4 is a loop joint owned by wr2, 5 a tree joint of wr4
    assert wr1.mass == pytest.approx(2.0 + 0.7 * perimeter, rel=1e-12)


def test_compose_inertia_parallel_axis():
    # two point masses 1 kg and 3 kg 0.4 m apart: CoM 0.3 m from the first, I = mu d^2
    m, c, i = compose_inertia([1.0, 3.0], [[0.0, 0.0], [0.4, 0.0]], [0.0, 0.0])
    assert m == 4.0 and c == pytest.approx([0.3, 0.0]) and i == pytest.approx(0.75 * 0.4**2)
    # a rod cut in two halves recomposes to m L^2 / 12
    L, mass = 0.6, 1.2
    halves = compose_inertia([mass / 2] * 2, [[-L / 4, 0], [L / 4, 0]], [mass / 2 * (L / 2) ** 2 / 12] * 2)
    assert halves[2] == pytest.approx(mass * L**2 / 12, rel=1e-12)


def test_mass_report_totals():
    h = human_geometry()
    pos = hip_positions(h)
    m = build_morphology(TWO_FOUR_BARS, (1, 3), params_from_positions(TWO_FOUR_BARS, h, pos))
    rep = mass_report(m)
    bars = sum(b.length for b in m.bars)
    # per leg: 2 actuators (2 kg), 4 passive joints (0.5 kg), bars 0.7 kg/m
    assert rep["added_mass_kg"] == pytest.approx(2 * (2 * 2.0 + 4 * 0.5 + 0.7 * bars), rel=1e-12)
    m_h, c_h = human_com_upright(h)
    assert m_h == pytest.approx(70.0)
    # every WR joint lies behind the body axis or on it -> the CoM moves back and down
    assert rep["com_shift_x_m"] < 0 and rep["com_shift_z_m"] < 0
    # independent check: the assembled model's mass and CoM, body by body through its
    # forward kinematics in the upright pose (not through human_com_upright / WR origins)
    model = assemble(m).model
    assert model.total_mass() == pytest.approx(70.0 + rep["added_mass_kg"], rel=1e-12)
    assert _upright_com(model, h) == pytest.approx([rep["com_x_m"], rep["com_z_m"]], abs=1e-12)
    assert _upright_com(build_human(), h) == pytest.approx(c_h, abs=1e-12)


def _upright_com(model, h):
    """Whole-model CoM (2,) m in the upright pose, body by body through the model's forward
    kinematics (independent of human_com_upright and of the WR body origins)."""
    a = model.arrays
    pose, point, moment = np.zeros((model.n, 3)), np.zeros(2), np.zeros(2)
    forward_kinematics(a.parent, a.joint_type, a.joint_xz, upright_configuration(model, h), pose)
    for i in range(model.n):
        world_point(pose, i, model.com_xz[i], point)
        moment += model.mass[i] * point
    return moment / model.total_mass()


def test_assembled_loops_close_upright_and_actuators_come_from_the_pair():
    h = human_geometry()
    pos = hip_positions(h)
    aug = assemble(build_morphology(TWO_FOUR_BARS, (5, 6), params_from_positions(TWO_FOUR_BARS, h, pos)))
    model = aug.model
    assert model.n == 11 + 8 and model.n_loops == 4
    a = model.arrays
    phi, jac, pose = np.zeros(8), np.zeros((8, model.n)), np.zeros((model.n, 3))
    loop_residual_jacobian(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b, a.loop_xz_a, a.loop_xz_b,
                           upright_configuration(model, h), pose, phi, jac)
    assert np.abs(phi).max() < 1e-14
    assert [(j.side, j.catalog_id, j.loop) for j in aug.actuated] == [("r", 5, True), ("r", 6, True), ("l", 5, True), ("l", 6, True)]


def test_bad_parameters_are_user_errors():
    h = human_geometry()
    p = {q.name: 0.5 * (q.low + q.high) for q in parameter_space(TWO_FOUR_BARS)}
    with pytest.raises(UserError, match="j1_s"):
        build_morphology(TWO_FOUR_BARS, (1, 3), {**p, "j1_s": 1.5}, h)
    with pytest.raises(UserError, match="missing"):
        build_morphology(TWO_FOUR_BARS, (1, 3), {k: v for k, v in p.items() if k != "j5_z"}, h)
    with pytest.raises(UserError, match="actuators"):
        build_morphology(TWO_FOUR_BARS, (1, 2), p, h)
