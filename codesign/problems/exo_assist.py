"""``exo_assist`` (issue 32): co-design a device that lowers an active wearer's effort.

The wearer is active (``evaluation.wearer = "active"``, :mod:`codesign.control.wearer`):
its own chapter-4 hip, knee and ankle law -- the human-gait design the spec's
``evaluation.wearer_design`` names (e.g. ``docs/designs/human-thesis-walking.json``), fixed, not
searched -- sets the joint torques its walk needs; the device adds an assistance profile
through its linkage and the wearer's muscles supply the rest.

Space (MMPSO, as ``exo_codesign_wearer_drive``): pool ``subspace``, one group per
(topology, actuator pair) with its morphology, its passive joints' springs and the pair's
drivetrains (``t03.j1.motor``, ``t03.j1.stage_ratio``); pool ``common``, the assistance
profile shared by every subspace, since it is stated in the wearer's joint space
(``assist.hip.b1.peak`` ..., :mod:`codesign.control.assist`: two bumps per joint, 16
parameters).

Evaluation: the assisted walk (the device's mass carried by the wearer) and the same
wearer unassisted -- the human alone with the same law and settings, walked once per
(law, settings) in a process and cached (:func:`unassisted`), not per candidate -- and
their comparison (:mod:`codesign.problems.effort`: ``effort_reduction``,
``speed_change`` ...).

Under ``wearer_model = "muscles"`` (issue 46) the wearer is Geyer & Herr's reflex-driven
muscles: its design's reflexes (``reflex.*``) travel with the law into both walks,
``effort_reduction`` is on the net metabolic cost (``metabolic_cost``,
:data:`~codesign.problems.effort.EFFORT_METRIC`), and the profile is timed by each leg's
foot contact (:func:`muscle_timing`).

Stages (:func:`assist_stages`): the co-design's physical stages
(:func:`~codesign.problems.objectives.codesign_stages` up to its speed stage: walks the
whole period, segment length, singularity, slip, flight, ground reaction, knee,
actuator speed and thermal ratios, wearer forces, cuff forces, posture), the pitch assist
idle (assist_fraction <= 0.1, Table 5.3), speed within 5 % of the unassisted walk, then
effort_reduction >= EFFORT_REDUCTION_GOAL (maximized until then), then the device's
electrical power (``power_electrical``) minimized.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from codesign.control.assist import JOINT_PAIRS, has_assist, parameter_bounds
from codesign.errors import UserError
from codesign.model.drivetrain import drive_parameter_bounds
from codesign.model.wearer_body import Load, carried_mass, parse_loads
from codesign.objectives import Objective
from codesign.problems import exo_codesign as ex
from codesign.problems import muscle_gait as mg
from codesign.problems import objectives as ob
from codesign.problems.effort import EFFORT_METRIC, SPEED_CHANGE_MAX, effort_comparison
from codesign.problems.options import PRESETS, ProblemOptions
from codesign.problems.robust import read_robust_checks, with_robust_score
from codesign.problems.walking import (Replay, WalkingProblemSettings, check_walking_design,
                                       parse_walk_settings, replay, walk as walk_record)
from codesign.topology.catalog import cached_catalog
from codesign.types import EvalRecord, Parameter
from codesign.walking import Design, WalkSettings, human_control_layout, load_design
from codesign.walking import check_design as check_walking_law
from codesign.walking.setup import has_hip_torso_feedback

ASSIST = PRESETS["exo_assist"]
IDEAL = PRESETS["exo_assist_ideal"]
# the acceptance: the wearer's metabolic proxy lowered by 15 % with the device's mass
EFFORT_REDUCTION_GOAL = 0.15


@dataclass(frozen=True)
class AssistSettings(WalkingProblemSettings):
    """The exo_assist problem's settings: WALK's (an active wearer), the wearer's law,
    ``wearer`` (name, value) pairs of a human-gait design's parameters (empty: none named;
    then only designs that carry the law themselves can be evaluated), and
    ``device_loads``, the device's mass that its linkage does not hold (an ideal device's
    whole mass; a battery at the waist), as point masses (``evaluation.device_loads``,
    the format of ``evaluation.loads``): carried in the assisted walk only, where
    ``evaluation.loads`` are carried in both walks (a backpack the device helps with)."""

    wearer: tuple[tuple[str, float], ...] = ()
    device_loads: tuple[Load, ...] = ()

    def assisted_walk(self) -> WalkSettings:
        """WALK's settings of the assisted walk: the loads and the device's loads."""
        if not self.device_loads:
            return self.walk
        return dataclasses.replace(self.walk, loads=self.walk.loads + self.device_loads)


def parse_active_settings(table: Mapping[str, Any], key: str, expected: str, why: str) -> tuple[WalkSettings, str | None]:
    """WALK's settings of ``table`` for an active wearer (``wearer = "active"``, the
    default; "passive" refused, ``why`` saying why) and the design path under ``key``
    (None: not given; UserError, one line, unless a string: ``expected`` names it)."""
    table = dict(table)
    path = table.pop(key, None)
    if table.setdefault("wearer", "active") != "active":
        raise UserError(f"evaluation.wearer: got {table['wearer']!r}; expected \"active\" ({why})")
    walk = muscle_timing(parse_walk_settings(table), "assist_timing" in table)
    if path is not None and not isinstance(path, str):
        raise UserError(f"evaluation.{key}: got {path!r}; expected the path of {expected}")
    return walk, path


def muscle_timing(walk: WalkSettings, named: bool) -> WalkSettings:
    """An active wearer's settings with the assistance timed by what the device senses
    under ``wearer_model = "muscles"``: the clock (``assist_timing = "clock"``) is the
    impedance law's 0.9-Hz phase, which a muscle-driven wearer does not walk to (it keeps
    its own stride), so its default there is each leg's foot contact (``"contact"``) and
    the clock named (``named``) is one UserError line."""
    if walk.wearer_model != "muscles" or walk.assist_timing != "clock":
        return walk
    if named:
        raise UserError('evaluation.assist_timing: "clock" under wearer_model = "muscles"; expected "contact" or '
                        '"hip_peak" (the clock is the impedance law\'s phase; a muscle-driven wearer keeps its own stride)')
    return dataclasses.replace(walk, assist_timing="contact")


def parse_assist_settings(table: Mapping[str, Any]) -> AssistSettings:
    """``parse_settings``: WALK's settings with ``wearer = "active"`` (the default here;
    "passive" is refused) and ``wearer_design``, the path of a human-gait design whose
    hip, knee and ankle law is the wearer's (UserError, one line naming the key)."""
    table = dict(table)
    device_loads = parse_device_loads(table.pop("device_loads", None))
    checks = read_robust_checks(table)
    walk, path = parse_active_settings(table, "wearer_design", "a human-gait design", "this problem assists an active wearer")
    cached_catalog(walk.catalog)
    if path is None:
        return AssistSettings(walk, device_loads=device_loads, robust_checks=checks)
    law = load_design(path)
    if law.topology is not None:
        raise UserError(f"evaluation.wearer_design: {path} is a co-design; expected a human-gait design "
                        "(topology null) whose law is the wearer's")
    check_walking_law(law, dataclasses.replace(walk, wearer="passive"), f"evaluation.wearer_design ({path})")
    return AssistSettings(walk, tuple(sorted(law.params.items())), device_loads, robust_checks=checks)


