"""A walking design as a MuJoCo model (``codesign export``, ``codesign crosscheck``).

The engine model the evaluation builds (:func:`codesign.walking.setup.build_setup`: the
human, or the human with the device assembled and its drivetrains' reflected inertia)
written by :func:`codesign.dynamics.mjcf.model_mjcf`, with

* the effort joints (the actuated joints the metrics measure: the device's pair, the
  ankles; the human's hip, knee and ankle) as motors, each with its actuator's peak
  torque as the control range (N m; a muscle, without an actuator, unbounded);
* the human's hip and ankle passive ranges of motion (``metrics.JOINT_RANGE_DEG``) as
  joint ranges for the reader, not enforced (the engine does not enforce them either),
  and the knee ligament (the engine's one-sided cubic spring past ``ligament_limit``) as
  an enforced limit there: MuJoCo has no such spring;
* the contact points as spheres on the floor with the evaluation's friction;
* the evaluation's initial state (``Setup.x0``: the gait's first pose, loops closed, the
  lowest point on the ground) as the keyframe ``initial``.

MuJoCo's numbers (:data:`TIMESTEP`, :func:`solref`, :data:`SOLIMP`): 0.1-ms steps, the
semi-implicit ``implicitfast`` integrator, elliptic friction cones, and contacts and loop
equalities as stiff as MuJoCo makes them at that step: a time constant of two steps
(0.2 ms, MuJoCo's floor), critically damped, impedance 0.9999 (the constraint lets
through 1e-4 of the unconstrained acceleration; at MuJoCo's default 0.9-0.95 the ankle's
stiff impedance pushes the foot centimetres into the floor). They are MuJoCo's soft
constraints made stiff, not the engine's hard ones: the differences this leaves are what
``codesign crosscheck`` reports. Softer (0.25-ms steps, 0.5 ms) costs half the time and
moves the human's speed, ground-reaction peak and power by up to 21 % (docs/mujoco.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from codesign.dynamics import mjcf
from codesign.dynamics.model import Model
from codesign.errors import UserError
from codesign.walking.design import Design
from codesign.walking.metrics import JOINT_RANGE_DEG, JOINT_SIGN
from codesign.walking.settings import WalkSettings
from codesign.walking.setup import Setup, build_setup

TIMESTEP = 1e-4                       # s
INTEGRATOR = "implicitfast"
CONTACT_RADIUS = 0.002                # m: each contact point's sphere
STEPS_PER_TIMECONST = 2               # solref's time constant in steps (MuJoCo's floor)
DAMPING_RATIO = 1.0                   # solref's: critically damped
SOLIMP = (0.9999, 0.9999, 0.001, 0.5, 2.0)   # MuJoCo's impedance: dmin, dmax, width m, mid, power


@dataclass(frozen=True)
class MujocoExport:
    """A design's MuJoCo model: ``xml`` (MJCF text), the engine ``model`` it was written
    from, ``order`` int64[n] (the engine coordinate of each MuJoCo coordinate: q_mujoco =
    q[order]), the initial state ``x0`` float64[2n] (engine order; the keyframe), the
    ``motors`` and the ``setup`` the evaluation builds (controller, parameters)."""

    xml: str
    model: Model
    order: np.ndarray
    x0: np.ndarray
    motors: tuple[mjcf.Motor, ...]
    setup: Setup


def solref(timestep: float) -> tuple[float, float]:
    """MuJoCo's ``solref`` (time constant s, damping ratio) of the contacts and loop
    equalities at ``timestep`` s: :data:`STEPS_PER_TIMECONST` steps, critically damped."""
    return STEPS_PER_TIMECONST * timestep, DAMPING_RATIO


def joint_ranges(model: Model) -> tuple[mjcf.JointRange, ...]:
    """The human's hip, knee and ankle ranges (engine angles, rad; module docstring): the
    passive ranges of motion for hip and ankle (not enforced), the knee's ligament as an
    enforced limit on its side (the other side open)."""
    out = []
    for side in ("r", "l"):
        for k, body in enumerate(("thigh", "shank", "foot")):
            name = f"{body}_{side}"
            if name not in model.body_names:
                continue
            i = model.body_id(name)
            if model.ligament_k[i] > 0.0:
                limit = float(model.ligament_limit[i])
                lo, hi = (-math.pi, limit) if model.ligament_side[i] > 0 else (limit, math.pi)
                out.append(mjcf.JointRange(name, lo, hi, True))
                continue
            bounds = sorted(math.radians(JOINT_SIGN[k] * d) for d in JOINT_RANGE_DEG[k])
            out.append(mjcf.JointRange(name, bounds[0], bounds[1], False))
    return tuple(out)


def row_target(model: Model, row: np.ndarray) -> tuple[bool, int]:
    """(is a loop joint, index) of a controller row float64[n]: a unit row is its tree
    coordinate; otherwise the loop whose relative angle it is (its tendon in the export).
    ValueError for a row of neither kind."""
    nonzero = np.flatnonzero(row)
    if len(nonzero) == 1 and row[nonzero[0]] == 1.0:
        return False, int(nonzero[0])
    for k in range(model.n_loops):
        if np.array_equal(mjcf.loop_row(model, k), row):
            return True, k
    raise ValueError("a controller row that is neither a tree joint nor a loop joint")


def effort_motors(setup: Setup) -> tuple[mjcf.Motor, ...]:
    """One motor per effort joint of the set-up (``Setup.effort_names``): on the tree
    coordinate or loop joint whose row the controller drives (:func:`row_target`),
    limited to its actuator's peak torque (N m; inf without one)."""
    wm = setup.p.model.walk
    out = []
    for e, name in enumerate(setup.effort_names):
        s = int(wm.effort_source[e])
        row = wm.ctrl.act_rows[s] if s >= 0 else wm.drive.rows[-1 - s]
        loop, index = row_target(setup.model, row)
        out.append(mjcf.Motor(name, loop, index, float(wm.effort_limit[e, 0])))
    return tuple(out)


