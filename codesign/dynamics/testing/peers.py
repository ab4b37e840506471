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

from codesign.dynamics.model import PRISMATIC_X, PRISMATIC_Z, REVOLUTE, Model

_OFF_AXIS_INERTIA = 1e-3  # kg m^2 on the peer's x and z axes (irrelevant in the plane)


def depth_first_order(model: Model) -> np.ndarray:
    """Body indices in depth-first order (Pinocchio needs every subtree contiguous)."""
    children: dict[int, list[int]] = {}
    for i in range(model.n):
        children.setdefault(int(model.parent[i]), []).append(i)
    order: list[int] = []
    stack = list(reversed(children.get(-1, [])))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children.get(i, [])))
    return np.array(order, dtype=np.int64)


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
    contacts disabled, no damping; a joint's armature is MuJoCo's joint ``armature``,
    the same term of the mass matrix, so the physics match ours). Body frames at
    the joints, as ours; the rotational inertia is put on all three axes (MuJoCo checks
    the triangle inequality; only the y value acts in planar motion)."""
    if model.n_loops:
        raise ValueError("to_mjcf: loop closures are not exported")
    children: dict[int, list[int]] = {}
    for i in range(model.n):
        children.setdefault(int(model.parent[i]), []).append(i)

    def body_xml(i: int, indent: str) -> str:
        jt = model.joint_type[i]
        axis = {REVOLUTE: "0 -1 0", PRISMATIC_X: "1 0 0", PRISMATIC_Z: "0 0 1"}[int(jt)]
        kind = "hinge" if jt == REVOLUTE else "slide"
        x, z = (float(v) for v in model.joint_xz[i])
        cx, cz = (float(v) for v in model.com_xz[i])
        mass = max(float(model.mass[i]), 1e-12)
        iy = max(float(model.inertia[i]), 1e-12)
        lines = [
            f'{indent}<body name="{model.body_names[i]}" pos="{x!r} 0 {z!r}">',
            f'{indent}  <joint name="{model.body_names[i]}" type="{kind}" axis="{axis}" '
            f'armature="{float(model.armature[i, i])!r}"/>',
            f'{indent}  <inertial pos="{cx!r} 0 {cz!r}" mass="{mass!r}" '
            f'diaginertia="{iy!r} {iy!r} {iy!r}"/>',
        ]
        lines += [body_xml(c, indent + "  ") for c in children.get(i, [])]
        lines.append(f"{indent}</body>")
        return "\n".join(lines)

    bodies = "\n".join(body_xml(c, "    ") for c in children.get(-1, []))
    return f"""<mujoco model="codesign">
  <compiler angle="radian" inertiafromgeom="false"/>
  <option timestep="{timestep!r}" integrator="{integrator}" gravity="0 0 {-float(model.gravity)!r}">
    <flag contact="disable" constraint="disable"/>
  </option>
  <worldbody>
{bodies}
  </worldbody>
</mujoco>
"""