def parse_device_loads(value: Any) -> tuple[Load, ...]:
    """``evaluation.device_loads``: :func:`~codesign.model.wearer_body.parse_loads`' records,
    its one-line UserError naming this key."""
    try:
        return parse_loads(value)
    except UserError as exc:
        raise UserError(str(exc).replace("evaluation.loads", "evaluation.device_loads", 1)) from None


# --------------------------------------------------------------------------- space
def assist_parameters(assisted_joints: str = "hip_knee") -> tuple[Parameter, ...]:
    """The common pool: the assistance profile (:mod:`codesign.control.assist`) of the
    assisted joints (a pair's name, :data:`~codesign.control.assist.JOINT_PAIRS`)."""
    return tuple(Parameter(name, low, high)
                 for name, (low, high) in parameter_bounds(JOINT_PAIRS[assisted_joints]).items())


def law_names() -> set[str]:
    """The wearer's impedance law's parameter names (chapter 4's hip, knee and ankle, and
    the hip's torso term of a ``human_gait_balance`` law)."""
    return set(human_control_layout(WalkSettings(), hip_torso_feedback=True).parameter_names())


def wearer_names() -> set[str]:
    """Every parameter of a design that is its wearer's: the impedance law
    (:func:`law_names`) and a muscle-driven wearer's reflexes
    (:func:`codesign.problems.muscle_gait.reflex_names`)."""
    return law_names() | mg.reflex_names()


