"""One measurement for every rollout (issue 42): the named metrics of a finished
accumulator.

Every rollout -- time stepping (:mod:`codesign.walking.stepping`), event-driven and soft
(:mod:`codesign.walking.rollout_event`), MuJoCo's (:mod:`codesign.walking.mujoco_rollout`)
-- feeds one compiled observation step per sample
(:func:`codesign.walking.accumulators.observe_sample`) into the accumulator of
:mod:`codesign.walking.metrics`; :func:`named_metrics` turns the finished accumulator into
the registry's named metrics, the same way for each.

A metric a rollout does not measure is NaN here, never absent: every rollout of a design
gives the same names, :data:`METRICS` (the registry's, one entry per interaction site).
What a rollout does not measure: the contact solver's health (``contact_*``) outside time
stepping (no contact solver: ``contact=None``), the ground reaction (``grf_peak_bw*``) of
the event-driven hard contact (its impacts are jumps without a force), the actuators' of a
design without motors, the active wearer's of a passive one. A record
(:func:`codesign.walking.metrics.measured_record`) then leaves every NaN out, as it does
for a metric that could not be measured (a speed over an empty window after an early
fall).
"""

from __future__ import annotations

import math

import numpy as np

from codesign.model.gait import nominal_gait
from codesign.walking import metrics as mt
from codesign.walking.gait_agreement import sampled_stride_agreement, stride_metrics
from codesign.walking.rollout_base import ContactHealth
from codesign.walking.setup import SITE_NAMES, Setup

# Every metric an evaluation can report (:func:`named_metrics`): an ok record leaves out
# those not measured (not finite: the actuators' of the unaugmented human, a speed after
# an early fall). The problems declare these names (a spec's objectives are checked
# against them); tests/walking checks them against real rollouts.
# They follow from the registry (:data:`codesign.walking.metrics.REGISTRY`), one entry
# per interaction site for its "<site>" entries.
METRICS = mt.metric_names(SITE_NAMES)


def named_metrics(acc: np.ndarray, time: float, setup: Setup,
                  contact: ContactHealth | None = None) -> dict[str, float]:
    """Every name of :data:`METRICS` for a finished accumulator ``acc`` of a rollout that
    walked ``time`` s of the set-up ``setup``: the gait metrics
    (:func:`~codesign.walking.metrics.finalize`, the active wearer's per kg of the wearer
    and per stride of the law's frequency), the stride agreement with Winter's gait, the
    contact solver's health (``contact``: the time-stepping rollout's counts; None: NaN)
    and the design's own metrics; NaN where not measured (module docstring)."""
    m = mt.finalize(acc, time=time, n_joints=setup.n_active, site_names=SITE_NAMES,
                    total_mass=setup.model.total_mass(), gravity=setup.model.gravity,
                    wearer_mass=setup.wearer_mass, stride_frequency=float(setup.ctrl.timing[0]))
    strides = stride_metrics(sampled_stride_agreement(acc, nominal_gait()))
    health = mt.finalize_contact(*contact) if contact is not None else {}
    out = {**m, **strides, **health, **setup.design_metrics}
    for name in METRICS:                # not measured by this rollout or design: NaN
        out.setdefault(name, math.nan)
    return out
