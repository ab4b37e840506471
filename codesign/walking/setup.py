"""Build everything a rollout needs from a design: the engine model (the human, or the
human with the added linkage assembled), the control layout and compiled controller, the
screening verdict, the initial state and contact modes."""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from codesign.errors import UserError, listed
from codesign.dynamics.model import with_armature
from codesign.control import impedance as imp
from codesign.control import signals as sg
from codesign.control.parameters import ControlLayout, codesign_layout, human_layout
from codesign.control.assist import JOINT_PAIRS, assist_signals, bumps_of, has_assist, profile_values
from codesign.control.reflex import REFLEX_PREFIX, REFLEX_RANGES, reflex_changes, reflex_params
from codesign.control.assist import parameter_bounds as assist_parameter_bounds
from codesign.control.wearer import DriveArrays, DriveLeg, compile_drive
from codesign.model.anthropometry import human_geometry
from codesign.model.actuators import Actuator
from codesign.model.assemble import assemble
from codesign.model.drivetrain import design_drivetrain, drive_parameter_bounds, drivetrain_actuator
from codesign.model.gait import nominal_gait
from codesign.model.metabolics import METABOLIC_MODELS
from codesign.model.human import build_human
from codesign.model.morphology import build_morphology, mass_report, parameter_space
from codesign.model.wearer_body import Load, segment_end, with_wearer_body
from codesign.screening.screen import screen
from codesign.topology.catalog import cached_catalog
from codesign.walking import metrics as mt
from codesign.walking import rollout as ro
from codesign.walking.muscle_wearer import make_muscle_model, muscle_rows, standing_rate, start_loads
from codesign.walking.rollout_base import contact_heights, place_on_ground
from codesign.walking.design import Design
from codesign.walking.initial_state import (HUMAN_JOINT_BODY, close_wr_loops, gait_configuration, gait_start,
                                            on_reference)
from codesign.walking.settings import WalkSettings

SITES = ("thigh_r", "shank_r", "thigh_l", "shank_l")         # human hip and knee joints
SITE_NAMES = ("hip_r", "knee_r", "hip_l", "knee_l")
WEARER_JOINTS = ("hip", "knee")     # the wearer's joints whose law the device delivers


@dataclass
class Setup:
    """Everything a rollout needs, built from a design (Python side)."""

    model: Any
    layout: ControlLayout
    ctrl: imp.ControllerArrays
    p: tuple
    x0: np.ndarray
    mode0: np.ndarray
    design_metrics: dict[str, float]
    effort_names: tuple[str, ...]   # the effort joints' (WalkModel.effort_source): j1_r, ankle_l ...
    # the motors, one per actuated joint: the WR's pair (in its order) or the human's
    # human_actuated joints; empty without motors
    actuators: tuple[tuple[str, Actuator], ...] = ()
    wearer_mass: float = math.nan   # kg: the wearer's body mass (an active wearer's effort per kg)

    @property
    def n_active(self) -> int:
        """How many joints the torque and power metrics sum over (the effort joints)."""
        return len(self.effort_names)


# --------------------------------------------------------------------------- layouts
def human_control_layout(settings: WalkSettings, hip_torso_feedback: bool = False) -> ControlLayout:
    """Chapter-4 layout for the unaugmented human (Table 4.3); ``hip_torso_feedback``: the
    hip also servos the torso pitch (:func:`codesign.control.parameters.human_layout`)."""
    lay = human_layout(sg.KIND_NAMES[settings.human_control], hip_torso_feedback=hip_torso_feedback)
    return dataclasses.replace(lay, optimize_frequency=settings.optimize_frequency)


def has_hip_torso_feedback(params) -> bool:
    """Whether a human-gait design's law carries the hip's torso feedback (its
    ``hip.torso.*`` parameters are there)."""
    return any(name.startswith("hip.torso.") for name in params)


def wr_joint_name(catalog_id: int) -> str:
    """Control-parameter prefix of WR joint ``catalog_id`` (e.g. ``j5``)."""
    return f"j{catalog_id}"


def passive_wr_joints(topology, actuators: tuple[int, ...]) -> tuple[str, ...]:
    """Control prefixes of the added joints that are not actuated (springs/dampers)."""
    return tuple(wr_joint_name(j.id) for j in topology.joints if j.id not in actuators)


