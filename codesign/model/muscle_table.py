"""The seven muscle-tendon units of one leg of Geyer & Herr 2010, every parameter by name
with its source, and the typed arrays the compiled kernels read (:class:`MuscleTable`).

Sources (docs/muscles.md, "Parameters"):

* ``GH2010`` -- H. Geyer, H. Herr, IEEE TNSRE 18(3):263-273, 2010, Appendix: the
  muscle-specific parameters (F_max, v_max, l_opt, l_slack) and the muscle-skeleton
  attachment parameters (r_0, phi_max, phi_ref, rho). The tables could not be read from the
  paper's text in this session; the numbers were carried from H. Geyer's own parameter file
  as republished with the paper's model in github.com/nitishthatte/Neuromuscular-
  Transfemoral-Prosthesis-Model, ``BodyMechParams.m`` (commit 6d2673d), whose angles are
  the paper's shifted to zero at the neutral pose (ankle: paper - 90 deg; knee: 180 deg -
  paper; hip: paper - 180 deg); converted back here to the paper's angles. They agree with
  the values SCONE's GH2010 tutorial and Song & Geyer 2015 build on.
* ``Uchida2016`` -- slow-twitch fibre fractions (used by the metabolic model, not the
  mechanics): T.K. Uchida et al., "Stretching your energetic budget", PLoS ONE
  11(3):e0150378, 2016, from Johnson et al. 1973 (J Neurol Sci 18:111-129), as tabulated in
  github.com/antoinefalisse/3dpredictsim ``MetabolicEnergy/getSlowTwitchRatios.m`` (commit
  84eb62f). A lumped muscle takes the plain mean of its members there (listed per muscle).

The direction d of each attachment is the paper's geometry read off Fig. 1 (not a number of
its tables): +1 where the MTU lengthens as the paper's angle grows (ankle plantarflexion,
knee and hip extension).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from codesign.errors import UserError
from codesign.model.muscles import ANKLE, CONSTANT, COSINE, HIP, KNEE, NO_JOINT

GH2010 = "Geyer & Herr 2010, Appendix (parameter tables), via Geyer's BodyMechParams.m"
UCHIDA2016 = "Uchida et al. 2016 (Johnson et al. 1973), via 3dpredictsim getSlowTwitchRatios.m"
MAX_JOINTS = 2


class Attachment(NamedTuple):
    """How an MTU spans one joint (muscles.py "Geometry"). Angles in rad, the paper's."""
    joint: int          # ANKLE, KNEE or HIP
    r0: float           # m: maximum (cosine) or constant (hip) moment arm
    phi_max: float      # rad: angle of the largest moment arm (nan at the hip)
    phi_ref: float      # rad: angle at which l_mtu = l_opt + l_slack
    rho: float          # length-change factor (pennation, path compliance)
    direction: float    # +1: the MTU lengthens as the angle grows


class MuscleSpec(NamedTuple):
    """One MTU: the paper's parameters, the slow-twitch fraction, their sources."""
    name: str
    f_max: float        # N, maximum isometric force
    v_max: float        # l_opt/s, maximum contraction velocity
    l_opt: float        # m, CE optimum length
    l_slack: float      # m, tendon slack length
    attachments: tuple  # Attachment, 1 or 2
    slow_twitch: float  # fraction of slow-twitch fibres in [0, 1]
    source: str         # mechanics
    slow_twitch_source: str


def _deg(x: float) -> float:
    return math.radians(x)


def _cos(joint: int, r0: float, phi_max: float, phi_ref: float, rho: float, d: float) -> Attachment:
    return Attachment(joint, r0, _deg(phi_max), _deg(phi_ref), rho, d)


def _hip(r0: float, phi_ref: float, rho: float, d: float) -> Attachment:
    return Attachment(HIP, r0, math.nan, _deg(phi_ref), rho, d)


# F_max N, v_max l_opt/s, l_opt m, l_slack m (GH2010); angles in the paper's degrees.
MUSCLES = (
    MuscleSpec("SOL", 4000.0, 6.0, 0.04, 0.26, (_cos(ANKLE, 0.05, 110.0, 80.0, 0.5, -1.0),),
               0.803, GH2010, UCHIDA2016 + ": soleus"),
    MuscleSpec("TA", 800.0, 12.0, 0.06, 0.24, (_cos(ANKLE, 0.04, 80.0, 110.0, 0.7, +1.0),),
               0.70, GH2010, UCHIDA2016 + ": tibialis anterior"),
    MuscleSpec("GAS", 1500.0, 12.0, 0.05, 0.40, (_cos(ANKLE, 0.05, 110.0, 80.0, 0.7, -1.0),
                                                 _cos(KNEE, 0.05, 140.0, 165.0, 0.7, +1.0)),
               (0.566 + 0.507) / 2, GH2010, UCHIDA2016 + ": mean of medial 0.566, lateral 0.507"),
    MuscleSpec("VAS", 6000.0, 12.0, 0.08, 0.23, (_cos(KNEE, 0.06, 165.0, 125.0, 0.7, -1.0),),
               (0.503 + 0.543 + 0.455) / 3, GH2010,
               UCHIDA2016 + ": mean of vastus medialis 0.503, intermedius 0.543, lateralis 0.455"),
    MuscleSpec("HAM", 3000.0, 12.0, 0.10, 0.31, (_cos(KNEE, 0.05, 180.0, 180.0, 0.7, +1.0),
                                                 _hip(0.08, 155.0, 0.7, -1.0)),
               (0.4925 + 0.425 + 0.5425) / 3, GH2010,
               UCHIDA2016 + ": mean of semimembranosus 0.4925, semitendinosus 0.425, biceps long 0.5425"),
    MuscleSpec("GLU", 1500.0, 12.0, 0.11, 0.13, (_hip(0.10, 150.0, 0.5, -1.0),),
               0.55, GH2010, UCHIDA2016 + ": gluteus maximus"),
    MuscleSpec("HFL", 2000.0, 12.0, 0.11, 0.10, (_hip(0.10, 180.0, 0.5, +1.0),),
               0.50, GH2010, UCHIDA2016 + ": iliacus 0.50, psoas 0.50"),
)
NAMES = tuple(m.name for m in MUSCLES)


