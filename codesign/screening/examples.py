"""Hand-made example designs (tests, benchmark, README figure).

``TWO_FOUR_BARS`` is the catalog's topology 1 (spelled out so the examples do not depend
on the enumeration order): four-bar torso-wr1-wr2-thigh around the hip and four-bar
thigh-wr3-wr4-shank around the knee, loop closures at the WR-WR joints 5 and 6.
"""

from __future__ import annotations

import numpy as np

from codesign.model.anthropometry import HumanGeometry
from codesign.model.morphology import human_link
from codesign.topology.catalog import Joint, Topology

TWO_FOUR_BARS = Topology(1, ("wr1", "wr2", "wr3", "wr4"), (
    Joint(1, ("torso", "wr1"), "attachment", False),
    Joint(2, ("thigh", "wr2"), "attachment", False),
    Joint(3, ("thigh", "wr3"), "attachment", False),
    Joint(4, ("shank", "wr4"), "attachment", False),
    Joint(5, ("wr1", "wr2"), "wearable", True),
    Joint(6, ("wr3", "wr4"), "wearable", True)), ((1, 3), (5, 6)))


def params_from_positions(topology: Topology, human: HumanGeometry, positions: dict[int, np.ndarray]) -> dict[str, float]:
    """Table 5.2 parameters that put every added joint at the given upright world position
    (attachments: x offset and relative position along their human segment)."""
    p = {}
    for j in topology.joints:
        x, z = positions[j.id]
        if j.kind == "attachment":
            z0, z1 = human.segment_span(human_link(j.links))
            p[f"j{j.id}_s"], p[f"j{j.id}_dx"] = float((z - z0) / (z1 - z0)), float(x)
        else:
            p[f"j{j.id}_x"], p[f"j{j.id}_z"] = float(x), float(z)
    return p


def parallelogram_positions(human: HumanGeometry) -> dict[int, np.ndarray]:
    """Joint positions of an anthropomorphic TWO_FOUR_BARS design: hip parallelogram
    H-T-W-A and knee parallelogram K-B-W2-C, so the WR links stay parallel to the human
    segments, joint 1 turns with the hip and joint 3 with the knee."""
    hip, knee = np.array([0.0, human.hip_height]), np.array([0.0, human.knee_height])
    T, A = hip + [-0.12, 0.05], hip + [0.0, -0.20]
    B, C = knee + [-0.10, 0.10], knee + [0.0, -0.15]
    return {1: T, 2: A, 5: T + A - hip, 3: B, 4: C, 6: B + C - knee}
