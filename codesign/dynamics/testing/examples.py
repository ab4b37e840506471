"""Standard test models: builders returning a :class:`Model` (and initial coordinates).

Each ``*_q0`` function returns a consistent initial configuration (loops closed).
"""

from __future__ import annotations

import numpy as np

from codesign.dynamics.model import Model, ModelBuilder


def box_inertia(mass: float, length_x: float, length_z: float) -> float:
    """Rotational inertia about the out-of-page axis of a box (kg m^2)."""
    return mass * (length_x**2 + length_z**2) / 12.0


def rod_inertia(mass: float, length: float) -> float:
    """Thin rod about its centre (kg m^2)."""
    return mass * length**2 / 12.0


def serial_chain(n_links: int, length: float = 1.0, mass: float = 1.0, gravity: float = 9.81,
                 branches: int = 1) -> Model:
    """Pendulum chain(s) of revolute joints hanging from the world origin (thesis 2.7.4).

    Links are thin rods (``length`` m, ``mass`` kg, CoM at the middle), each along its body
    -z axis. With ``branches`` > 1 the ``n_links`` degrees of freedom are spread as evenly
    as possible over that many chains, all rooted at the world origin. Bodies ``b{k}_l{j}``.
    """
    builder = ModelBuilder(gravity=gravity)
    sizes = [n_links // branches + (1 if k < n_links % branches else 0) for k in range(branches)]
    for k, size in enumerate(sizes):
        parent = None
        for j in range(size):
            name = f"b{k}_l{j}"
            builder.add_body(name, parent, "revolute", (0.0, 0.0) if parent is None else (0.0, -length),
                             mass, (0.0, -0.5 * length), rod_inertia(mass, length))
            parent = name
    return builder.build()


def four_bar(ground: float = 0.5, crank: float = 0.2, coupler: float = 0.5, rocker: float = 0.3,
             mass_per_m: float = 1.0, gravity: float = 9.81) -> Model:
    """Four-bar linkage: crank (world origin), coupler, rocker; the rocker's end is closed
    to the world at (ground, 0) by the loop joint ``ground_pin``. Links are rods along
    their body +x axis, mass proportional to length. Bodies ``crank``, ``coupler``, ``rocker``.
    """
    b = ModelBuilder(gravity=gravity)
    for name, parent, xz, length in (("crank", None, (0.0, 0.0), crank),
                                      ("coupler", "crank", (crank, 0.0), coupler),
                                      ("rocker", "coupler", (coupler, 0.0), rocker)):
        m = mass_per_m * length
        b.add_body(name, parent, "revolute", xz, m, (0.5 * length, 0.0), rod_inertia(m, length))
    b.add_loop_closure("ground_pin", "rocker", (rocker, 0.0), None, (ground, 0.0))
    return b.build()


def four_bar_q0(ground: float = 0.5, crank: float = 0.2, coupler: float = 0.5, rocker: float = 0.3,
                crank_angle: float = np.pi / 3) -> np.ndarray:
    """Closed configuration of :func:`four_bar` for a crank angle (elbow-up branch)."""
    p1 = crank * np.array([np.cos(crank_angle), np.sin(crank_angle)])
    p3 = np.array([ground, 0.0])
    d = np.linalg.norm(p3 - p1)
    # circle intersection: coupler from p1, rocker from p3
    a = (coupler**2 - rocker**2 + d**2) / (2 * d)
    h = np.sqrt(max(coupler**2 - a**2, 0.0))
    e = (p3 - p1) / d
    p2 = p1 + a * e + h * np.array([-e[1], e[0]])
    th1 = crank_angle
    th2 = np.arctan2(*(p2 - p1)[::-1])
    th3 = np.arctan2(*(p3 - p2)[::-1])
    return np.array([th1, th2 - th1, th3 - th2])


def closed_three_link(mass: float = 1.0, gravity: float = 9.81) -> Model:
    """Thesis Fig. 2.14 / codyn model 2.20: three 1 m links (CoM mid-link, box inertia
    0.05 x 1 m) hanging from the world origin; the end of link 3 is pinned to the world at
    the point it occupies in :func:`closed_three_link_q0` (loop ``pcl``): a 1-DOF
    parallelogram (rhombus) four-bar, all sides 1 m.

    Reconstruction (figure missing): codyn's revoluteY angle is about +y (clockwise in our
    view), so our q = -q_codyn; the model gives q = (-offset, pi/2 + offset, pi/2 - offset)
    in codyn's sign with offset = 0.2 pi, and the ground pin position is the chain end there.
    The mass is not stated (``m``), 1 kg assumed.
    """
    b = ModelBuilder(gravity=gravity)
    parent = None
    for j in range(3):
        name = f"p{j + 1}"
        b.add_body(name, parent, "revolute", (0.0, 0.0) if parent is None else (0.0, -1.0),
                   mass, (0.0, -0.5), box_inertia(mass, 0.05, 1.0))
        parent = name
    q0 = closed_three_link_q0()
    th = np.cumsum(q0)
    end = sum(np.array([np.sin(t), -np.cos(t)]) for t in th)  # R(theta) (0, -1)
    b.add_loop_closure("pcl", "p3", (0.0, -1.0), None, tuple(end))
    return b.build()


def closed_three_link_q0(offset: float = 0.2 * np.pi) -> np.ndarray:
    """Initial angles of codyn model 2.20 in our (counter-clockwise) convention."""
    return -np.array([-offset, 0.5 * np.pi + offset, 0.5 * np.pi - offset])


def pantograph_leg(gravity: float = 9.81, hip_damping: float = 1e-3, knee_stiffness: float = 9.1,
                   par_mass: float = 0.1) -> Model:
    """Thesis Fig. 2.15 / codyn model 2.21: pantographic leg hip-knee-ankle-par closed back
    on the hip by the loop joint ``parcl`` (4 DOF open, 2 DOF closed).

    Numbers from model 2.21 (lengths in m, masses kg, box inertias): hip link CoM -0.02,
    m 0.01, box 0.01 x 0.04; knee at -0.04 on hip, CoM -0.03, m 0.02, box 0.01 x 0.06; ankle
    at -0.06 on knee, CoM -0.025, m 0.01, box 0.01 x 0.05; par at +0.02 on ankle, CoM +0.025,
    m 0.1 (extraction reads ``m=0.1``), box 0.01 x 0.05; closing point +0.06 on par.
    Reconstruction: the extraction does not say where ``parcl`` meets the hip; with the
    initial angles of 2.21 the par link is parallel to the knee link and the ankle stub
    (0.02) to the hip link, so the loop closes as a parallelogram at the hip point 0.02 m
    below the hip joint (hip frame (0, -0.02)); that is the point used here. Knee spring
    (stiffness 9.1 N m/rad) around the initial knee angle, hip damping 1e-3 N m s/rad, as
    in 2.21; pass zeros for a conservative system. Angles: our q = -q_codyn.
    """
    q0 = pantograph_leg_q0()
    b = ModelBuilder(gravity=gravity)
    b.add_body("hip", None, "revolute", (0.0, 0.0), 0.01, (0.0, -0.02), box_inertia(0.01, 0.01, 0.04),
               damping=hip_damping)
    b.add_body("knee", "hip", "revolute", (0.0, -0.04), 0.02, (0.0, -0.03), box_inertia(0.02, 0.01, 0.06),
               spring_k=knee_stiffness, spring_rest=q0[1])
    b.add_body("ankle", "knee", "revolute", (0.0, -0.06), 0.01, (0.0, -0.025), box_inertia(0.01, 0.01, 0.05))
    b.add_body("par", "ankle", "revolute", (0.0, 0.02), par_mass, (0.0, 0.025), box_inertia(par_mass, 0.01, 0.05))
    b.add_loop_closure("parcl", "par", (0.0, 0.06), "hip", (0.0, -0.02))
    return b.build()


def pantograph_leg_q0() -> np.ndarray:
    """Initial angles of codyn model 2.21 (hip 0.1 pi, knee -0.4 pi, ankle 0.4 pi,
    par -0.4 pi, codyn sign) in our convention."""
    return -np.array([0.1, -0.4, 0.4, -0.4]) * np.pi


def falling_rod(length: float = 1.0, mass: float = 1.0, gravity: float = 9.81) -> Model:
    """Thin rod on a planar floating base (bodies ``rod_x``, ``rod_z``, ``rod``), CoM at
    the base origin, along the body x axis; contacts ``end_a`` (-L/2, 0), ``end_b`` (+L/2, 0).
    q = (x, z, pitch) of the centre."""
    b = ModelBuilder(gravity=gravity)
    b.add_floating_base("rod", mass, (0.0, 0.0), rod_inertia(mass, length))
    b.add_contact("end_a", "rod", (-0.5 * length, 0.0))
    b.add_contact("end_b", "rod", (0.5 * length, 0.0))
    return b.build()


def sliding_block(mass: float = 1.0, width: float = 0.2, height: float = 0.1,
                  gravity: float = 9.81, floating: bool = True) -> Model:
    """Block with contacts at its two bottom corners (``corner_back``, ``corner_front``).

    floating=True: planar floating base (``block_x``, ``block_z``, ``block``), q = (x, z,
    pitch) of the block centre. floating=False: prismatic x then prismatic z only
    (``block_x``, ``block``; no rotation).
    """
    b = ModelBuilder(gravity=gravity)
    inertia = box_inertia(mass, width, height)
    if floating:
        body = "block"
        b.add_floating_base(body, mass, (0.0, 0.0), inertia)
    else:
        b.add_body("block_x", None, "prismatic_x", (0.0, 0.0), 0.0, (0.0, 0.0), 0.0)
        body = "block"
        b.add_body(body, "block_x", "prismatic_z", (0.0, 0.0), mass, (0.0, 0.0), inertia)
    b.add_contact("corner_back", body, (-0.5 * width, -0.5 * height))
    b.add_contact("corner_front", body, (0.5 * width, -0.5 * height))
    return b.build()


def random_tree(rng: np.random.Generator, n: int, prismatic_fraction: float = 0.2,
                n_loops: int = 0, floating: bool = False, gravity: float = 9.81) -> Model:
    """A random planar tree (random parents, joint types, offsets, masses, inertias) for
    tests against peer libraries; optional random loop closures between random bodies
    (points placed anywhere: the residual is nonzero at a random q; close_loops_at fixes that)."""
    b = ModelBuilder(gravity=gravity)
    names: list[str] = []
    if floating:
        b.add_floating_base("base", rng.uniform(0.5, 3.0), rng.uniform(-0.3, 0.3, 2), rng.uniform(0.05, 0.5))
        n -= 3
        names = ["base"]
    for i in range(n):
        parent = names[rng.integers(len(names))] if names and (floating or rng.random() < 0.9) else None
        jt = "revolute" if rng.random() >= prismatic_fraction else ("prismatic_x", "prismatic_z")[rng.integers(2)]
        name = f"body{i}"
        b.add_body(name, parent, jt, rng.uniform(-1, 1, 2), rng.uniform(0.2, 2.0),
                   rng.uniform(-0.5, 0.5, 2), rng.uniform(0.01, 0.3))
        names.append(name)
    for k in range(n_loops):
        a, c = rng.choice(len(names), 2, replace=False)
        b.add_loop_closure(f"loop{k}", names[a], rng.uniform(-0.5, 0.5, 2), names[c], rng.uniform(-0.5, 0.5, 2))
    return b.build()


def close_loops_at(model: Model, q: np.ndarray) -> Model:
    """Copy of ``model`` whose loop points on body b are moved so that every loop closure
    holds exactly at configuration q (used to make random closed models)."""
    from dataclasses import replace

    from codesign.dynamics.kinematics import forward_kinematics
    from codesign.dynamics.model import make_workspace

    w = make_workspace(model)
    forward_kinematics(model.arrays, np.asarray(q, dtype=np.float64), np.zeros(model.n), w)
    xz_b = model.loop_xz_b.copy()
    for k in range(model.n_loops):
        a, b = model.loop_body_a[k], model.loop_body_b[k]
        pa = _world_point(w, a, model.loop_xz_a[k])
        if b < 0:
            xz_b[k] = pa
        else:
            x, z, th = w.pose[b]
            d = pa - np.array([x, z])
            xz_b[k] = [np.cos(th) * d[0] + np.sin(th) * d[1], -np.sin(th) * d[0] + np.cos(th) * d[1]]
    return replace(model, loop_xz_b=np.ascontiguousarray(xz_b))


def _world_point(w, body: int, xz: np.ndarray) -> np.ndarray:
    if body < 0:
        return np.array(xz, dtype=np.float64)
    x, z, th = w.pose[body]
    return np.array([x + np.cos(th) * xz[0] - np.sin(th) * xz[1], z + np.sin(th) * xz[0] + np.cos(th) * xz[1]])
