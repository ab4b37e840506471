"""The same model in the peer libraries (Pinocchio, MuJoCo), for tests and benchmarks.

Planar sagittal models become 3-D models moving in the x-z plane. Our angles are
counter-clockwise seen with x right and z up, i.e. rotations about -y (y into the page),
so revolute joints get the axis (0, -1, 0): then q_peer = q_ours with no sign flip.
Prismatic joints slide along the parent frame's x or z axis, as ours. Each body's
rotational inertia (about the out-of-page axis) is put on the peer's y axis (x and z
get small positive values: they never act in planar motion).

The peers are imported lazily; they are dev dependencies, not runtime ones.
"""

from __future__ import annotations

import numpy as np

from codesign.dynamics.mjcf import MjcfOptions, depth_first_order, model_mjcf
from codesign.dynamics.model import PRISMATIC_X, PRISMATIC_Z, REVOLUTE, Model

_OFF_AXIS_INERTIA = 1e-3  # kg m^2 on the peer's x and z axes (irrelevant in the plane)

__all__ = ["depth_first_order", "to_mjcf", "to_pinocchio"]


def to_pinocchio(model: Model):
    """(pinocchio.Model, order) equivalent to ``model``: pinocchio joint k + 1 is our body
    ``order[k]`` (depth-first order), so q_pin = q[order] and M_pin = M[order][:, order].
    Gravity (0, 0, -g)."""
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.array([0.0, 0.0, -model.gravity]), np.zeros(3))
    order = depth_first_order(model)
    pin_id = {-1: 0}
    for i in order:
        jt = model.joint_type[i]
        if jt == REVOLUTE:
            joint = pin.JointModelRevoluteUnaligned(np.array([0.0, -1.0, 0.0]))
        elif jt == PRISMATIC_X:
            joint = pin.JointModelPX()
        elif jt == PRISMATIC_Z:
            joint = pin.JointModelPZ()
        else:  # pragma: no cover - builder validates
            raise ValueError(jt)
        placement = pin.SE3(np.eye(3), np.array([model.joint_xz[i, 0], 0.0, model.joint_xz[i, 1]]))
        jid = pm.addJoint(pin_id[int(model.parent[i])], joint, placement, model.body_names[i])
        pin_id[int(i)] = jid
        inertia = np.diag([_OFF_AXIS_INERTIA, model.inertia[i], _OFF_AXIS_INERTIA])
        lever = np.array([model.com_xz[i, 0], 0.0, model.com_xz[i, 1]])
        pm.appendBodyToJoint(jid, pin.Inertia(model.mass[i], lever, inertia), pin.SE3.Identity())
    return pm, order


def to_mjcf(model: Model, timestep: float, integrator: str = "Euler") -> str:
    """MJCF text of ``model`` (tree only: loop closures and contacts are not exported;
    contacts and constraints disabled, no visual geoms (the benchmarks' peer workload is
    the bodies alone); a joint's armature is MuJoCo's joint
    ``armature``, the same term of the mass matrix, so the physics match ours), written
    by :func:`codesign.dynamics.mjcf.model_mjcf` (body frames at the joints, MuJoCo's
    coordinates in :func:`depth_first_order`)."""
    if model.n_loops:
        raise ValueError("to_mjcf: loop closures are not exported")
    return model_mjcf(model, MjcfOptions(timestep=timestep, integrator=integrator, contact=None,
                                         constraints=False, visual=False))