def decode(groups: tuple[str, ...], params: Mapping[str, float], settings: AssistSettings,
           options: ProblemOptions = ASSIST) -> Design:
    """The design of a candidate: its subspace's linkage and drivetrains
    (:func:`codesign.problems.exo_codesign.decode_group` under the problem's ``options``,
    the torso term the frozen wearer's law's), the wearer's law of the settings (the
    candidate's own where it has one; a muscle-driven wearer's reflexes too) and the
    assistance profile (ValueError: missing, not finite or out of bounds)."""
    if len(groups) < 1:
        raise ValueError("no subspace group given; expected the subspace pool's group name")
    merged = {**dict(settings.wearer), **params}
    law = dataclasses.replace(options, torso_feedback=has_hip_torso_feedback(merged))
    design = ex.decode_group(groups[0], merged, cached_catalog(settings.walk.catalog), law)
    assist = {p.name: ex.checked_value(p, params) for p in assist_parameters()}
    reflexes = {k: v for k, v in merged.items() if k in mg.reflex_names()}
    return Design({**design.params, **reflexes, **assist}, design.topology, design.actuators)


def encode(design: Design) -> tuple[tuple[str, ...], dict[str, float]]:
    """``WalkingHooks.encode``: the design's subspace group and its searched parameters
    (the linkage's prefixed, the profile's as they are; the wearer's law and reflexes left
    out)."""
    prefix = ex.topology_prefix(design.topology)
    law = wearer_names()
    params = {(k if k.startswith("assist.") else prefix + k): v for k, v in design.params.items() if k not in law}
    return (ex.group_name(design.topology, design.actuators),), params


def decode_ideal(groups: tuple[str, ...], params: Mapping[str, float], settings: AssistSettings,
                 options: ProblemOptions = IDEAL) -> Design:
    """The design of an ideal device's candidate (``device = "ideal"``): the unaugmented
    wearer of the settings (its law, and reflexes under muscles) with the candidate's
    assistance profile, delivered at its own assisted joints, and its drivetrains where the
    options search them (:func:`ideal_parameters`; ValueError: a parameter missing, not
    finite or out of bounds; UserError: no wearer named)."""
    if not settings.wearer:
        raise UserError("evaluation.wearer_design: none named; expected the path of a human-gait design "
                        "whose law (and reflexes) is the wearer's")
    device = {p.name: ex.checked_value(p, params) for p in ideal_parameters(options)}
    return Design({**dict(settings.wearer), **device})


def ideal_parameters(options: ProblemOptions) -> tuple[Parameter, ...]:
    """An ideal device's space: its profile at the assisted joints (:func:`assist_parameters`)
    and, under ``drivetrains = "searched"``, a drivetrain per joint (``assist.<joint>.motor``,
    ``.stage_ratio``, :func:`codesign.model.drivetrain.drive_parameter_bounds`; without:
    unbounded)."""
    joints = JOINT_PAIRS[options.assisted_joints]
    drives = drive_parameter_bounds(joints) if options.drivetrains == "searched" else {}
    return assist_parameters(options.assisted_joints) + tuple(Parameter(name, low, high)
                                                             for name, (low, high) in drives.items())


def encode_ideal(design: Design) -> tuple[tuple[str, ...], dict[str, float]]:
    """``WalkingHooks.encode`` of an ideal device: its assistance profile (no groups)."""
    return (), {k: v for k, v in design.params.items() if k.startswith("assist.")}


# --------------------------------------------------------------------------- evaluation
def wearer_alone(design: Design) -> Design:
    """The unaugmented wearer of a design: its hip, knee and ankle law (and reflexes) only."""
    law = wearer_names()
    return Design({k: v for k, v in design.params.items() if k in law})


def unassisted_replay(design: Design, settings: WalkSettings, record_times=None) -> Replay:
    """The design's wearer alone (its law, muscles unbounded: no human_actuated motors)
    walked under ``settings`` (an active wearer), recorded at ``record_times``."""
    return replay(wearer_alone(design), dataclasses.replace(settings, human_actuated=()), record_times)


@functools.lru_cache(maxsize=8)
def unassisted(law: tuple[tuple[str, float], ...], settings: WalkSettings) -> EvalRecord:
    """:func:`unassisted_replay`'s record of the wearer whose law is ``law`` (sorted
    (name, value) pairs): once per law and settings in a process."""
    return unassisted_replay(Design(dict(law)), settings).record


