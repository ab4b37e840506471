"""Compile (or load) every kernel of an evaluation ahead of the first one: ``codesign
warmup``, which ``make`` runs at install so that no stage of ``make run`` pays the compile.

The workload is two 50-ms evaluations, of the typical human and of the typical augmented
design (:mod:`codesign.walking.examples`, a design that passes screening, so the robot's
kernels run too); :mod:`codesign.walking.compiled` says which kernels that must leave on
numba's disk cache.
"""

from __future__ import annotations

import sys
import time
from typing import NamedTuple, TextIO

from codesign.walking import compiled
from codesign.walking.evaluation import evaluate_detailed
from codesign.walking.examples import typical_codesign_design, typical_human_design
from codesign.walking.settings import WalkSettings

SHORT_S = 0.05   # s simulated per warm-up evaluation


class WarmUp(NamedTuple):
    missing_before: tuple[str, ...]   # kernels not on the disk cache before (module:name)
    missing_after: tuple[str, ...]    # ... and after the warm-up (empty when it worked)
    seconds: float                    # wall time of the warm-up evaluations (s)
    cpu_s: float                      # their CPU time (s; numba compiles on one thread)


def warm_up(stream: TextIO | None = None) -> WarmUp:
    """Run the warm-up evaluations if a kernel is not cached (else nothing: 0 s); a
    compile announces itself on ``stream`` (stderr) first. A full compile's CPU time is
    recorded for later announcements."""
    before = tuple(compiled.missing_kernels())
    if not before:
        return WarmUp(before, before, 0.0, 0.0)
    compiled.announce_first_compile(robot=True, stream=stream or sys.stderr)
    t0, c0 = time.perf_counter(), time.process_time()
    settings = WalkSettings.from_dict({"max_time": SHORT_S})
    for design in (typical_human_design(settings), typical_codesign_design(settings)):
        evaluate_detailed(design, settings)
    seconds, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    after = tuple(compiled.missing_kernels())
    if len(before) == len(compiled.kernels()) and not after:
        compiled.record_compile_s(cpu_s)
    return WarmUp(before, after, seconds, cpu_s)
