"""Worker side: evaluate candidates safely. Never raises for a bad design.

``evaluate_candidate`` calls the problem and turns an exception, a non-numeric metric, a
missing or non-finite metric that the objectives need, or a non-finite stage value into a
failed :class:`EvalRecord` with the reason. When objectives are given it computes (stage,
stage_value) from the finite metrics with :func:`codesign.optimize.fitness.lexicographic`
(a metric a later, unreached stage would need may be NaN: "not measured", stored as NULL).
``wall_s`` and ``worker`` are filled here.
"""

from __future__ import annotations

import dataclasses
import math
import os
import socket
import time
from typing import Sequence

from codesign.optimize.fitness import Objective, lexicographic
from codesign.optimize.problems import get_problem
from codesign.types import Candidate, EvalRecord


def worker_name() -> str:
    try:
        from distributed import get_worker
        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"


def evaluate_candidate(problem_name: str, candidate: Candidate, settings: dict,
                       objectives: Sequence[Objective], worker: str | None = None) -> EvalRecord:
    start = time.perf_counter()
    record = _checked(problem_name, candidate, settings, objectives)
    return dataclasses.replace(record, wall_s=time.perf_counter() - start,
                               worker=worker if worker is not None else worker_name())


def _checked(problem_name: str, candidate: Candidate, settings: dict,
             objectives: Sequence[Objective]) -> EvalRecord:
    try:
        record = get_problem(problem_name).evaluate(dict(candidate.params), candidate.context(settings))
    except Exception as exc:  # a bad design must never stop the run
        return EvalRecord.failed(f"{type(exc).__name__}: {exc}".splitlines()[0])
    if not isinstance(record, EvalRecord):
        return EvalRecord.failed(f"evaluate returned {type(record).__name__}, expected EvalRecord")
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


def evaluate_batch(problem_name: str, candidates: Sequence[Candidate], settings: dict,
                   objectives: Sequence[Objective]) -> list[EvalRecord]:
    """One task: a batch of candidates evaluated in order on one worker."""
    worker = worker_name()
    return [evaluate_candidate(problem_name, c, settings, objectives, worker) for c in candidates]


def warmup(problem_name: str, settings: dict) -> None:
    """Run the problem's warm-up hook (compile kernels) once in this process."""
    problem = get_problem(problem_name)
    if problem.warmup is not None:
        problem.warmup(settings)
