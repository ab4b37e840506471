"""Morphology: one catalog topology + parameter values -> a concrete wearable robot (WR).

Parametrization (thesis 5.4.2, Table 5.2; the extraction of the table is garbled, read as
follows). Every added joint of the topology has two parameters, placed on the human in the
UPRIGHT pose and shared by both legs:

* attachment joint ``j<id>`` on human link S (torso, thigh or shank):
  ``j<id>_s`` in [0, 1], the relative position along S from its proximal to its distal end
  (torso: hip -> shoulder, thigh: hip -> knee, shank: knee -> ankle), and
  ``j<id>_dx`` in [-0.15, 0.15] m, an x offset (forward) from the segment's axis;
* free WR joint ``j<id>``: Cartesian ``j<id>_x`` in [-0.15, 0.15] m (forward of the body's
  vertical axis) and ``j<id>_z`` in [0.1, 1.3] m (above the ground), a bounding box around
  the leg and lower trunk.

Geometry: a WR link with k joints is a rigid frame of the k(k-1)/2 bars between its joints
(binary link = one bar, ternary = a triangle of three bars, thesis 5.4.2).

Mass distribution (thesis 5.4.2, "Mass distribution"): an actuator is 2 kg (the thesis's
rule; an actuator model's mass law gives another mass, ``actuator_mass``,
:mod:`codesign.model.actuators`) with the inertia
of a solid cylinder of radius 5 cm about its axis (m r^2 / 2); a passive joint 0.5 kg with
the same cylinder shape; bars 0.7 kg per metre (aluminium, 1 x 3.5 cm section), each a thin
rod (m L^2 / 12 about its middle). A joint's mass belongs to one WR body: the WR link it
joins to a human segment (attachment), else the child of its tree joint, else (a WR-WR
loop-closure joint) its second link. Each WR body's mass, CoM and inertia are the
composition (parallel-axis theorem) of its bars and joints. These masses are the thesis's
structure law (:data:`codesign.model.structure.THESIS`, the default); ``build_morphology``'s
``structure`` takes another (:func:`codesign.model.structure.parts_law`: bars of a catalog
tube, catalog passive joints, and a cuff at every attachment joint, a point mass at the
joint owned by the same WR body). Every passive joint weighs 0.5 kg,
so the joints of two legs weigh 4 x 2 + 8 x 0.5 = 12 kg; thesis 5.5 says 11 kg ("4 actuators
and 6 passive joints"), which no reading of its 6 added joints per leg gives.

WR body frames: origin at the body's tree joint (its upright position), axes parallel to
the world's, so every WR joint angle is 0 in the upright pose and the loops close there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from codesign.errors import UserError, listed
from codesign.model.anthropometry import HUMAN_LINKS, HumanGeometry, human_geometry
from codesign.model.structure import THESIS, StructureLaw
from codesign.topology.catalog import ATTACHMENT, Topology

ACTUATOR_MASS = 2.0  # kg
PASSIVE_JOINT_MASS = THESIS.passive_joint_mass  # kg, 0.5
JOINT_RADIUS = 0.05  # m, cylinder radius of actuators and passive joints
BAR_MASS_PER_M = THESIS.bar_mass_per_m  # kg/m, 0.7
MAX_SEGMENT_LENGTH = 0.7  # m, thesis 5.4.3 (buckling), reported as a metric

# Table 5.2 bounds (SI), one place: used by sampling, the optimizer and validation.
BOUNDS = {
    "s": (0.0, 1.0),  # relative position along the human segment
    "dx": (-0.15, 0.15),  # m, attachment x offset
    "x": (-0.15, 0.15),  # m, free WR joint x
    "z": (0.1, 1.3),  # m, free WR joint height above ground
}


@dataclass(frozen=True)
class Parameter:
    """One morphological parameter: name, bounds (SI), unit, description."""

    name: str
    low: float
    high: float
    unit: str
    description: str


def parameter_space(topology: Topology) -> tuple[Parameter, ...]:
    """The morphological parameters of a topology (the same for each of its actuator pairs)."""
    out = []
    for j in topology.joints:
        if j.kind == ATTACHMENT:
            seg = human_link(j.links)
            out.append(Parameter(f"j{j.id}_s", *BOUNDS["s"], "1", f"joint {j.id}: relative position along the {seg} (0 proximal, 1 distal)"))
            out.append(Parameter(f"j{j.id}_dx", *BOUNDS["dx"], "m", f"joint {j.id}: x offset from the {seg} axis"))
        else:
            out.append(Parameter(f"j{j.id}_x", *BOUNDS["x"], "m", f"joint {j.id}: x position (upright pose)"))
            out.append(Parameter(f"j{j.id}_z", *BOUNDS["z"], "m", f"joint {j.id}: height above ground (upright pose)"))
    return tuple(out)


def sample_parameters(topology: Topology, rng: np.random.Generator) -> dict[str, float]:
    """Uniform random parameter values within the bounds."""
    return {p.name: float(rng.uniform(p.low, p.high)) for p in parameter_space(topology)}


def human_link(links: tuple[str, str]) -> str:
    """The human link of an attachment joint's two links."""
    return links[0] if links[0] in HUMAN_LINKS else links[1]


