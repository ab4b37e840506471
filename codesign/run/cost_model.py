"""Predict an evaluation's wall time from its particle's previous one (for scheduling only).

A co-design evaluation costs one of two things: a design screened out as singular
(1-6 ms) or one simulated (~50 ms, up to ~0.25 s). Particles switch between the two, so a
particle's previous cost alone is a poor prediction of its next: in the thesis-scale run
(`pipelines/codesign.toml`, all 160 000 evaluations) the next evaluation after a
screened-out one was simulated 15 % of the time, and after a simulated one screened out
19 % of the time. Taken at face value, a screened-out particle is predicted at 2.2 ms
although its next evaluation costs 7.7 ms on average; tasks filled with such predictions
hold ~3.5x the work they were planned for, and one of them can keep a worker busy while the
others wait for the pipeline's oldest iteration. Over that run the prediction below misses
by 18.3 ms (root mean square) where the previous cost misses by 22.1 ms.

:class:`CostPredictor` predicts instead the mean next cost of the evaluations whose
previous cost fell in the same octave (1-2 ms, 2-4 ms, ... 4-8 s: ``octave``) -- the
least-squares prediction given that octave -- learnt from the run's own transitions as they
are reported, as an exponentially weighted mean over about the last ``WINDOW`` of them (the
mix drifts over a run: most designs are screened out early, few late). An octave with
fewer than ``MIN_SAMPLES`` transitions predicts the previous cost itself.

Predictions steer only which evaluations share a task and which start first: records are
placed by position, so results never depend on them (nor on the order in which they were
learnt).
"""

from __future__ import annotations

import math

import numpy as np

OCTAVES = 13            # 1 ms, 2 ms, ... 4.1 s and above
WINDOW = 400            # transitions an octave's mean is weighted over (about two iterations of 200)
MIN_SAMPLES = 10        # fewer transitions in an octave: predict the previous cost itself


def octave(cost_s: float) -> int:
    """0 below 2 ms, 1 for 2-4 ms, ..., OCTAVES - 1 from 4.1 s on."""
    return max(0, min(OCTAVES - 1, int(math.floor(math.log2(max(cost_s, 1e-3) / 1e-3)))))


class CostPredictor:
    """The mean next cost (s) given the octave of the previous one, learnt online."""

    def __init__(self) -> None:
        self.mean = np.zeros(OCTAVES)                  # s, per octave of the previous cost
        self.count = np.zeros(OCTAVES, dtype=np.int64)

    def observe(self, previous_s: float, cost_s: float) -> None:
        """One transition: a particle's evaluation cost ``cost_s`` after ``previous_s``."""
        b = octave(previous_s)
        self.count[b] += 1
        self.mean[b] += (cost_s - self.mean[b]) / min(int(self.count[b]), WINDOW)

    def predict(self, previous_s: float) -> float:
        """Predicted cost (s) of an evaluation whose particle's previous one took ``previous_s``."""
        b = octave(previous_s)
        return float(self.mean[b]) if self.count[b] >= MIN_SAMPLES else float(previous_s)


def predicted_table(costs: np.ndarray) -> np.ndarray:
    """What a run's executor predicts for each evaluation of a recorded cost table
    ``costs`` (iterations, particles; s): row k (k >= 1) from row k - 1 by a
    :class:`CostPredictor` that has seen every transition up to iteration k - 1 (as a
    synchronous run's executor has); row 0 has no previous cost: NaN. Same shape."""
    costs = np.asarray(costs, dtype=float)
    out = np.full(costs.shape, np.nan)
    predictor = CostPredictor()
    for k in range(1, costs.shape[0]):
        out[k] = [predictor.predict(p) for p in costs[k - 1]]
        for previous, cost in zip(costs[k - 1], costs[k]):
            predictor.observe(float(previous), float(cost))
    return out
