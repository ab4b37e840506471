"""The anthropomorphic baseline of a co-design design (thesis 5.6).

Thesis 5.6 compares the power of the best co-designed (non-anthropomorphic) wearable robot
with "an anthropomorphic wearable robot with the same material properties (i.e. masses)".
Problem ``anthropomorphic_baseline`` builds that robot: the unaugmented human
(:func:`codesign.model.human.build_human`) carrying the added mass of a given co-design
design lumped onto the human segments it rides on, actuated anthropomorphically -- step
impedance directly at hip, knee and ankle (the ``human_gait`` layout, Table 4.3 "step",
45 parameters) -- and ranked by the co-design's objectives (Table 5.3: time, longest
segment, singularity, speed/assist, power), so its power is measured as the co-design's.

Which design (the spec's ``[evaluation]`` table; the other keys are WALK's settings)::

    baseline_of = "results/demo/global"    # a run folder, its run.sqlite or a run name: its best
                                    # evaluation (the ranking of `codesign simulate --best`),
                                    # or a design JSON file (`codesign screen --design` form)
    baseline_eval = "59:3"          # optional, with a run: evaluation ITERATION:PARTICLE
    baseline_mass_at = "attachments"   # or "segment_com" (where the lumps sit, below)

A run is read with the loader of ``codesign simulate --run RUN --best``
(:func:`codesign.run.stored.inline_run_reference`; relative paths from the working
directory, which workers on other machines must share); a run that is still being written
is refused unless ``baseline_eval`` pins one evaluation (its best may still change, and
the workers must all lump the same design). Bad input is one :class:`UserError` line,
raised by the driver before the run starts (the problem's ``parse_settings``); inside an
evaluation it is a failed record. The baseline is resolved once per process (cached).
``codesign simulate --run BASELINE_RUN --best`` replays a candidate of a baseline run on
the same lumped model (its metrics equal the stored ones).

The mass rule and where the lumps sit: :mod:`codesign.model.lumping`. The actuators weigh
what the source design's weigh (issue 15): each actuated joint's drivetrain where the
design chooses one (issue 30: ``j<id>.motor``, ``j<id>.stage_ratio``), else the mass law of
the source run's ``actuator_model`` / ``[evaluation.actuators]``, or of this spec's own
for a design file.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from codesign.errors import UserError
from codesign.model.anthropometry import human_geometry
from codesign.model.human import LEGS
from codesign.model.lumping import MASS_AT, SEGMENTS, PointMass, load_metrics, lumped_model, segment_loads
from codesign.model.morphology import build_morphology
from codesign.model.wearer_body import Load, segment_end
from codesign.types import Parameter
from codesign.problems import human_gait
from codesign.problems.base import Problem, WalkingHooks
from codesign.problems import walking
from codesign.problems.walking import Replay, cost_notes, unit_of, parse_walk_settings, replay, walk, warmup_settings
from codesign.topology.catalog import cached_catalog
from codesign.types import EvalContext, EvalRecord
from codesign.walking import Design, WalkSettings, load_design
from codesign.problems import objectives as ob
from codesign.walking.setup import joint_actuators, morphology_params

KEYS = ("baseline_of", "baseline_eval", "baseline_mass_at")
# the walking problems' metrics and the lumped masses (:func:`codesign.model.lumping.load_metrics`)
METRICS = walking.METRICS + tuple(f"added_mass_{segment}" for segment in SEGMENTS)


# --------------------------------------------------------------------------- the baseline
@dataclass(frozen=True)
class Baseline:
    """The lumped human: where its masses come from (``source``), the co-design ``design``
    (None for hand-made loads), one leg's ``loads``, the engine ``model`` and the design
    metrics its records carry."""

    source: str
    design: Any
    loads: tuple[PointMass, ...]
    model: Any
    metrics: dict[str, float]
    run_settings: WalkSettings | None = None   # the source run's WALK settings, if a run

    @staticmethod
    def from_loads(loads: Sequence[PointMass], source: str = "loads", design=None,
                   run_settings: WalkSettings | None = None) -> "Baseline":
        loads = tuple(loads)
        metrics = {"longest_segment": 0.0, "singularity": 0.0, **load_metrics(loads)}
        return Baseline(source, design, loads, lumped_model(loads), metrics, run_settings)

    def summary(self) -> str:
        """One line: the source and the lumped masses."""
        m = self.metrics
        return (f"baseline of {self.source}: {m['added_mass']:.3f} kg added -> torso "
                f"{m['added_mass_torso']:.3f} kg, each thigh {m['added_mass_thigh']:.3f} kg, "
                f"each shank {m['added_mass_shank']:.3f} kg")


@dataclass(frozen=True)
class BaselineSettings:
    """The problem's settings: WALK's (``walk``) and which design's masses to lump: ``of``,
    a design file's path or a stored run's design inlined by the run layer (JSON text of
    {design, evaluation, source}); ``which``, the run's evaluation "ITERATION:PARTICLE"
    (None: its best); ``mass_at``, where the lumps sit (:data:`MASS_AT`)."""

    walk: WalkSettings
    of: str
    which: str | None = None
    mass_at: str = MASS_AT[0]


def _text(value: Any, key: str) -> str | None:
    """A ``baseline_*`` setting's text (None when absent; UserError when not a non-empty string)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"evaluation.{key}: {value!r}; expected a non-empty string")
    return value


