"""The MuJoCo cross-simulation's reading of MuJoCo's forces against statics: a block
resting on two contact points carries its weight at every step (no chatter: the
contacts' margin), and a horizontal push below the friction limit is held by friction
of the opposite sign; a pendulum held horizontal by a loop closure to the world carries,
at the loop point, the force statics give."""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np
import pytest

from codesign.dynamics.mjcf import Contact, MjcfOptions, model_mjcf
from codesign.dynamics.model import ModelBuilder
from codesign.walking.mujoco_rollout import _Contacts

MASS, G, PUSH = 10.0, 9.81, 30.0      # kg, m/s^2, N (below mu m g = 98.1 N)


def _settled(model, q0, steps: int = 4000, push: np.ndarray | None = None):
    options = MjcfOptions(timestep=1e-4, contact=Contact(friction=1.0, solref=(2e-4, 1.0),
                                                          solimp=(0.9999, 0.9999, 0.001, 0.5, 2.0)),
                          equality_solref=(2e-4, 1.0), equality_solimp=(0.9999, 0.9999, 0.001, 0.5, 2.0))
    mj = mujoco.MjModel.from_xml_string(model_mjcf(model, options))
    data = mujoco.MjData(mj)
    data.qpos[:] = q0
    if push is not None:
        data.qfrc_applied[:] = push
    for _ in range(steps):
        mujoco.mj_step(mj, data)
    contacts = _Contacts(mj, SimpleNamespace(model=model))
    contacts.read(mj, data)
    return contacts


def _block():
    b = ModelBuilder(gravity=G)
    b.add_floating_base("block", MASS, (0.0, 0.1), 0.05)
    b.add_contact("left", "block", (-0.2, 0.0))
    b.add_contact("right", "block", (0.3, 0.0))
    return b.build()


@pytest.mark.parametrize("extra_steps", [0, 1, 2, 3])
def test_a_resting_block_carries_its_weight_on_its_points_by_the_lever_rule(extra_steps):
    contacts = _settled(_block(), np.zeros(3), steps=4000 + extra_steps)
    assert contacts.normal.sum() == pytest.approx(MASS * G, rel=1e-3)
    # moments about the CoM (x = 0): 0.2 N_left = 0.3 N_right
    assert contacts.normal[0] == pytest.approx(0.6 * MASS * G, rel=1e-2)
    assert abs(contacts.tangent).max() < 1e-3 * MASS * G


def test_a_push_below_the_friction_limit_is_held_by_friction_against_it():
    contacts = _settled(_block(), np.zeros(3), push=np.array([PUSH, 0.0, 0.0]))
    assert contacts.tangent.sum() == pytest.approx(-PUSH, rel=1e-3)


def test_a_loop_to_the_world_holds_a_horizontal_rod_with_the_statics_force():
    """A 1-m rod hinged to the world at x = 0, its tip (x = 1) closed to a world point: the
    tip carries half its weight, upward, on the rod (point a)."""
    b = ModelBuilder(gravity=G)
    b.add_body("rod", None, "revolute", (0.0, 1.0), 2.0, (0.5, 0.0), 2.0 / 12)
    b.add_loop_closure("tip", "rod", (1.0, 0.0), None, (1.0, 1.0))
    contacts = _settled(b.build(), np.zeros(1))
    assert contacts.loop_force[1] == pytest.approx(0.5 * 2.0 * G, rel=1e-3)
    assert abs(contacts.loop_force[0]) < 1e-6
