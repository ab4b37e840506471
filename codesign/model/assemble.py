"""Assembly: human + wearable robot (both legs) -> one engine Model with loop closures.

Per leg s (r, l; same geometry, the sagittal model mirrors the legs in phase only): WR
bodies ``wr<k>_<s>`` attached along the topology's spanning tree (catalog
``tree_parents``), each with its tree joint at its upright position; the loop-closure
joints ``j<id>_<s>`` are engine loop closures between the two links they join. Torso
attachments of both legs hang on the one torso body.

Which joints are actuated comes from the actuator pair: an actuated tree joint is the
coordinate of its WR body; an actuated loop-closure joint is an engine loop (its torque
acts on the relative angle theta_b - theta_a, engine docstring).
"""

from __future__ import annotations

from dataclasses import dataclass

from codesign.dynamics.model import Model, ModelBuilder
from codesign.model.human import GRAVITY, LEGS, add_human
from codesign.model.morphology import Morphology


@dataclass(frozen=True)
class WRJoint:
    """An added joint of one leg in the engine model.

    catalog_id: id in the topology; side: 'r' or 'l'; loop: True if a loop closure;
    index: coordinate index (tree joint) or loop index (loop closure); actuated: bool.
    """

    catalog_id: int
    side: str
    loop: bool
    index: int
    actuated: bool
    name: str


@dataclass(frozen=True)
class AugmentedModel:
    """The engine model of the augmented human and where its WR joints are."""

    model: Model
    morphology: Morphology
    wr_joints: tuple[WRJoint, ...]

    @property
    def actuated(self) -> tuple[WRJoint, ...]:
        return tuple(j for j in self.wr_joints if j.actuated)

    @property
    def passive(self) -> tuple[WRJoint, ...]:
        return tuple(j for j in self.wr_joints if not j.actuated)


def _body_name(link: str, side: str) -> str:
    return "torso" if link == "torso" else f"{link}_{side}"


def add_wearable_robot(builder: ModelBuilder, morphology: Morphology, side: str) -> list[tuple[int, str, bool, int]]:
    """Add one leg's WR bodies and loop closures; returns (joint id, name, is_loop, index)."""
    m = morphology
    out = []
    for body in m.bodies:
        parent_origin = m.link_origin(body.parent)
        idx = builder.add_body(_body_name(body.name, side), _body_name(body.parent, side), "revolute",
                               body.origin - parent_origin, body.mass, body.com_xz, body.inertia)
        out.append((body.tree_joint, _body_name(body.name, side), False, idx))
    for jid in m.topology.loop_closure_joints:
        a, b = m.topology.joint(jid).links
        p = m.joint_positions[jid]
        name = f"j{jid}_{side}"
        idx = builder.add_loop_closure(name, _body_name(a, side), p - m.link_origin(a), _body_name(b, side), p - m.link_origin(b))
        out.append((jid, name, True, idx))
    return out


def _assemble(morphology: Morphology, legs, floating_base: bool, feet: bool) -> AugmentedModel:
    builder = ModelBuilder(gravity=GRAVITY)
    add_human(builder, morphology.human, legs=legs, floating_base=floating_base, feet=feet)
    joints = []
    for side in legs:
        for jid, name, is_loop, idx in add_wearable_robot(builder, morphology, side):
            joints.append(WRJoint(jid, side, is_loop, idx, jid in morphology.actuators, name))
    joints.sort(key=lambda j: (legs.index(j.side), j.catalog_id))
    return AugmentedModel(builder.build(), morphology, tuple(joints))


def assemble(morphology: Morphology) -> AugmentedModel:
    """Human (floating base, both legs with feet and contacts) + the WR on both legs."""
    return _assemble(morphology, LEGS, floating_base=True, feet=True)


def assemble_leg(morphology: Morphology) -> AugmentedModel:
    """One leg (right) for kinematics: torso pinned to the world (coordinate ``torso``,
    held at 0), thigh, shank and the WR; no feet. Screening uses it: the loops of a leg
    only involve the torso, that leg and its WR, and both legs are identical (half a period
    apart), so one leg's kinematics decides both."""
    return _assemble(morphology, ("r",), floating_base=False, feet=False)

