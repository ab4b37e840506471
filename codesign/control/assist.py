"""The device's assistance profile of an active wearer (issue 32): per assisted wearer
joint a torque over the gait phase, the same on both legs half a period apart (the
controller's clock, :mod:`codesign.control.impedance`, or each leg's sensed phase). A
linkage assists the hip and knee (its two degrees of freedom per leg); an ideal device
any two of the wearer's hip, knee and ankle (:data:`JOINT_PAIRS`, the problem option
``assisted_joints``: an ankle exoskeleton is ``"hip_ankle"`` with the hip's peaks 0).

Each joint's profile is a sum of ``BUMPS`` bumps; a bump has a signed peak torque P (N m,
anatomical: flexion positive), a peak timing p (fraction of the stride from the leg's
heel strike), a rise time r and a fall time f (fractions of the stride)::

    b(phi) = P S(u / r)            on the rise,  u = (phi - (p - r)) mod 1 in [0, r)
           = P S(1 - (u - r) / f)  on the fall,  u in [r, r + f)
           = 0                     elsewhere,    S(s) = 3 s^2 - 2 s^3

so each side is a smooth cubic with zero slope at the onset, the peak and the end. This is
the parametrization of human-in-the-loop optimization: peak torque, peak time, rise time
and fall time of an ankle exoskeleton (Zhang et al., Science 356:1280, 2017) and of a hip
exosuit (Ding et al., Science Robotics 3:eaar5438, 2018); two bumps per joint let a hip
profile have a flexion and an extension burst.

Compiled use: a sum of bumps is a piecewise cubic whose pieces meet at the bumps' onsets,
peaks and ends; on each piece it is the cubic Hermite of its end values and slopes, so it
is exactly a :data:`codesign.control.signals.PPOLY` signal with those knots, values and
slopes (:func:`profile_signal`) -- evaluated by the same compiled kernel as the law's
reference angles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from codesign.control import signals as sg

ASSISTED_JOINTS = ("hip", "knee")   # a linkage's (and the default) assisted joints
# the pairs of wearer joints a device can assist, by the name the option spells them
JOINT_PAIRS = {"hip_knee": ("hip", "knee"), "hip_ankle": ("hip", "ankle"), "knee_ankle": ("knee", "ankle")}
BUMPS = 2
FIELDS = ("peak", "peak_time", "rise", "fall")
# Bounds (N m, fractions of the stride). Peak torque: the largest published hip and knee
# assistance is ~0.3-0.5 N m/kg (Ding 2018: 0.2-0.3 N m/kg at the hip; Luo 2024 similar),
# 40 N m for a 75-kg wearer; the law's peaks are ~60-80 N m. Rise and fall: at least 5 %
# of the stride (a bump of a few milliseconds is an impulse no drivetrain delivers), at
# most 40 % (rise + fall <= 0.8 < 1: a bump never overlaps itself on the phase circle).
BOUNDS = {"peak": (-60.0, 60.0), "peak_time": (0.0, 1.0), "rise": (0.05, 0.4), "fall": (0.05, 0.4)}
# engine torque = sign * anatomical (codesign.model.gait: hip and knee flexion, ankle
# dorsiflexion positive; an ankle's plantarflexion assistance is a negative peak)
ANATOMICAL_SIGN = {"hip": 1.0, "knee": -1.0, "ankle": 1.0}


@dataclass(frozen=True)
class Bump:
    """One bump: peak torque (N m, flexion positive), peak time, rise, fall (fractions)."""

    peak: float
    peak_time: float
    rise: float
    fall: float


def parameter_names(joint: str) -> list[str]:
    """``assist.<joint>.b<k>.<field>`` of one joint's profile, in decode order."""
    return [f"assist.{joint}.b{k + 1}.{f}" for k in range(BUMPS) for f in FIELDS]


def parameter_bounds(joints: tuple[str, ...] = ASSISTED_JOINTS) -> dict[str, tuple[float, float]]:
    """Every assistance parameter's (low, high) of the assisted ``joints``, in their order."""
    return {name: BOUNDS[name.rsplit(".", 1)[1]] for j in joints for name in parameter_names(j)}


def has_assist(params: Mapping[str, float]) -> bool:
    """Whether a design's parameters carry an assistance profile (``assist.*``)."""
    return any(name.startswith("assist.") for name in params)


def bumps_of(params: Mapping[str, float], joint: str) -> tuple[Bump, ...]:
    """The bumps of ``joint`` from a design's parameters (KeyError: one missing)."""
    names = parameter_names(joint)
    return tuple(Bump(*(float(params[n]) for n in names[k * len(FIELDS):(k + 1) * len(FIELDS)]))
                 for k in range(BUMPS))


def _smooth(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S(s), S'(s)) of S = 3 s^2 - 2 s^3."""
    return 3.0 * s * s - 2.0 * s ** 3, 6.0 * s - 6.0 * s * s


def bump_values(b: Bump, phase: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value N m, d value / d phase) of one bump at ``phase`` (float64[k], any real)."""
    u = np.mod(np.asarray(phase, dtype=np.float64) - (b.peak_time - b.rise), 1.0)
    value = np.zeros_like(u)
    slope = np.zeros_like(u)
    rise = u < b.rise
    fall = (u >= b.rise) & (u < b.rise + b.fall)
    s, ds = _smooth(u[rise] / b.rise)
    value[rise], slope[rise] = b.peak * s, b.peak * ds / b.rise
    s, ds = _smooth(1.0 - (u[fall] - b.rise) / b.fall)
    value[fall], slope[fall] = b.peak * s, -b.peak * ds / b.fall
    return value, slope


def profile_values(bumps: tuple[Bump, ...], phase) -> np.ndarray:
    """The profile (sum of ``bumps``, N m) at ``phase`` (array-like): the definition, for
    tests and figures."""
    phase = np.atleast_1d(np.asarray(phase, dtype=np.float64))
    return sum((bump_values(b, phase)[0] for b in bumps), np.zeros_like(phase))


def profile_signal(bumps: tuple[Bump, ...], sign: float = 1.0) -> sg.Signal:
    """The PPOLY signal equal to ``sign`` times the sum of ``bumps`` (module docstring):
    knots at every bump's onset, peak and end (mod 1, distinct), values and slopes of the
    sum there. No bumps, or all of zero peak: the constant 0."""
    if not any(b.peak != 0.0 for b in bumps):
        return sg.constant(0.0)
    knots = np.unique(np.mod([t for b in bumps for t in (b.peak_time - b.rise, b.peak_time,
                                                         b.peak_time + b.fall)], 1.0))
    value = np.zeros_like(knots)
    slope = np.zeros_like(knots)
    for b in bumps:
        v, s = bump_values(b, knots)
        value += v
        slope += s
    return sg.Signal(sg.PPOLY, knots, sign * value, sign * slope)


def assist_signals(params: Mapping[str, float],
                   joints: tuple[str, str] = ASSISTED_JOINTS) -> tuple[sg.Signal, sg.Signal]:
    """The engine-convention signals of a design's assistance profile at its two assisted
    ``joints`` (a pair of :data:`JOINT_PAIRS`)."""
    return tuple(profile_signal(bumps_of(params, j), ANATOMICAL_SIGN[j]) for j in joints)
