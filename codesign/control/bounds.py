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
  positive): hip [-0.8, 0.8], knee [-0.1, 1.5], ankle [-0.6, 0.6] rad, converted to engine
  angles by the model's one conversion (:data:`codesign.model.gait.SIGN`).
* Gait frequency, when optimised: [0.4, 1.2] Hz (4.2.3); fixed 0.9 Hz otherwise (4.1.2).
* Morphology bounds (Table 5.2) live with the morphology parameters they bound,
  :data:`codesign.model.morphology.BOUNDS`, and the longest-segment limit (0.7 m, 5.4.3)
  is :data:`codesign.model.morphology.MAX_SEGMENT_LENGTH`.
"""

from __future__ import annotations

import math

STIFFNESS = (0.0, 12000.0)          # N m / rad
DAMPING = (0.0, 60.0)               # N m s / rad
UNIT_INTERVAL = (0.0, 1.0)          # differential x positions, step transition times
WR_REFERENCE_ANGLE = (-math.pi, math.pi)   # rad
PASSIVE_REST_ANGLE = (-math.pi, math.pi)   # rad
GAIT_FREQUENCY = (0.4, 1.2)         # Hz
# torso feedback (not in the thesis): signed, as the WR joint's torque may turn the torso
# either way; 2000 N m/rad / 200 N m s/rad is twice SIMBICON's torso gains scaled to a
# 75-kg person (Yin et al. 2007: ~1000 / 100), and saturates a 120-N m actuator at 3.4 deg
TORSO_STIFFNESS = (-2000.0, 2000.0)  # N m / rad
TORSO_DAMPING = (-200.0, 200.0)      # N m s / rad
# A person's joint stiffness in walking (issue 31), the bound a human-like gait's search
# gives the chapter-4 law's K (a spec's [space.parameters."<joint>.K.v<i>"] bounds,
# studies/human-like-gait/human-like-physio.toml; the problem's own bounds stay STIFFNESS, so stored
# designs decode as before). Winter-scale: the ankle's plantarflexor moment peaks near
# 1.5 N m/kg in walking (Winter, The Biomechanics and Motor Control of Human Gait, 1991)
# while it dorsiflexes 14.6 deg in stance (Winter's angles, human/: -7.7 deg at 7 % to
# +6.9 deg at 37 % of the stride), a quasi-stiffness of 105 N m / 0.255 rad = 410 N m/rad
# for the 70-kg subject; the knee's
# and hip's are lower (their moments are about half, their excursions larger). Ankle
# stiffness measured by perturbations during stance rises to a few N m/(rad kg) (Rouse,
# Hargrove, Perreault, Kuiken, IEEE TNSRE 22(3), 2014: ~455 N m/rad at 70 kg, a figure
# recalled, not re-read here); the stance quasi-stiffness regressions of Shamaei, Sawicki
# and Dollar (PLoS ONE 8(3): e59935, 2013) are of the same order.
# 1000 N m/rad is twice the largest of these; the thesis's 12 000 is 24 times it, and
# human-thesis-walking.json's 7-10 kN m/rad hold a gait that a muscle could not.
PHYSIOLOGICAL_STIFFNESS = (0.0, 1000.0)   # N m / rad
HUMAN_REFERENCE_ANGLE_ANATOMICAL = {     # rad, flexion / dorsiflexion positive
    "hip": (-0.8, 0.8),
    "knee": (-0.1, 1.5),
    "ankle": (-0.6, 0.6),
}


def human_reference_angle(joint: str) -> tuple[float, float]:
    """Engine-convention (low, high) reference-angle bound of human joint ``joint``
    (``hip``, ``knee`` or ``ankle``)."""
    from codesign.model.gait import GAIT_JOINTS, SIGN

    low, high = HUMAN_REFERENCE_ANGLE_ANATOMICAL[joint]
    sign = float(SIGN[GAIT_JOINTS.index(joint)])
    return (min(sign * low, sign * high), max(sign * low, sign * high))
