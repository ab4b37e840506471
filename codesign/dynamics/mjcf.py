"""An engine :class:`~codesign.dynamics.model.Model` as MuJoCo's MJCF text: the tree, its
loop closures, its contact points, passive elements, drivetrain armature and motors.

The planar model becomes a 3-D model moving in the x-z plane. Our angles are
counter-clockwise seen with x right and z up, i.e. rotations about -y (y into the page),
so a revolute joint gets the hinge axis (0, -1, 0) and q_mujoco = q_ours, no sign flip;
prismatic joints slide along the parent frame's x or z axis. Each body's rotational
inertia (about the out-of-page axis) is put on all three axes (MuJoCo checks the triangle
inequality; only the y value acts in planar motion). Body frames sit at the joints, as
ours. A massless, inertia-free body with exactly one child whose joint sits at its origin
(the floating base's ``torso_x`` and ``torso_z``) is merged into that child, its joint
first: MuJoCo refuses moving bodies without mass, and several joints of one body compose
in order, so the planar root is (slide x, slide z, hinge y) on one body.

Coordinates: MuJoCo numbers the joints depth first; :func:`mujoco_order` gives the
engine body of each MuJoCo coordinate (q_mujoco = q[order]); every joint is named after
its engine body.

What maps to what:

* loop closure (point a of body a meets point b of body b): a ``connect`` equality between
  two sites (three rows; the y row is identically satisfied in the plane); its relative
  angle theta_b - theta_a, a fixed tendon ``<loop name>`` (coefficients +1 / -1 on the
  revolute coordinates, :func:`~codesign.dynamics.model.absolute_angle_row`) carrying
  its spring, damping, armature (MuJoCo's tendon armature adds a k k^T to the mass
  matrix, as ``Model.armature`` does, but only where k's coordinates lie on one path
  from the root: MuJoCo's mass matrix keeps the tree's sparsity, so a loop joint's
  drivetrain armature across branches is refused, :func:`armature_split`) and motor;
* a tree joint's armature, spring (stiffness, springref) and damping: the joint's own;
* contact point: a sphere geom of radius ``r`` centred on the point, on a floor plane at
  z = -r, so a point touches the floor at z = 0 as in the engine; only these spheres
  collide, with the floor only, whose friction, solref and solimp are the spheres' (MuJoCo
  mixes the two geoms' values);
* the one-sided knee ligament (a cubic spring, no MJCF element): a joint ``range`` with a
  limit on the ligament's side, given by the caller (:class:`JointRange`);
* a motor on a tree or loop joint with its torque limit (``ctrlrange`` in N m; gear 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from codesign.dynamics.model import PRISMATIC_X, PRISMATIC_Z, REVOLUTE, Model, absolute_angle_row

MIN_MASS = 1e-12   # kg (kg m^2): a massless body that cannot be merged gets this much


@dataclass(frozen=True)
class JointRange:
    """A tree joint's range (rad, m): ``enforced`` makes it a MuJoCo limit (a soft
    constraint); otherwise it is written for the viewer and readers only."""

    body: str
    lower: float
    upper: float
    enforced: bool


@dataclass(frozen=True)
class Motor:
    """A motor on a tree joint (``loop`` False, ``index`` its coordinate) or on a loop
    joint's relative angle (``loop`` True, ``index`` the loop); ``torque_limit`` N m (inf:
    unbounded, a muscle)."""

    name: str
    loop: bool
    index: int
    torque_limit: float


@dataclass(frozen=True)
class Contact:
    """MuJoCo's contact between the points' spheres and the floor: ``friction`` (Coulomb,
    the tangential coefficient), ``radius`` (m), ``solref`` (time constant s, damping
    ratio), ``solimp`` (MuJoCo's impedance: dmin, dmax, width m, midpoint, power) and
    ``margin`` (m, on the spheres: MuJoCo keeps a contact in its constraint problem from
    that far apart, so that a resting point is not dropped and found again step after
    step -- with margin 0 (or 0.5 mm) a resting contact of a 2-step time constant
    chatters, 4 m g on one step in four and 0 on the others, its mean right; from 1 mm
    it carries m g steadily -- and holds it at that distance: the floor sits ``margin``
    lower too)."""

    friction: float = 1.0
    radius: float = 0.002
    solref: tuple[float, float] = (0.002, 1.0)
    solimp: tuple[float, ...] = (0.99, 0.999, 0.0005, 0.5, 2.0)
    margin: float = 0.001


@dataclass(frozen=True)
class MjcfOptions:
    """How the model is written. ``timestep`` s; ``integrator`` MuJoCo's name;
    ``contact`` None: contacts off (no floor, no spheres); ``constraints``: False turns
    MuJoCo's constraints off (``<flag constraint="disable">``, loop equalities and limits
    included); ``equality_solref``/``equality_solimp``: the loop closures' softness;
    ``keyframe``: float64[2n] (q, qd, engine order) written as key ``initial``;
    ``visual``: capsules for the viewer (:func:`_visual_geoms`; no mass, no contact)."""

    timestep: float = 5e-4
    integrator: str = "implicitfast"
    contact: Contact | None = field(default_factory=Contact)
    constraints: bool = True
    equality_solref: tuple[float, float] = (0.002, 1.0)
    equality_solimp: tuple[float, ...] = (0.99, 0.999, 0.0005, 0.5, 2.0)
    ranges: tuple[JointRange, ...] = ()
    motors: tuple[Motor, ...] = ()
    keyframe: np.ndarray | None = None
    visual: bool = True


VISUAL_RADIUS = (0.025, 0.012)   # m: a human segment's capsule, a device link's (body named wr*)


def _visual_geoms(model: Model, i: int, children: dict[int, list[int]]) -> list[str]:
    """Capsules from body i's joint to each point it carries (its children's joints, its
    loop points, its contact points) and to twice its centre of mass where that reaches
    further (the torso's trunk, a free link's end): drawn only
    (group 1, contype 0: they neither collide nor weigh, the inertia being explicit)."""
    points = [model.joint_xz[c] for c in children.get(i, [])]
    points += [model.loop_xz_a[k] for k in np.flatnonzero(model.loop_body_a == i)]
    points += [model.loop_xz_b[k] for k in np.flatnonzero(model.loop_body_b == i)]
    points += [model.contact_xz[k] for k in np.flatnonzero(model.contact_body == i)]
    device = model.body_names[i].startswith("wr")
    radius = VISUAL_RADIUS[1 if device else 0]
    rgba = "0.2 0.4 0.9 1" if device else "0.85 0.7 0.55 1"
    common = f'contype="0" conaffinity="0" group="1" rgba="{rgba}"'
    out = [f'<geom type="capsule" size="{_f(radius)}" fromto="0 0 0 {_f(p[0])} 0 {_f(p[1])}" {common}/>'
           for p in points if np.hypot(p[0], p[1]) > 1e-6]
    tip = 2.0 * model.com_xz[i]           # a segment's far end, where no carried point is beyond its CoM
    if model.mass[i] > 0.0 and np.hypot(*tip) > max((np.hypot(*p) for p in points), default=0.0):
        out.append(f'<geom type="capsule" size="{_f(radius)}" fromto="0 0 0 {_f(tip[0])} 0 {_f(tip[1])}" '
                   f'{common}/>')
    return out


def _children(model: Model) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for i in range(model.n):
        children.setdefault(int(model.parent[i]), []).append(i)
    return children


def depth_first_order(model: Model) -> np.ndarray:
    """int64[n]: body indices in depth-first order (MuJoCo's and Pinocchio's coordinate
    order: every subtree contiguous)."""
    children = _children(model)
    order: list[int] = []
    stack = list(reversed(children.get(-1, [])))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children.get(i, [])))
    return np.array(order, dtype=np.int64)


def mujoco_order(model: Model) -> np.ndarray:
    """int64[n]: the engine coordinate of each MuJoCo coordinate (q_mujoco = q[order],
    q[order] = q_mujoco); merged bodies keep their joints' order, so it is the depth-first
    order."""
    return depth_first_order(model)


def _mergeable(model: Model, i: int, children: dict[int, list[int]], carriers: set[int]) -> bool:
    """Body i can be folded into its only child: no mass, no inertia, nothing attached,
    the child's joint at i's origin."""
    kids = children.get(i, [])
    return (model.mass[i] == 0.0 and model.inertia[i] == 0.0 and len(kids) == 1
            and i not in carriers and not np.any(model.joint_xz[kids[0]]))


def _f(x: float) -> str:
    return repr(float(x))


def _vec(values) -> str:
    return " ".join(_f(v) for v in values)


def loop_row(model: Model, loop: int) -> np.ndarray:
    """float64[n]: the coefficients k of loop ``loop``'s relative angle theta_b - theta_a =
    k . q (its tendon's)."""
    return (absolute_angle_row(model.parent, model.joint_type, int(model.loop_body_b[loop]))
            - absolute_angle_row(model.parent, model.joint_type, int(model.loop_body_a[loop])))


def model_mjcf(model: Model, options: MjcfOptions = MjcfOptions(), name: str = "codesign") -> str:
    """MJCF text of ``model`` (module docstring) under ``options``."""
    children = _children(model)
    joint_armature, loop_armature = armature_split(model)
    ranges = {r.body: r for r in options.ranges}
    contact = options.contact
    carriers = set(int(b) for b in model.contact_body) | set(
        int(b) for b in np.concatenate([model.loop_body_a, model.loop_body_b]) if b >= 0)
    loop_sites: dict[int, list[str]] = {}
    for k, lname in enumerate(model.loop_names):
        for end, body, xz in (("a", model.loop_body_a[k], model.loop_xz_a[k]),
                              ("b", model.loop_body_b[k], model.loop_xz_b[k])):
            loop_sites.setdefault(int(body), []).append(
                f'<site name="{lname}_{end}" pos="{_f(xz[0])} 0 {_f(xz[1])}" size="0.01"/>')

    def joint_xml(i: int) -> str:
        jt = int(model.joint_type[i])
        kind, axis = {REVOLUTE: ("hinge", "0 -1 0"), PRISMATIC_X: ("slide", "1 0 0"),
                      PRISMATIC_Z: ("slide", "0 0 1")}[jt]
        attrs = [f'name="{model.body_names[i]}"', f'type="{kind}"', f'axis="{axis}"',
                 f'armature="{_f(joint_armature[i])}"']
        if model.spring_k[i]:
            attrs += [f'stiffness="{_f(model.spring_k[i])}"', f'springref="{_f(model.spring_rest[i])}"']
        if model.damping[i]:
            attrs.append(f'damping="{_f(model.damping[i])}"')
        r = ranges.get(model.body_names[i])
        if r is not None:
            attrs += [f'range="{_f(r.lower)} {_f(r.upper)}"', f'limited="{"true" if r.enforced else "false"}"']
        return f'<joint {" ".join(attrs)}/>'

    def body_xml(i: int, indent: str, joints: list[str], pos) -> str:
        if _mergeable(model, i, children, carriers):
            c = children[i][0]
            return body_xml(c, indent, joints + [joint_xml(i)], pos)
        name = model.body_names[i]
        mass = max(float(model.mass[i]), MIN_MASS)
        iy = max(float(model.inertia[i]), MIN_MASS)
        inner = indent + "  "
        lines = [f'{indent}<body name="{name}" pos="{_f(pos[0])} 0 {_f(pos[1])}">']
        lines += [inner + j for j in joints + [joint_xml(i)]]
        lines.append(f'{inner}<inertial pos="{_f(model.com_xz[i, 0])} 0 {_f(model.com_xz[i, 1])}" '
                     f'mass="{_f(mass)}" diaginertia="{_f(iy)} {_f(iy)} {_f(iy)}"/>')
        if contact is not None:
            for k in np.flatnonzero(model.contact_body == i):
                xz = model.contact_xz[k]
                lines.append(f'{inner}<geom name="{model.contact_names[k]}" class="contact_point" '
                             f'pos="{_f(xz[0])} 0 {_f(xz[1])}"/>')
        lines += [inner + s for s in loop_sites.get(i, [])]
        if options.visual:
            lines += [inner + g for g in _visual_geoms(model, i, children)]
        lines += [body_xml(c, inner, [], model.joint_xz[c]) for c in children.get(i, [])]
        lines.append(f"{indent}</body>")
        return "\n".join(lines)

    world = [body_xml(c, "    ", [], model.joint_xz[c]) for c in children.get(-1, [])]
    world = ["    " + s for s in loop_sites.get(-1, [])] + world
    if contact is not None:
        world.insert(0, f'    <geom name="floor" type="plane" size="0 0 1" pos="0 0 {_f(-contact.radius - contact.margin)}" '
                        f'contype="2" conaffinity="1" friction="{_f(contact.friction)} 0 0" '
                        f'solref="{_vec(contact.solref)}" solimp="{_vec(contact.solimp)}" '
                        f'rgba="0.8 0.8 0.8 1"/>')
    flags = [] if contact is not None else ['contact="disable"']
    if not options.constraints:
        flags.append('constraint="disable"')
    parts = [f'<mujoco model="{name}">',
             '  <compiler angle="radian" inertiafromgeom="false" autolimits="false"/>',
             f'  <option timestep="{_f(options.timestep)}" integrator="{options.integrator}" '
             f'cone="elliptic" gravity="0 0 {_f(-model.gravity)}">'
             + (f'\n    <flag {" ".join(flags)}/>\n  </option>' if flags else "</option>")]
    if contact is not None:
        parts += ['  <default>',
                  f'    <default class="contact_point"><geom type="sphere" size="{_f(contact.radius)}" '
                  f'contype="1" conaffinity="2" condim="3" friction="{_f(contact.friction)} 0 0" margin="{_f(contact.margin)}" '
                  f'solref="{_vec(contact.solref)}" solimp="{_vec(contact.solimp)}" rgba="0.9 0.2 0.2 1"/>'
                  '</default>',
                  '  </default>']
    if options.visual:
        parts.append('  <visual><headlight ambient="0.5 0.5 0.5" diffuse="0.6 0.6 0.6"/></visual>')
    parts += ["  <worldbody>", *world, "  </worldbody>"]
    parts += _loops_xml(model, options, loop_armature)
    parts += _motors_xml(model, options.motors)
    if options.keyframe is not None:
        order = mujoco_order(model)
        x = np.asarray(options.keyframe, dtype=np.float64)
        parts += ["  <keyframe>",
                  f'    <key name="initial" qpos="{_vec(x[:model.n][order])}" qvel="{_vec(x[model.n:][order])}"/>',
                  "  </keyframe>"]
    parts.append("</mujoco>")
    return "\n".join(parts) + "\n"


def _loops_xml(model: Model, options: MjcfOptions, loop_armature: np.ndarray) -> list[str]:
    """The loop closures' connect equalities and their relative angles' tendons
    (``loop_armature`` float64[m], kg m^2)."""
    if not model.n_loops:
        return []
    lines = ["  <equality>"]
    for lname in model.loop_names:
        lines.append(f'    <connect name="{lname}" site1="{lname}_a" site2="{lname}_b" '
                     f'solref="{_vec(options.equality_solref)}" solimp="{_vec(options.equality_solimp)}"/>')
    lines += ["  </equality>", "  <tendon>"]
    for k, lname in enumerate(model.loop_names):
        row = loop_row(model, k)
        k_vec = row[np.flatnonzero(row)]
        attrs = [f'name="{lname}"']
        arm = loop_armature[k]
        if arm:
            attrs.append(f'armature="{_f(arm)}"')
        if model.loop_spring_k[k]:
            attrs += [f'stiffness="{_f(model.loop_spring_k[k])}"',
                      f'springlength="{_f(model.loop_spring_rest[k])}"']
        if model.loop_damping[k]:
            attrs.append(f'damping="{_f(model.loop_damping[k])}"')
        lines.append(f'    <fixed {" ".join(attrs)}>')
        for j, coef in zip(np.flatnonzero(row), k_vec):
            lines.append(f'      <joint joint="{model.body_names[j]}" coef="{_f(coef)}"/>')
        lines.append("    </fixed>")
    lines.append("  </tendon>")
    return lines


def armature_split(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """(tree float64[n], loops float64[m]), kg m^2: ``Model.armature`` written as MuJoCo
    can hold it, diag(tree) + sum_l loops[l] k_l k_l^T (k_l: :func:`loop_row`; joint and
    tendon armature). The loops' values are fitted on the off-diagonal entries (a loop
    whose row has one nonzero entry adds to a diagonal only: its share stays with that
    joint, the same matrix); ValueError when the matrix is not of that form."""
    rows = [loop_row(model, k) for k in range(model.n_loops)]
    off = ~np.eye(model.n, dtype=bool)
    loops = np.zeros(model.n_loops)
    if rows and np.any(model.armature[off]):
        basis = np.array([np.outer(r, r)[off] for r in rows]).T            # [n(n-1), m]
        loops = np.linalg.lstsq(basis, model.armature[off], rcond=None)[0]
    for k, (a, r) in enumerate(zip(loops, rows)):
        support = np.flatnonzero(r)
        if abs(a) > 1e-15 and not _on_one_path(model, support):
            raise ValueError(f"armature: loop {model.loop_names[k]}'s reflected inertia couples "
                             "coordinates of different branches, which MuJoCo's tree-sparse mass "
                             "matrix cannot hold; expected loop joints without drivetrain armature")
    shared = sum((a * np.outer(r, r) for a, r in zip(loops, rows)), np.zeros((model.n, model.n)))
    tree = np.diag(model.armature - shared).copy()
    rebuilt = np.diag(tree) + shared
    if not np.allclose(rebuilt, model.armature, rtol=1e-12, atol=1e-15) or np.any(tree < -1e-15):
        raise ValueError("armature: not a diagonal plus the loops' k k^T terms")
    return np.maximum(tree, 0.0), loops


def _on_one_path(model: Model, bodies: np.ndarray) -> bool:
    """Whether ``bodies`` all lie on one path from the root (each pair ancestor-related)."""
    def ancestors(i: int) -> set[int]:
        out = set()
        while i >= 0:
            out.add(i)
            i = int(model.parent[i])
        return out
    deepest = max(bodies, key=lambda b: len(ancestors(int(b))), default=-1)
    return set(int(b) for b in bodies) <= ancestors(int(deepest))


def _motors_xml(model: Model, motors: tuple[Motor, ...]) -> list[str]:
    if not motors:
        return []
    lines = ["  <actuator>"]
    for mo in motors:
        target = (f'tendon="{model.loop_names[mo.index]}"' if mo.loop
                  else f'joint="{model.body_names[mo.index]}"')
        limit = (f' ctrllimited="true" ctrlrange="{_f(-mo.torque_limit)} {_f(mo.torque_limit)}"'
                 if np.isfinite(mo.torque_limit) else ' ctrllimited="false"')
        lines.append(f'    <motor name="{mo.name}" {target} gear="1"{limit}/>')
    lines.append("  </actuator>")
    return lines
