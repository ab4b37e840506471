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

    baseline_of = "results/demo"    # a run folder, its run.sqlite or a run name: its best
                                    # evaluation (the ranking of `codesign simulate --best`),
                                    # or a design JSON file (`codesign screen --design` form)
    baseline_eval = "59:3"          # optional, with a run: evaluation ITERATION:PARTICLE
    baseline_mass_at = "attachments"   # or "segment_com" (where the lumps sit, below)

A run is read with the loader of ``codesign simulate --run RUN --best``
(:func:`codesign.run.stored.inline_run_reference`; relative paths from the working
directory, which workers on other machines must share); a run that is still being written
is refused unless ``baseline_eval`` pins one evaluation (its best may still change, and
the workers must all lump the same design). Bad input is one :class:`UserError` line,
raised by the driver before the run starts (the problem's ``check`` hook); inside an
evaluation it is a failed record. The baseline is resolved once per process (cached).
``codesign simulate --run BASELINE_RUN --best`` replays a candidate of a baseline run on
the same lumped model (its metrics equal the stored ones).

The mass rule and where the lumps sit: :mod:`codesign.model.lumping`. The actuators weigh
what the source design's weigh (issue 15): the mass law of the source run's
``actuator_model`` / ``[evaluation.actuators]``, or of this spec's own for a design file.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from codesign.errors import UserError
from codesign.model.anthropometry import human_geometry
from codesign.model.lumping import MASS_AT, SEGMENTS, PointMass, load_metrics, lumped_model, segment_loads
from codesign.model.morphology import build_morphology
from codesign.types import Parameter
from codesign.problems import exo_codesign, human_gait
from codesign.problems.base import Problem
from codesign.problems import walking
from codesign.problems.walking import short_settings, walk
from codesign.types import EvalContext, EvalRecord
from codesign.walking import Design, WalkSettings, load_design
from codesign.problems import objectives as ob
from codesign.walking.settings import actuators_from_dict
from codesign.walking.setup import morphology_params

KEYS = ("baseline_of", "baseline_eval", "baseline_mass_at")
# the walking problems' metrics and the lumped masses (:func:`codesign.model.lumping.load_metrics`)
METRICS = walking.METRICS + tuple(f"added_mass_{segment}" for segment in SEGMENTS)
# The lumped actuators weigh what the source design's weigh: the source run's actuator
# settings, or, for a design file, this spec's own (issue 15).
ACTUATOR_KEYS = ("actuator_model", "actuators")


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
    run_settings: dict | None = None      # the source run's [evaluation] table, if a run

    @staticmethod
    def from_loads(loads: Sequence[PointMass], source: str = "loads", design=None,
                   run_settings: dict | None = None) -> "Baseline":
        loads = tuple(loads)
        metrics = {"longest_segment": 0.0, "singularity": 0.0, **load_metrics(loads)}
        return Baseline(source, design, loads, lumped_model(loads), metrics, run_settings)

    def summary(self) -> str:
        """One line: the source and the lumped masses."""
        m = self.metrics
        return (f"baseline of {self.source}: {m['added_mass']:.3f} kg added -> torso "
                f"{m['added_mass_torso']:.3f} kg, each thigh {m['added_mass_thigh']:.3f} kg, "
                f"each shank {m['added_mass_shank']:.3f} kg")


def _text(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"evaluation.{key}: {value!r}; expected a non-empty string")
    return value


def _design_source(of: Any, which: str | None, settings: Mapping[str, Any]):
    """(Design, source text, the run's [evaluation] table or None, catalog path) of
    ``baseline_of``: a design JSON file, or a stored run that the run layer has already
    read into a table {design, source, evaluation} (:func:`codesign.run.stored.inline_baseline`)."""
    if isinstance(of, Mapping):
        design = Design.from_json(of.get("design"), "evaluation.baseline_of.design")
        run_settings = dict(of.get("evaluation") or {})
        source = str(of.get("source", "a stored run"))
        return design, source, run_settings, str(exo_codesign.catalog_path(run_settings))
    if not isinstance(of, str) or not of.strip():
        raise UserError(f"evaluation.baseline_of: {of!r}; expected a non-empty string")
    if not of.endswith(".json"):
        raise UserError(f"evaluation.baseline_of: {of} names a run; a run is read by the run layer "
                        "(codesign optimize / resume / simulate); expected a design .json file here")
    if which is not None:
        raise UserError("evaluation.baseline_eval: only with a run in baseline_of; "
                        f"expected no baseline_eval with the design file {of}")
    return load_design(of), of, None, str(exo_codesign.catalog_path(settings))


@lru_cache(maxsize=8)
def _resolve(of: str, which: str | None, mass_at: str, settings_items: tuple, cwd: str) -> Baseline:
    """``of``: a design file's path, or an inlined stored design as JSON text (hashable)."""
    source = json.loads(of) if of.startswith("{") else of
    design, source, run_settings, catalog = _design_source(source, which, dict(settings_items))
    if design.topology is None:
        raise UserError(f"evaluation.baseline_of: {source} is the unaugmented human; expected a "
                        "co-design design (a topology and actuator pair) whose masses to lump")
    try:
        topology = exo_codesign.get_catalog({"catalog": catalog}).topology(design.topology)
    except KeyError:
        raise UserError(f"evaluation.baseline_of: {source}: topology {design.topology} is not in "
                        f"{catalog}; expected a topology of the catalog") from None
    own = dict(settings_items)
    actuator_settings = run_settings if run_settings is not None else {
        k: json.loads(own[k]) for k in ACTUATOR_KEYS if k in own}
    try:
        actuator = actuators_from_dict(actuator_settings.get("actuator_model", "bounded"),
                                       actuator_settings.get("actuators"))
    except UserError as exc:
        raise UserError(f"evaluation.baseline_of: {source}: {exc}") from None
    try:
        morph = build_morphology(topology, design.actuators,
                                 morphology_params(topology, design.params), human_geometry(),
                                 actuator.mass())
        loads = segment_loads(morph, mass_at)
    except (UserError, ValueError) as exc:
        raise UserError(f"evaluation.baseline_of: {source}: {exc}") from None
    label = f"{source} (topology {design.topology}, actuators {design.actuators[0]}-{design.actuators[1]})"
    return Baseline.from_loads(loads, label, design, run_settings)


def resolve_baseline(settings: Mapping[str, Any]) -> Baseline:
    """The baseline the ``[evaluation]`` table asks for (cached per process). Raises
    UserError (one line) for a missing or bad ``baseline_of``/``baseline_eval``/
    ``baseline_mass_at``, an unknown ``baseline_*`` key, or a design without a topology."""
    for key in settings:
        if str(key).startswith("baseline_") and key not in KEYS:
            raise UserError(f"evaluation.{key}: unknown key; expected one of {', '.join(KEYS)}")
    of = settings.get("baseline_of")
    if not isinstance(of, Mapping):
        of = _text(settings, "baseline_of")
    if of is None:
        raise UserError("evaluation.baseline_of: missing; expected a co-design run folder "
                        "(e.g. \"results/demo\": its best evaluation) or a design .json file")
    which = _text(settings, "baseline_eval")
    mass_at = _text(settings, "baseline_mass_at") or MASS_AT[0]
    if mass_at not in MASS_AT:
        raise UserError(f"evaluation.baseline_mass_at: {mass_at!r}; expected one of {', '.join(MASS_AT)}")
    catalog = settings.get("catalog")
    key = json.dumps(of, sort_keys=True) if isinstance(of, Mapping) else of
    items = (("catalog", catalog),) if catalog else ()
    items += tuple((k, json.dumps(settings[k], sort_keys=True)) for k in ACTUATOR_KEYS if k in settings)
    return _resolve(key, which, mass_at, items, str(Path.cwd()))


# --------------------------------------------------------------------------- evaluation
def walk_settings_dict(settings: Mapping[str, Any]) -> dict:
    """The ``[evaluation]`` table without the baseline's keys (WALK's settings)."""
    return {k: v for k, v in settings.items() if k not in KEYS}


def evaluate_lumped(params: Mapping[str, float], baseline: Baseline,
                    settings: Mapping[str, Any]) -> EvalRecord:
    """WALK's evaluation of the human-gait controller ``params`` on ``baseline``'s model,
    with its design metrics and ``time_fraction``. Never raises: a bad candidate or a bad
    settings table is a failed record. Objectives: the settings' (default Table 5.3)."""

    settings = walk_settings_dict(settings)
    bad = human_gait.human_params_error(params)
    if bad is not None:
        return bad
    if settings.get("human_control", "step") != "step":
        return EvalRecord.failed("evaluation.human_control: this problem searches the step "
                                 "layout of Table 4.3; expected \"step\"")
    return with_baseline_metrics(walk(Design(dict(params)), settings, baseline.model), baseline)


def with_baseline_metrics(record: EvalRecord, baseline: Baseline) -> EvalRecord:
    """An ok record of a rollout of ``baseline.model`` with the baseline's design metrics
    (``added_mass``, ``com_shift``, ``added_mass_<segment>``) in place of the human's; a
    failed record as it is."""
    if not record.ok:
        return record
    return dataclasses.replace(record, metrics={**record.metrics, **baseline.metrics})


def evaluate_baseline(params: dict[str, float], context: EvalContext) -> EvalRecord:
    """The problem's evaluate (OPT's contract): never raises for a bad candidate; a bad
    ``baseline_*`` setting is a failed record too (the driver refuses it before the run,
    :func:`check_settings`)."""
    try:
        baseline = resolve_baseline(context.settings)
    except UserError as exc:
        return EvalRecord.failed(str(exc))
    return evaluate_lumped(params, baseline, context.settings)


def check_settings(settings: Mapping[str, Any]) -> None:
    """Driver-side check of the ``[evaluation]`` table before a run starts: resolves the
    baseline and WALK's settings (UserError, one line), prints the lumped masses to stderr
    and warns when the rollout settings differ from the source run's."""

    baseline = resolve_baseline(settings)
    own = walk_settings_dict(settings)
    if own.get("human_control", "step") != "step":
        raise UserError("evaluation.human_control: expected \"step\" (this problem searches the "
                        "step layout of Table 4.3)")
    if own.get("optimize_frequency"):
        raise UserError("evaluation.optimize_frequency: expected false (the gait frequency is fixed)")
    rollout = WalkSettings.from_dict(own).rollout
    print(baseline.summary(), file=sys.stderr)
    if baseline.run_settings is not None:
        try:
            theirs = WalkSettings.from_dict(baseline.run_settings).rollout
        except UserError:
            return
        differ = [f.name for f in dataclasses.fields(rollout)
                  if getattr(rollout, f.name) != getattr(theirs, f.name)]
        if differ:
            print(f"warning: evaluation settings {', '.join(differ)} differ from the source run's; "
                  "power is compared on the same footing only with the same settings", file=sys.stderr)


def warmup_baseline(settings: dict) -> None:
    """Compile the kernels once in this process: a 50-ms rollout of the mid-bounds
    controller on the lumped model (resolving the baseline on the way)."""

    middle = {n: 0.5 * (lo + hi) for n, (lo, hi) in human_gait.human_gait_layout().bounds().items()}
    evaluate_lumped(middle, resolve_baseline(settings), short_settings(settings))


def problem() -> Problem:
    """Problem ``anthropomorphic_baseline``: the human-gait space, Table 5.3 objectives with
    stage 1 on ``time_fraction`` (as ``exo_codesign``)."""

    parameters = tuple(Parameter(n, lo, hi) for n, (lo, hi) in human_gait.human_gait_layout().bounds().items())
    stages = ob.codesign_stages(motors=False)
    return Problem("anthropomorphic_baseline", evaluate_baseline,
                   "anthropomorphic baseline (thesis 5.6): the human carrying a co-design "
                   "design's added mass on its segments, step impedance at hip, knee and ankle, "
                   "Table 5.3 objectives", parameters=parameters, objectives=stages,
                   warmup=warmup_baseline, check=check_settings,
                   run_reference=("baseline_of", "baseline_eval"), metrics=METRICS)
