"""The gait phase a device can know (issue 46 item 2): from its own signals, a gait event per
stride and a running stride-time estimate. The rollout times the assistance profile
(:mod:`codesign.control.assist`) by it under ``evaluation.assist_timing = "contact"`` or
``"hip_peak"`` (:mod:`codesign.control.wearer`: each leg's estimator sees every sample the
rollout observes, :func:`phase_step`, and the drive evaluates the profile at
:func:`phase_at`); ``"clock"`` (the default) keeps the law's clock (docs/structure.md, "Gait
phase from the device's signals").

What it is. Per leg, a gait event once a stride, and between events

    phase(t) = (phi_e + clip((t - t_e) / T_hat, 0, 1 - eps)) mod 1

where t_e is the time of the last event, phi_e the event's phase in the gait cycle (0 for a
heel strike) and T_hat the mean of the last ``n_mean`` stride times (the times between
consecutive events), ``stride0`` before one stride is measured. Two event sources:

* ``"contact"``: the foot's contact signal's rising edge after at least ``min_swing`` s
  off the ground, a heel strike (phi_e = 0) -- a shorter lift is a bounce or a scuff
  within a stance (the rule of the walking metrics' heel strikes,
  ``codesign.walking.metrics.MIN_SWING_S``); without it a bounce of the foot that starts
  a walk in pre-swing was taken for its first heel strike, half a stride early, and the
  refractory period then hid the real one;
* ``"hip_peak"``: the hip's maximum flexion, its rate crossing to <= 0 after it rose above
  ``rate_band`` (> 0: the detector is armed by the swing's flexion, fires once, and waits
  for the next swing, so noise around a zero rate fires nothing; the device's own joint
  speed, no foot sensor); phi_e is where Winter's gait has
  that peak (:func:`hip_peak_phase`, 0.869 of the cycle) -- the event falls late in swing,
  before the heel strike, so the phase runs on through it.

An event sooner than ``refractory`` x T_hat after the last is ignored (a bounce of the
contact, a ripple of the rate), and a stride outside [``min_stride``, ``max_stride``] s
is not averaged (the first stride after a pause). Before the first event the phase is
unknown: NaN.

Why this estimator. It is the one the cited portable devices time their assistance with:
heel strikes and the mean of the previous strides' durations, the phase linear in between --
Ding et al. 2018 (Science Robotics 3:eaar5438, hip exosuit: heel strikes from gyroscopes on
the shoes, the gait percentage from the previous strides' mean duration; read from memory of
the paper, not re-read in this session), Slade et al. 2022 (Nature 610:277, ankle
exoskeleton: each stride's duration measured by the device's sensors and its assistance
adapted step by step, Fig. 3 and Extended Data Fig. 4); Kang et al. 2021 (IEEE RA-L
6:3491) call "a gait event and the time since it, interpolated linearly" the literature
standard for hip exoskeletons (their CNN estimator improves on it across speed changes).
Luo et al. 2024 (Nature 630:353) map the hip angles and speeds straight to torque with a
learned network, without an explicit phase. An adaptive oscillator (Ronsse et al. 2011)
was not built: it needs gains tuned against convergence speed and lags a cadence change by
several strides; the event estimator tracks a change within ``n_mean`` + 1 strides by
construction (tests/control/test_phase.py measures it).

Units: t in s; angles in rad and rates in rad/s (engine convention, hip flexion +); phase a
fraction of the stride in [0, 1). Compiled (numba) like the rest of control/: the state is
two arrays in a :class:`PhaseState` record, changed in place by :func:`phase_step`; a state
of zeros is a fresh one (no sample, no event), so the rollout's data reset clears it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from codesign.errors import UserError, nearest, shown

SOURCES = ("contact", "hip_peak")
SOURCE_CONTACT, SOURCE_HIP_PEAK = 0, 1
PHASE_MAX = 1.0 - 1e-9            # the fraction of a stride is clipped to [0, PHASE_MAX]

# PhaseState.scalars slots
T_EVENT, PREV_CONTACT, ARMED, N_STRIDES, HEAD, STARTED, HAS_EVENT, T_OFF, HAS_OFF, N_MEASURED = range(10)
N_SCALARS = 10


class PhaseConfig(NamedTuple):
    """The estimator's constants. source: SOURCE_CONTACT | SOURCE_HIP_PEAK; event_phase:
    the event's phase in the cycle (fraction); n_mean: strides averaged (>= 1); stride0 s:
    the stride time assumed before one is measured; min_stride, max_stride s: the strides
    averaged; refractory: the fraction of T_hat within which a second event is ignored;
    rate_band rad/s: the hip rate that arms the hip-peak detector; min_swing s: the time
    off the ground before a contact's rising edge is a heel strike."""

    source: int
    event_phase: float
    n_mean: int
    stride0: float
    min_stride: float
    max_stride: float
    refractory: float
    rate_band: float
    min_swing: float