def wr_control_layout(topology, actuators: tuple[int, int], settings: WalkSettings,
                      torso_feedback: bool = False) -> ControlLayout:
    """Chapter-5 layout: the actuated pair and the ankle active, every other added joint a
    spring/damper (eq. 5.12); ``torso_feedback``: the pair also servos the torso pitch
    (:mod:`codesign.control.impedance`)."""
    return codesign_layout(tuple(wr_joint_name(a) for a in actuators),
                           passive_wr_joints(topology, actuators),
                           settings.optimize_frequency, torso_feedback)


def wearer_control_layout(topology, actuators: tuple[int, int], settings: WalkSettings,
                          hip_torso_feedback: bool = False) -> ControlLayout:
    """The wearer-space layout of a co-design (:mod:`codesign.control.wearer`): the
    chapter-4 hip, knee and ankle law (its names and kinds: a human-gait design's control
    is a valid start; ``hip_torso_feedback``: with the hip's torso term, as
    ``human_gait_balance``'s), the device's actuated pair delivering hip and knee, every
    other added joint a spring/damper (eq. 5.12)."""
    lay = human_layout(sg.KIND_NAMES[settings.human_control],
                       passive_wr=passive_wr_joints(topology, actuators),
                       hip_torso_feedback=hip_torso_feedback)
    return dataclasses.replace(lay, optimize_frequency=settings.optimize_frequency)


def has_wearer_control(design: Design) -> bool:
    """Whether a co-design carries the wearer-space law: its parameters name the wearer's
    hip (``hip.*``, the chapter-4 names) instead of its actuated joints' own laws."""
    return design.topology is not None and any(name.startswith("hip.") for name in design.params)


def design_control_layout(design: Design, topology, settings: WalkSettings) -> ControlLayout:
    """The control layout a co-design's parameters are read with: the wearer-space law's
    or the thesis's (with the torso feedback where its parameters are there)."""
    if has_wearer_control(design):
        return wearer_control_layout(topology, design.actuators, settings,
                                     has_hip_torso_feedback(design.params))
    return wr_control_layout(topology, design.actuators, settings,
                             has_torso_feedback(design.actuators, design.params))


def wearer_drive(model, aug, actuators: tuple[int, int], pair: tuple[Actuator, Actuator],
                 assist=None, timing: tuple[float, float] = (0.0, 0.0),
                 assist_timing: str = "clock", assist_onset: int = 0) -> DriveArrays:
    """The wearer-space drive of an augmented model under :func:`wearer_control_layout`
    (the controller's rows: hip r, l, knee r, l, ankle r, l): per leg its hip and knee,
    its added tree coordinates and loops, its actuated pair's rows and their actuators
    ``pair``; ``assist``, ``timing``, ``assist_timing``, ``assist_onset``: an active
    wearer's assistance (:func:`codesign.control.wearer.compile_drive`)."""
    actuated = _wr_rows(model, aug.actuated)
    legs = []
    for s, side in enumerate(("r", "l")):
        legs.append(DriveLeg(
            law=(s, 2 + s),
            human=(model.body_id(f"thigh_{side}"), model.body_id(f"shank_{side}")),
            added=tuple(j.index for j in aug.wr_joints if j.side == side and not j.loop),
            loops=tuple(j.index for j in aug.wr_joints if j.side == side and j.loop),
            rows=tuple(actuated[wr_joint_name(a)][s] for a in actuators)))
    return compile_drive(model.n, legs, pair, assist=assist, timing=timing, assist_timing=assist_timing,
                         assist_onset=assist_onset)


