"""The MuJoCo export of a walking design against independent truths: MuJoCo's own mass
matrix and bias forces of the exported open tree against the engine's CRBA and RNEA at
random configurations, the total mass, the loop closures' residual and the contact
points at the keyframe, the drivetrains' armature (joint and tendon), the human alone."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from codesign.dynamics import make_workspace
from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import forward_kinematics
from codesign.dynamics.mjcf import armature_split, loop_row
from codesign.dynamics.model import with_armature
from codesign.dynamics.rnea import bias_forces
from codesign.walking import WalkSettings, load_design
from codesign.walking.mujoco_model import export_design
from codesign.walking.rollout_base import contact_heights

DESIGNS = ("human-thesis-walking", "codesign-walking", "drive-t05-walking", "wearer-walking")


@pytest.fixture(scope="module")
def exports():
    settings = WalkSettings()
    return {name: export_design(load_design(f"docs/designs/{name}.json"), settings) for name in DESIGNS}


def _loaded(xml: str, keyframe: bool = True):
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    if keyframe:
        mujoco.mj_resetDataKeyframe(mj, data, 0)
    mujoco.mj_forward(mj, data)
    return mj, data


def _compare_dynamics(ex, seed: int = 0, samples: int = 5) -> tuple[float, float]:
    """(largest relative error of M, of the bias forces) of MuJoCo's exported tree against
    the engine's CRBA and RNEA at random (q, qd) -- equalities and contacts switched off,
    so MuJoCo computes the open tree's quantities only."""
    mj = mujoco.MjModel.from_xml_string(ex.xml)
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    data = mujoco.MjData(mj)
    model, order = ex.model, ex.order
    w = make_workspace(model)
    rng = np.random.default_rng(seed)
    worst_m = worst_h = 0.0
    M = np.zeros((model.n, model.n))
    for _ in range(samples):
        q = rng.uniform(-1.5, 1.5, model.n)
        qd = rng.uniform(-3.0, 3.0, model.n)
        data.qpos[:] = q[order]
        data.qvel[:] = qd[order]
        mujoco.mj_forward(mj, data)
        mujoco.mj_fullM(mj, data, M)
        forward_kinematics(model.arrays, q, qd, w)
        mass_matrix(model.arrays, w)
        bias_forces(model.arrays, w)
        ours_m = w.M[order][:, order]
        ours_h = w.h[order]
        worst_m = max(worst_m, np.abs(M - ours_m).max() / np.abs(ours_m).max())
        worst_h = max(worst_h, np.abs(data.qfrc_bias - ours_h).max() / np.abs(ours_h).max())
    return worst_m, worst_h


@pytest.mark.parametrize("name", DESIGNS)
def test_open_tree_mass_matrix_and_bias_forces_equal_crba_and_rnea(exports, name):
    worst_m, worst_h = _compare_dynamics(exports[name])
    assert worst_m <= 1e-9
    assert worst_h <= 1e-9


def test_drivetrain_armature_on_tree_joints_is_mujocos_joint_armature(exports):
    """drive-t05's motors sit on tree joints with reflected inertia: the export carries
    it as joint armature and the mass matrix test above covers it; here the values."""
    ex = exports["drive-t05-walking"]
    mj, _ = _loaded(ex.xml)
    tree, loops = armature_split(ex.model)
    assert tree.max() > 0.0 and not loops.any()
    for i, name in enumerate(ex.model.body_names):
        assert mj.joint(name).armature[0] == pytest.approx(tree[i], abs=1e-15)


def test_loop_armature_across_branches_is_refused(exports):
    """A reflected inertia on a loop joint couples coordinates of two branches (k k^T);
    MuJoCo's tree-sparse mass matrix drops such terms, so the writer refuses it rather
    than export a different mass matrix."""
    model = exports["codesign-walking"].model
    assert any(np.count_nonzero(loop_row(model, k)) > 1 for k in range(model.n_loops))
    armed = with_armature(model, None, np.linspace(0.1, 0.4, model.n_loops))
    with pytest.raises(ValueError, match="different branches"):
        armature_split(armed)


@pytest.mark.parametrize("name", DESIGNS)
def test_total_mass_equals_the_designs(exports, name):
    mj, _ = _loaded(exports[name].xml)
    assert float(mj.body_mass.sum()) == pytest.approx(exports[name].model.total_mass(), rel=1e-12)


@pytest.mark.parametrize("name", DESIGNS)
def test_keyframe_is_the_evaluation_initial_state_loops_closed_on_the_ground(exports, name):
    ex = exports[name]
    mj, data = _loaded(ex.xml)
    assert np.array_equal(data.qpos, ex.x0[:ex.model.n][ex.order])
    rows = data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    assert rows.sum() == 3 * ex.model.n_loops
    if ex.model.n_loops:
        assert np.abs(data.efc_pos[rows]).max() <= 1e-9
    # the lowest contact point touches the floor (its sphere's distance 0), none below
    heights = contact_heights(ex.model, ex.x0[:ex.model.n])
    assert heights.min() == pytest.approx(0.0, abs=1e-12)
    for k, cname in enumerate(ex.model.contact_names):
        gid = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, cname)
        assert data.geom_xpos[gid][2] == pytest.approx(heights[k], abs=1e-12)


def test_motors_carry_the_actuators_torque_limits(exports):
    ex = exports["drive-t05-walking"]
    mj, _ = _loaded(ex.xml)
    limits = {name: a.peak_torque for name, a in ex.setup.actuators}
    for motor in ex.motors:
        aid = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, motor.name)
        joint = motor.name.rsplit("_", 1)[0]
        if joint in limits:
            assert mj.actuator_ctrllimited[aid] and mj.actuator_ctrlrange[aid][1] == limits[joint]
        else:                                   # the ankle: a muscle, unbounded
            assert not mj.actuator_ctrllimited[aid]


def test_human_alone_exports_and_loads(exports):
    ex = exports["human-thesis-walking"]
    mj, data = _loaded(ex.xml)
    assert mj.nq == ex.model.n == 11 and mj.neq == 0 and mj.nu == 6
    assert {mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)} == set(ex.model.body_names)
    knee = mj.joint("shank_r")
    assert knee.limited[0] and knee.range[1] == pytest.approx(ex.model.ligament_limit[ex.model.body_id("shank_r")])