def parse_baseline_settings(table: Mapping[str, Any]) -> BaselineSettings:
    """``parse_settings`` of the problem: UserError (one line) for a missing or bad
    ``baseline_of``/``baseline_eval``/``baseline_mass_at``, an unknown ``baseline_*`` key,
    bad WALK settings, or a baseline that cannot be built (resolved here, once)."""
    for key in table:
        if str(key).startswith("baseline_") and key not in KEYS:
            raise UserError(f"evaluation.{key}: unknown key; expected one of {', '.join(KEYS)}")
    of = table.get("baseline_of")
    of = json.dumps(of, sort_keys=True) if isinstance(of, Mapping) else _text(of, "baseline_of")
    if of is None:
        raise UserError("evaluation.baseline_of: missing; expected a co-design run folder "
                        "(e.g. \"results/demo\": its best evaluation) or a design .json file")
    mass_at = _text(table.get("baseline_mass_at"), "baseline_mass_at") or MASS_AT[0]
    if mass_at not in MASS_AT:
        raise UserError(f"evaluation.baseline_mass_at: {mass_at!r}; expected one of {', '.join(MASS_AT)}")
    walk_table = {k: v for k, v in table.items() if k not in KEYS}
    settings = BaselineSettings(parse_walk_settings(walk_table, step_only=True), of,
                                _text(table.get("baseline_eval"), "baseline_eval"), mass_at)
    if settings.walk.wearer_mass_scale != 1.0:    # it would scale the lumps in the segments too
        raise UserError(f"evaluation.wearer_mass_scale: got {settings.walk.wearer_mass_scale:g} with the "
                        "anthropomorphic baseline, whose segments hold the device's lumped mass; expected 1")
    resolve_baseline(settings)
    return settings


def _design_source(settings: BaselineSettings):
    """(Design, source text, the run's WALK settings or None, catalog path) of
    ``baseline_of``: a design JSON file, or a stored run that the run layer has already
    read into a table {design, source, evaluation} (:func:`codesign.run.stored.inline_run_reference`)."""
    of = settings.of
    if of.startswith("{"):
        doc = json.loads(of)
        design = Design.from_json(doc.get("design"), "evaluation.baseline_of.design")
        source = str(doc.get("source", "a stored run"))
        try:
            theirs = WalkSettings.from_dict(doc.get("evaluation") or {})
        except UserError as exc:
            raise UserError(f"evaluation.baseline_of: {source}: {exc}") from None
        return design, source, theirs, theirs.catalog
    if not of.endswith(".json"):
        raise UserError(f"evaluation.baseline_of: {of} names a run; a run is read by the run layer "
                        "(codesign optimize / resume / simulate); expected a design .json file here")
    if settings.which is not None:
        raise UserError("evaluation.baseline_eval: only with a run in baseline_of; "
                        f"expected no baseline_eval with the design file {of}")
    return load_design(of), of, None, settings.walk.catalog


@lru_cache(maxsize=8)
def _resolve(settings: BaselineSettings, cwd: str) -> Baseline:
    """The baseline of ``settings`` (``cwd``: relative paths are the working directory's)."""
    design, source, run_settings, catalog = _design_source(settings)
    if design.topology is None:
        raise UserError(f"evaluation.baseline_of: {source} is the unaugmented human; expected a "
                        "co-design design (a topology and actuator pair) whose masses to lump")
    try:
        topology = cached_catalog(catalog).topology(design.topology)
    except KeyError:
        raise UserError(f"evaluation.baseline_of: {source}: topology {design.topology} is not in "
                        f"{catalog}; expected a topology of the catalog") from None
    walk = run_settings or settings.walk     # the design's own settings: its actuators and structure law
    try:
        loads = segment_loads(design_morphology(design, topology, walk), settings.mass_at)
    except (UserError, ValueError) as exc:
        raise UserError(f"evaluation.baseline_of: {source}: {exc}") from None
    label = f"{source} (topology {design.topology}, actuators {design.actuators[0]}-{design.actuators[1]})"
    return Baseline.from_loads(loads, label, design, run_settings)


def design_morphology(design: Design, topology, walk: WalkSettings):
    """MODEL's morphology of a co-design ``design`` (its ``topology``) with the actuator
    masses and structure law of ``walk`` (UserError/ValueError: a bad design)."""
    masses = [a.mass() for _, a in joint_actuators(design, walk)]
    return build_morphology(topology, design.actuators, morphology_params(topology, design.params),
                            human_geometry(), masses, walk.structure)


