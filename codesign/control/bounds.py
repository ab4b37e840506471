"""Every parameter bound of the co-design problem, in one place (thesis 4.1.2, Table 5.2).

Used by the evaluation (to decode and check a design) and by the optimizer (to build its
search space), so the two can never disagree. Each bound is ``(low, high)`` in SI units.

Readings of the extracted text (figures and some numbers are garbled):

* Stiffness: thesis 4.1.2 gives [0, 12000] N m/rad; Table 5.2 prints "(0, 120000)", read
  as the same 12000 with a doubled zero (12000 is already "a very stiff controller").
* Damping: [0, 60] N m s/rad (4.1.2 and Table 5.2 agree).
* Phase-like parameters (differential x positions of the reference points, step
  transitions): (0, 1) (Table 5.2).
* Reference angles of WR joints: Table 5.2 prints "(=7, @) rad", read as (-pi, pi).
* Reference angles of the human joints (4.1.2) are anatomical (flexion / dorsiflexion
  positive): hip [-0.8, 0.8], knee [-0.1, 1.5], ankle [-0.6, 0.6] rad. In the engine's
  counter-clockwise convention (x forward, z up, segment pointing down at zero), hip flexion
  and ankle dorsiflexion are counter-clockwise (+), knee flexion clockwise (-):
  :data:`ANATOMICAL_TO_ENGINE_SIGN`. (The model's own anatomical <-> engine conversion is
  the reference; this sign map states the same convention for bounds only.)
* Gait frequency, when optimised: [0.4, 1.2] Hz (4.2.3); fixed 0.9 Hz otherwise (4.1.2).
* Morphology (Table 5.2, whose rows the extraction shuffled; read together with the text of
  5.4.2): a joint attached to the human body is placed at a relative position (0, 1) along
  its segment; a WR joint not on the body at a Cartesian x in (-0.15, 0.15) m and z in
  (0.1, 1.3) m, in the upright posture, the same for both legs.
"""

from __future__ import annotations

import math

STIFFNESS = (0.0, 12000.0)          # N m / rad
DAMPING = (0.0, 60.0)               # N m s / rad
UNIT_INTERVAL = (0.0, 1.0)          # differential x positions, step transition times
WR_REFERENCE_ANGLE = (-math.pi, math.pi)   # rad
PASSIVE_REST_ANGLE = (-math.pi, math.pi)   # rad
GAIT_FREQUENCY = (0.4, 1.2)         # Hz
HUMAN_REFERENCE_ANGLE_ANATOMICAL = {     # rad, flexion / dorsiflexion positive
    "hip": (-0.8, 0.8),
    "knee": (-0.1, 1.5),
    "ankle": (-0.6, 0.6),
}
ANATOMICAL_TO_ENGINE_SIGN = {"hip": 1.0, "knee": -1.0, "ankle": 1.0}

# morphology (Table 5.2)
BODY_JOINT_RELATIVE_POSITION = (0.0, 1.0)   # fraction of the segment
WR_JOINT_X = (-0.15, 0.15)                  # m
WR_JOINT_Z = (0.1, 1.3)                     # m

# lexicographic thresholds of Table 5.3 (not bounds of parameters, but limits the
# objectives and the screening share)
MAX_SEGMENT_LENGTH = 0.7            # m


def human_reference_angle(joint: str) -> tuple[float, float]:
    """Engine-convention (low, high) reference-angle bound of human joint ``joint``
    (``hip``, ``knee`` or ``ankle``)."""
    low, high = HUMAN_REFERENCE_ANGLE_ANATOMICAL[joint]
    sign = ANATOMICAL_TO_ENGINE_SIGN[joint]
    return (min(sign * low, sign * high), max(sign * low, sign * high))