def ideal_drive(model, assist, joints: tuple[str, str], active: tuple[str, ...],
                timing: tuple[float, float], assist_timing: str = "clock",
                units: tuple[Actuator | None, Actuator | None] = (None, None),
                assist_onset: int = 0) -> DriveArrays:
    """An ideal assistive device on the unaugmented human (Dembia et al. 2017's ideal
    devices): no linkage, its "actuated joints" the wearer's own ``joints`` (a pair of
    :data:`codesign.control.assist.JOINT_PAIRS`; G = I), each driven by its ``units``
    actuator (None: unbounded, no motor; their masses are loads, :func:`motor_loads`);
    ``active`` the controller's active joint names (each a row per leg, right first: the
    law rows the device relieves); ``assist``, ``timing``, ``assist_timing``,
    ``assist_onset`` as :func:`wearer_drive`'s."""
    rows = _human_rows(model, joints)
    law = [active.index(j) for j in joints]
    legs = [DriveLeg(law=(2 * law[0] + s, 2 * law[1] + s),
                     human=tuple(model.body_id(f"{HUMAN_JOINT_BODY[j]}_{side}") for j in joints),
                     added=(), loops=(), rows=(rows[joints[0]][s], rows[joints[1]][s]))
            for s, side in enumerate(("r", "l"))]
    return compile_drive(model.n, legs, units, assist=assist, timing=timing, assist_timing=assist_timing,
                         assist_onset=assist_onset)


def assist_drive(model, aug, design: Design, motors: tuple[tuple[str, Actuator], ...],
                 timing: tuple[float, float], settings: WalkSettings,
                 active: tuple[str, ...]) -> DriveArrays | None:
    """An active wearer's device (issue 32) on the model of ``design``: a co-design's
    linkage (``aug`` its assembly, ``motors`` its pair's) assisting with the design's
    profile at the hip and knee, an ideal device on the unaugmented human at the settings'
    ``assisted_joints`` (:func:`ideal_drive`, ``motors`` its units, :func:`ideal_motors`;
    ``active`` the controller's active joint names) where the design has a profile, else
    none (the wearer alone); the profile timed
    by the clock ``timing`` or by the device's phase estimate (the settings'
    ``assist_timing``, from ``assist_onset_strides`` measured strides on)."""
    joints = JOINT_PAIRS[settings.assisted_joints]
    assist = assist_signals(design.params, joints) if has_assist(design.params) else None
    if design.topology is None:
        units = dict(motors)
        return None if assist is None else ideal_drive(model, assist, joints, active, timing,
                                                       settings.assist_timing, tuple(units.get(j) for j in joints),
                                                       settings.assist_onset_strides)
    return wearer_drive(model, aug, design.actuators, tuple(a for _, a in motors), assist, timing,
                        settings.assist_timing, settings.assist_onset_strides)


def has_torso_feedback(actuators: tuple[int, int], params: Mapping[str, float]) -> bool:
    """Whether a design's parameters (local names) carry the torso-feedback terms of its
    actuated joints (``j<id>.torso.*``): a design file says which controller it uses."""
    prefixes = tuple(f"{wr_joint_name(a)}.torso." for a in actuators)
    return any(name.startswith(prefixes) for name in params)


def _human_rows(model, joints=("hip", "knee", "ankle")) -> dict:
    n = model.n
    return {j: tuple(imp.tree_joint_row(n, model.body_id(f"{HUMAN_JOINT_BODY[j]}_{s}"))
                     for s in ("r", "l")) for j in joints}


def _wr_rows(model, wr_joints) -> dict:
    rows: dict[str, list] = {}
    parent, jtype = model.parent, model.joint_type
    for j in wr_joints:   # sorted right leg first (assemble)
        if j.loop:
            row = imp.loop_joint_row(parent, jtype, model.loop_body_a[j.index], model.loop_body_b[j.index])
        else:
            row = imp.tree_joint_row(model.n, j.index)
        rows.setdefault(wr_joint_name(j.catalog_id), []).append(row)
    return {k: tuple(v) for k, v in rows.items()}


def joint_actuators(design: Design, settings: WalkSettings) -> tuple[tuple[str, Actuator], ...]:
    """(control name, actuator) of each motor: the WR's actuated joints (``j1``: the
    drivetrain the design's ``j<id>.motor`` and ``j<id>.stage_ratio`` choose, else the
    settings' rating) or, for the human, its ``human_actuated`` joints (the settings'
    rating)."""
    base = settings.actuators
    if design.topology is None:
        return tuple((name, base) for name in settings.human_actuated)
    out = []
    for a in design.actuators:
        drivetrain = design_drivetrain(design.params, a)
        out.append((wr_joint_name(a), base if drivetrain is None else
                    drivetrain_actuator(drivetrain, base.regeneration, base.model)))
    return tuple(out)


