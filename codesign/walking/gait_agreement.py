"""How natural a recorded gait is: heel strikes from the recorded contacts, and the joint
angles' agreement with Winter's nominal gait at the controller's phase or over strides
(used by :mod:`codesign.walking.trajectory` and ``codesign simulate``; plain NumPy); the
stride metrics ``stride_r_<joint>`` of a rollout's gait samples (:func:`stride_metrics`)."""

from __future__ import annotations

import math

import numpy as np

from codesign.walking import metrics as mt
from codesign.walking.metrics import MIN_SWING_S
from codesign.walking.samples import gait_samples


def nominal_gait_agreement(t: np.ndarray, angles: dict[str, np.ndarray], nominal,
                           frequency: float, phase0: float, t_start: float) -> dict[str, float]:
    """How natural a simulated gait is: per joint, the Pearson correlation and the RMS
    difference (rad) between the simulated angle and Winter's nominal angle at the
    controller's phase, over t >= t_start, both legs pooled (the left leg against the
    nominal half a period later).

    t: float64[k] s; angles: ``{"<joint>_<r|l>": float64[k]}`` engine angles (rad) for
    joint in hip, knee, ankle; nominal: :class:`codesign.model.gait.NominalGait`.
    Returns ``{"<joint>_corr": r, "<joint>_rms_rad": e}``; NaN without samples."""
    from codesign.model.gait import GAIT_JOINTS

    keep = t >= t_start
    out: dict[str, float] = {}
    for k, joint in enumerate(GAIT_JOINTS):
        sim, ref = [], []
        for side, offset in (("r", 0.0), ("l", 0.5)):
            sim.append(angles[f"{joint}_{side}"][keep])
            ref.append(nominal.angles(frequency * t[keep] + phase0 + offset)[:, k])
        a, b = np.concatenate(sim), np.concatenate(ref)
        ok = a.size > 1 and np.std(a) > 0 and np.std(b) > 0
        out[f"{joint}_corr"] = float(np.corrcoef(a, b)[0, 1]) if ok else math.nan
        out[f"{joint}_rms_rad"] = float(np.sqrt(np.mean((a - b) ** 2))) if a.size else math.nan
    return out


def heel_strikes(t: np.ndarray, on_ground: np.ndarray, min_swing: float = MIN_SWING_S) -> np.ndarray:
    """Touchdown times (s) of one foot: the samples where it is on the ground after at
    least ``min_swing`` s off it (a swing lasts ~0.4 s at 0.9 Hz; shorter lifts are
    bounces and shuffles within a stance, not strides).

    t: float64[k] s; on_ground: bool[k]."""
    strikes = []
    off_since = None
    for ti, on in zip(t, on_ground):
        if not on:
            off_since = ti if off_since is None else off_since
        elif off_since is not None:
            if ti - off_since >= min_swing:
                strikes.append(ti)
            off_since = None
    return np.array(strikes)


def stride_gait_agreement(t: np.ndarray, angles: dict[str, np.ndarray], nominal,
                          strikes: dict[str, np.ndarray], t_start: float) -> dict[str, float]:
    """:func:`nominal_gait_agreement` with each leg's strides time-normalized the way
    gait data are (Winter's phase 0 is heel strike): a sample at t in the stride
    [s_k, s_k+1) of its leg has phase (t - s_k) / (s_k+1 - s_k). Only whole strides with
    s_k >= t_start count. strikes: ``{"r": float64[m], "l": ...}`` touchdown times (s,
    :func:`heel_strikes`). Returns ``{"<joint>_corr": r, "<joint>_rms_rad": e}`` (NaN
    without a whole stride)."""
    from codesign.model.gait import GAIT_JOINTS

    out: dict[str, float] = {}
    for k, joint in enumerate(GAIT_JOINTS):
        sim, ref = [], []
        for side in ("r", "l"):
            s = np.asarray(strikes[side], dtype=float)
            s = s[s >= t_start]
            for a, b in zip(s[:-1], s[1:]):
                keep = (t >= a) & (t < b)
                sim.append(angles[f"{joint}_{side}"][keep])
                ref.append(nominal.angles((t[keep] - a) / (b - a))[:, k])
        a_, b_ = (np.concatenate(sim), np.concatenate(ref)) if sim else (np.zeros(0), np.zeros(0))
        ok = a_.size > 1 and np.std(a_) > 0 and np.std(b_) > 0
        out[f"{joint}_corr"] = float(np.corrcoef(a_, b_)[0, 1]) if ok else math.nan
        out[f"{joint}_rms_rad"] = float(np.sqrt(np.mean((a_ - b_) ** 2))) if a_.size else math.nan
    return out


def sampled_stride_agreement(acc: np.ndarray, nominal) -> dict[str, float]:
    """:func:`stride_gait_agreement` of the gait samples a rollout's accumulator holds
    (:func:`codesign.walking.samples.gait_samples`: every GAIT_SAMPLE_S, each foot on the
    ground while a contact point of it is active), over whole strides in the metrics'
    window (t >= T_START). nominal: :class:`codesign.model.gait.NominalGait`. Returns
    ``{"<joint>_corr": r, "<joint>_rms_rad": e}``."""
    from codesign.model.gait import GAIT_JOINTS

    samples = gait_samples(acc)
    angles = {f"{joint}_{side}": samples.angles[:, 3 * leg + k]
              for leg, side in enumerate("rl") for k, joint in enumerate(GAIT_JOINTS)}
    strikes = {side: heel_strikes(samples.t, samples.feet[:, leg] > 0.0) for leg, side in enumerate("rl")}
    return stride_gait_agreement(samples.t, angles, nominal, strikes, float(acc[mt.T_START]))


def stride_metrics(agreement: dict[str, float]) -> dict[str, float]:
    """The metrics ``stride_r_<joint>`` (metrics.REGISTRY) of a
    :func:`sampled_stride_agreement`: its correlations (NaN without a whole stride)."""
    from codesign.model.gait import GAIT_JOINTS

    return {f"stride_r_{joint}": agreement[f"{joint}_corr"] for joint in GAIT_JOINTS}
