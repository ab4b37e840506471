"""Planar multibody model (fixed numbers) and its workspace (scratch arrays).

Conventions (the whole engine follows them):

* Sagittal plane, x forward (to the right on a figure), z up. Gravity ``model.gravity``
  (a positive number, m/s^2) acts along -z.
* Every revolute coordinate is the counter-clockwise angle seen with x to the right and z
  up, i.e. a rotation about the axis pointing OUT of the page. In a right-handed
  x-y-z frame whose y axis points INTO the page (Pinocchio's and MuJoCo's usual sagittal
  set-up, joint axis ``+y``), our angle is a rotation about ``-y``: q_ours = -q_pinocchio.
* One degree of freedom per joint, one joint per body (to its parent), so
  ``nq = nv = n`` and the index of a coordinate is the index of its body. A floating base
  is three bodies: prismatic x, prismatic z (massless) and revolute pitch.
* Body frame ``i`` has its origin at joint ``i``. ``joint_xz[i]`` is that origin in the
  parent's frame (at q = 0). Revolute: the frame is rotated by ``q[i]`` relative to the
  parent. Prismatic x/z: the frame is translated by ``q[i]`` along the parent's x/z axis.
* Loop closures are revolute loop-closure joints: point ``loop_xz_a`` of body ``loop_body_a``
  coincides with point ``loop_xz_b`` of body ``loop_body_b`` (two scalar constraints each;
  body ``-1`` is the world, its point then in world coordinates). Their relative angle is
  ``theta_b - theta_a`` (absolute angles); a torque ``tau`` on a loop joint acts ``+tau`` on
  body b and ``-tau`` on body a (thesis 5.3.2, actuated loop-closure joints).

Passive joint elements (per tree joint, and per loop joint on the relative angle):

* linear spring/damper: ``tau = -spring_k (q - spring_rest) - damping qd``;
* the thesis's exponential knee ligament (4.1.1, garbled as ``tau_l = Kl_k (q_l - q)^e -
  Kl_d qd``, with Kl_k = 1e6, Kl_d = 1e2, q_l = -2 deg, engaged only past q_l): read here as
  a one-sided power-law spring with damper, active only while the joint is past the limit
  on the side ``ligament_side`` (+1: engaged when q > limit, -1: engaged when q < limit)::

      pen = ligament_side * (q - ligament_limit)      (> 0 when engaged)
      tau = -ligament_side * ligament_k * pen**ligament_exponent - ligament_damping * qd

  The exponent ``e`` is unreadable in the extraction; the default 3 (cubic) is an
  assumption, a parameter so a user can change it.

Reflected inertia of a drivetrain (a rotor of inertia J behind a gear of ratio N) on a
joint -- its **armature** a = N^2 J -- adds the kinetic energy a qd_rel^2 / 2 of the rotor
spinning N times faster than the joint's relative coordinate qd_rel. For a tree joint
qd_rel = qd[i]: a joins M[i, i] (MuJoCo's and Pinocchio's ``armature``). For a loop joint
qd_rel = theta_b' - theta_a' = k . qd, k the constant row of +1 / -1 on the revolute
coordinates between the world and bodies b and a (planar absolute angles are sums of the
revolute coordinates above them): a k k^T joins M, coupling those coordinates. Both are
constant, so they add nothing to the Coriolis terms; ``Model.armature`` is that constant
n x n matrix (:meth:`ModelBuilder.build`, or :func:`with_armature` on a built model),
added by the mass matrix (CRBA) and, for a tree, its diagonal by the articulated-body
algorithm. What is left out: the rotor's spin driven by its housing's own rotation
(J omega_housing, N times smaller than the armature's share at the same rates), and the
rotor's reaction torque in the joint forces (:mod:`codesign.dynamics.joint_forces`).

Compiled kernels never see the dataclass: they take ``model.arrays`` (a
:class:`ModelArrays` namedtuple of numpy arrays) and a :class:`Workspace` from
:func:`make_workspace`, as Pinocchio's ``(model, data)``.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from codesign.errors import UserError

REVOLUTE = 0
PRISMATIC_X = 1
PRISMATIC_Z = 2
JOINT_TYPES = {"revolute": REVOLUTE, "prismatic_x": PRISMATIC_X, "prismatic_z": PRISMATIC_Z}
WORLD = -1

# Arrays the compiled kernels read. Order matters only for construction.
ModelArrays = namedtuple(
    "ModelArrays",
    [
        "parent", "joint_type", "joint_xz", "mass", "com_xz", "inertia",
        "spring_k", "spring_rest", "damping",
        "ligament_k", "ligament_limit", "ligament_exponent", "ligament_damping", "ligament_side",
        "loop_body_a", "loop_body_b", "loop_xz_a", "loop_xz_b",
        "loop_spring_k", "loop_spring_rest", "loop_damping",
        "contact_body", "contact_xz",
        "armature", "armature_ij", "armature_value",
        "gravity",  # float64[1]
    ],
)

# Scratch arrays of one model (see make_workspace for shapes).
Workspace = namedtuple(
    "Workspace",
    [
        "pose", "rot", "S", "v", "a", "c", "abias", "Iw", "f", "IA", "pA", "U", "D", "u",
        "M", "L", "h", "tau", "qdd", "tmp_n", "tmp_n2",
        "rows", "rows_rhs", "rows_y", "A", "lam", "tmp_r", "tmp_r2", "perm",
        "phi", "phidot", "pts", "joint_wrench", "flags", "point6", "jac2",
    ],
)


@dataclass(frozen=True)
class Model:
    """A planar rigid-body tree with loop closures and contact points (SI units).

    Shapes: n bodies (= joints = coordinates), m loop closures, c contact points.
    Fields are documented in the module docstring; ``arrays`` is the tuple the compiled
    kernels take.
    """

    n: int
    parent: np.ndarray          # int64[n], -1 = world, parent[i] < i
    joint_type: np.ndarray      # int64[n]: REVOLUTE, PRISMATIC_X, PRISMATIC_Z
    joint_xz: np.ndarray        # float64[n, 2], m, in parent frame
    mass: np.ndarray            # float64[n], kg
    com_xz: np.ndarray          # float64[n, 2], m, in body frame
    inertia: np.ndarray         # float64[n], kg m^2 about the CoM
    spring_k: np.ndarray        # float64[n], N m/rad (N/m prismatic)
    spring_rest: np.ndarray     # float64[n], rad (m)
    damping: np.ndarray         # float64[n], N m s/rad (N s/m)
    ligament_k: np.ndarray      # float64[n]
    ligament_limit: np.ndarray  # float64[n], rad
    ligament_exponent: np.ndarray  # float64[n]
    ligament_damping: np.ndarray   # float64[n]
    ligament_side: np.ndarray      # float64[n], +1 or -1
    loop_body_a: np.ndarray     # int64[m] (-1 = world)
    loop_body_b: np.ndarray     # int64[m] (-1 = world)
    loop_xz_a: np.ndarray       # float64[m, 2] in body-a frame (world frame if a = -1)
    loop_xz_b: np.ndarray       # float64[m, 2]
    loop_spring_k: np.ndarray   # float64[m] on the relative angle theta_b - theta_a
    loop_spring_rest: np.ndarray  # float64[m]
    loop_damping: np.ndarray      # float64[m]
    contact_body: np.ndarray    # int64[c]
    contact_xz: np.ndarray      # float64[c, 2] in body frame
    armature: np.ndarray        # float64[n, n], kg m^2: drivetrains' reflected inertia (below)
    gravity: float              # m/s^2, acting along -z
    body_names: tuple[str, ...]
    loop_names: tuple[str, ...]
    contact_names: tuple[str, ...]
    arrays: ModelArrays = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        derived = ("gravity", "armature_ij", "armature_value")
        values = {name: getattr(self, name) for name in ModelArrays._fields if name not in derived}
        values["gravity"] = np.array([self.gravity], dtype=np.float64)
        # the armature's nonzero entries (k of them; none without drivetrains), for CRBA
        nonzero = np.argwhere(self.armature != 0.0).astype(np.int64)
        values["armature_ij"] = np.ascontiguousarray(nonzero.reshape(-1, 2))
        values["armature_value"] = np.ascontiguousarray(self.armature[nonzero[:, 0], nonzero[:, 1]])
        object.__setattr__(self, "arrays", ModelArrays(**values))

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joint i is named after the body it moves."""
        return self.body_names

    @property
    def n_loops(self) -> int:
        return len(self.loop_names)

    @property
    def n_contacts(self) -> int:
        return len(self.contact_names)

    def body_id(self, name: str) -> int:
        return _lookup(self.body_names, name, "body")

    def joint_id(self, name: str) -> int:
        return _lookup(self.body_names, name, "joint")

    def loop_id(self, name: str) -> int:
        return _lookup(self.loop_names, name, "loop closure")

    def contact_id(self, name: str) -> int:
        return _lookup(self.contact_names, name, "contact")

    def total_mass(self) -> float:
        return float(self.mass.sum())


