"""Evaluate one design: screening, rollout, metrics.

``evaluate(design, settings) -> EvalRecord`` never raises for a bad design: a parameter
out of its domain, a singular mechanism, a fall, an integrator failure all come back as
a record (``status`` + ``message``). The steps:

1. design -> model (:mod:`codesign.walking.setup`): the unaugmented human
   (``design.topology is None``; chapter 4, hip, knee and ankle under step impedance) or
   the human with the WR of a catalog topology and actuator pair (chapter 5: the two
   actuated WR joints and the ankle under step impedance, the other WR joints
   spring/dampers);
2. screening (MODEL, thesis 5.4.4) -- a singular design is not simulated: it is recorded
   with ``time = 0`` and ``singularity = 1`` and the screening's reason;
3. initial state inside the gait and the compiled rollout (:mod:`codesign.walking.rollout`);
4. metrics (:mod:`codesign.walking.metrics`) plus the design's own numbers
   (``longest_segment`` m, ``singularity`` 0/1, ``added_mass`` kg, ``com_shift`` m),
   as an ok record -- the fitness is the problem's business (:func:`codesign.objectives.score`).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Mapping

from codesign.errors import UserError
from codesign.interrupts import deferred_signals
from codesign.types import EvalRecord
from codesign.walking import compiled
from codesign.walking import metrics as mt
from codesign.walking import rollout as ro
from codesign.walking.design import Design
from codesign.walking.measure import METRICS, named_metrics
from codesign.walking.settings import WalkSettings
from codesign.walking.setup import Setup, build_setup


# --------------------------------------------------------------------------- metric names
# METRICS: every metric an evaluation can report (codesign.walking.measure).


# --------------------------------------------------------------------------- evaluation
def metrics_of(rollout: ro.Rollout, setup: Setup) -> dict[str, float]:
    """Named metrics of a finished rollout: every name of :data:`METRICS`, NaN where not
    measured (:func:`codesign.walking.measure.named_metrics`, which every rollout's
    metrics come from, MuJoCo's too)."""
    return named_metrics(rollout.acc, rollout.time, setup, rollout.contact)


def evaluate_detailed(design: Design, settings: WalkSettings, record_times=None, human_model=None):
    """(EvalRecord, timings {screen_s, setup_s, rollout_s}, Rollout or None, Setup or None).
    ``human_model``: see :func:`build_setup`. The first evaluation of a process that will
    compile kernels says so on stderr first (:mod:`codesign.walking.compiled`). A Ctrl-C or
    SIGTERM acts once the evaluation is done (:func:`~codesign.interrupts.deferred_signals`:
    an interrupt inside numba's compiler or its boxing of a result is lost or fatal)."""
    compiled.announce_first_compile(robot=design.topology is not None)
    with deferred_signals():
        return _evaluate(design, settings, record_times, human_model)


def _evaluate(design: Design, settings: WalkSettings, record_times, human_model):
    """:func:`evaluate_detailed`'s work."""
    t0 = time.perf_counter()
    timings = {"screen_s": 0.0, "setup_s": 0.0, "rollout_s": 0.0}
    try:
        setup, early, timings["screen_s"] = build_setup(design, settings, human_model=human_model)
    except (UserError, KeyError, ValueError) as exc:
        text = str(exc) if not isinstance(exc, KeyError) else f"missing parameter {exc.args[0]}"
        return (EvalRecord.failed(f"design: {text}", wall_s=time.perf_counter() - t0), timings,
                None, None)
    timings["setup_s"] = time.perf_counter() - t0 - timings["screen_s"]
    if early is not None:
        return dataclasses.replace(early, wall_s=time.perf_counter() - t0), timings, None, None
    t1 = time.perf_counter()
    rollout = ro.run(setup.x0, setup.mode0, setup.p, settings.rollout, record_times)
    timings["rollout_s"] = time.perf_counter() - t1
    message = "" if rollout.status == "ok" else f"{rollout.status}: {rollout.message}"
    record = mt.measured_record(metrics_of(rollout, setup), message,
                            time.perf_counter() - t0)
    return record, timings, rollout, setup


def evaluate(design: Design | Mapping, settings: WalkSettings | Mapping | None = None) -> EvalRecord:
    """Evaluate one design (module docstring); never raises for a bad design."""
    if not isinstance(settings, WalkSettings):
        settings = WalkSettings.from_dict(settings)
    if not isinstance(design, Design):
        design = Design.from_json(design)
    return evaluate_detailed(design, settings)[0]
