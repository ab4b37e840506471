"""Frozen records that travel between the pipeline stages.

The one record every stage agrees on is :class:`EvalRecord`, the result of evaluating one
design (one particle at one iteration). A problem is a pure function::

    evaluate(params: dict[str, float], context: EvalContext) -> EvalRecord

that never raises for a bad design: a design that cannot be evaluated is returned as
``status="failed"`` with a ``message`` (as Optuna's FAIL trials), and the optimizer ranks
it worse than every successful evaluation.

Fitness convention (lexicographic, thesis §3.3.2): ``stage`` counts the lexicographic
stages fully satisfied (larger is better) and ``stage_value`` is the value of the current
(first unsatisfied, or last) stage, **smaller is better**. Two records compare as the tuple
``(-stage, stage_value)`` (see :func:`codesign.objectives.fitness_key`); a failed record ranks worst.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

STATUS_OK = "ok"
STATUS_FAILED = "failed"


@dataclass(frozen=True)
class EvalContext:
    """What an evaluation may know besides its parameters.

    ``seed`` is derived on the driver from (run seed, iteration, particle) so that a
    stochastic evaluation gives the same result on any worker; ``subspace`` names the
    subspace (group per pool) the particle is in; ``settings`` is the problem's frozen
    settings record, parsed once from the spec's ``[evaluation]`` table by its
    ``parse_settings`` (None: the problem's defaults, for a call outside a run).
    """

    seed: int = 0
    iteration: int = 0
    particle: int = 0
    subspace: tuple[str, ...] = ()
    settings: Any = None


@dataclass(frozen=True)
class Candidate:
    """One evaluation asked for by the optimizer (what a worker receives).

    subspace_id: stable id of the particle's subspace (see codesign.optimize.space);
    groups: the active group name in each pool; params: parameter name -> value (SI);
    seed: derived from (run seed, iteration, particle), for stochastic evaluations.
    """

    iteration: int
    particle: int
    subspace_id: int
    groups: tuple[str, ...]
    params: dict[str, float]
    seed: int

    def context(self, settings: Any = None) -> "EvalContext":
        """The evaluation's context with the problem's parsed ``settings``."""
        return EvalContext(seed=self.seed, iteration=self.iteration, particle=self.particle,
                           subspace=self.groups, settings=settings)


@dataclass(frozen=True)
class EvalRecord:
    """Result of one evaluation.

    status: ``"ok"`` or ``"failed"`` (failed ranks worst; ``message`` says why).
    message: human-readable reason (empty when ok).
    stage: number of lexicographic stages satisfied (0 .. n_stages), larger is better.
    stage_value: value of the current stage, smaller is better (NaN when failed).
    metrics: named numbers measured by the evaluation (SI units, name says which).
    wall_s: wall time of the evaluation in seconds (not part of the result's identity).
    worker: where it ran (not part of the result's identity).
    """

    status: str
    message: str = ""
    stage: int = 0
    stage_value: float = math.nan
    metrics: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0
    worker: str = ""

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    @staticmethod
    def failed(message: str, wall_s: float = 0.0, worker: str = "") -> "EvalRecord":
        return EvalRecord(status=STATUS_FAILED, message=message, stage=0,
                          stage_value=math.nan, metrics={}, wall_s=wall_s, worker=worker)


# --------------------------------------------------------------------------- search spaces
# A problem declares its default search space with these (thesis 3.2.1, Fig. 3.3); the
# optimizer's Space (codesign.optimize.space) combines them into subspaces.

@dataclass(frozen=True)
class Parameter:
    """A continuous parameter: search bounds [low, high] and initialisation range.

    The initialisation range (default: the bounds) is where new positions are drawn
    uniformly: at the start and when a particle enters a group that activates the
    parameter (thesis toy example: particles started in [0, 0.25]^2 of [0, 1]^2).
    """

    name: str
    low: float
    high: float
    init_low: float | None = None
    init_high: float | None = None

    @property
    def init_range(self) -> tuple[float, float]:
        lo = self.low if self.init_low is None else self.init_low
        hi = self.high if self.init_high is None else self.init_high
        return float(lo), float(hi)


@dataclass(frozen=True)
class Group:
    name: str
    parameters: tuple[str, ...]


@dataclass(frozen=True)
class Pool:
    name: str
    groups: tuple[Group, ...]