def _lookup(names: tuple[str, ...], name: str, what: str) -> int:
    try:
        return names.index(name)
    except ValueError:
        raise UserError(f"{what} {name!r}: unknown; expected one of {', '.join(names)}") from None


class ModelBuilder:
    """Builds a :class:`Model` body by body; bodies are referred to by name.

    >>> b = ModelBuilder(gravity=9.81)
    >>> b.add_body("link1", None, "revolute", (0, 0), 1.0, (0, -0.5), 1 / 12)
    0
    >>> model = b.build()
    """

    def __init__(self, gravity: float = 9.81) -> None:
        self.gravity = float(gravity)
        self._bodies: list[dict] = []
        self._loops: list[dict] = []
        self._contacts: list[dict] = []

    def _body_index(self, name: str | None) -> int:
        if name is None or name == "world":
            return WORLD
        for i, b in enumerate(self._bodies):
            if b["name"] == name:
                return i
        raise UserError(f"body {name!r}: unknown; expected a body added before, or 'world'")

    def add_body(self, name: str, parent: str | None, joint_type: str | int,
                 joint_xz, mass: float, com_xz, inertia: float, *,
                 spring_k: float = 0.0, spring_rest: float = 0.0, damping: float = 0.0,
                 ligament_k: float = 0.0, ligament_limit: float = 0.0,
                 ligament_exponent: float = 3.0, ligament_damping: float = 0.0,
                 ligament_side: float = 1.0, armature: float = 0.0) -> int:
        """Add a body moved by one joint relative to ``parent`` (a name, or None/'world').

        joint_type: 'revolute', 'prismatic_x', 'prismatic_z' (or the module constants).
        joint_xz: joint location in the parent frame (m); com_xz: CoM in the body frame (m);
        inertia: about the CoM (kg m^2); armature: reflected inertia on the joint's
        coordinate (kg m^2; kg on a prismatic one). Returns the body index (= joint =
        coordinate index).
        """
        if any(b["name"] == name for b in self._bodies) or name == "world":
            raise UserError(f"body {name!r}: duplicate name; expected a new body name")
        jt = JOINT_TYPES.get(joint_type, joint_type) if isinstance(joint_type, str) else int(joint_type)
        if jt not in (REVOLUTE, PRISMATIC_X, PRISMATIC_Z):
            raise UserError(f"body {name!r}: joint_type {joint_type!r}; expected one of {list(JOINT_TYPES)}")
        if mass < 0 or inertia < 0 or armature < 0:
            raise UserError(f"body {name!r}: negative mass, inertia or armature; expected >= 0")
        if ligament_side not in (1.0, -1.0, 1, -1):
            raise UserError(f"body {name!r}: ligament_side {ligament_side}; expected +1 or -1")
        self._bodies.append(dict(
            name=name, parent=self._body_index(parent), joint_type=jt,
            joint_xz=_xz(joint_xz, name), mass=float(mass), com_xz=_xz(com_xz, name),
            inertia=float(inertia), spring_k=float(spring_k), spring_rest=float(spring_rest),
            damping=float(damping), ligament_k=float(ligament_k),
            ligament_limit=float(ligament_limit), ligament_exponent=float(ligament_exponent),
            ligament_damping=float(ligament_damping), ligament_side=float(ligament_side),
            armature=float(armature)))
        return len(self._bodies) - 1

    def add_floating_base(self, name: str, mass: float, com_xz, inertia: float) -> int:
        """Planar floating base: bodies ``name_x`` (prismatic x), ``name_z`` (prismatic z),
        both massless, then ``name`` (revolute pitch). Coordinates: world x, z of the pitch
        body's origin and its absolute angle. Returns the index of the pitch body."""
        self.add_body(f"{name}_x", None, PRISMATIC_X, (0.0, 0.0), 0.0, (0.0, 0.0), 0.0)
        self.add_body(f"{name}_z", f"{name}_x", PRISMATIC_Z, (0.0, 0.0), 0.0, (0.0, 0.0), 0.0)
        return self.add_body(name, f"{name}_z", REVOLUTE, (0.0, 0.0), mass, com_xz, inertia)

    def add_loop_closure(self, name: str, body_a: str | None, xz_a, body_b: str | None, xz_b, *,
                         spring_k: float = 0.0, spring_rest: float = 0.0,
                         damping: float = 0.0, armature: float = 0.0) -> int:
        """Revolute loop-closure joint: point xz_a of body_a meets point xz_b of body_b
        (None or 'world' = the world, point then in world coordinates); armature: reflected
        inertia on its relative angle (kg m^2). Returns its index."""
        if any(lp["name"] == name for lp in self._loops):
            raise UserError(f"loop closure {name!r}: duplicate name; expected a new name")
        a, b = self._body_index(body_a), self._body_index(body_b)
        if a == b:
            raise UserError(f"loop closure {name!r}: both ends on the same body; expected two bodies")
        if armature < 0:
            raise UserError(f"loop closure {name!r}: negative armature; expected >= 0")
        self._loops.append(dict(name=name, a=a, b=b, xz_a=_xz(xz_a, name), xz_b=_xz(xz_b, name),
                                spring_k=float(spring_k), spring_rest=float(spring_rest),
                                damping=float(damping), armature=float(armature)))
        return len(self._loops) - 1

    def add_contact(self, name: str, body: str, xz) -> int:
        """Contact point ``xz`` (body frame, m) on ``body``. Returns its index."""
        if any(c["name"] == name for c in self._contacts):
            raise UserError(f"contact {name!r}: duplicate name; expected a new name")
        i = self._body_index(body)
        if i == WORLD:
            raise UserError(f"contact {name!r}: on the world; expected a body")
        self._contacts.append(dict(name=name, body=i, xz=_xz(xz, name)))
        return len(self._contacts) - 1

    def build(self) -> Model:
        if not self._bodies:
            raise UserError("model: no bodies; expected at least one add_body")
        B, Lp, C = self._bodies, self._loops, self._contacts

        def col(rows, key, dtype=np.float64):
            return np.ascontiguousarray(np.array([r[key] for r in rows], dtype=dtype))

        def xz(rows, key):
            return np.ascontiguousarray(np.array([r[key] for r in rows], dtype=np.float64).reshape(len(rows), 2))

        return Model(
            n=len(B), parent=col(B, "parent", np.int64), joint_type=col(B, "joint_type", np.int64),
            joint_xz=xz(B, "joint_xz"), mass=col(B, "mass"), com_xz=xz(B, "com_xz"),
            inertia=col(B, "inertia"), spring_k=col(B, "spring_k"),
            spring_rest=col(B, "spring_rest"), damping=col(B, "damping"),
            ligament_k=col(B, "ligament_k"), ligament_limit=col(B, "ligament_limit"),
            ligament_exponent=col(B, "ligament_exponent"),
            ligament_damping=col(B, "ligament_damping"), ligament_side=col(B, "ligament_side"),
            loop_body_a=col(Lp, "a", np.int64), loop_body_b=col(Lp, "b", np.int64),
            loop_xz_a=xz(Lp, "xz_a"), loop_xz_b=xz(Lp, "xz_b"),
            loop_spring_k=col(Lp, "spring_k"), loop_spring_rest=col(Lp, "spring_rest"),
            loop_damping=col(Lp, "damping"),
            contact_body=col(C, "body", np.int64), contact_xz=xz(C, "xz"),
            armature=armature_matrix(col(B, "parent", np.int64), col(B, "joint_type", np.int64),
                                     col(B, "armature"), col(Lp, "a", np.int64), col(Lp, "b", np.int64),
                                     col(Lp, "armature")),
            gravity=self.gravity,
            body_names=tuple(b["name"] for b in B), loop_names=tuple(lp["name"] for lp in Lp),
            contact_names=tuple(c["name"] for c in C))