@dataclass(frozen=True)
class Bar:
    """A straight bar of a WR link between two of its joints (ids), length in m."""

    link: str
    joints: tuple[int, int]
    length: float


@dataclass(frozen=True)
class WRBody:
    """One WR link as a rigid body (per leg; both legs are equal).

    parent: parent link name (human link or WR link); tree_joint: id of its tree joint;
    origin: world position (m) of the tree joint in the upright pose; mass kg; com_xz (2,)
    m in the body frame (origin at ``origin``); inertia kg m^2 about the CoM.
    """

    name: str
    parent: str
    tree_joint: int
    origin: np.ndarray
    mass: float
    com_xz: np.ndarray
    inertia: float


@dataclass(frozen=True)
class Morphology:
    """A topology realized: joint positions, bars, WR bodies, which joints are actuated.

    joint_positions: added joint id -> world (x, z) in m, upright pose, ground at z = 0,
    x = 0 on the body axis (hip, knee and ankle are at x = 0 upright).
    """

    topology: Topology
    actuators: tuple[int, ...]
    params: dict[str, float]
    human: HumanGeometry
    joint_positions: dict[int, np.ndarray]
    bars: tuple[Bar, ...]
    bodies: tuple[WRBody, ...]
    actuator_mass: float | tuple[float, ...] = ACTUATOR_MASS   # kg per actuator, or one per
    #                                          actuated joint in ``actuators`` order
    structure: StructureLaw = THESIS           # bars, passive joints, cuffs (model/structure.py)

    def joint_mass(self, joint_id: int) -> float:
        """kg at added joint ``joint_id``: its actuator, else a passive joint of the
        structure law, plus the law's cuff at an attachment joint."""
        m = self.mass_of_actuator(joint_id) if joint_id in self.actuators else self.structure.passive_joint_mass
        if self.structure.cuff_mass > 0 and self.topology.joint(joint_id).kind == ATTACHMENT:
            m = m + self.structure.cuff_mass
        return m

    def mass_of_actuator(self, joint_id: int) -> float:
        """kg of the actuator at actuated joint ``joint_id``."""
        m = self.actuator_mass
        return float(m[self.actuators.index(joint_id)]) if isinstance(m, tuple) else float(m)

    @property
    def added_mass_per_leg(self) -> float:
        """kg of WR per leg."""
        return float(sum(b.mass for b in self.bodies))

    @property
    def longest_link(self) -> float:
        """Length (m) of the longest WR bar."""
        return max(b.length for b in self.bars)

    def joint_mass_owner(self, joint_id: int) -> str:
        """The WR link carrying the mass of an added joint (rule in the module docstring)."""
        return _joint_owner(self.topology, joint_id)

    def link_origin(self, link: str) -> np.ndarray:
        """Upright world position (m) of the origin of a link's frame."""
        if link in HUMAN_LINKS:
            return np.array([0.0, self.human.joint_height(link)])
        return next(b.origin for b in self.bodies if b.name == link)


