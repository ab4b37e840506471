"""The inner layer: one constriction-PSO step for the particles of one subspace.

Thesis §3.1.3, eq. 3.4, read with Clerc's constriction (Clerc & Kennedy 2002), which the
issue prescribes: K = 0.729, c1 = c2 = 2.05 (phi = 4.1, K = 2 / |2 - phi - sqrt(phi^2 - 4phi)|)::

    v <- K * (v + c1 r1 (p - x) + c2 r2 (g - x))      r1, r2 ~ U(0, 1) per dimension
    |v_d| <= clamp * (high_d - low_d)                 clamp = 0.6 ("max-velocity" of §3.4)
    x <- x + v, reflected at the bounds: a coordinate that leaves [low, high] is mirrored
    back inside and its velocity component changes sign.

(The text's "w = 0.729, c = 1.494" is the same update: 0.729 * 2.05 = 1.494.)
p is the particle's best position in its current subspace, g the subspace best.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PSOSettings:
    particles: int = 40
    iterations: int = 100
    constriction: float = 0.729
    c1: float = 2.05
    c2: float = 2.05
    velocity_clamp: float = 0.6
    pipeline: bool = False      # MMPSO without the iteration barrier (codesign.optimize.pipeline)


def pso_step(x: np.ndarray, v: np.ndarray, p: np.ndarray, g: np.ndarray,
             low: np.ndarray, high: np.ndarray, settings: PSOSettings,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One velocity and position update of n particles in d active dimensions.

    x, v, p: [n, d] positions, velocities, personal bests; g: [d] subspace best;
    low, high: [d] bounds. Returns the new (x, v); draws 2 n d uniforms from rng.
    """
    r1 = rng.random(x.shape)
    r2 = rng.random(x.shape)
    v = settings.constriction * (v + settings.c1 * r1 * (p - x) + settings.c2 * r2 * (g - x))
    vmax = settings.velocity_clamp * (high - low)
    v = np.clip(v, -vmax, vmax)
    x = x + v
    above, below = x > high, x < low
    x = np.where(above, 2.0 * high - x, x)
    x = np.where(below, 2.0 * low - x, x)
    v = np.where(above | below, -v, v)
    return np.clip(x, low, high), v
