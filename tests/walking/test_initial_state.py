"""The start inside the gait (issue 31, ``initial_state = "gait"``): every contact point on the
ground is at rest and the pelvis moves at the gait's speed, checked against finite
differences of the contact points' world positions (not the Jacobian the start uses)."""

import numpy as np
import pytest

from codesign.dynamics.kinematics import body_point_world, forward_kinematics
from codesign.dynamics.model import make_workspace
from codesign.model.anthropometry import human_geometry
from codesign.model.gait import nominal_gait
from codesign.model.human import build_human
from codesign.walking import load_design
from codesign.walking.initial_state import GROUND_TOL, gait_configuration, gait_start
from codesign.walking.settings import WalkSettings
from codesign.walking.setup import build_setup

DESIGN = "docs/designs/human-thesis-walking.json"


def contact_points(model, q):
    """float64[c, 2]: world (x, z) of every contact point at q (m)."""
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, np.zeros(model.n), w)
    out = np.zeros((model.n_contacts, 2))
    for i in range(model.n_contacts):
        body_point_world(w, model.contact_body[i], model.contact_xz[i, 0], model.contact_xz[i, 1], out[i])
    return out


def point_velocities(model, q, qd, eps=1e-6):
    """float64[c, 2]: the contact points' velocities (m/s) by central differences along qd."""
    return (contact_points(model, q + eps * qd) - contact_points(model, q - eps * qd)) / (2 * eps)


@pytest.mark.parametrize("phase0", [0.0, 0.2, 0.35, 0.6])
def test_the_points_on_the_ground_are_at_rest_and_the_pelvis_walks(phase0):
    model = build_human()
    q, qd = gait_configuration(model, nominal_gait(), 0.9, phase0, human_geometry().hip_height)
    q1, qd1, lowest = gait_start(model, q, qd, 1.3)
    z = contact_points(model, q1)[:, 1]
    assert z[lowest] == pytest.approx(0.0, abs=1e-12) and z.min() >= -1e-12
    on = z <= GROUND_TOL
    v = point_velocities(model, q1, qd1)
    assert on.sum() >= 1 and np.abs(v[on]).max() < 1e-6          # neither sinking, lifting nor sliding
    assert qd1[model.body_id("torso_x")] == 1.3
    # the joints keep their angles; the rates change least: the change lies in the row
    # space of the constraint (orthogonal to every rate change that keeps the points at rest)
    free = np.arange(model.n) != model.body_id("torso_x")
    assert np.array_equal(np.delete(q1, model.body_id("torso_z")), np.delete(q, model.body_id("torso_z")))
    rows = np.column_stack([point_velocities(model, q1, e)[on].ravel() for e in np.eye(model.n)[free]])
    null = np.linalg.svd(rows)[2][np.linalg.matrix_rank(rows, tol=1e-6):]
    assert null.shape[0] >= free.sum() - 2 * on.sum()
    assert np.abs(null @ (qd1 - qd)[free]).max() < 1e-6


def test_the_setup_starts_as_its_setting_says():
    design = load_design(DESIGN)
    gait, _, _ = build_setup(design, WalkSettings.from_dict({"initial_state": "gait", "phase0": 0.2}))
    rest, _, _ = build_setup(design, WalkSettings.from_dict({"phase0": 0.2}))
    model, n = gait.model, gait.model.n
    for setup, pelvis in ((gait, 1.3), (rest, None)):
        q, qd = setup.x0[:n], setup.x0[n:]
        z = contact_points(model, q)[:, 1]
        v = point_velocities(model, q, qd)
        assert z.min() == pytest.approx(0.0, abs=1e-12)
        if pelvis is None:      # lowest_point: only the lowest point at rest, the gait's rates
            assert np.abs(v[np.argmin(z)]).max() < 1e-6
        else:
            assert np.abs(v[z <= GROUND_TOL]).max() < 1e-6 and qd[model.body_id("torso_x")] == pelvis


def test_the_gait_start_is_the_pose_the_law_walks():
    # the compiled controller at t = 0 asks only its damping of the human joints: its
    # stiffness term K (q_ref - q) is zero, where the default start's Winter pose is
    # kilo-newton-metres away from human-thesis-walking's references
    from codesign.control.impedance import control_torques

    design = load_design(DESIGN)
    for start, stiffness_torque in (("gait", 0.0), ("lowest_point", None)):
        setup, _, _ = build_setup(design, WalkSettings.from_dict({"initial_state": start, "phase0": 0.2}))
        n, c = setup.model.n, setup.ctrl
        na = c.act_rows.shape[0]
        tau, joint_tau, joint_rate, joint_cmd = np.zeros(n), np.zeros(na), np.zeros(na), np.zeros(na)
        gain = np.zeros((na, 2))
        control_torques(0.0, setup.x0[:n], setup.x0[n:], c, tau, joint_tau, joint_rate, gain, joint_cmd)
        spring = joint_cmd + gain[:, 1] * joint_rate           # K (q_ref - q) of each joint, N m
        if stiffness_torque is None:
            assert np.abs(spring).max() > 1000.0
        else:
            assert np.abs(spring).max() < 1e-6