class PhaseState(NamedTuple):
    """One leg's estimator state, changed in place. strides (n_mean,) s: the last strides
    (a ring, ``scalars[HEAD]`` the next slot); scalars (N_SCALARS,): the last event's time
    (s; meaningful once ``HAS_EVENT``), the previous contact (0/1), the hip-peak detector
    armed (0/1), how many strides are in the ring, the ring's head, whether a sample was
    seen (0/1) and whether an event was (0/1), since when (s) the foot is off the ground,
    whether it was seen off (0/1) and how many strides were averaged in all (the ring's
    count stops at ``n_mean``). All zeros: a fresh state."""

    strides: np.ndarray
    scalars: np.ndarray


def hip_peak_phase() -> float:
    """The phase (fraction of the cycle from heel strike) of the hip's maximum flexion in
    Winter's gait (:func:`codesign.model.gait.nominal_gait`), to 1e-4."""
    from codesign.model.gait import nominal_gait
    s = np.arange(10000) / 10000.0
    return float(s[int(np.argmax(nominal_gait().angles(s)[:, 0]))])


def phase_config(source: str = "contact", n_mean: int = 3, stride0: float = 1.1,
                 min_stride: float = 0.4, max_stride: float = 2.5, refractory: float = 0.6,
                 rate_band: float = 0.5, min_swing: float = 0.2,
                 where: str = "phase_estimator") -> PhaseConfig:
    """The estimator's constants (module docstring). UserError, one line naming ``where``:
    a source that does not exist (expected one of :data:`SOURCES`), or numbers outside
    their range."""
    if source not in SOURCES:
        raise UserError(f"{where}: got {shown(source)}{nearest(source, SOURCES)}; expected one of "
                        f"{', '.join(SOURCES)}")
    if not (isinstance(n_mean, int) and n_mean >= 1):
        raise UserError(f"{where}.n_mean: got {shown(n_mean)}; expected a number of strides >= 1")
    if not (0 < min_stride <= stride0 <= max_stride and math.isfinite(max_stride)):
        raise UserError(f"{where}: strides {min_stride} <= {stride0} <= {max_stride} s; expected "
                        "0 < min_stride <= stride0 <= max_stride, finite")
    if not 0 <= refractory < 1:
        raise UserError(f"{where}.refractory: got {shown(refractory)}; expected a fraction in [0, 1)")
    if not (rate_band > 0 and math.isfinite(rate_band)):
        raise UserError(f"{where}.rate_band: got {shown(rate_band)}; expected a hip rate > 0 rad/s")
    if not (0 <= min_swing < min_stride):
        raise UserError(f"{where}.min_swing: got {shown(min_swing)}; expected a time in [0, min_stride) s")
    index = SOURCES.index(source)
    event_phase = 0.0 if index == SOURCE_CONTACT else hip_peak_phase()
    return PhaseConfig(index, event_phase, int(n_mean), float(stride0), float(min_stride),
                       float(max_stride), float(refractory), float(rate_band), float(min_swing))


def phase_state(config: PhaseConfig) -> PhaseState:
    """A fresh state (zeros): no sample, no event, no stride measured."""
    return PhaseState(np.zeros(config.n_mean), np.zeros(N_SCALARS))


@njit(cache=True, _nrt=False)
def stride_estimate(config: PhaseConfig, state: PhaseState) -> float:
    """T_hat s: the mean of the strides in the ring, ``stride0`` while it is empty."""
    n = int(state.scalars[N_STRIDES])
    if n == 0:
        return config.stride0
    total = 0.0
    for k in range(n):
        total += state.strides[k]
    return total / n