def _joint_owner(topology: Topology, joint_id: int) -> str:
    j = topology.joint(joint_id)
    if j.kind == ATTACHMENT:
        return j.links[1] if j.links[0] in HUMAN_LINKS else j.links[0]
    if not j.loop_closure:
        return next(child for child, _parent, jid in topology.tree_parents() if jid == joint_id)
    return j.links[1]


def joint_positions(topology: Topology, params: dict[str, float], human: HumanGeometry) -> dict[int, np.ndarray]:
    """Upright world positions (m) of every added joint from the parameters."""
    names = {p.name: p for p in parameter_space(topology)}
    missing = sorted(set(names) - set(params))
    extra = sorted(set(params) - set(names))
    if missing or extra:
        raise UserError("params: " + "; ".join(f"{label} {listed(group)}" for label, group in
                                               (("missing", missing), ("unknown", extra)) if group)
                        + f"; expected exactly the {len(names)} parameters of topology {topology.id}: "
                        + listed(sorted(names)))
    for name, p in names.items():
        v = params[name]
        if not (np.isfinite(v) and p.low <= v <= p.high):
            raise UserError(f"params.{name}: {v} is out of range; expected {p.low}..{p.high} {p.unit}")
    out = {}
    for j in topology.joints:
        if j.kind == ATTACHMENT:
            z0, z1 = human.segment_span(human_link(j.links))
            s = params[f"j{j.id}_s"]
            out[j.id] = np.array([params[f"j{j.id}_dx"], z0 + s * (z1 - z0)])
        else:
            out[j.id] = np.array([params[f"j{j.id}_x"], params[f"j{j.id}_z"]])
    return out


def compose_inertia(masses: ArrayLike, points: ArrayLike, inertias: ArrayLike) -> tuple[float, np.ndarray, float]:
    """Composite of point-like parts: total mass (kg), CoM (2,) m, inertia about the CoM.

    masses (k,), points (k, 2) their CoMs, inertias (k,) each about its own CoM (kg m^2);
    parallel-axis theorem: I = sum(I_k + m_k |c_k - c|^2).
    """
    m = np.asarray(masses, dtype=float)
    p = np.asarray(points, dtype=float).reshape(-1, 2)
    total = float(m.sum())
    com = (m[:, None] * p).sum(axis=0) / total
    inertia = float(np.sum(np.asarray(inertias, dtype=float) + m * np.sum((p - com) ** 2, axis=1)))
    return total, com, inertia


