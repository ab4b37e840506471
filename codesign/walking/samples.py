"""The gait samples an accumulator stores (:mod:`codesign.walking.metrics`), read back as
arrays: the samples behind the stride metrics."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from codesign.walking.metrics import GAIT_COLUMNS, GAIT_DT, GAIT_NEXT, GAIT_ROWS


class GaitSamples(NamedTuple):
    """The gait samples an accumulator holds (:func:`gait_samples`): t float64[k] (s),
    angles float64[k, 6] (engine rad: hip, knee, ankle right, then left), feet
    float64[k, 2] (right, left on the ground: 0/1)."""

    t: np.ndarray
    angles: np.ndarray
    feet: np.ndarray


def gait_samples(acc: np.ndarray) -> GaitSamples:
    """The gait samples stored so far in ``acc`` (copies)."""
    k = int(acc[GAIT_NEXT])
    base = int(acc[GAIT_ROWS])
    rows = acc[base:base + GAIT_COLUMNS * k].reshape(k, GAIT_COLUMNS)
    return GaitSamples(np.arange(k) * acc[GAIT_DT], rows[:, :6].copy(), rows[:, 6:].copy())
