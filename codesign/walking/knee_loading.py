"""The loading-response knee (compiled; issue 45): each leg's knee flexion in the first part
of its stance, the gait lab's stance-knee criterion (metrics ``knee_flexion_stance_peak_deg``
and ``knee_flexion_stance_peak_min_deg``, :mod:`codesign.walking.metrics`).

Per leg the accumulator holds (slot + leg, :mod:`codesign.walking.metrics`): the last
sample's contact (KNEE_FOOT, 0/1); its last touchdown after a swing of at least MIN_SWING_S
and its last lift-off (KNEE_DOWN, KNEE_UP, s; NaN: none yet); its last stride's duration,
touchdown to touchdown (KNEE_STRIDE, s; NaN: none yet); in the open loading window, its
knee's least flexion since the touchdown (KNEE_LOW, deg), whether the knee has yielded
(KNEE_YIELDED, 0/1), the largest flexion since it yielded and the latest before (KNEE_TOP,
KNEE_HELD, deg; NaN: none), the window open (KNEE_OPEN, 0/1); the windows' peaks summed
(KNEE_SUM, deg) and counted (KNEE_N).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from codesign.walking.metrics import (KNEE_DOWN, KNEE_FOOT, KNEE_HELD, KNEE_LOW, KNEE_N, KNEE_OPEN, KNEE_STRIDE,
                                       KNEE_SUM, KNEE_TOP, KNEE_UP, KNEE_YIELDED, MIN_SWING_S, T_START)

# The stance knee's peak (knee_flexion_stance_peak_deg) is read in the first 30 % of a
# stride after the leg's touchdown, its foot on the ground: Winter's stance lasts ~60 % of
# the cycle, the knee's loading-response peak (16-18 deg) comes at ~15 %, mid-stance at
# ~30 %; after it the knee extends, then flexes again from heel-off (~40 %) toward toe-off.
LOADING_SHARE = 0.3
# A knee yields in loading response when it flexes this much above its least flexion since
# the touchdown: more than the sub-degree flexion an impact puts into a locked knee (a
# searched stiff-kneed walk: <= 1 deg, landing at 11 deg and straight 10 ms later), far
# less than people's 11-15 deg from heel strike to the peak (Winter: ~3-5 deg to 16-18).
YIELD_DEG = 2.0


@njit(cache=True, _nrt=False)
def accumulate_knee_stance_peak(acc: np.ndarray, t: float, q: np.ndarray, gait_q: np.ndarray,
                                feet: np.ndarray) -> None:
    """Each leg's loading-response knee flexion (deg, anatomical = -engine knee angle),
    summed and counted over its stances that start in the window (slots KNEE_SUM, KNEE_N +
    leg): per stance, the largest flexion at the samples where its foot is on the ground
    within LOADING_SHARE of its last stride's duration after its touchdown (its loading
    window), from the first at which the knee has flexed YIELD_DEG above its least flexion
    since the touchdown; a knee that does not yield there counts its last angle in it.
    gait_q int64[6] the hip, knee, ankle coordinates of the right then the left leg,
    feet[2] its foot on the ground (0/1).

    Every sample, also before the window, each foot's touchdowns are followed: a foot back
    on the ground after at least MIN_SWING_S in the air (a shorter air time is a scuff or a
    rebound, as for the steps) touches down, and a stride lasts from one touchdown to the
    next. The loading window leaves out late stance and pre-swing, where the loaded knee
    flexes to ~40 deg before toe-off; waiting for the yield leaves out the swing's flexion
    a knee lands with and then extends from (a stiff knee that lands at 13 deg and locks
    straight read 12.2 deg without it); a rebound in the air does not end the window.
    Averaging over stances reads a gait that yields in some stances and locks the knee in
    others as what it does on average (one such walk's largest stance read 24 deg). Nothing
    is counted before the leg's first whole stride, nor a window still open at the end."""
    for leg in range(2):
        k = gait_q[3 * leg + 1]
        if k < 0:
            continue
        flexion = -math.degrees(q[k])
        on = feet[leg] > 0.0
        was_on = acc[KNEE_FOOT + leg] > 0.0
        acc[KNEE_FOOT + leg] = 1.0 if on else 0.0
        touchdown = on and not was_on and not t - acc[KNEE_UP + leg] < MIN_SWING_S   # NaN: no lift-off yet
        if was_on and not on:
            acc[KNEE_UP + leg] = t
        window = not touchdown and acc[KNEE_DOWN + leg] >= acc[T_START] and \
            t - acc[KNEE_DOWN + leg] <= LOADING_SHARE * acc[KNEE_STRIDE + leg]
        if acc[KNEE_OPEN + leg] > 0.0 and not window:          # the window closes: its peak
            peak = acc[KNEE_TOP + leg] if acc[KNEE_YIELDED + leg] > 0.0 else acc[KNEE_HELD + leg]
            if math.isfinite(peak):
                acc[KNEE_SUM + leg] += peak
                acc[KNEE_N + leg] += 1.0
            acc[KNEE_OPEN + leg] = 0.0
        if touchdown:
            acc[KNEE_STRIDE + leg] = t - acc[KNEE_DOWN + leg]                  # NaN: the first
            acc[KNEE_DOWN + leg] = t
            acc[KNEE_LOW + leg] = flexion
            acc[KNEE_YIELDED + leg] = 0.0
            acc[KNEE_TOP + leg] = acc[KNEE_HELD + leg] = math.nan
            window = t >= acc[T_START] and math.isfinite(acc[KNEE_STRIDE + leg])
        if on:
            acc[KNEE_LOW + leg] = min(acc[KNEE_LOW + leg], flexion)
            if flexion >= acc[KNEE_LOW + leg] + YIELD_DEG:
                acc[KNEE_YIELDED + leg] = 1.0
        if window and on:
            acc[KNEE_OPEN + leg] = 1.0
            if acc[KNEE_YIELDED + leg] > 0.0:
                if not acc[KNEE_TOP + leg] >= flexion:        # (NaN: the first since the yield)
                    acc[KNEE_TOP + leg] = flexion
            else:
                acc[KNEE_HELD + leg] = flexion