def build_morphology(topology: Topology, actuators: Sequence[int], params: dict[str, float],
                     human: HumanGeometry | None = None,
                     actuator_mass: float | Sequence[float] = ACTUATOR_MASS,
                     structure: StructureLaw = THESIS) -> Morphology:
    """Realize ``topology`` with ``params`` (see :func:`parameter_space`) and actuator pair.
    ``actuator_mass``: kg of each actuator, or one per actuated joint in ``actuators``
    order (the thesis's 2 kg by default; the actuator model's mass law:
    :meth:`codesign.model.actuators.Actuator.mass`). ``structure``: what bars, passive
    joints and cuffs weigh (the thesis's law by default; :mod:`codesign.model.structure`).

    Raises UserError for missing/unknown/out-of-range parameters, an actuator pair not
    valid for the topology, or two joints of one WR link at the same place.
    """
    human = human_geometry() if human is None else human
    actuators = tuple(int(a) for a in actuators)
    if actuators not in topology.actuator_pairs:
        raise UserError(f"actuators: {list(actuators)} is not a valid pair of topology {topology.id}; "
                        f"expected one of {listed(f'[{a}, {b}]' for a, b in topology.actuator_pairs)}")
    if not isinstance(actuator_mass, (int, float)):
        actuator_mass = tuple(float(m) for m in actuator_mass)
        if len(actuator_mass) != len(actuators):
            raise ValueError(f"actuator_mass: {len(actuator_mass)} masses for {len(actuators)} actuators")
    masses = dict(zip(actuators, actuator_mass if isinstance(actuator_mass, tuple)
                      else (actuator_mass,) * len(actuators)))
    pos = joint_positions(topology, params, human)
    bars = []
    for link in topology.wr_links:
        ids = [j.id for j in topology.joints if link in j.links]
        for a, b in combinations(ids, 2):
            length = float(np.linalg.norm(pos[a] - pos[b]))
            if length < 1e-6:
                raise UserError(f"params: joints {a} and {b} of {link} coincide; expected distinct joint positions")
            bars.append(Bar(link, (a, b), length))
    bodies = []
    for child, parent, jid in topology.tree_parents():
        origin = pos[jid]
        parts_m, parts_c, parts_i = [], [], []
        for bar in (b for b in bars if b.link == child):
            m = structure.bar_mass_per_m * bar.length
            parts_m.append(m)
            parts_c.append(0.5 * (pos[bar.joints[0]] + pos[bar.joints[1]]) - origin)
            parts_i.append(m * bar.length**2 / 12.0)
        for j in topology.joints:
            if _joint_owner(topology, j.id) == child:
                m = masses.get(j.id, structure.passive_joint_mass)
                parts_m.append(m)
                parts_c.append(pos[j.id] - origin)
                parts_i.append(0.5 * m * JOINT_RADIUS**2)
                if structure.cuff_mass > 0 and j.kind == ATTACHMENT:   # a point mass at the joint
                    parts_m.append(structure.cuff_mass)
                    parts_c.append(pos[j.id] - origin)
                    parts_i.append(0.0)
        mass, com, inertia = compose_inertia(parts_m, parts_c, parts_i)
        bodies.append(WRBody(child, parent, jid, origin, mass, com, inertia))
    return Morphology(topology, actuators, dict(params), human, pos, tuple(bars), tuple(bodies),
                      actuator_mass if isinstance(actuator_mass, tuple) else float(actuator_mass), structure)


def human_com_upright(human: HumanGeometry) -> tuple[float, np.ndarray]:
    """Whole-human mass (kg) and CoM (2,) m in the upright pose (world frame, ground z = 0)."""
    H = human
    parts = [
        (H.torso.mass, np.array([0.0, H.hip_height]) + H.torso.com_xz),
        (H.thigh.mass, np.array([0.0, H.hip_height]) + H.thigh.com_xz),
        (H.shank.mass, np.array([0.0, H.knee_height]) + H.shank.com_xz),
        (H.foot.mass, np.array([0.0, H.ankle_height]) + H.foot.com_xz),
        (H.toe.mass, np.array([0.0, H.ankle_height]) + H.toe_joint_xz + H.toe.com_xz),
    ]
    legs = parts[1:]
    masses = [parts[0][0]] + [m for m, _ in legs] * 2
    points = [parts[0][1]] + [c for _, c in legs] * 2
    m, c, _ = compose_inertia(masses, points, np.zeros(len(masses)))
    return m, c


def mass_report(morphology: Morphology) -> dict[str, float]:
    """Added mass (kg, both legs), whole-system CoM (m, upright) and its shift from the
    human's, longest WR link (m)."""
    m_h, c_h = human_com_upright(morphology.human)
    masses = [m_h] + [b.mass for b in morphology.bodies] * 2
    points = [c_h] + [b.origin + b.com_xz for b in morphology.bodies] * 2
    m, c, _ = compose_inertia(masses, points, np.zeros(len(masses)))
    return {
        "added_mass_kg": m - m_h,
        "total_mass_kg": m,
        "com_x_m": float(c[0]),
        "com_z_m": float(c[1]),
        "com_shift_x_m": float(c[0] - c_h[0]),
        "com_shift_z_m": float(c[1] - c_h[1]),
        "longest_link_m": morphology.longest_link,
    }