def absolute_angle_row(parent: np.ndarray, joint_type: np.ndarray, body: int) -> np.ndarray:
    """float64[n]: coefficients c with theta_body = c . q (sum of revolute coordinates on the
    path from the root to ``body``; body -1, the world, gives zeros)."""
    row = np.zeros(len(parent))
    i = int(body)
    while i >= 0:
        if joint_type[i] == REVOLUTE:
            row[i] = 1.0
        i = int(parent[i])
    return row


def armature_matrix(parent: np.ndarray, joint_type: np.ndarray, joint_armature: np.ndarray,
                    loop_a: np.ndarray, loop_b: np.ndarray, loop_armature: np.ndarray) -> np.ndarray:
    """The constant n x n matrix the drivetrains' reflected inertias add to the mass matrix
    (module docstring): diag(joint_armature[n]) + sum over loops of loop_armature[l] k k^T,
    k = absolute_angle_row(b) - absolute_angle_row(a). kg m^2."""
    out = np.diag(np.asarray(joint_armature, dtype=np.float64))
    for a, b, arm in zip(loop_a, loop_b, loop_armature):
        if arm != 0.0:
            k = absolute_angle_row(parent, joint_type, b) - absolute_angle_row(parent, joint_type, a)
            out += arm * np.outer(k, k)
    return np.ascontiguousarray(out)