# where an ideal device's drivetrain sits (one per leg; wearer_body positions along the
# segment): the hip's at the hip on the pelvis (the torso's 0; both legs' units there),
# the knee's at the knee on the thigh, the ankle's on the upper third of the shank, where
# ankle exoskeletons mount theirs and reach the heel by a cable or strut (Slade et al.
# 2022, Nature 610:277; Collins et al. 2015's clutch sits there too)
MOTOR_SEAT = {"hip": ("torso", 0.0), "knee": ("thigh", 1.0), "ankle": ("shank", 0.3)}


def ideal_motors(design: Design, settings: WalkSettings) -> tuple[tuple[str, Actuator], ...]:
    """(wearer joint, actuator) of each drivetrain an ideal device's design chooses at its
    assisted joints (``assist.<joint>.motor``, ``.stage_ratio``; one per leg, the settings'
    actuator model and regeneration); none for a joint without (unbounded) or whose profile
    is zero (every bump's peak 0: a joint the device never drives carries no unit, so a
    hip-only device is the pair "hip_knee" with the knee's peaks 0)."""
    base = settings.actuators
    out = []
    for joint in JOINT_PAIRS[settings.assisted_joints]:
        drivetrain = design_drivetrain(design.params, joint)
        if drivetrain is not None and any(b.peak != 0.0 for b in bumps_of(design.params, joint)):
            out.append((joint, drivetrain_actuator(drivetrain, base.regeneration, base.model)))
    return tuple(out)


def motor_loads(motors: tuple[tuple[str, Actuator], ...]) -> tuple[Load, ...]:
    """The loads of an ideal device's drivetrains (:func:`ideal_motors`) at their
    :data:`MOTOR_SEAT` (a leg segment's load is on each leg; the hips' on the pelvis, both)."""
    return tuple(Load(MOTOR_SEAT[joint][0], (2.0 if MOTOR_SEAT[joint][0] == "torso" else 1.0) * a.mass(),
                      MOTOR_SEAT[joint][1]) for joint, a in motors)


# where an ideal device's cuff takes its torque (not simulated: no linkage): the segment the
# joint drives, the cuff's and the joint's positions along it (wearer_body positions) -- a
# hip's mid-thigh cuff, a knee's mid-shank cuff, an ankle's shank mount on the upper third
CUFF_SEAT = {"hip": ("thigh", 0.5, 0.0), "knee": ("shank", 0.5, 0.0), "ankle": ("shank", 0.3, 1.0)}
PROFILE_GRID = 4001     # phases at which a profile's largest |torque| is read


def ideal_cuff_force(design: Design, settings: WalkSettings, human,
                     units: Mapping[str, Actuator]) -> float:
    """An ideal device's cuff force estimate (N): over its assisted joints, the largest
    torque it can deliver -- the profile's largest |value| (on PROFILE_GRID phases), at
    most its unit's peak -- over the lever from the joint to the cuff (:data:`CUFF_SEAT`,
    ``human`` the HumanGeometry, ``units`` its joints' :func:`ideal_motors`). A bound on the
    force a cuff of that lever carries, not a simulated one: impacts reach a cuff through a
    linkage, which an ideal device lacks."""
    phase = np.linspace(0.0, 1.0, PROFILE_GRID)
    force = 0.0
    for joint in JOINT_PAIRS[settings.assisted_joints]:
        torque = float(np.max(np.abs(profile_values(bumps_of(design.params, joint), phase))))
        if joint in units:
            torque = min(torque, units[joint].peak_torque)
        segment, cuff, at = CUFF_SEAT[joint]
        force = max(force, torque / (abs(cuff - at) * float(np.linalg.norm(segment_end(human, segment)))))
    return force


def with_reflected_inertia(model, joints) -> Any:
    """``model`` with each actuator's reflected rotor inertia N^2 J
    (:meth:`Actuator.armature`) on its joint; ``joints``: (is a loop joint, tree coordinate
    or loop index, actuator) of every motor. ``model`` itself when none reflects any (the
    spec's fixed rating), so its results stay bit for bit."""
    tree, loops = np.zeros(model.n), np.zeros(model.n_loops)
    for is_loop, index, actuator in joints:
        (loops if is_loop else tree)[index] = actuator.armature()
    return model if not (tree.any() or loops.any()) else with_armature(model, tree, loops)