def carried_loads(design: Design, walk: WalkSettings) -> tuple[Load, ...]:
    """A co-design's added mass as the loads a person carries (``evaluation.loads``,
    :mod:`codesign.model.wearer_body`): its lumps (:func:`codesign.model.lumping.segment_loads`,
    "attachments") on the torso, thighs and shanks, each at its point's projection on the
    segment's axis (the design's x offset, up to +-0.15 m, and the joints' own cylinder
    inertia are left out); the torso's both legs' lumps. The same total mass as the design
    (issue 46: a zero-torque device of mass m costs what m carried as loads costs)."""
    topology = cached_catalog(walk.catalog).topology(design.topology)
    human = human_geometry()
    loads = []
    for lump in segment_loads(design_morphology(design, topology, walk)):
        end = segment_end(human, lump.segment)
        position = float(np.clip(np.dot(lump.xz, end) / np.dot(end, end), 0.0, 1.0))
        loads.append(Load(lump.segment, lump.mass * (len(LEGS) if lump.segment == "torso" else 1), position))
    return tuple(loads)


def resolve_baseline(settings: BaselineSettings) -> Baseline:
    """The baseline the settings ask for (cached per process; UserError, one line, when it
    cannot be built)."""
    return _resolve(settings, str(Path.cwd()))


# --------------------------------------------------------------------------- evaluation
def evaluate_lumped(params: Mapping[str, float], baseline: Baseline, settings: WalkSettings) -> EvalRecord:
    """WALK's evaluation of the human-gait controller ``params`` on ``baseline``'s model,
    with its design metrics and ``time_fraction``. Never raises: a bad candidate is a
    failed record. Objectives: the settings' (default Table 5.3)."""
    bad = human_gait.human_params_error(params)
    if bad is not None:
        return bad
    return with_baseline_metrics(walk(Design(dict(params)), settings, baseline.model), baseline)


def with_baseline_metrics(record: EvalRecord, baseline: Baseline) -> EvalRecord:
    """An ok record of a rollout of ``baseline.model`` with the baseline's design metrics
    (``added_mass``, ``com_shift``, ``added_mass_<segment>``) in place of the human's; a
    failed record as it is."""
    if not record.ok:
        return record
    return dataclasses.replace(record, metrics={**record.metrics, **baseline.metrics})


def evaluate_baseline(params: dict[str, float], context: EvalContext) -> EvalRecord:
    """The problem's evaluate (OPT's contract): never raises for a bad candidate."""
    if context.settings is None:
        return EvalRecord.failed("evaluation.baseline_of: missing; expected the problem's settings")
    try:
        baseline = resolve_baseline(context.settings)
    except UserError as exc:
        return EvalRecord.failed(str(exc))
    return evaluate_lumped(params, baseline, context.settings.walk)


def replay_design(design: Design, settings: BaselineSettings, record_times=None) -> Replay:
    """One human-gait design on the lumped model with its trajectory (``codesign simulate``)."""
    baseline = resolve_baseline(settings)
    out = replay(design, settings.walk, record_times, baseline.model)
    return dataclasses.replace(out, record=with_baseline_metrics(out.record, baseline))


def notes(settings: BaselineSettings) -> tuple[str, ...]:
    """The lumped masses, and a warning when the rollout settings differ from the source
    run's (printed by the driver before a run)."""
    baseline = resolve_baseline(settings)
    out = [baseline.summary()]
    if baseline.run_settings is not None:
        ours, theirs = settings.walk.rollout, baseline.run_settings.rollout
        differ = [f.name for f in dataclasses.fields(ours) if getattr(ours, f.name) != getattr(theirs, f.name)]
        if differ:
            out.append(f"warning: evaluation settings {', '.join(differ)} differ from the source run's; "
                       "power is compared on the same footing only with the same settings")
    return tuple(out) + cost_notes(settings)


def warmup_baseline(settings: BaselineSettings) -> None:
    """Compile the kernels once in this process: a 50-ms rollout of the mid-bounds
    controller on the lumped model (resolving the baseline on the way)."""
    middle = {n: 0.5 * (lo + hi) for n, (lo, hi) in human_gait.human_gait_layout().bounds().items()}
    evaluate_lumped(middle, resolve_baseline(settings), warmup_settings(settings.walk))


WALKING = WalkingHooks(decode=human_gait.decode, check_design=human_gait.check_design,
                       replay=replay_design,
                       own_model=False)


def problem() -> Problem:
    """Problem ``anthropomorphic_baseline``: the human-gait space, Table 5.3 objectives with
    stage 1 on ``time_fraction`` (as ``exo_codesign``)."""

    parameters = tuple(Parameter(n, lo, hi) for n, (lo, hi) in human_gait.human_gait_layout().bounds().items())
    stages = ob.codesign_stages(motors=False)
    return Problem("anthropomorphic_baseline", evaluate_baseline,
                   "anthropomorphic baseline (thesis 5.6): the human carrying a co-design "
                   "design's added mass on its segments, step impedance at hip, knee and ankle, "
                   "Table 5.3 objectives", parameters=parameters, objectives=stages,
                   parse_settings=parse_baseline_settings, warmup=warmup_baseline, notes=notes,
                   run_reference=("baseline_of", "baseline_eval"), metrics=METRICS, walking=WALKING,
                   metric_unit=unit_of)