def with_armature(model: Model, joint_armature: np.ndarray | None = None,
                  loop_armature: np.ndarray | None = None) -> Model:
    """``model`` with the drivetrains' reflected inertias (kg m^2) on its joints [n] and
    loop joints [m] (None: none) in place of the ones it had."""
    joints = np.zeros(model.n) if joint_armature is None else np.asarray(joint_armature, dtype=np.float64)
    loops = np.zeros(model.n_loops) if loop_armature is None else np.asarray(loop_armature, dtype=np.float64)
    if joints.shape != (model.n,) or loops.shape != (model.n_loops,) or (joints < 0).any() or (loops < 0).any():
        raise ValueError(f"armature: expected {model.n} joint and {model.n_loops} loop values >= 0")
    matrix = armature_matrix(model.parent, model.joint_type, joints, model.loop_body_a, model.loop_body_b, loops)
    return dataclasses.replace(model, armature=matrix)


def _xz(value, name: str) -> tuple[float, float]:
    arr = np.asarray(value, dtype=np.float64).reshape(-1)
    if arr.shape != (2,) or not np.all(np.isfinite(arr)):
        raise UserError(f"{name}: point {value!r}; expected two finite numbers (x, z) in m")
    return float(arr[0]), float(arr[1])


def make_workspace(model: Model, n_extra_rows: int = 0) -> Workspace:
    """Scratch arrays for ``model`` (nothing is allocated per step afterwards).

    Shapes (n bodies, r = 2 m + n_extra_rows constraint rows, at least 1):
    pose[n,3] (x, z, absolute angle of each body origin); rot[n,2] (its cos, sin); S, v, a, c, abias, f, pA, U [n,3]
    (planar spatial vectors in world coordinates at the world origin, ordered
    (angular, x, z); S joint motion subspace, v velocity, a acceleration, c = Sdot qd,
    abias acceleration at qdd = 0 without gravity); Iw, IA [n,3,3]; D, u, h, tau, qdd, tmp_n, tmp_n2 [n]; M, L [n,n];
    rows [r,n] (constraint Jacobian K), rows_rhs [r] (k), rows_y [r,n], A [r,r], lam, tmp_r, tmp_r2,
    phi, phidot [r]; perm int64[r]; pts[2,6] (point kinematics scratch); point6 [6], jac2 [2,n]
    (a contact point's kinematics and Jacobian, :mod:`codesign.dynamics.contact_rows`); joint_wrench [n,3] (torque about the joint, fx, fz
    exerted by the parent on the body, world axes); flags int64[4] (0: rank deficiency of
    the last constrained solve, 1: its rank, 2: nonzero if the mass matrix was not positive
    definite).

    ``n_extra_rows`` reserves rows for contacts (CONTACT appends its rows after the loops).
    """
    n = model.n
    r = max(1, 2 * model.n_loops + int(n_extra_rows))
    z = np.zeros
    return Workspace(
        pose=z((n, 3)), rot=z((n, 2)), S=z((n, 3)), v=z((n, 3)), a=z((n, 3)), c=z((n, 3)), abias=z((n, 3)),
        Iw=z((n, 3, 3)),
        f=z((n, 3)), IA=z((n, 3, 3)), pA=z((n, 3)), U=z((n, 3)), D=z(n), u=z(n),
        M=z((n, n)), L=z((n, n)), h=z(n), tau=z(n), qdd=z(n), tmp_n=z(n), tmp_n2=z(n),
        rows=z((r, n)), rows_rhs=z(r), rows_y=z((r, n)), A=z((r, r)), lam=z(r), tmp_r=z(r), tmp_r2=z(r),
        perm=np.zeros(r, dtype=np.int64), phi=z(r), phidot=z(r), pts=z((2, 6)), joint_wrench=z((n, 3)),
        flags=np.zeros(4, dtype=np.int64), point6=z(6), jac2=z((2, n)))
