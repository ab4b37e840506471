"""Lumping an added linkage's mass onto the human segments it rides on (thesis 5.6).

Used by the anthropomorphic baseline (:mod:`codesign.problems.baseline`): the human
carrying a co-design design's added mass, without the linkage.

Mass rule (per leg; both legs carry the same WR). MODEL's mass model (thesis 5.4.2,
:mod:`codesign.model.morphology`): an actuated joint is ``morphology.actuator_mass`` (2 kg
under the thesis's rule, else the actuator model's mass law) and a passive joint 0.5 kg,
each a solid cylinder of radius 5 cm (I = m r^2 / 2); a bar is 0.7 kg/m; a joint's mass
belongs to one WR link (an attachment joint to the WR link it attaches; else the child of
its tree joint; else, WR-WR loop closure, its second link). Under another structure law
(``morphology.structure``, :mod:`codesign.model.structure`) its bar kg/m and passive joint
mass replace 0.7 and 0.5, and an attachment joint's lump carries its cuff. Lumped:

1. an *attachment joint* (WR link - human segment) goes whole onto the human segment it is
   attached to, at its own position on that segment, with its own cylinder inertia;
2. the *rest of a WR link* L -- its bars (0.7 kg/m x length) and the WR-WR joints L owns
   -- is split in equal shares between L's *ends*: L's attachment joints; a link without
   one (joined to other WR links only) takes the attachment joints of the nearest WR
   links that have some (fewest WR-WR joints away; all of them at that distance). Each
   share is a point mass (no inertia of its own) at its end's attachment point.

So the total added mass is the design's exactly (2 legs x the WR mass of one leg, MODEL's
``mass_report``), and each segment receives what is fixed to it plus its share of the
links hanging on it. Not kept: the WR links' own rotational inertia (bars m L^2 / 12,
and the parallel-axis terms of masses that lie off the segment), and the mass's location
when a link spans two segments (it is split between them).

Where a lump sits (``baseline_mass_at``):

* ``"attachments"`` (default): at the attachment point, (dx, z - z0) in the segment's
  frame (origin at its proximal joint: hip for torso and thigh, knee for the shank; dx
  is the design's x offset, up to +-0.15 m), so the segment's CoM moves towards it;
* ``"segment_com"``: every lump a point mass (no own inertia, not even the joints'
  cylinders) at the segment's own CoM: only the segment masses change, their CoMs and
  inertias stay the human's.

Each segment then gets the composite of its mass and its lumps (:func:`add_point_masses`:
total mass, combined CoM, parallel-axis inertia about it). The torso carries the lumps of
both legs. Record metrics besides WALK's: ``added_mass`` (kg, total), ``com_shift`` (m,
upright whole-body CoM shift from the human's, with the lumps where they sit),
``added_mass_torso``, ``added_mass_thigh`` and ``added_mass_shank`` (kg; thigh and shank
per leg); ``longest_segment`` and ``singularity`` are 0 (no linkage).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from codesign.model.anthropometry import human_geometry
from codesign.model.human import LEGS, build_human
from codesign.model.morphology import JOINT_RADIUS, human_com_upright, human_link
from codesign.topology.catalog import ATTACHMENT

SEGMENTS = ("torso", "thigh", "shank")
MASS_AT = ("attachments", "segment_com")


def add_point_masses(mass, com_xz, inertia, body, part_mass, part_xz, part_inertia):
    """Bodies' (mass, CoM, inertia) with point-like parts added: a pure function.

    mass (n,) kg, com_xz (n, 2) m in each body's frame, inertia (n,) kg m^2 about each
    body's CoM; parts k: body[k] (index), part_mass[k] kg, part_xz[k] (2,) m in that body's
    frame, part_inertia[k] kg m^2 about the part's own CoM. Per body with parts:

        M  = m + sum m_k
        c' = c + sum m_k (p_k - c) / M
        I' = I + m |c - c'|^2 + sum (I_k + m_k |p_k - c'|^2)     (parallel axes, about c')

    Written as shifts from c so that zero-mass parts leave every number bit for bit. A body
    whose total stays 0 kg is left as is. Returns new arrays (the inputs are not changed).
    """
    mass = np.array(mass, dtype=float)
    com = np.array(com_xz, dtype=float).reshape(-1, 2)
    inertia = np.array(inertia, dtype=float)
    body = np.asarray(body, dtype=np.int64).reshape(-1)
    pm = np.asarray(part_mass, dtype=float).reshape(-1)
    pxz = np.asarray(part_xz, dtype=float).reshape(-1, 2)
    pin = np.asarray(part_inertia, dtype=float).reshape(-1)
    if not len(body) == len(pm) == len(pxz) == len(pin):
        raise ValueError("parts: body, part_mass, part_xz and part_inertia differ in length")
    if len(body) and (body.min() < 0 or body.max() >= len(mass)):
        raise ValueError(f"parts: body index outside [0, {len(mass) - 1}]")
    if np.any(pm < 0) or np.any(pin < 0) or not np.all(np.isfinite(pxz)):
        raise ValueError("parts: expected masses and inertias >= 0 and finite positions")
    for b in dict.fromkeys(body.tolist()):
        k = np.flatnonzero(body == b)
        m0, c0 = mass[b], com[b].copy()
        total = m0 + pm[k].sum()
        if not total > 0:
            continue
        c1 = c0 + (pm[k, None] * (pxz[k] - c0)).sum(axis=0) / total
        d0 = c0 - c1
        inertia[b] = (inertia[b] + m0 * float(d0 @ d0)
                      + float(np.sum(pin[k] + pm[k] * np.sum((pxz[k] - c1) ** 2, axis=1))))
        mass[b], com[b] = total, c1
    return mass, com, inertia


# --------------------------------------------------------------------------- the mass rule
@dataclass(frozen=True)
class PointMass:
    """A lump of one leg's WR on a human segment: ``segment`` (torso, thigh, shank),
    ``mass`` kg, ``xz`` (2,) m in the segment's frame (origin at its proximal joint,
    upright axes), ``inertia`` kg m^2 about its own CoM, ``source`` (what it is)."""

    segment: str
    mass: float
    xz: tuple[float, float]
    inertia: float
    source: str


def segment_loads(morphology, mass_at: str = "attachments") -> tuple[PointMass, ...]:
    """One leg's WR mass as lumps on the human segments (rule in the module docstring).

    ``morphology``: MODEL's :class:`~codesign.model.morphology.Morphology`. Raises
    ValueError for an unknown ``mass_at`` or a WR link that reaches no attachment joint.
    """

    if mass_at not in MASS_AT:
        raise ValueError(f"mass_at {mass_at!r}; expected one of {list(MASS_AT)}")
    topo, pos, human = morphology.topology, morphology.joint_positions, morphology.human

    def point(segment: str, joint_id: int | None) -> tuple[float, float]:
        if mass_at == "segment_com" or joint_id is None:
            c = getattr(human, segment).com_xz
        else:
            c = pos[joint_id] - morphology.link_origin(segment)
        return (float(c[0]), float(c[1]))

    def joint_mass(jid: int) -> float:    # its actuator or passive joint, and a cuff where the law has one
        return morphology.joint_mass(jid)

    attachments = {link: [j for j in topo.joints if j.kind == ATTACHMENT and link in j.links]
                   for link in topo.wr_links}
    neighbours = {link: [j.links[1] if j.links[0] == link else j.links[0]
                         for j in topo.joints if j.kind != ATTACHMENT and link in j.links]
                  for link in topo.wr_links}

    def ends(link: str):
        seen, layer = {link}, [link]
        while layer:
            found = [j for lk in layer for j in attachments[lk]]
            if found:
                return found
            layer = [n for lk in layer for n in neighbours[lk] if n not in seen]
            seen.update(layer)
        raise ValueError(f"topology {topo.id}: WR link {link} reaches no attachment joint")

    loads = []
    for link in topo.wr_links:
        for j in attachments[link]:     # rule 1: always owned by ``link`` (MODEL's rule)
            m = joint_mass(j.id)
            seg = human_link(j.links)
            cylinder = m - morphology.structure.cuff_mass     # the cuff: a point mass, no own inertia
            own = 0.5 * cylinder * JOINT_RADIUS ** 2 if mass_at == "attachments" else 0.0
            loads.append(PointMass(seg, m, point(seg, j.id), own,
                                   f"joint {j.id} ({'actuated' if j.id in morphology.actuators else 'passive'})"))
        rest = sum(morphology.structure.bar_mass_per_m * b.length for b in morphology.bars if b.link == link)
        rest += sum(joint_mass(j.id) for j in topo.joints
                    if j.kind != ATTACHMENT and morphology.joint_mass_owner(j.id) == link)
        link_ends = ends(link)
        for j in link_ends:             # rule 2: equal shares at the ends
            seg = human_link(j.links)
            loads.append(PointMass(seg, rest / len(link_ends), point(seg, j.id), 0.0,
                                   f"{link} bars and WR joints, share at joint {j.id}"))
    return tuple(loads)


def lumped_model(loads: Sequence[PointMass], model=None):
    """The human engine Model (default :func:`~codesign.model.human.build_human`) with one
    leg's ``loads`` added to both legs (the torso takes both legs' torso lumps)."""

    model = build_human() if model is None else model
    body, pm, pxz, pin = [], [], [], []
    for side in LEGS:
        for load in loads:
            body.append(model.body_id("torso" if load.segment == "torso" else f"{load.segment}_{side}"))
            pm.append(load.mass)
            pxz.append(load.xz)
            pin.append(load.inertia)
    mass, com, inertia = add_point_masses(model.mass, model.com_xz, model.inertia, body, pm,
                                          np.reshape(pxz, (-1, 2)), pin)
    return dataclasses.replace(model, mass=mass, com_xz=np.ascontiguousarray(com), inertia=inertia)


def load_metrics(loads: Sequence[PointMass], human=None) -> dict[str, float]:
    """``added_mass`` (kg, both legs), ``com_shift`` (m, upright whole-body CoM shift from
    the human's) and ``added_mass_<segment>`` (kg; thigh and shank per leg)."""

    human = human_geometry() if human is None else human
    m_h, c_h = human_com_upright(human)
    per = {s: 0.0 for s in SEGMENTS}
    shift_num = np.zeros(2)
    added = 0.0
    for load in loads:
        per[load.segment] += load.mass
        added += 2.0 * load.mass
        origin = np.array([0.0, human.joint_height(load.segment)])
        shift_num += 2.0 * load.mass * (origin + np.asarray(load.xz) - c_h)
    shift = shift_num / (m_h + added)
    return {"added_mass": added, "com_shift": float(math.hypot(shift[0], shift[1])),
            "added_mass_torso": 2.0 * per["torso"], "added_mass_thigh": per["thigh"],
            "added_mass_shank": per["shank"]}


