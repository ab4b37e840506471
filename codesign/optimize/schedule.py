"""Migration probabilities of Metamorphic PSO as functions of the iteration.

Thesis §3.2.2 (Fig. 3.6) and §5.5 (Fig. 5.8): the exploration probability P_e and the
global exploitation probability P_g follow sigmoids (P_e falls, P_g rises late), the local
exploitation probability P_l a Gaussian bump in between: early exploration, then
exploitation of each particle's best subspace, then convergence on the global best one.
The figures are missing from the text; the shapes below are the ones the text names, with
the numbers of §5.5 as the example in ``pipelines/``: "particles mutate on average only
every 20 iterations, as determined by P_e in the beginning" (P_e = 0.05 early), "P_g
becomes active around iteration 500" of 800.

A schedule is a small frozen record; ``value(t)`` takes the iteration t = 0, 1, ...
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Schedule:
    """P(t) for iteration t.

    shape "constant": P = start.
    shape "sigmoid":  P = start + (end - start) / (1 + exp(-(t - center) / width))
                      (falls when end < start, rises when end > start).
    shape "gaussian": P = start + (peak - start) * exp(-(t - center)^2 / (2 width^2)).
    """

    shape: str = "constant"
    start: float = 0.0
    end: float = 0.0
    peak: float = 0.0
    center: float = 0.0
    width: float = 1.0

    def value(self, t: float) -> float:
        if self.shape == "constant":
            return self.start
        if self.shape == "sigmoid":
            z = (t - self.center) / self.width
            z = max(min(z, 700.0), -700.0)
            return self.start + (self.end - self.start) / (1.0 + math.exp(-z))
        if self.shape == "gaussian":
            z = (t - self.center) / self.width
            return self.start + (self.peak - self.start) * math.exp(-0.5 * z * z)
        raise ValueError(f"unknown schedule shape {self.shape!r}")

    def to_dict(self) -> dict:
        return asdict(self)


SHAPES = ("constant", "sigmoid", "gaussian")


def constant(p: float) -> Schedule:
    return Schedule("constant", start=p)


@dataclass(frozen=True)
class Migration:
    """The three migration probabilities of eq. 3.6: exploration, local, global."""

    exploration: Schedule = constant(0.0)
    local: Schedule = constant(0.0)
    global_: Schedule = constant(0.0)

    def at(self, t: float) -> tuple[float, float, float]:
        return self.exploration.value(t), self.local.value(t), self.global_.value(t)


def thesis_migration(iterations: int) -> Migration:
    """Default curves shaped as Fig. 5.8, scaled to the run length (800 in the thesis).

    P_e: 0.05 falling to 0 around 55 % of the run; P_l: Gaussian bump of 0.05 at 45 %;
    P_g: 0 rising to 0.1 around 65 % (active from ~500 of 800). Sum <= 0.2 always.
    """
    n = float(iterations)
    return Migration(
        exploration=Schedule("sigmoid", start=0.05, end=0.0, center=0.55 * n, width=0.04 * n),
        local=Schedule("gaussian", start=0.0, peak=0.05, center=0.45 * n, width=0.12 * n),
        global_=Schedule("sigmoid", start=0.0, end=0.1, center=0.65 * n, width=0.03 * n),
    )
