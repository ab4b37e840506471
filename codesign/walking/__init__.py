"""Walking evaluation: a pure library, design + settings -> rollout -> metrics.

The public entry points (what benchmarks, scripts and the problems use)::

    from codesign import walking
    design = walking.load_design("docs/designs/codesign-walking.json")
    record = walking.evaluate(design, {"max_time": 10.0})      # -> EvalRecord

Modules, in the order an evaluation passes through them: ``design`` (what is evaluated),
``settings`` (the ``[evaluation]`` table), ``setup`` (model, controller, screening,
initial state via ``initial_state``), ``rollout`` (the compiled time-stepping rollout; the
event-driven and soft-contact peers in ``rollout_event``), ``metrics`` (the metric
registry, the accumulator's slots, finalize), ``accumulators`` (the compiled per-sample
accumulators), ``gait_agreement`` (a recorded gait against Winter's), ``evaluation`` (the whole path, never raising for a bad design),
``trajectory`` (recorded samples as a table), ``examples`` (typical designs for tests and
benchmarks). Nothing here knows about optimizers, job specs, run stores or reports.
"""

from codesign.walking.design import Design, load_design
from codesign.walking.evaluation import METRICS, evaluate, evaluate_detailed, metrics_of
from codesign.walking.examples import nominal_control_params, typical_codesign_design, typical_human_design
from codesign.walking.settings import WalkSettings
from codesign.walking.setup import (Setup, build_setup, check_design, has_torso_feedback,
                                   has_wearer_control, human_control_layout, wearer_control_layout,
                                   wr_control_layout)

__all__ = ["METRICS", "Design", "load_design", "evaluate", "evaluate_detailed", "metrics_of", "WalkSettings",
           "Setup", "build_setup", "check_design", "has_torso_feedback", "has_wearer_control",
           "human_control_layout", "wearer_control_layout", "wr_control_layout",
           "nominal_control_params", "typical_codesign_design", "typical_human_design"]
