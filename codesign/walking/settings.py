"""Evaluation settings of a walking design (a job spec's ``[evaluation]`` table)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping

from codesign.control import signals as sg
from codesign.control.assist import JOINT_PAIRS
from codesign.control.wearer import ASSIST_TIMINGS
from codesign.errors import UserError, nearest, shown
from codesign.model.actuators import MODELS as ACTUATOR_MODELS
from codesign.model.actuators import NUMBER_FIELDS as ACTUATOR_KEYS
from codesign.model.actuators import Actuator
from codesign.model.drivetrain import Drivetrain, catalog_motor, drivetrain_actuator
from codesign.model.metabolics import METABOLIC_MODELS
from codesign.model.structure import THESIS, StructureLaw, structure_law
from codesign.model.wearer_body import Load, parse_loads, parse_mass_scale
from codesign.topology.catalog import catalog_path
from codesign.walking import rollout as ro
from codesign.walking.initial_state import START_KINDS

HUMAN_JOINTS = ("hip", "knee", "ankle")   # the chapter-4 controller's joints
WEARER_MODES = ("passive", "active")       # the wearer of a co-design (issue 32)
WEARER_MODELS = ("impedance", "muscles")   # what moves the human's joints (issue 45)
STANDING_REFERENCES = ("walker", "published")   # the standing rate metabolic_power is net of
MAX_ONSET_STRIDES = 20                     # evaluation.assist_onset_strides at most (a 10-s walk has ~9)
# what a rollout setting must be, where it is more than "a finite number >= 0"
EXPECTED = {"max_time": "a duration > 0 s", "h": "a time step in (0, 0.01] s",
            "pgs_tol": "a relative change > 0", "pgs_max_sweeps": "a number of sweeps > 0",
            "soft_max_sweeps": "a number of sweeps > 0",
            "contact_tol_velocity": "a tolerance > 0 m/s", "contact_tol_impulse": "a tolerance > 0 N s",
            "contact_tol_energy": "a bound > 0 J", "soft_stiffness": "a stiffness > 0 N/m^n",
            "soft_exponent": "an exponent >= 1 (1: linear, 1.5: Hertz)",
            "soft_v_reg": "a speed > 0 m/s",
            "rest_speed": "a speed >= 1e-7 m/s (the event-driven contact's TOL_V)"}
POSITIVE = ("max_time", "pgs_tol", "pgs_max_sweeps", "contact_tol_velocity", "contact_tol_impulse",
            "contact_tol_energy", "soft_stiffness", "soft_v_reg", "soft_max_sweeps")   # rollout settings that must be > 0


@dataclass(frozen=True)
class WalkSettings:
    """Evaluation settings (the spec's ``[evaluation]`` table; all keys optional).

    rollout: :class:`~codesign.walking.rollout.RolloutSettings` fields (``max_time``,
    ``phase0``, ``contact_model``, ``mu``, ``rtol`` ...); human_control:
    ``constant`` | ``step`` | ``ppoly`` (chapter-4 K/D kind); optimize_frequency: bool;
    catalog: path of the topology catalog ("": ``topologies/catalog.json`` of the working
    directory, else the repository's copy; :func:`~codesign.topology.catalog.catalog_path`;
    ``from_dict`` makes it absolute, so that a worker started elsewhere reads the same
    file); actuators: the WR's actuated joints'
    :class:`~codesign.model.actuators.Actuator` (``actuator_model = "bounded"`` (default)
    | ``"thesis"`` and the table ``[evaluation.actuators]`` with its number fields:
    peak_torque, max_speed, rated_power, gear_ratio, torque_constant,
    winding_resistance, regeneration, mass_offset, torque_density); human_actuated:
    the unaugmented human's joints (of ``hip``, ``knee``, ``ankle``) that get the same
    actuator envelope instead of unbounded muscles -- e.g. ``["hip", "knee"]``: can the
    chapter-4 controller walk within what the WR's actuators deliver (default: none)?
    initial_state: how the body is put on the ground at t = 0 (:mod:`codesign.walking.initial_state`):
    ``"lowest_point"`` (default: its lowest contact point at rest, the gait's joint rates)
    or ``"gait"`` (the human joints the law servos at its references, every contact
    point on the ground at rest, the pelvis at the target speed: no landing).
    wearer: ``passive`` (the thesis's wearer, moved by the device) or ``active`` (issue
    32: the wearer's own hip, knee and ankle law acts, a co-design's device adds its
    assistance profile, and the wearer's effort is measured; WEARER_MODES).
    structure: what the WR's bars, passive joints and cuffs weigh
    (:mod:`codesign.model.structure`): ``structure = "thesis"`` (default: 0.7 kg/m, 0.5 kg)
    or ``"parts"`` with the catalog names ``link_section``, ``passive_joint``, ``cuff``
    (each optional: the catalog's default).
    loads: point masses the person carries (:mod:`codesign.model.wearer_body`: a list of
    ``{segment = "torso" | "thigh" | "shank" | "foot", mass_kg = m, position = s}``, a
    leg segment's on both legs, s the fraction along the segment from its proximal joint,
    absent: its CoM; default none). wearer_mass_scale: a factor > 0 on every segment mass
    and inertia of the wearer, not the device's (default 1); the scaled mass is the
    person's, the loads are carried mass.
    assist_timing: what times an active wearer's assistance profile (issue 46 item 2;
    ASSIST_TIMINGS): ``"clock"`` (default: the gait law's clock, as before), or the
    device's own gait-phase estimate per leg from its foot's ``"contact"`` (heel strikes)
    or its hip's ``"hip_peak"`` (maximum flexion) (:mod:`codesign.control.phase`; no
    assistance before a leg's first event). Without an assisting device it changes nothing.
    assist_onset_strides: the strides each leg's phase estimator measures before the device
    assists that leg (a whole number >= 0; default 0: from its first event, as before; a
    sensed ``assist_timing`` only). Portable devices wait for their stride estimate and
    start after a few strides; assisting from the first heel strike, on the estimator's
    assumed 1.1-s stride, is what made the assisted muscle wearer's starts land hard.
    wearer_model: what drives the human's hip, knee and ankle (issue 45; WEARER_MODELS):
    ``impedance`` (default: the step impedance law) or ``muscles`` (Geyer & Herr 2010's
    reflex-controlled Hill muscles, :mod:`codesign.walking.muscle_wearer`; the human alone
    or an active wearer, time stepping only).
    assisted_joints: the wearer joints an active wearer's device assists, a pair of
    :data:`codesign.control.assist.JOINT_PAIRS` (``"hip_knee"``, the default and a
    linkage's; ``"hip_ankle"`` or ``"knee_ankle"``: an ideal device's; set by the problem
    option of the same name).
    soft_joint_limits: Geyer & Herr's soft joint limits on the muscle wearer's ankle (70-130
    deg), knee (175) and hip (230) (:func:`codesign.walking.muscle_wearer.soft_limit_torque`;
    default false: the thesis's knee ligament alone, as before; the ligament stays).
    metabolic_model: the muscle metabolic model pricing the muscle wearer's effort
    (:data:`codesign.model.metabolics.METABOLIC_MODELS`): ``umberger2010`` (default),
    ``umberger2003`` or ``bhargava2004``; the walk is the same, only its price changes.
    standing_reference: the standing rate ``metabolic_power`` is net of (STANDING_REFERENCES):
    ``walker`` (default, as before: every muscle under the walk's own pre-stimulation
    ``reflex.s0``) or ``published`` (under Geyer & Herr's s0 = 0.01 whatever the walk's: a
    person's standing, which a search of the walking reflexes cannot lower or raise).
    trailing_balance: the trunk's balance reflexes on the trailing leg of double support
    (:mod:`codesign.control.reflex`, ``trail_balance``): true (default) as Geyer & Herr's
    Appendix I, weighted by the leg's load; false as SCONE's adaptation, its hip muscles
    under Delta_S alone (no co-contraction against the swing's initiation).
    """

    rollout: ro.RolloutSettings = ro.RolloutSettings()
    human_control: str = "step"
    optimize_frequency: bool = False
    catalog: str = ""
    actuators: Actuator = Actuator()
    human_actuated: tuple[str, ...] = ()
    initial_state: str = "lowest_point"
    wearer: str = "passive"
    structure: StructureLaw = THESIS
    loads: tuple[Load, ...] = ()
    wearer_mass_scale: float = 1.0
    assist_timing: str = "clock"
    assist_onset_strides: int = 0
    wearer_model: str = "impedance"
    assisted_joints: str = "hip_knee"
    soft_joint_limits: bool = False
    metabolic_model: str = "umberger2010"
    standing_reference: str = "walker"
    trailing_balance: bool = True

    def with_rollout(self, **changes: Any) -> "WalkSettings":
        """These settings with the rollout fields ``changes`` (e.g. ``max_time=0.05``)."""
        return dataclasses.replace(self, rollout=dataclasses.replace(self.rollout, **changes))

    @staticmethod
    def from_dict(d: Mapping[str, Any] | None) -> "WalkSettings":
        d = dict(d or {})
        fields = {f.name: f for f in dataclasses.fields(ro.RolloutSettings)}
        known = set(fields) | {"human_control", "optimize_frequency", "catalog", "actuator_model",
                               "actuators", "human_actuated", "initial_state",
                               "wearer", "structure", "link_section", "passive_joint", "cuff",
                               "loads", "wearer_mass_scale", "assist_timing", "assist_onset_strides",
                               "wearer_model",
                               "assisted_joints", "soft_joint_limits", "metabolic_model",
                               "standing_reference", "trailing_balance"}
        if "objectives" in d:
            raise UserError("evaluation.objectives: objectives are not evaluation settings; expected "
                            "them as the spec's [[objectives]] tables (default: the problem's)")
        for key in d:
            if key not in known:
                raise UserError(f"evaluation.{key}: unknown key{nearest(key, sorted(known))}; expected one of "
                                f"{', '.join(sorted(known))}")
        kw = {}
        for key, f in fields.items():
            if key in d:
                value = d[key]
                kind = type(getattr(ro.RolloutSettings(), key))
                if kind is str:
                    ok = isinstance(value, str)
                else:
                    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
                          and math.isfinite(value) and value >= 0)
                    value = kind(value) if ok else value
                if not ok:
                    raise UserError(f"evaluation.{key}: got {shown(value)}; expected "
                                    f"{'a string' if kind is str else EXPECTED.get(key, 'a finite number >= 0')}")
                kw[key] = value
        rollout = ro.RolloutSettings(**kw)
        if rollout.contact_model not in ro.CONTACT_MODELS:
            raise UserError(f"evaluation.contact_model: got {shown(rollout.contact_model)}; expected one of "
                            f"{', '.join(ro.CONTACT_MODELS)}")
        if rollout.contact_solver not in ro.CONTACT_SOLVERS:
            raise UserError(f"evaluation.contact_solver: got {shown(rollout.contact_solver)}; expected one of "
                            f"{', '.join(ro.CONTACT_SOLVERS)}")
        for key, ok in ((*((k, getattr(rollout, k) > 0) for k in POSITIVE),
                         ("h", 0 < rollout.h <= 0.01), ("soft_exponent", rollout.soft_exponent >= 1),
                         ("rest_speed", rollout.rest_speed >= 1e-7))):
            if not ok:
                raise UserError(f"evaluation.{key}: got {shown(getattr(rollout, key))}; expected {EXPECTED[key]}")
        catalog = d.get("catalog")
        if catalog is not None and not (isinstance(catalog, str) and catalog.strip()):
            raise UserError(f"evaluation.catalog: got {shown(catalog)}; expected the path of a topology "
                            "catalog (a string)")
        human_control = d.get("human_control", "step")
        if human_control not in sg.KIND_NAMES:
            raise UserError(f"evaluation.human_control: got {shown(human_control)}; expected one of "
                            f"{', '.join(sg.KIND_NAMES)}")
        human_actuated = d.get("human_actuated", [])
        if (not isinstance(human_actuated, (list, tuple))
                or not all(isinstance(j, str) and j in HUMAN_JOINTS for j in human_actuated)
                or len(set(human_actuated)) != len(human_actuated)):
            raise UserError(f"evaluation.human_actuated: got {shown(human_actuated)}; expected a list of "
                            f"distinct human joints from {', '.join(HUMAN_JOINTS)}")
        initial_state = d.get("initial_state", "lowest_point")
        if initial_state not in START_KINDS:
            raise UserError(f"evaluation.initial_state: got {shown(initial_state)}; expected one of {', '.join(START_KINDS)}")
        wearer = d.get("wearer", "passive")
        if wearer not in WEARER_MODES:
            raise UserError(f"evaluation.wearer: got {shown(wearer)}; expected one of {', '.join(WEARER_MODES)}")
        assist_timing = d.get("assist_timing", "clock")
        if assist_timing not in ASSIST_TIMINGS:
            raise UserError(f"evaluation.assist_timing: got {shown(assist_timing)}"
                            f"{nearest(assist_timing, ASSIST_TIMINGS) if isinstance(assist_timing, str) else ''}; "
                            f"expected one of {', '.join(ASSIST_TIMINGS)}")
        onset = d.get("assist_onset_strides", 0)
        if isinstance(onset, bool) or not isinstance(onset, int) or not 0 <= onset <= MAX_ONSET_STRIDES:
            raise UserError(f"evaluation.assist_onset_strides: got {shown(onset)}; expected a whole number of "
                            f"strides from 0 to {MAX_ONSET_STRIDES}")
        if onset and assist_timing == "clock" and d.get("wearer_model") != "muscles":
            raise UserError("evaluation.assist_onset_strides: counts the strides the device's phase estimator "
                            "measures; expected assist_timing = \"contact\" or \"hip_peak\" with it (got the clock)")
        wearer_model = d.get("wearer_model", "impedance")
        if wearer_model not in WEARER_MODELS:
            raise UserError(f"evaluation.wearer_model: got {shown(wearer_model)}"
                            f"{nearest(wearer_model, WEARER_MODELS) if isinstance(wearer_model, str) else ''}; "
                            f"expected one of {', '.join(WEARER_MODELS)}")
        assisted_joints = d.get("assisted_joints", "hip_knee")
        if assisted_joints not in JOINT_PAIRS:
            raise UserError(f"evaluation.assisted_joints: got {shown(assisted_joints)}; expected one of "
                            f"{', '.join(JOINT_PAIRS)}")
        soft_joint_limits = d.get("soft_joint_limits", False)
        if not isinstance(soft_joint_limits, bool) or (soft_joint_limits and wearer_model != "muscles"):
            raise UserError(f"evaluation.soft_joint_limits: got {shown(soft_joint_limits)}"
                            "; expected true or false, "
                            "true only with wearer_model = \"muscles\" (Geyer & Herr's skeleton)")
        trailing_balance = d.get("trailing_balance", True)
        if not isinstance(trailing_balance, bool) or ("trailing_balance" in d and wearer_model != "muscles"):
            raise UserError(f"evaluation.trailing_balance: got {shown(trailing_balance)}; expected true or false, "
                            "only with wearer_model = \"muscles\" (a law of its reflexes)")
        metabolic_model = muscle_option(d, "metabolic_model", "umberger2010", METABOLIC_MODELS, wearer_model)
        standing_reference = muscle_option(d, "standing_reference", "walker", STANDING_REFERENCES, wearer_model)
        return WalkSettings(rollout, human_control,
                            bool(d.get("optimize_frequency", False)),
                            str(catalog_path(catalog).absolute()),
                            actuators_from_dict(d.get("actuator_model", "bounded"), d.get("actuators")),
                            tuple(human_actuated), initial_state, wearer,
                            structure_law(d.get("structure", "thesis"), d.get("link_section"),
                                          d.get("passive_joint"), d.get("cuff")),
                            parse_loads(d.get("loads")), parse_mass_scale(d.get("wearer_mass_scale")),
                            assist_timing, onset, wearer_model, assisted_joints, soft_joint_limits,
                            metabolic_model, standing_reference, trailing_balance)


MAX_STAGE_RATIO = 50.0   # an extra reduction beyond the unit's own gear (belt, cable, planetary)


def muscle_option(d: Mapping, key: str, default: str, choices, wearer_model: str) -> str:
    """The evaluation option ``key`` that only the muscle wearer reads (``metabolic_model``,
    ``standing_reference``): its value in ``d``, else ``default``; UserError (one line) for
    a value not in ``choices``, or for the key given under another wearer."""
    value = d.get(key, default)
    known = isinstance(value, str) and value in choices
    if not known or (key in d and wearer_model != "muscles"):
        hint = nearest(value, choices) if isinstance(value, str) and not known else ""
        raise UserError(f"evaluation.{key}: got {shown(value)}{hint}; expected one of {', '.join(choices)}, "
                        "only with wearer_model = \"muscles\" (it prices muscles)")
    return value


def actuators_from_dict(model: Any, table: Any) -> Actuator:
    """The WR actuators of ``actuator_model`` and the ``[evaluation.actuators]`` table:
    either its number fields (the spec's fixed rating), or ``motor`` (a catalog drive unit,
    :mod:`codesign.model.drivetrain`) with ``stage_ratio`` (an extra reduction >= 1,
    default 1) and ``regeneration`` (UserError, one line naming the key: an unknown model,
    motor or key, a value that is not a finite number > 0, a regeneration outside [0, 1],
    a rating given beside a motor)."""
    if model not in ACTUATOR_MODELS:
        raise UserError(f"evaluation.actuator_model: got {shown(model)}; expected one of "
                        f"{', '.join(ACTUATOR_MODELS)}")
    if table is None:
        table = {}
    if not isinstance(table, Mapping):
        raise UserError(f"evaluation.actuators: got {shown(table)}; expected a table of "
                        f"{', '.join(ACTUATOR_KEYS)}")
    if "motor" in table:
        return _drivetrain_from_dict(model, table)
    kw: dict[str, Any] = {"model": model}
    for key, value in table.items():
        if key == "stage_ratio":
            raise UserError("evaluation.actuators.stage_ratio: given without a motor; expected "
                            "evaluation.actuators.motor beside it")
        if key not in ACTUATOR_KEYS:
            raise UserError(f"evaluation.actuators.{key}: unknown key{nearest(key, (*ACTUATOR_KEYS, 'motor'))}; "
                            "expected one of "
                            f"{', '.join(ACTUATOR_KEYS)}, or motor (a catalog unit) with stage_ratio")
        number = (not isinstance(value, bool) and isinstance(value, (int, float))
                  and math.isfinite(value))
        if key == "regeneration":
            if not (number and 0 <= value <= 1):
                raise UserError(f"evaluation.actuators.regeneration: got {shown(value)}; expected a "
                                "fraction in [0, 1]")
        elif key in ("mass_offset", "rotor_inertia"):
            if not (number and value >= 0):
                raise UserError(f"evaluation.actuators.{key}: got {shown(value)}; expected a "
                                "finite number >= 0 (kg, kg m^2)")
        elif not (number and value > 0):
            raise UserError(f"evaluation.actuators.{key}: got {shown(value)}; expected a finite number > 0")
        kw[key] = float(value)
    return Actuator(**kw)


def _drivetrain_from_dict(model: str, table: Mapping) -> Actuator:
    """The actuator of ``[evaluation.actuators]`` naming a catalog ``motor``."""
    for key in table:
        if key not in ("motor", "stage_ratio", "regeneration"):
            raise UserError(f"evaluation.actuators.{key}: set by the motor {shown(table['motor'])}; expected "
                            "only stage_ratio and regeneration beside evaluation.actuators.motor")
    motor = catalog_motor(str(table["motor"]), "evaluation.actuators.motor")
    ratio, regen = table.get("stage_ratio", 1.0), table.get("regeneration", 0.0)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 1.0 <= ratio <= MAX_STAGE_RATIO:
        raise UserError(f"evaluation.actuators.stage_ratio: got {shown(ratio)}; expected a number in "
                        f"[1, {MAX_STAGE_RATIO:g}]")
    if isinstance(regen, bool) or not isinstance(regen, (int, float)) or not 0.0 <= regen <= 1.0:
        raise UserError(f"evaluation.actuators.regeneration: got {shown(regen)}; expected a fraction in [0, 1]")
    return drivetrain_actuator(Drivetrain(motor, float(ratio)), float(regen), model)