def export_setup(setup: Setup, settings: WalkSettings, name: str = "codesign",
                 timestep: float | None = None) -> MujocoExport:
    """The MuJoCo model of a built set-up (module docstring) under the evaluation's
    friction ``settings.rollout.mu``; ``timestep`` s (None: :data:`TIMESTEP`; the
    constraints' time constant follows it, :func:`solref`). UserError for what MJCF cannot
    hold (a loop joint's drivetrain armature across branches, :func:`mjcf.armature_split`).
    The muscle wearer's muscles are a controller, not MJCF elements: the rollout steps them
    (:mod:`codesign.walking.mujoco_rollout`)."""
    model = setup.model
    motors = effort_motors(setup)
    step = TIMESTEP if timestep is None else float(timestep)
    options = mjcf.MjcfOptions(
        timestep=step, integrator=INTEGRATOR,
        contact=mjcf.Contact(friction=settings.rollout.mu, radius=CONTACT_RADIUS, solref=solref(step),
                             solimp=SOLIMP),
        equality_solref=solref(step), equality_solimp=SOLIMP, ranges=joint_ranges(model),
        motors=motors, keyframe=setup.x0)
    try:
        xml = mjcf.model_mjcf(model, options, name)
    except ValueError as exc:
        raise UserError(f"design: {exc}") from None
    return MujocoExport(xml, model, mjcf.mujoco_order(model), setup.x0.copy(), motors, setup)


def export_design(design: Design, settings: WalkSettings, name: str = "codesign",
                  timestep: float | None = None) -> MujocoExport:
    """:func:`export_setup` of the set-up the evaluation builds for ``design``
    (UserError, one line, for a design the evaluation would not simulate: singular, loops
    that do not close)."""
    setup, early, _ = build_setup(design, settings)
    if setup is None:
        raise UserError(f"design: not simulated ({early.message}); expected a design the "
                        "evaluation simulates")
    return export_setup(setup, settings, name, timestep)