class MuscleTable(NamedTuple):
    """The kernels' view of a list of MuscleSpec (one row per muscle, one column per
    attachment slot; unused slots have joint NO_JOINT). Units as MuscleSpec."""
    f_max: np.ndarray       # (m,)
    v_max: np.ndarray       # (m,)
    l_opt: np.ndarray       # (m,)
    l_slack: np.ndarray     # (m,)
    slow_twitch: np.ndarray  # (m,)
    joint: np.ndarray       # (m, 2) int64
    kind: np.ndarray        # (m, 2) int64: COSINE or CONSTANT
    r0: np.ndarray          # (m, 2)
    phi_max: np.ndarray     # (m, 2)
    phi_ref: np.ndarray     # (m, 2)
    rho: np.ndarray         # (m, 2)
    direction: np.ndarray   # (m, 2)


def check_muscle(spec: MuscleSpec) -> None:
    """UserError (one line) naming the first parameter of ``spec`` outside its physical
    range: forces, velocities, lengths and arms > 0, rho in (0, 1], slow_twitch in [0, 1],
    1 or 2 attachments on distinct joints, direction +-1, finite angles."""
    def bad(field: str, value: object, expected: str) -> None:
        raise UserError(f"muscle {spec.name}: {field} = {value} is outside its range, expected {expected}")

    for field in ("f_max", "v_max", "l_opt", "l_slack"):
        value = getattr(spec, field)
        if not (math.isfinite(value) and value > 0.0):
            bad(field, value, "a finite number > 0")
    if not 0.0 <= spec.slow_twitch <= 1.0:
        bad("slow_twitch", spec.slow_twitch, "a fraction in [0, 1]")
    if not 1 <= len(spec.attachments) <= MAX_JOINTS:
        bad("attachments", len(spec.attachments), f"1 to {MAX_JOINTS}")
    if len({a.joint for a in spec.attachments}) != len(spec.attachments):
        bad("attachments", [a.joint for a in spec.attachments], "distinct joints")
    for a in spec.attachments:
        if a.joint not in (ANKLE, KNEE, HIP):
            bad("joint", a.joint, "ankle (0), knee (1) or hip (2)")
        if not (math.isfinite(a.r0) and a.r0 > 0.0):
            bad("r0", a.r0, "a finite number > 0 (m)")
        if not (math.isfinite(a.rho) and 0.0 < a.rho <= 1.0):
            bad("rho", a.rho, "a factor in (0, 1]")
        if a.direction not in (-1.0, 1.0):
            bad("direction", a.direction, "+1 or -1")
        if not math.isfinite(a.phi_ref) or (a.joint != HIP and not math.isfinite(a.phi_max)):
            bad("phi_ref/phi_max", (a.phi_ref, a.phi_max), "finite angles (rad)")


def muscle_table(specs: tuple = MUSCLES) -> MuscleTable:
    """The arrays of ``specs`` (each checked by :func:`check_muscle`)."""
    for spec in specs:
        check_muscle(spec)
    m = len(specs)
    joint = np.full((m, MAX_JOINTS), NO_JOINT, dtype=np.int64)
    kind = np.full((m, MAX_JOINTS), CONSTANT, dtype=np.int64)
    slots = {name: np.zeros((m, MAX_JOINTS)) for name in ("r0", "phi_max", "phi_ref", "rho", "direction")}
    for i, spec in enumerate(specs):
        for j, a in enumerate(spec.attachments):
            joint[i, j] = a.joint
            kind[i, j] = CONSTANT if a.joint == HIP else COSINE
            slots["r0"][i, j] = a.r0
            slots["phi_max"][i, j] = 0.0 if a.joint == HIP else a.phi_max
            slots["phi_ref"][i, j] = a.phi_ref
            slots["rho"][i, j] = a.rho
            slots["direction"][i, j] = a.direction
    column = lambda field: np.array([getattr(s, field) for s in specs], dtype=np.float64)  # noqa: E731
    return MuscleTable(f_max=column("f_max"), v_max=column("v_max"), l_opt=column("l_opt"),
                       l_slack=column("l_slack"), slow_twitch=column("slow_twitch"), joint=joint,
                       kind=kind, **slots)
