"""Compiled fixed-step rollouts against MuJoCo (same model, same integrator) and against
the generic constrained path."""

import numpy as np
import pytest

from codesign.dynamics.testing import examples as E
from codesign.dynamics import make_workspace
from codesign.dynamics.testing.flows import mechanical_energy
from codesign.dynamics.kinematics import forward_kinematics
from codesign.dynamics.loops import loop_constraints
from codesign.dynamics.testing.peers import to_mjcf
from codesign.dynamics.testing.rollouts import RK4, SYMPLECTIC_EULER, closed_loop_rollout, tree_rollout

mujoco = pytest.importorskip("mujoco")


@pytest.mark.parametrize("method,name", [(SYMPLECTIC_EULER, "Euler"), (RK4, "RK4")])
@pytest.mark.parametrize("branches", [1, 3])
def test_tree_rollout_matches_mujoco_step_for_step(method, name, branches):
    """6 links, 0.5 s at 1 ms: the same discrete map as MuJoCo's Euler (semi-implicit) and
    RK4, so the states agree to round-off (the chain is not yet chaotic at 0.5 s)."""
    model = E.serial_chain(6, branches=branches)
    q, qd = np.linspace(0.2, 0.7, 6), np.linspace(-0.5, 0.5, 6)
    mj = mujoco.MjModel.from_xml_string(to_mjcf(model, 1e-3, name))
    data = mujoco.MjData(mj)
    data.qpos[:], data.qvel[:] = q, qd
    mujoco.mj_step(mj, data, 500)
    w = make_workspace(model)
    status = tree_rollout(model.arrays, w, np.zeros(6), q, qd, 1e-3, 500, method,
                          np.zeros((5, 6)), np.zeros((5, 6)))
    assert status == 0
    assert np.abs(q - data.qpos).max() < 1e-10
    assert np.abs(qd - data.qvel).max() < 1e-9


def test_closed_loop_rollout_keeps_energy_and_closure():
    """Fig. 2.14's loop (no damping) by RK4 at 1 ms for 2 s: relative energy drift and loop
    error stay at the integrator's truncation level."""
    model = E.closed_three_link()
    m, w = model.arrays, make_workspace(model)
    q, qd = E.closed_three_link_q0(), np.zeros(3)
    e0 = sum(mechanical_energy(m, w, q, qd))
    status = closed_loop_rollout(m, w, np.zeros(3), q, qd, 1e-3, 2000, RK4, 0.0, 0.0, 1e-12,
                                 np.zeros((5, 3)), np.zeros((5, 3)))
    assert status == 0
    e1 = sum(mechanical_energy(m, w, q, qd))
    forward_kinematics(m, q, qd, w)
    loop_constraints(m, w, 0.0, 0.0)
    assert abs(e1 - e0) / abs(e0) < 1e-8
    assert np.abs(w.phi[:2]).max() < 1e-9


@pytest.mark.parametrize("method", [SYMPLECTIC_EULER, RK4])
def test_rollout_stops_at_the_first_non_finite_state(method):
    """An infinite torque makes the state non-finite in the first step: the rollout
    reports step 1 (0-based step 0), whichever coordinate went first."""
    model = E.serial_chain(6, branches=3)
    q, qd = np.linspace(0.2, 0.7, 6), np.zeros(6)
    tau = np.zeros(6)
    tau[3] = np.inf
    status = tree_rollout(model.arrays, make_workspace(model), tau, q, qd, 1e-3, 50, method,
                          np.zeros((5, 6)), np.zeros((5, 6)))
    assert status == 1