@njit(cache=True, _nrt=False)
def phase_step(config: PhaseConfig, state: PhaseState, t: float, hip: float, hip_rate: float,
               contact: bool) -> float:
    """One sample (t s, the hip angle rad and rate rad/s, the foot's contact): detect an
    event, update the stride ring, return the phase in [0, 1) (NaN before the first event).
    Samples come in time order; the first one only primes the edge detectors."""
    sc = state.scalars
    event = False
    if sc[STARTED] > 0:
        if config.source == SOURCE_CONTACT:
            event = (contact and sc[PREV_CONTACT] == 0.0 and sc[HAS_OFF] > 0.0
                     and t - sc[T_OFF] >= config.min_swing)
        else:
            event = sc[ARMED] > 0.0 and hip_rate <= 0.0
    if hip_rate > config.rate_band:
        sc[ARMED] = 1.0
    elif event:
        sc[ARMED] = 0.0
    if not contact and (sc[PREV_CONTACT] > 0.0 or sc[STARTED] == 0.0):
        sc[T_OFF] = t             # the foot leaves the ground (or is off at the first sample)
        sc[HAS_OFF] = 1.0
    sc[STARTED] = 1.0
    sc[PREV_CONTACT] = 1.0 if contact else 0.0
    if event:
        if sc[HAS_EVENT] == 0.0:
            sc[T_EVENT] = t
            sc[HAS_EVENT] = 1.0
        elif t - sc[T_EVENT] >= config.refractory * stride_estimate(config, state):
            stride = t - sc[T_EVENT]
            if config.min_stride <= stride <= config.max_stride:
                head = int(sc[HEAD])
                state.strides[head] = stride
                sc[HEAD] = (head + 1) % config.n_mean
                sc[N_STRIDES] = min(sc[N_STRIDES] + 1.0, float(config.n_mean))
                sc[N_MEASURED] += 1.0
            sc[T_EVENT] = t
    return phase_at(config, state, t)


@njit(cache=True, _nrt=False)
def strides_measured(state: PhaseState) -> int:
    """How many strides the estimator has measured and averaged since its fresh state."""
    return int(state.scalars[N_MEASURED])


@njit(cache=True, _nrt=False)
def phase_at(config: PhaseConfig, state: PhaseState, t: float) -> float:
    """The phase in [0, 1) at time t (s) from the events the state has seen (no new
    sample: the rollout's controller reads it between samples); NaN before the first event."""
    sc = state.scalars
    if sc[HAS_EVENT] == 0.0:
        return np.nan
    frac = (t - sc[T_EVENT]) / stride_estimate(config, state)
    frac = 0.0 if frac < 0.0 else (PHASE_MAX if frac > PHASE_MAX else frac)
    phase = config.event_phase + frac
    return phase - 1.0 if phase >= 1.0 else phase


@njit(cache=True, _nrt=False)
def _estimate(config: PhaseConfig, state: PhaseState, t, hip, hip_rate, contact, out) -> None:
    for i in range(t.shape[0]):
        out[i] = phase_step(config, state, t[i], hip[i], hip_rate[i], contact[i])


def estimate_phase(config: PhaseConfig, t: np.ndarray, hip: np.ndarray, hip_rate: np.ndarray,
                   contact: np.ndarray) -> np.ndarray:
    """The estimator run along one leg's recorded signals, causally: t (n,) s increasing,
    hip (n,) rad, hip_rate (n,) rad/s, contact (n,) bool -> phase (n,) in [0, 1), NaN before
    the first event. A pure function (a fresh :func:`phase_state`)."""
    t = np.ascontiguousarray(t, dtype=float)
    n = t.shape[0]
    hip, rate = (np.ascontiguousarray(a, dtype=float).reshape(n) for a in (hip, hip_rate))
    contact = np.ascontiguousarray(contact, dtype=np.bool_).reshape(n)
    out = np.empty(n)
    _estimate(config, phase_state(config), t, hip, rate, contact, out)
    return out


# --------------------------------------------------------------------------- the truth
def heel_strikes(t: np.ndarray, contact: np.ndarray) -> np.ndarray:
    """Times (s) of the contact signal's rising edges (not counting a contact at t[0])."""
    c = np.asarray(contact, dtype=bool)
    return np.asarray(t, dtype=float)[1:][c[1:] & ~c[:-1]]


def true_phase(t: np.ndarray, strikes: np.ndarray) -> np.ndarray:
    """The gait phase known after the fact: (t - s_k) / (s_{k+1} - s_k) between consecutive
    heel strikes s_k (n,) in [0, 1); NaN before the first strike and after the last."""
    t = np.asarray(t, dtype=float)
    s = np.asarray(strikes, dtype=float)
    out = np.full(t.shape, np.nan)
    if s.size < 2:
        return out
    k = np.searchsorted(s, t, side="right") - 1
    inside = (k >= 0) & (k < s.size - 1)
    out[inside] = (t[inside] - s[k[inside]]) / (s[k[inside] + 1] - s[k[inside]])
    return out


def phase_error(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """The signed circular difference estimate - truth, wrapped into [-0.5, 0.5) (a
    fraction of the stride; NaN where either is)."""
    d = np.asarray(estimate, dtype=float) - np.asarray(truth, dtype=float)
    return (d + 0.5) % 1.0 - 0.5
