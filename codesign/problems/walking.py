"""What the walking problems share: their settings record, evaluating a design under it,
replaying one design with its trajectory, and the metric ``time_fraction`` their first
stage is stated on.

Settings. The spec's ``[evaluation]`` table is read once, on the driver, by a problem's
``parse_settings`` into :class:`WalkingProblemSettings` (WALK's
:class:`~codesign.walking.WalkSettings` checked for what the problem searches); workers,
warm-ups, ``codesign simulate`` and the report use that record, never the table.

Stage 1 of Tables 5.3 and 4.2 ("time until time = maxtime") is stated on
``time_fraction`` = time survived / ``max_time`` (until >= 1): the same order for a fixed
``max_time``, and it stays right when a spec changes ``evaluation.max_time`` (a stage on
``time`` until 10 s could never be met by a 5-s evaluation).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from codesign.errors import UserError
from codesign.model.lumping import SEGMENTS
from codesign.problems.effort import EFFORT_UNITS, OWN_UNITS
from codesign.problems.objectives import with_derived
from codesign.problems.robust import (ROBUST_DEFINITION, ROBUST_METRIC, ROBUST_WORST, read_robust_checks,
                                      with_robust_score)
from codesign.types import EvalRecord
from codesign.walking import METRICS as WALK_METRICS, Design, WalkSettings, check_design, evaluate_detailed
from codesign.walking.metrics import REGISTRY, SITE, metric_unit


# the metrics of a walking problem's records: WALK's and the two added here
METRICS = WALK_METRICS + ("speed_assist_score", "time_fraction")
# the units of the metrics the problems add to WALK's (the baseline's lumped masses too)
PROBLEM_UNITS = {"speed_assist_score": "-", "time_fraction": "-", ROBUST_METRIC: "-",
                 **{name: of.unit for name, of in ROBUST_WORST.items()},
                 **{f"added_mass_{segment}": "kg" for segment in SEGMENTS}, **EFFORT_UNITS, **OWN_UNITS}
# the gait frequency is not searched by any walking problem (thesis 4.1.2)
FIXED_FREQUENCY = ("evaluation.optimize_frequency: not part of this problem's space; expected "
                   "false (the gait frequency is fixed at 0.9 Hz)")
STEP_LAYOUT = ("evaluation.human_control: got {}; expected \"step\" (this problem searches the step "
               "layout of Table 4.3)")
WARMUP_TIME = 0.05   # s, the warm-up hooks' rollout (compiles the kernels)
THESIS_MAX_TIME = 10.0   # s, the thesis's evaluation period (4.1.2, 5.4)
LONG_MAX_TIME = 60.0     # s: beyond this a run is warned of its cost
# CPU seconds per simulated second of a walking design (time-stepping rollout, the 2-core
# reference machine: 0.2-0.3 s for a 10-s evaluation, pipelines/demo.toml)
CPU_PER_SIMULATED_S = 0.03


@dataclass(frozen=True)
class WalkingProblemSettings:
    """The settings of a walking problem: WALK's, checked for this problem, and the
    contact checks a walker is replayed under inside the search
    (``evaluation.robust_checks``, :mod:`codesign.problems.robust`; the co-design's and the
    human gait's; keyword-only, so that the families' settings records extend this one with
    positional fields of their own)."""

    walk: WalkSettings = WalkSettings()
    robust_checks: tuple[str, ...] = dataclasses.field(default=(), kw_only=True)


@dataclass(frozen=True)
class Replay:
    """One design evaluated with its trajectory: the record (the problem's metrics, not yet
    scored), WALK's timings (s), rollout and setup (None when it was not simulated), and
    for an assisting device the design whose wearer alone its ``effort_reduction`` is
    measured against (``reference``; None: the design's own wearer)."""

    record: EvalRecord
    timings: dict[str, float]
    rollout: Any
    setup: Any
    reference: Design | None = None


def parse_walk_settings(table: Mapping[str, Any], *, step_only: bool = False) -> WalkSettings:
    """WALK's settings of a walking problem's ``[evaluation]`` table (UserError, one line
    naming the key): the gait frequency is never searched; ``step_only``: the problem
    searches the human's step layout (Table 4.3), so ``human_control`` must be "step"."""
    settings = WalkSettings.from_dict(table)
    if settings.optimize_frequency:
        raise UserError(FIXED_FREQUENCY)
    if step_only and settings.human_control != "step":
        raise UserError(STEP_LAYOUT.format(f'"{settings.human_control}"'))
    return settings


def parse_problem_settings(table: Mapping[str, Any], *, step_only: bool = False) -> WalkingProblemSettings:
    """WALK's settings of an ``[evaluation]`` table (:func:`parse_walk_settings`) and its
    robust checks (:mod:`codesign.problems.robust`): the co-design's and the human gait's."""
    table = dict(table)
    checks = read_robust_checks(table)
    return WalkingProblemSettings(parse_walk_settings(table, step_only=step_only), robust_checks=checks)


def parse_human_settings(table: Mapping[str, Any]) -> WalkingProblemSettings:
    """``parse_settings`` of the human-gait problems (the impedance law or the muscles)."""
    return parse_problem_settings(table, step_only=True)


def with_problem_metrics(record: EvalRecord, settings: WalkSettings) -> EvalRecord:
    """The record with the metrics the walking problems' objectives use besides WALK's:
    ``speed_assist_score`` (Table 5.3, :func:`codesign.problems.objectives.with_derived`)
    and ``time_fraction`` = time / max_time (module docstring). A failed record as it is."""
    if not record.ok:
        return record
    metrics = with_derived(record.metrics)
    if "time" in metrics:
        metrics["time_fraction"] = metrics["time"] / settings.rollout.max_time
    return dataclasses.replace(record, metrics=metrics)


def walk(design: Design, settings: WalkSettings, human_model=None) -> EvalRecord:
    """WALK's evaluation plus the problems' metrics. ``human_model``: the unaugmented
    human's engine model to use instead of the human's (the anthropomorphic baseline's
    lumped model)."""
    return replay(design, settings, None, human_model).record


def replay(design: Design, settings: WalkSettings, record_times: np.ndarray | None = None,
           human_model=None) -> Replay:
    """:func:`walk` recording the trajectory at ``record_times`` (s; None: none)."""
    record, timings, rollout, setup = evaluate_detailed(design, settings, record_times,
                                                        human_model=human_model)
    return Replay(with_problem_metrics(record, settings), timings, rollout, setup)


def replay_design(design: Design, settings: WalkingProblemSettings, record_times=None) -> Replay:
    """The ``WalkingHooks.replay`` of the co-design and human-gait problems: the walk, its
    record with ``robust_walk_score`` when the settings name robust checks (the search's
    record, :func:`walk_robust`)."""
    out = replay(design, settings.walk, record_times)
    return dataclasses.replace(out, record=robust_record(out.record, design, settings))


def walk_robust(design: Design, settings: WalkingProblemSettings) -> EvalRecord:
    """The co-design's and the human gait's evaluation: WALK's walk under ``settings.walk``, replayed under
    ``settings.robust_checks`` when it meets the walking verdict
    (:func:`codesign.problems.robust.with_robust_score`)."""
    return robust_record(walk(design, settings.walk), design, settings)


def robust_record(record: EvalRecord, design: Design, settings: WalkingProblemSettings) -> EvalRecord:
    """``record`` (the design's walk under ``settings.walk``) with its robust score."""
    return with_robust_score(record, settings.robust_checks, lambda change: walk(design, change(settings.walk)))


def check_walking_design(design: Design, settings: WalkSettings, where: str, augmented: bool) -> None:
    """UserError (one line, prefixed ``where``) unless ``design`` is a co-design design
    (``augmented``) or the unaugmented human, with exactly the parameters its morphology and
    controller read (:func:`codesign.walking.check_design`)."""
    if (design.topology is not None) != augmented:
        expected = ("a co-design design (a topology and actuator pair)" if augmented else
                    "the unaugmented human (topology null)")
        raise UserError(f"{where}: topology {'null' if design.topology is None else design.topology}; "
                        f"expected {expected} for this problem")
    check_design(design, settings, where)


def cost_notes(settings: WalkingProblemSettings) -> tuple[str, ...]:
    """The walking problems' ``notes``: a warning with the expected cost when ``max_time``
    is far beyond the thesis's 10 s (a typo of 100000 would otherwise sit at 0 % for days)."""
    max_time = settings.walk.rollout.max_time
    if max_time <= LONG_MAX_TIME:
        return ()
    return (f"warning: evaluation.max_time = {max_time:g} s is {max_time / THESIS_MAX_TIME:.3g} times the "
            f"thesis's {THESIS_MAX_TIME:g} s: a design that walks costs ~{CPU_PER_SIMULATED_S * max_time:.3g} s "
            f"of CPU per evaluation ({CPU_PER_SIMULATED_S:g} s per simulated second)",)


def unit_of(name: str) -> str | None:
    """The unit of a walking problem's metric ("-": a ratio; None: undeclared): WALK's
    registry (:func:`codesign.walking.metrics.metric_unit`) and :data:`PROBLEM_UNITS`; the
    walking problems' ``metric_unit``."""
    return PROBLEM_UNITS.get(name) or metric_unit(name)


# one line each, as WALK's registry defines its own: the metrics the problems add
PROBLEM_DEFINITIONS = {
    ROBUST_METRIC: ROBUST_DEFINITION,
    **{name: of.definition for name, of in ROBUST_WORST.items()},
    "time_fraction": "time walked / max_time (1: the whole evaluation, no fall)",
    "speed_assist_score": "speed_match x (1 - assist_fraction), plus 1 once speed_match >= 0.95 and "
                          "assist_fraction < 0.1 (>= 1: at the target speed without the pitch assist; Table 5.3)",
}


def metric_definition(name: str) -> str | None:
    """The one-line definition of a walking problem's metric: :data:`PROBLEM_DEFINITIONS`,
    else WALK's registry (a "<site>" entry matches every site's name); None if undeclared."""
    if name in PROBLEM_DEFINITIONS:
        return PROBLEM_DEFINITIONS[name]
    exact = [m.definition for m in REGISTRY if m.name == name]
    sites = [m.definition for m in REGISTRY if m.name.startswith(SITE) and name.endswith(m.name[len(SITE):])]
    return (exact + sites + [None])[0]


def metric_units(names) -> dict[str, str]:
    """Metric name -> unit (:func:`unit_of`; "?" for a name no registry declares)."""
    return {name: unit_of(name) or "?" for name in names}


def warmup_settings(settings: WalkSettings) -> WalkSettings:
    """The settings with a WARMUP_TIME rollout (warm-up hooks: compile the kernels)."""
    return settings.with_rollout(max_time=min(WARMUP_TIME, settings.rollout.max_time))
