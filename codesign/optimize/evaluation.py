"""Worker side: evaluate candidates safely. Never raises for a bad design.

``evaluate_candidate`` calls the problem, and turns an exception, a missing metric or a
non-finite metric / stage value into a failed :class:`EvalRecord` with the reason; then,
when objectives are given, computes (stage, stage_value) from the metrics with
:func:`codesign.optimize.fitness.lexicographic`. ``wall_s`` and ``worker`` are filled here.
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
    bad = sorted(k for k, v in record.metrics.items() if not math.isfinite(float(v)))
    if bad:
        failed = EvalRecord.failed(f"non-finite metric {bad[0]} = {record.metrics[bad[0]]}")
        return dataclasses.replace(failed, metrics=dict(record.metrics))
    if objectives:
        try:
            stage, value = lexicographic(record.metrics, objectives)
        except KeyError as exc:
            return EvalRecord.failed(f"missing metric {exc.args[0]!r} needed by the objectives")
        record = dataclasses.replace(record, stage=stage, stage_value=value)
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
