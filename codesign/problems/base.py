"""The contract of an optimization problem.

A problem is a pure function ``evaluate(params, context) -> EvalRecord`` plus its default
search space (parameters and pools), its default lexicographic objectives (a spec's
``[[objectives]]`` replaces them), and optionally a ``warmup(settings)`` hook run once per
worker (compile numba kernels there) and a ``check(settings)`` hook run on the driver
before the run (bad input -> UserError), and optionally the names of its ``metrics`` (a
spec's objectives are checked against them). ``evaluate`` returns metrics and a status; the
fitness (stage, stage value) is computed from them once, by the run layer
(:func:`codesign.objectives.score`), never by the problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from codesign.objectives import Objective
from codesign.types import Parameter, Pool
from codesign.types import EvalContext, EvalRecord


@dataclass(frozen=True)
class Problem:
    name: str
    evaluate: Callable[[dict, EvalContext], EvalRecord]
    description: str = ""
    parameters: tuple[Parameter, ...] = ()
    pools: tuple[Pool, ...] = ()
    objectives: tuple[Objective, ...] = ()
    warmup: Callable[[dict], None] | None = None
    valid: Callable[[tuple[str, ...]], bool] | None = None   # optional subspace rule
    # optional check of the spec's [evaluation] table, run on the driver before a run
    # starts or resumes; raises codesign.errors.UserError (one line) for bad input
    check: Callable[[dict], None] | None = None
    # (setting naming a design by its run, setting naming one evaluation of that run): the
    # run layer reads that run's design into the settings before the problem sees them
    # (:func:`codesign.run.stored.inline_run_reference`); problems never open a run store
    run_reference: tuple[str, str] | None = None
    # the names of the metrics evaluate can report: when given, a spec's objectives are
    # checked against them before a run starts (empty: anything goes)
    metrics: tuple[str, ...] = ()
