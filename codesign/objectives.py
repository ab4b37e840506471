"""Lexicographic fitness (thesis §3.3.2, eq. 3.12-3.13, Table 3.2): the one place where
fitness is computed and where solutions are ordered.

N ordered objectives; the first N-1 carry an "until" condition. A solution is ranked first
by how many conditions it satisfies *in sequence* (``stage``, larger is better), then by
the value of the objective it is currently optimizing (``stage_value``, smaller is better;
a maximized objective is negated). Failed evaluations rank after every successful one.

* :func:`score` -- a problem's :class:`~codesign.types.EvalRecord` (status, metrics) ->
  the same record with (stage, stage_value) under the objectives (the run layer calls it
  once per evaluation; ``codesign simulate`` calls it for a replay);
* :func:`fitness_key` / :func:`better` -- the order as the tuple
  ``key = (failed, -stage, stage_value)`` (smaller is better; the optimizer stores keys as
  float arrays of shape [..., 3]; ``NO_KEY``, worse than a failure, marks "nothing known");
* :func:`ranked` -- the same order over a table of stored evaluations, ties broken by
  (iteration, particle).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from codesign.types import EvalRecord

if TYPE_CHECKING:
    import pandas as pd

SENSES = ("minimize", "maximize")
NO_KEY = (2.0, 0.0, math.inf)


@dataclass(frozen=True)
class Objective:
    """One lexicographic stage: a metric, its sense, and (except the last) its condition.

    The condition is satisfied when the metric is ``<= until`` (minimize) or ``>= until``
    (maximize). The thesis writes strict "<" (Table 3.2); equality has measure zero.
    """

    metric: str
    sense: str = "minimize"
    until: float | None = None

    def condition(self) -> str:
        """Its condition in words ("<= 0.7", ">= 1"; "" without one)."""
        return "" if self.until is None else f"{'<=' if self.sense == 'minimize' else '>='} {self.until:g}"


def lexicographic(metrics: Mapping[str, float], objectives: Sequence[Objective]) -> tuple[int, float]:
    """(stage, stage_value) of a metrics dict. Raises KeyError for a missing metric."""
    stage = 0
    for k, objective in enumerate(objectives):
        value = float(metrics[objective.metric])
        signed = value if objective.sense == "minimize" else -value
        last = k == len(objectives) - 1
        if last or objective.until is None:
            return stage, signed
        done = value <= objective.until if objective.sense == "minimize" else value >= objective.until
        if not done:
            return stage, signed
        stage += 1
    raise ValueError("no objectives")


def stage_label(stage: int, objectives: Sequence[Objective]) -> str:
    """The one stage numbering of tables, docs and the CLI: "stage k of n: metric", k
    counting the objectives from 1. A solution with ``stage`` conditions met is at stage
    ``stage + 1`` (the objective it is optimizing; the last once every condition holds);
    "stage k met" (the progress milestones) means objective k's condition holds."""
    n = len(objectives)
    k = min(int(stage), n - 1)
    return f"stage {k + 1} of {n}: {objectives[k].metric}"


def with_unit(value: float, unit: str | None, digits: int = 6) -> str:
    """A metric's value with its unit ("850.64 N"; a ratio "-" or an unknown unit: the
    number alone)."""
    number = f"{value:.{digits}g}"
    return number if unit in (None, "", "-", "?") else f"{number} {unit}"


def stage_objective(stage: int, stage_value: float, objectives: Sequence[Objective]) -> tuple[Objective, float]:
    """(the objective a solution at ``stage`` optimizes, that metric's own value: the stored
    ``stage_value`` with a maximized one's sign restored, never "-0")."""
    objective = objectives[min(int(stage), len(objectives) - 1)]
    return objective, (stage_value if objective.sense == "minimize" else -stage_value) + 0.0


def describe_fitness(stage: int, stage_value: float, objectives: Sequence[Objective],
                     unit: Callable[[str], str | None] | None = None) -> str:
    """(stage, stage_value) in words: the stage (:func:`stage_label`), its metric's own
    value (a maximized one's sign restored) with its unit (``unit(metric)``, e.g. a
    problem's ``metric_unit``) and how many of the conditions before it are met, e.g.
    "stage 10 of 14: cuff_force_peak 850.64 N (wanted <= 700; 9 of 13 conditions met)";
    without objectives, the plain pair."""
    if not objectives:
        return f"stage {stage}, value {stage_value:.6g}"
    objective, value = stage_objective(stage, stage_value, objectives)
    conditions = len(objectives) - 1
    wanted = "" if objective.until is None else f"wanted {objective.condition()}; "
    goal = f"{objective.sense[:-1]}ing" if objective.until is None else ""
    met = f"{min(int(stage), conditions)} of {conditions} conditions met"
    shown = with_unit(value, unit(objective.metric) if unit else None)
    return f"{stage_label(stage, objectives)} {shown} ({goal + ', ' if goal else ''}{wanted}{met})"