def with_actuators(controller: imp.Controller, actuators: Mapping[str, Actuator]) -> imp.Controller:
    """The controller with an actuator (:class:`codesign.model.actuators.Actuator`) on each
    of its active joints named in ``actuators``; the others keep none (muscles: unbounded)."""
    active = tuple(dataclasses.replace(j, actuator=actuators[j.name]) if j.name in actuators else j
                   for j in controller.active)
    return dataclasses.replace(controller, active=active)


def build_setup(design: Design, settings: WalkSettings, screen_first: bool = True,
                human_model=None):
    """(Setup or None, EvalRecord of a design that is not simulated or None, seconds spent
    in screening). Raises UserError for malformed parameters (evaluate catches it).

    ``human_model``: for the unaugmented human (``design.topology is None``), an engine
    Model used instead of ``build_human()`` -- the same bodies, joints and contacts with
    other masses (the anthropomorphic baseline, :mod:`codesign.problems.baseline`).

    The wearer's body follows ``settings.wearer_mass_scale`` and ``settings.loads``
    (:func:`codesign.model.wearer_body.with_wearer_body`, on ``human_model`` too);
    ``Setup.wearer_mass`` is the scaled wearer's mass, the loads not included."""

    human = human_geometry()
    gait = nominal_gait()
    screen_s = 0.0
    drive = None          # the wearer-space law's (control.wearer); None: the thesis's law
    active = settings.wearer == "active"
    device: tuple[tuple[str, Actuator], ...] = ()     # an ideal device's units (ideal_motors)
    if design.topology is None:
        motors = joint_actuators(design, settings)
        device = ideal_motors(design, settings) if active and has_assist(design.params) else ()
        model = build_human() if human_model is None else human_model
        model = with_wearer_body(model, human, settings.loads + motor_loads(device), settings.wearer_mass_scale)
        model = with_reflected_inertia(model, [(False, model.body_id(f"{HUMAN_JOINT_BODY[name]}_{side}"), a)
                                               for name, a in motors + device for side in ("r", "l")])
        layout = human_control_layout(settings, has_hip_torso_feedback(design.params))
        active_rows = _human_rows(model)
        passive_rows: dict = {}
        wr_coords: list[int] = []
        motor_mass = 2 * sum(a.mass() for _, a in device)
        design_metrics = {"longest_segment": 0.0, "singularity": 0.0, "added_mass": motor_mass,
                          "com_shift": 0.0, **({"actuator_mass": motor_mass} if device else {})}
        if active and has_assist(design.params):      # an ideal device: its cuffs estimated
            design_metrics["cuff_force_peak"] = ideal_cuff_force(design, settings, human, dict(device))
        aug = None
    else:

        topology = design_topology(design, settings)
        motors = joint_actuators(design, settings)
        morph = build_morphology(topology, design.actuators, morphology_params(topology, design.params),
                                 human, tuple(a.mass() for _, a in motors), settings.structure)
        masses = mass_report(morph)
        design_metrics = {"longest_segment": float(morph.longest_link), "singularity": 0.0,
                          "added_mass": float(masses["added_mass_kg"]),
                          "com_shift": float(math.hypot(masses["com_shift_x_m"], masses["com_shift_z_m"])),
                          # --- actuators (issue 15): both legs' actuators
                          "actuator_mass": 2 * sum(a.mass() for _, a in motors)}
        if screen_first:
            t0 = time.perf_counter()
            verdict = screen(morph, gait)
            screen_s = time.perf_counter() - t0
            if not verdict.ok:
                metrics = {"time": 0.0, **design_metrics, "singularity": 1.0}
                return None, mt.measured_record(metrics, f"singular: {verdict.reason}"), screen_s
        aug = assemble(morph)
        by_name = dict(motors)
        model = with_wearer_body(aug.model, human, settings.loads, settings.wearer_mass_scale)
        model = with_reflected_inertia(model, [(j.loop, j.index, by_name[wr_joint_name(j.catalog_id)])
                                               for j in aug.actuated])
        layout = design_control_layout(design, topology, settings)
        if active:
            if not (has_wearer_control(design) and has_assist(design.params)):
                raise UserError("an active wearer's co-design needs the wearer's hip, knee and ankle law "
                                "(hip.*, knee.*, ankle.*) and the device's assistance profile (assist.*)")
            active_rows = _human_rows(model)
        elif has_wearer_control(design):
            active_rows = _human_rows(model)
            drive = wearer_drive(model, aug, design.actuators, tuple(a for _, a in motors))
        else:
            active_rows = {**_wr_rows(model, aug.actuated), **_human_rows(model, ("ankle",))}
        passive_rows = _wr_rows(model, aug.passive)
        wr_coords = [j.index for j in aug.wr_joints if not j.loop]
    controller = layout.decode(design.params)
    rs = settings.rollout
    if active:                 # the wearer's own law on its joints; the device assists (issue 32)
        drive = assist_drive(model, aug, design, motors if design.topology is not None else device,
                             (controller.frequency, rs.phase0), settings, tuple(j.name for j in controller.active))
    if drive is None:          # the thesis's law, or the human's human_actuated joints
        controller = with_actuators(controller, dict(motors))
    driven = drive is not None and not active
    ctrl = imp.compile_controller(controller, model.n, active_rows, passive_rows,
                                  model.body_id("torso"), rs.phase0,
                                  driven=frozenset(WEARER_JOINTS) if driven else frozenset())
    q, qd = gait_configuration(model, gait, controller.frequency, rs.phase0, human.hip_height)
    if settings.initial_state == "gait":      # the feet's rates first: the linkage's follow
        q, qd = on_reference(model, controller, q, qd, rs.phase0)
        q, qd, lowest = gait_start(model, q, qd, mt.TARGET_SPEED)
    if model.n_loops:
        q, qd, err = close_wr_loops(model, q, qd, wr_coords)
        if not err <= 1e-8:
            metrics = {"time": 0.0, **design_metrics}
            return None, mt.measured_record(metrics, f"initial_state: loops do not close in the gait ({err:.2g} m)"), screen_s
    if settings.initial_state == "lowest_point":
        q, qd, lowest = place_on_ground(model, q, qd)
    p = ro.make_params(model, ctrl, rs, human.hip_height, SITES, drive=drive, active_wearer=active)
    x0 = np.concatenate([q, qd])
    mode0, code = ro.initial_modes(x0, p, lowest)
    if code != 0:
        metrics = {"time": 0.0, **design_metrics}
        return None, mt.measured_record(metrics, f"initial_state: contact modes (code {code})"), screen_s
    if settings.wearer_model == "muscles":
        p = with_muscle_wearer(p, model, controller, settings, x0, human.mass_kg,
                               design.topology is None or active, reflex_changes(design.params))
    device = (tuple(wr_joint_name(a) for a in design.actuators) if design.topology is not None
              else tuple(f"device_{j}" for j in JOINT_PAIRS[settings.assisted_joints]))
    names = effort_names(p.model.walk.effort_source, controller, device)
    # the person's mass (per-kg metrics): the scaled wearer's; the loads are carried mass
    wearer_mass = human.mass_kg * settings.wearer_mass_scale
    return Setup(model, layout, ctrl, p, x0, mode0, design_metrics, names, motors, wearer_mass), None, screen_s


