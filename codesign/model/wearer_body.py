"""The wearer's body as the walking rollout simulates it: carried loads and a mass scale.

Two evaluation settings change the skeleton the rollout walks, for every walking problem
(the human alone, an active wearer, a co-design) -- issues 45 (item 5) and 46 (item 4):

* ``evaluation.loads``: a list of point masses a person carries (Browning et al. 2007's
  leg and waist loads; a device's mass charged as a load), each
  ``{segment = "torso" | "thigh" | "shank" | "foot", mass_kg = m, position = s}``. A leg
  segment's load is on both legs (m on each). ``position`` s in [0, 1] is the fraction
  along the segment from its proximal joint to its distal end (:func:`segment_end`: torso
  hip -> shoulder, thigh hip -> knee, shank knee -> ankle, foot ankle -> metatarsal heads,
  the toe joint); absent: the segment's own centre of mass (every segment's CoM lies on
  that line). Each load joins its body by :func:`codesign.model.lumping.add_point_masses`:
  the body's mass + m, its CoM moved towards the load, its inertia about the new CoM by the
  parallel-axis theorem (a point mass has no inertia of its own). A waist belt is a torso
  load near the hip (position 0).
* ``evaluation.wearer_mass_scale``: a factor k > 0 on every segment's mass and inertia of
  the wearer (torso, thighs, shanks, feet, toes; not the device's bodies, not the loads).
  The CoMs, the lengths and the passive elements (toe spring and damper, knee ligament)
  stay as they are, so the mass matrix of the wearer alone is k times its own.

Applied to the built engine model (:func:`with_wearer_body`), scale first, loads second.
With no load and k = 1 the model is returned as it is (every result bit for bit).

Whose mass is "the person's" (documented in docs/walking.md): the scaled wearer's,
k x the subject's mass, is the person's body mass, the one per-kg metrics divide by
(``Setup.wearer_mass``). Loads are carried mass, like a device: they count in the weight the
ground sees (the engine model's total mass, which body-weight figures and the cost of
transport use) but not in the person's mass.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Sequence

import numpy as np

from codesign.errors import UserError, nearest, shown
from codesign.model.anthropometry import HumanGeometry
from codesign.model.human import LEGS
from codesign.model.lumping import add_point_masses

SEGMENTS = ("torso", "thigh", "shank", "foot")     # the segments a load may sit on
LOAD_KEYS = ("segment", "mass_kg", "position")
# the wearer's engine bodies (codesign.model.human.add_human), what the mass scale acts on
WEARER_BODIES = ("torso", *(f"{seg}_{side}" for side in LEGS for seg in ("thigh", "shank", "foot", "toe")))


@dataclass(frozen=True)
class Load:
    """A point mass carried on a segment: ``segment`` (of :data:`SEGMENTS`; a leg segment:
    on each leg), ``mass_kg`` (kg, >= 0, per leg for a leg segment), ``position`` (fraction
    in [0, 1] along the segment from its proximal joint; None: the segment's CoM)."""

    segment: str
    mass_kg: float
    position: float | None = None


def segment_end(human: HumanGeometry, segment: str) -> np.ndarray:
    """The distal end (position 1) of ``segment`` in its own frame (m; origin at its proximal
    joint, upright axes): torso (0, shoulder - hip), thigh (0, -thigh length), shank
    (0, -shank length), foot the toe joint (metatarsal heads)."""
    if segment == "torso":
        return np.array([0.0, human.torso.length])
    if segment in ("thigh", "shank"):
        return np.array([0.0, -getattr(human, segment).length])
    if segment == "foot":
        return np.array(human.toe_joint_xz, dtype=float)
    raise ValueError(f"segment {segment!r}; expected one of {', '.join(SEGMENTS)}")


def load_point(human: HumanGeometry, load: Load) -> np.ndarray:
    """Where ``load`` sits in its segment's frame (m): position x :func:`segment_end`, or
    the segment's CoM when it has no position."""
    if load.position is None:
        return np.array(getattr(human, load.segment).com_xz, dtype=float)
    return load.position * segment_end(human, load.segment)


def load_bodies(load: Load) -> tuple[str, ...]:
    """The engine bodies a load is on: the torso, or the segment on each leg."""
    return ("torso",) if load.segment == "torso" else tuple(f"{load.segment}_{side}" for side in LEGS)


def carried_mass(loads: Sequence[Load]) -> float:
    """All the loads' mass (kg): a leg segment's counts twice (one per leg)."""
    return float(sum(load.mass_kg * len(load_bodies(load)) for load in loads))


def with_wearer_body(model, human: HumanGeometry, loads: Sequence[Load] = (), mass_scale: float = 1.0):
    """``model`` (an engine Model holding the wearer's bodies, :data:`WEARER_BODIES`) with
    every wearer body's mass and inertia times ``mass_scale`` and then ``loads`` added
    (module docstring); ``human``: the geometry the model was built from (where a load's
    position falls). The same object when there is nothing to change."""
    if not loads and mass_scale == 1.0:
        return model
    mass, com, inertia = np.array(model.mass, dtype=float), np.array(model.com_xz, dtype=float), \
        np.array(model.inertia, dtype=float)
    if mass_scale != 1.0:
        wearer = [model.body_id(name) for name in WEARER_BODIES if name in model.body_names]
        mass[wearer] *= mass_scale
        inertia[wearer] *= mass_scale
    body, part_mass, part_xz = [], [], []
    for load in loads:
        point = load_point(human, load)
        for name in load_bodies(load):
            body.append(model.body_id(name))
            part_mass.append(load.mass_kg)
            part_xz.append(point)
    if body:
        mass, com, inertia = add_point_masses(mass, com, inertia, body, part_mass,
                                              np.reshape(part_xz, (-1, 2)), np.zeros(len(body)))
    return dataclasses.replace(model, mass=mass, com_xz=np.ascontiguousarray(com), inertia=inertia)


# --------------------------------------------------------------------------- the settings
def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def parse_loads(value: Any) -> tuple[Load, ...]:
    """``evaluation.loads`` (a list of tables) as :class:`Load` records. UserError, one line
    naming the entry: not a list of tables, an unknown key, an unknown segment, a mass that
    is not a finite number >= 0 kg, a position outside [0, 1]."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise UserError(f"evaluation.loads: got {shown(value)}; expected a list of tables "
                        "{segment = \"torso\" | \"thigh\" | \"shank\" | \"foot\", mass_kg = ..., position = ...}")
    loads = []
    for i, entry in enumerate(value):
        where = f"evaluation.loads[{i}]"
        if not isinstance(entry, dict):
            raise UserError(f"{where}: got {shown(entry)}; expected a table {{segment = ..., mass_kg = ..., "
                            "position = ...}")
        for key in entry:
            if key not in LOAD_KEYS:
                raise UserError(f"{where}.{key}: unknown key{nearest(key, LOAD_KEYS)}; expected one of "
                                f"{', '.join(LOAD_KEYS)}")
        for key in ("segment", "mass_kg"):
            if key not in entry:
                raise UserError(f"{where}.{key}: missing; expected "
                                f"{'one of ' + ', '.join(SEGMENTS) if key == 'segment' else 'a finite mass >= 0 kg'}")
        segment = entry["segment"]
        if segment not in SEGMENTS:
            raise UserError(f"{where}.segment: got {shown(segment)}; expected one of {', '.join(SEGMENTS)}")
        mass = entry["mass_kg"]
        if not (_number(mass) and mass >= 0):
            raise UserError(f"{where}.mass_kg: got {shown(mass)}; expected a finite mass >= 0 kg "
                            "(per leg on a leg segment)")
        position = entry.get("position")
        if position is not None and not (_number(position) and 0 <= position <= 1):
            raise UserError(f"{where}.position: got {shown(position)}; expected a fraction in [0, 1] along "
                            "the segment from its proximal joint (absent: the segment's centre of mass)")
        loads.append(Load(segment, float(mass), None if position is None else float(position)))
    return tuple(loads)


def parse_mass_scale(value: Any) -> float:
    """``evaluation.wearer_mass_scale`` (default 1) as a float; UserError, one line, when it
    is not a finite number > 0."""
    if value is None:
        return 1.0
    if not (_number(value) and value > 0):
        raise UserError(f"evaluation.wearer_mass_scale: got {shown(value)}; expected a finite factor > 0 "
                        "on every segment mass and inertia of the wearer (e.g. 0.9, 1.1)")
    return float(value)
