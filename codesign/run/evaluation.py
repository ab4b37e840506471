"""Worker side: evaluate candidates safely. Never raises for a bad design.

``evaluate_candidate`` calls the problem, turns an exception into a failed
:class:`EvalRecord` with the reason, and computes the fitness -- the only place it is
computed in a run -- with :func:`codesign.objectives.score` (the spec's objectives, else
the problem's). ``wall_s`` and ``worker`` are filled here. ``settings`` is the problem's
parsed settings record (``Problem.parse_settings`` of the spec's ``[evaluation]`` table,
called once on the driver).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import time
from typing import Any, Sequence

from codesign.objectives import Objective, score
from codesign.problems import get_problem
from codesign.types import Candidate, EvalRecord


def worker_name() -> str:
    try:
        from distributed import get_worker
        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"


def evaluate_candidate(problem_name: str, candidate: Candidate, settings: Any,
                       objectives: Sequence[Objective], worker: str | None = None) -> EvalRecord:
    start = time.perf_counter()
    record = _checked(problem_name, candidate, settings, objectives)
    return dataclasses.replace(record, wall_s=time.perf_counter() - start,
                               worker=worker if worker is not None else worker_name())


def _checked(problem_name: str, candidate: Candidate, settings: Any,
             objectives: Sequence[Objective]) -> EvalRecord:
    try:
        record = get_problem(problem_name).evaluate(dict(candidate.params), candidate.context(settings))
    except Exception as exc:  # a bad design must never stop the run
        return EvalRecord.failed(f"{type(exc).__name__}: {exc}".splitlines()[0])
    if not isinstance(record, EvalRecord):
        return EvalRecord.failed(f"evaluate returned {type(record).__name__}, expected EvalRecord")
    return score(record, objectives)


def evaluate_batch(problem_name: str, candidates: Sequence[Candidate], settings: Any,
                   objectives: Sequence[Objective]) -> list[EvalRecord]:
    """One task: a batch of candidates evaluated in order on one worker."""
    worker = worker_name()
    return [evaluate_candidate(problem_name, c, settings, objectives, worker) for c in candidates]


def warmup(problem_name: str, settings: Any) -> None:
    """Run the problem's warm-up hook (compile kernels) once in this process."""
    problem = get_problem(problem_name)
    if problem.warmup is not None:
        problem.warmup(settings)