def unmet_conditions(metrics: Mapping[str, float], objectives: Sequence[Objective],
                     unit: Callable[[str], str | None] | None = None) -> tuple[str, ...]:
    """Every condition (an objective with ``until``, the last excepted) that ``metrics``
    does not meet, in words -- not only the first, where the lexicographic stage stops --
    e.g. ("interaction_force_peak_bw 146 (wanted <= 3)", "grf_peak_bw not measured")."""
    out = []
    for objective in objectives[:-1]:
        if objective.until is None:
            continue
        value = float(metrics.get(objective.metric, math.nan))
        wanted = f"wanted {objective.condition()}"
        if math.isnan(value):
            out.append(f"{objective.metric} not measured ({wanted})")
        elif not (value <= objective.until if objective.sense == "minimize" else value >= objective.until):
            shown = with_unit(value, unit(objective.metric) if unit else None, digits=4)
            out.append(f"{objective.metric} {shown} ({wanted})")
    return tuple(out)


def score(record: EvalRecord, objectives: Sequence[Objective]) -> EvalRecord:
    """``record`` with its lexicographic (stage, stage_value); never raises.

    A failed record stays failed (stage 0, NaN). Otherwise a metric that is not a number,
    a missing or non-finite metric that a reached stage needs, or a non-finite stage value
    makes the record failed, naming the reason. Metrics that are not finite are "not
    measured" (a later, unreached stage may need them; stored as NULL). Without objectives
    the record's own (stage, stage_value) stand (a problem that ranks itself).
    """
    if not record.ok:
        return dataclasses.replace(record, stage=0, stage_value=math.nan)
    try:
        metrics = {str(k): float(v) for k, v in record.metrics.items()}
    except (TypeError, ValueError) as exc:
        return EvalRecord.failed(f"a metric is not a number ({exc})")
    if objectives:
        finite = {k: v for k, v in metrics.items() if math.isfinite(v)}
        try:
            stage, value = lexicographic(finite, objectives)
        except KeyError as exc:
            name = exc.args[0]
            reason = f"non-finite metric {name} = {metrics[name]}" if name in metrics else \
                f"missing metric {name!r} needed by the objectives"
            return dataclasses.replace(EvalRecord.failed(reason), metrics=metrics)
        record = dataclasses.replace(record, stage=stage, stage_value=value, metrics=metrics)
    if not math.isfinite(record.stage_value):
        return EvalRecord.failed(f"non-finite stage value {record.stage_value}")
    return record


def fitness_key(record: EvalRecord) -> tuple[float, float, float]:
    """Sort key, smaller is better: (failed, -stage, stage_value) as floats.

    A failed record, or one whose stage value is not a finite number, ranks after every
    successful one: (1, 0, inf).
    """
    if not record.ok or not math.isfinite(record.stage_value):
        return (1.0, 0.0, math.inf)
    return (0.0, -float(record.stage), float(record.stage_value))


def better(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> bool:
    """True when key a is strictly better (lexicographically smaller) than key b."""
    return tuple(float(v) for v in a) < tuple(float(v) for v in b)


def ranked(evaluations: "pd.DataFrame") -> "pd.DataFrame":
    """Stored evaluations (columns status, stage, stage_value, iteration, particle) sorted
    best first by the key of :func:`fitness_key`, ties broken by (iteration, particle) so
    that the order is deterministic."""
    bad = (evaluations["status"] != "ok") | ~np.isfinite(evaluations["stage_value"])
    keyed = evaluations.assign(_bad=bad.astype(int), _neg=-evaluations["stage"],
                               _val=evaluations["stage_value"].where(~bad, np.inf))
    keyed = keyed.sort_values(["_bad", "_neg", "_val", "iteration", "particle"], kind="stable")
    return keyed.drop(columns=["_bad", "_neg", "_val"])