def with_muscle_wearer(p, model, controller: imp.Controller, settings: WalkSettings, x0: np.ndarray,
                       body_mass: float, own_joints: bool, reflexes: Mapping[str, float]):
    """The rollout parameters ``p`` with the muscle wearer (issue 45,
    :mod:`codesign.walking.muscle_wearer`) on the human's hip, knee and ankle rows of the
    controller, started at x0 (the feet's loads: the body weight shared by the feet
    touching the ground, within 1 mm), for a person of ``body_mass`` kg. UserError (one
    line) unless the human's joints are its own (``own_joints``: the human alone or an
    active wearer). ``reflexes``: the design's reflex parameters by name (the published
    values for the others; :func:`codesign.control.reflex.reflex_params` checks them)."""
    if not own_joints:
        raise UserError("evaluation.wearer_model: \"muscles\" with a passive wearer; expected the human "
                        "alone (topology null) or wearer = \"active\" (a passive wearer's joints are moved "
                        "by the device)")
    names = tuple(j.name for j in controller.active)
    rows, coord = muscle_rows(names, lambda joint, side: model.body_id(f"{HUMAN_JOINT_BODY[joint]}_{side}"))
    n = model.n
    wm = p.model.walk
    touching = (np.abs(contact_heights(model, x0[:n])) < 1e-3).astype(np.int64)
    load0 = start_loads(touching, wm.contact_foot, model.total_mass() * model.gravity)
    mm = make_muscle_model(True, rows, coord, model.body_id("torso"), 0.0, settings.rollout.h, body_mass,
                           x0, load0, soft_limits=settings.soft_joint_limits,
                           met=METABOLIC_MODELS[settings.metabolic_model], **reflexes,
                           **({} if settings.trailing_balance else {"trail_balance": 0.0}))
    standing_s0 = None if settings.standing_reference == "walker" else reflex_params(body_mass).s0
    return ro.with_muscles(p, model, mm, standing_rate(mm, s0=standing_s0))