def with_effort(record: EvalRecord, design: Design, walk: WalkSettings) -> EvalRecord:
    """The assisted record with :func:`~codesign.problems.effort.effort_comparison`
    against the design's wearer alone walked under ``walk`` (the effort its wearer model
    prices); a failed record as it is."""
    if not record.ok:
        return record
    alone = unassisted(tuple(sorted(wearer_alone(design).params.items())), walk)
    comparison = effort_comparison(record.metrics, alone.metrics, EFFORT_METRIC[walk.wearer_model])
    return dataclasses.replace(record, metrics={**record.metrics, **comparison})


def replay_assist(design: Design, settings: AssistSettings, record_times=None, reference: Design | None = None,
                  compare: Callable[[EvalRecord, WalkSettings], EvalRecord] | None = None) -> Replay:
    """``WalkingHooks.replay``: the assisted walk (the device's loads carried, their mass
    in ``added_mass``) with its trajectory, ``compare(record, walk)``'s comparisons (by
    default :func:`with_effort` against ``reference``'s wearer alone under ``walk``, the
    reference by default ``design``), and ``robust_walk_score`` and the worst reduction,
    speed change and ground reaction over the settings' robust checks
    (:mod:`codesign.problems.robust`; the assisted walk replayed under each and compared
    under the same check)."""
    assisted = settings.assisted_walk()
    out = replay(design, assisted, record_times)
    record = out.record
    if settings.device_loads and "added_mass" in record.metrics:
        metrics = {**record.metrics, "added_mass": record.metrics["added_mass"] + carried_mass(settings.device_loads)}
        record = dataclasses.replace(record, metrics=metrics)
    reference = design if reference is None else reference
    if compare is None:
        def compare(walked: EvalRecord, walk: WalkSettings) -> EvalRecord:
            return with_effort(walked, reference, walk)
    record = with_robust_score(compare(record, settings.walk), settings.robust_checks,
                               lambda change: compare(walk_record(design, change(assisted)), change(settings.walk)))
    return dataclasses.replace(out, record=record, reference=reference)


def check_design(design: Design, settings: AssistSettings, where: str = "design") -> None:
    """``WalkingHooks.check_design``: a co-design with the wearer's law and a profile."""
    if not has_assist(design.params):
        raise UserError(f"{where}: no assistance profile (assist.*); expected a design of this problem")
    check_walking_design(design, settings.walk, where, augmented=True)


def check_ideal_design(design: Design, settings: AssistSettings, where: str = "design") -> None:
    """``WalkingHooks.check_design`` of an ideal device: the unaugmented human with the
    wearer's law and a profile."""
    if not has_assist(design.params):
        raise UserError(f"{where}: no assistance profile (assist.*); expected a design of this problem")
    check_walking_design(design, settings.walk, where, augmented=False)


def warmup(settings: AssistSettings) -> None:
    """Compile (or load) the kernels: the co-design problems' warm-up under these settings."""
    ex.warmup(settings)


def assist_stages(physical: tuple[Objective, ...]) -> tuple[Objective, ...]:
    """The default stages (module docstring) after the co-design's ``physical`` stages
    (those before its ``speed_assist_score``, :func:`codesign.problems.compose.stages_before`)."""
    return physical + (Objective("assist_fraction", "minimize", ob.ASSIST_FRACTION_MAX),
                       Objective("speed_change_abs", "minimize", SPEED_CHANGE_MAX),
                       Objective("effort_reduction", "maximize", EFFORT_REDUCTION_GOAL),
                       Objective("power_electrical", "minimize"))


# the co-design's stages that measure a linkage, which an ideal device does not have
LINKAGE_METRICS = ("longest_segment", "singularity", "interaction_force_peak_bw", "cuff_force_peak")


def ideal_stages(physical: tuple[Objective, ...]) -> tuple[Objective, ...]:
    """An ideal device's stages: :func:`assist_stages` after the co-design's ``physical``
    stages without those on a linkage (:data:`LINKAGE_METRICS`), up to the effort, which is
    then maximized without a goal (no drivetrain, so no electrical power to price after
    it): how much a profile can lower the wearer's cost."""
    stages = assist_stages(tuple(s for s in physical if s.metric not in LINKAGE_METRICS))
    names = [s.metric for s in stages]
    return stages[:names.index("effort_reduction")] + (Objective("effort_reduction", "maximize"),)
