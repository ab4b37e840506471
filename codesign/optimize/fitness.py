"""Lexicographic fitness (thesis §3.3.2, eq. 3.12-3.13, Table 3.2).

N ordered objectives; the first N-1 carry an "until" condition. A solution is ranked first
by how many conditions it satisfies *in sequence* (``stage``, larger is better), then by
the value of the objective it is currently optimizing (``stage_value``, smaller is better;
a maximized objective is negated). Failed evaluations rank after every successful one.

The optimizer compares fitness as the tuple ``key = (failed, -stage, stage_value)``
(smaller is better), stored as a float array of shape [..., 3]; ``NO_KEY`` (worse than a
failure) marks "nothing known yet".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from codesign.types import fitness_key as record_key  # noqa: F401  (re-exported)

SENSES = ("minimize", "maximize")
NO_KEY = (2.0, 0.0, math.inf)


@dataclass(frozen=True)
class Objective:
    """One lexicographic stage: a metric, its sense, and (except the last) its condition.

    The condition is satisfied when the metric is ``<= until`` (minimize) or ``>= until``
    (maximize). The thesis writes strict "<" (Table 3.2); equality has measure zero.
    """

    metric: str
    sense: str = "minimize"
    until: float | None = None


def lexicographic(metrics: Mapping[str, float], objectives: Sequence[Objective]) -> tuple[int, float]:
    """(stage, stage_value) of a metrics dict. Raises KeyError for a missing metric."""
    stage = 0
    for k, objective in enumerate(objectives):
        value = float(metrics[objective.metric])
        signed = value if objective.sense == "minimize" else -value
        last = k == len(objectives) - 1
        if last or objective.until is None:
            return stage, signed
        done = value <= objective.until if objective.sense == "minimize" else value >= objective.until
        if not done:
            return stage, signed
        stage += 1
    raise ValueError("no objectives")


def better(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> bool:
    """True when key a is strictly better (lexicographically smaller) than key b."""
    return tuple(float(v) for v in a) < tuple(float(v) for v in b)