def effort_names(source: np.ndarray, controller: imp.Controller,
                 device: tuple[str, ...]) -> tuple[str, ...]:
    """Names of the effort joints (``source``: WalkModel.effort_source): an active joint's
    name and leg (``j1_r``, ``ankle_l``; each active joint has a row per leg, right first),
    a drive actuator's joint and leg (actuator 2 l + k: ``device[k]`` of leg l; ``device``
    the pair's added joints ``j1``, or an ideal device's ``device_hip`` ...)."""
    sides = ("r", "l")
    return tuple(f"{controller.active[s // 2].name}_{sides[s % 2]}" if s >= 0 else
                 f"{device[(-1 - s) % 2]}_{sides[(-1 - s) // 2]}"
                 for s in (int(v) for v in source))


def check_design(design: Design, settings: WalkSettings, where: str = "design") -> None:
    """UserError (one line, prefixed ``where``) unless ``design`` names a topology of the
    settings' catalog and gives exactly the parameters its morphology and controller
    read (an evaluation ignores unknown names: a misspelled one would silently leave
    a parameter missing or unused)."""
    if design.topology is None:
        expected = set(human_control_layout(settings, has_hip_torso_feedback(design.params)).parameter_names())
    else:
        topology = design_topology(design, settings, where)
        layout = design_control_layout(design, topology, settings)
        expected = {p.name for p in parameter_space(topology)} | set(layout.parameter_names())
        drive = set(drive_parameter_bounds(design.actuators))
        if drive & set(design.params):       # a design that chooses its drivetrains: all of them
            expected |= drive
    if settings.wearer == "active" and (design.topology is not None or has_assist(design.params)):
        # an active wearer's device: its assistance at its assisted joints (an ideal one's
        # drivetrains too, where it chooses them: all of them)
        joints = JOINT_PAIRS[settings.assisted_joints]
        expected |= set(assist_parameter_bounds(joints))
        drive = set(drive_parameter_bounds(joints))
        if design.topology is None and drive & set(design.params):
            expected |= drive
    if settings.wearer_model == "muscles":              # any of the reflexes (the rest: published)
        expected |= {REFLEX_PREFIX + name for name in REFLEX_RANGES} & set(design.params)
        try:                                            # each within its physical range
            reflex_params(human_geometry().mass_kg, **reflex_changes(design.params))
        except UserError as exc:
            raise UserError(f"{where}: params: {exc}") from None
    unknown, missing = sorted(set(design.params) - expected), sorted(expected - set(design.params))
    if unknown or missing:
        raise UserError(f"{where}: params: " + "; ".join(
            f"{label} {listed(names)}" for label, names in (("unknown", unknown), ("missing", missing)) if names)
            + f"; expected the {len(expected)} parameters of this "
            + ("human controller" if design.topology is None else "topology, actuator pair and controller"))


def design_topology(design: Design, settings: WalkSettings, where: str = "design"):
    """The catalog topology a design names (UserError when the catalog has none)."""
    catalog = cached_catalog(settings.catalog)
    ids = [t.id for t in catalog.topologies]
    if design.topology not in ids:
        raise UserError(f"{where}: topology: {design.topology}; expected a topology id of the catalog "
                        f"{settings.catalog} ({min(ids)}..{max(ids)})")
    return catalog.topology(design.topology)




def morphology_params(topology, params: Mapping[str, float]) -> dict[str, float]:

    return {p.name: params[p.name] for p in parameter_space(topology) if p.name in params}
