"""The planar 11-DOF human (thesis 4.1.1) as engine bodies.

Coordinates (engine convention, see ``codesign.model.gait``): floating base ``torso_x``,
``torso_z`` (world position of the hip point, m) and ``torso`` (pitch, rad; the torso is
the head-arms-trunk), then per leg ``thigh_<s>`` (hip), ``shank_<s>`` (knee), ``foot_<s>``
(ankle), ``toe_<s>`` (toe), s = r, l. All angles are 0 standing upright, sole flat.

Passive elements: toe spring 122 N m/rad, critically damped (b = 2 sqrt(k I_toe), I_toe
about the toe joint); knee ligament (engine's one-sided power-law spring, thesis 4.1.1):
engaged when the knee hyper-extends past 2 deg, i.e. engine knee angle q > +2 deg.
Contacts per foot: ``heel_<s>`` and ``ball_<s>`` on the foot (rear end of the foot, and
the metatarsal heads where the foot pivots while the toe bends), ``toe_tip_<s>`` on the toe.
"""

from __future__ import annotations

import numpy as np

from codesign.dynamics.model import Model, ModelBuilder
from codesign.model.anthropometry import HumanGeometry, human_geometry

LEGS = ("r", "l")
GRAVITY = 9.81  # m/s^2


def add_human(builder: ModelBuilder, human: HumanGeometry, *, legs: tuple[str, ...] = LEGS, floating_base: bool = True,
              feet: bool = True) -> None:
    """Add the human's bodies (and contacts, with ``feet``) to ``builder``.

    floating_base=False fixes the torso to the world by one revolute joint at the hip point
    (used by screening, which holds that coordinate at 0).
    """
    H = human
    t = H.torso
    if floating_base:
        builder.add_floating_base("torso", t.mass, t.com_xz, t.inertia)
    else:
        builder.add_body("torso", None, "revolute", (0.0, H.hip_height), t.mass, t.com_xz, t.inertia)
    knee_limit = -H.knee_ligament_limit_flexion_rad  # engine knee = -flexion
    for s in legs:
        builder.add_body(f"thigh_{s}", "torso", "revolute", (0.0, 0.0), H.thigh.mass, H.thigh.com_xz, H.thigh.inertia)
        builder.add_body(f"shank_{s}", f"thigh_{s}", "revolute", (0.0, -H.thigh.length), H.shank.mass, H.shank.com_xz,
                         H.shank.inertia, ligament_k=H.knee_ligament_k1, ligament_limit=knee_limit,
                         ligament_damping=H.knee_ligament_k2, ligament_side=1.0)
        if not feet:
            continue
        builder.add_body(f"foot_{s}", f"shank_{s}", "revolute", (0.0, -H.shank.length), H.foot.mass, H.foot.com_xz, H.foot.inertia)
        toe_inertia_at_joint = H.toe.inertia + H.toe.mass * float(H.toe.com_xz @ H.toe.com_xz)
        builder.add_body(f"toe_{s}", f"foot_{s}", "revolute", H.toe_joint_xz, H.toe.mass, H.toe.com_xz, H.toe.inertia,
                         spring_k=H.toe_stiffness, damping=2.0 * np.sqrt(H.toe_stiffness * toe_inertia_at_joint))
        builder.add_contact(f"heel_{s}", f"foot_{s}", H.heel_xz)
        builder.add_contact(f"ball_{s}", f"foot_{s}", H.toe_joint_xz)
        builder.add_contact(f"toe_tip_{s}", f"toe_{s}", H.toe_tip_xz)


def build_human(height_m: float | None = None, mass_kg: float | None = None) -> Model:
    """The unaugmented human (11 coordinates) as an engine Model; defaults 1.80 m, 70 kg."""
    builder = ModelBuilder(gravity=GRAVITY)
    add_human(builder, human_geometry(height_m, mass_kg))
    return builder.build()


def upright_configuration(model: Model, human: HumanGeometry) -> np.ndarray:
    """q (n,) standing upright with the soles on the ground (z = 0): base at hip height."""
    q = np.zeros(model.n)
    q[model.body_id("torso_z")] = human.hip_height
    return q
