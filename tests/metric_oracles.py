"""Plain-NumPy oracles of the compiled metric accumulators and their finalizers (same
definitions, written independently of the slot layout): the tests check
:mod:`codesign.walking.accumulators` + :mod:`codesign.walking.metrics` against them.
Test-only code (pyproject's pytest ``pythonpath`` makes it importable as
``metric_oracles``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from codesign.model import actuators as act
from codesign.walking.metrics import JOINT_RANGE_DEG, JOINT_SIGN, TARGET_SPEED


def gait_reference(t, t_start, loaded, sliding, grf, angles, cuff, feet, pitch, body_weight,
                   site_peaks) -> dict[str, float]:
    """Plain-NumPy reference of accumulators.accumulate_gait + metrics.finalize_gait: per
    sample loaded, sliding (feet, float[s]), grf (N, float[s]), angles (engine, float[s, 6]:
    hip, knee, ankle right then left), cuff (float[s, k, 2], N: each sample's attachment
    forces, whose largest magnitude is the sample's cuff force), feet (float[s, 2], 0/1),
    pitch (rad from upright, float[s])."""
    t = np.asarray(t, float)
    w = t >= t_start
    tw = t[w]
    ang = np.degrees(np.asarray(angles, float)[w].reshape(-1, 2, 3) * JOINT_SIGN)
    on = np.asarray(feet, float)[w]
    pitch_deg = np.degrees(np.asarray(pitch, float)[w])
    lo, hi = JOINT_RANGE_DEG[:, 0], JOINT_RANGE_DEG[:, 1]
    out_of_range = np.maximum(np.maximum(lo - ang, ang - hi), 0.0)
    cuff = np.asarray(cuff, float)[w]
    cuff_peak = float(np.hypot(cuff[..., 0], cuff[..., 1]).max()) if cuff.shape[1] else math.nan
    forces = [f for f in (*site_peaks, cuff_peak) if math.isfinite(f)]
    g = np.asarray(grf, float)[w]
    return {
        "foot_slip_fraction": (np.trapezoid(np.asarray(sliding, float)[w], tw)
                               / np.trapezoid(np.asarray(loaded, float)[w], tw)),
        "grf_peak_bw": float(np.nanmax(g)) / body_weight if np.isfinite(g).any() else math.nan,
        "grf_peak_bw_start": float(np.nanmax(np.asarray(grf, float)[~w])) / body_weight,
        "knee_hyperextension_peak_deg": float(np.maximum(-ang[..., 1], 0.0).max()),
        "ankle_plantarflexion_peak_deg": float((-ang[..., 2]).max()),
        "joint_range_violation_deg": float(out_of_range.max()),
        "torso_pitch_rms_deg": math.sqrt(np.trapezoid(pitch_deg ** 2, tw) / (tw[-1] - tw[0])),
        "knee_flexion_stance_mean_deg": (np.trapezoid((on * ang[..., 1]).sum(axis=1), tw)
                                         / np.trapezoid(on.sum(axis=1), tw)),
        "cuff_force_peak": cuff_peak,
        "interaction_force_peak_bw": max(forces) / body_weight if forces else math.nan,
    }


def metrics_reference(t, x, vx, assist, contact_r, contact_l, joint_tau, joint_rate,
                      site_force, touchdowns, *, t_start: float, time: float,
                      site_names: tuple[str, ...] = (), total_mass: float = math.nan,
                      gravity: float = 9.81, target_speed: float = TARGET_SPEED,
                      gait: Mapping | None = None) -> dict[str, float]:
    """Plain-NumPy reference of the compiled accumulator (same definitions), for tests.

    t, x, vx, assist, contact_r, contact_l: float[s]; joint_tau, joint_rate: float[s, a];
    site_force: float[s, k]; touchdowns: sequence of (t, foot, x_foot); gait: the keyword
    arguments of :func:`gait_reference` but t, t_start, body_weight, site_peaks.
    """
    t = np.asarray(t, float)
    w = t >= t_start
    tw = t[w]
    tau = np.asarray(joint_tau, float).reshape(len(t), -1)[w]
    rate = np.asarray(joint_rate, float).reshape(len(t), -1)[w]
    f = np.asarray(site_force, float).reshape(len(t), -1)[w]
    cr, cl = np.asarray(contact_r, float)[w], np.asarray(contact_l, float)[w]
    xw, vw = np.asarray(x, float)[w], np.asarray(vx, float)[w]
    T = tw[-1] - tw[0]
    speed = (xw[-1] - xw[0]) / T
    mean_v = np.trapezoid(vw, tw) / T
    energy = np.trapezoid(np.abs(tau * rate).sum(axis=1), tw)
    assist_fraction = np.trapezoid(np.asarray(assist, float)[w], tw) / T
    td = [(foot, xf) for (tt, foot, xf) in touchdowns if tt >= t_start]
    steps = [abs(b[1] - a[1]) for a, b in zip(td, td[1:]) if a[0] != b[0]]
    out = {
        "time": float(time),
        "speed": speed,
        "speed_ratio": speed / target_speed,
        "speed_match": max(0.0, 1.0 - abs(speed / target_speed - 1.0)),
        "speed_std": math.sqrt(max(np.trapezoid(vw ** 2, tw) / T - mean_v ** 2, 0.0)),
        "assist_fraction": assist_fraction,
        "assist_free": 1.0 - assist_fraction,
        "non_contact_time": np.trapezoid(((cr <= 0) & (cl <= 0)).astype(float), tw),
        "power": energy / T,
        "torque_rms": math.sqrt(np.trapezoid((tau ** 2).sum(axis=1), tw) / T / tau.shape[1]),
        "cost_of_transport": (energy / (total_mass * gravity * (xw[-1] - xw[0]))
                              if xw[-1] > xw[0] else math.nan),
        "step_length": float(np.mean(steps)) if steps else math.nan,
        # touchdowns without lift-offs: none is a scuff (scuffs: test_metrics' bounce-and-scuff test)
        "scuffs_per_step": 0.0 if steps else math.nan,
        "stance_fraction": np.trapezoid(0.5 * (cr + cl), tw) / T,
    }
    for k, name in enumerate(site_names):
        out[f"{name}_force_peak"] = float(np.abs(f[:, k]).max())
        out[f"{name}_force_rms"] = math.sqrt(np.trapezoid(f[:, k] ** 2, tw) / T)
    if gait is not None:        # --- gait physics (issue 15)
        out.update(gait_reference(t, t_start, body_weight=total_mass * gravity,
                                  site_peaks=[out[f"{n}_force_peak"] for n in site_names], **gait))
    # --- issue 45: the impedance wearer's (no metabolic rate); the stance knee from the gait
    out.update(muscle_metrics_reference(t, t_start, gait["angles"], gait["feet"], None, 0.0, math.nan, math.nan)
               if gait is not None else {"metabolic_power": math.nan, "metabolic_cost": math.nan,
                                         "knee_flexion_stance_peak_deg": math.nan,
                                         "knee_flexion_stance_peak_min_deg": math.nan})
    out["assist_phase_error"] = math.nan    # issue 46 item 2: no phase-timed assistance here
    return {k: float(v) for k, v in out.items()}


def actuator_metrics_reference(t, joint_tau, joint_rate, kind, limit, motor, *,
                               t_start: float) -> dict[str, float]:
    """Plain-NumPy reference of accumulators.accumulate_actuators + the actuator part of
    metrics.finalize (same definitions), for tests. t: float[s]; joint_tau, joint_rate:
    float[s, a]; kind: int[a]; limit: float[a, 3]; motor: float[a, 4]."""
    t = np.asarray(t, float)
    w = t >= t_start
    tw = t[w]
    tau = np.asarray(joint_tau, float).reshape(len(t), -1)[w]
    rate = np.asarray(joint_rate, float).reshape(len(t), -1)[w]
    keep = np.asarray(kind) != act.NO_MOTOR
    tau, rate = tau[:, keep], rate[:, keep]
    limit, motor = np.asarray(limit, float)[keep], np.asarray(motor, float)[keep]
    if not keep.any() or tw.size < 2:
        return {}
    mech = tau * rate
    joule = (tau / (motor[:, 1] * motor[:, 0])) ** 2 * motor[:, 2]
    p_el = np.where(mech >= 0, mech, motor[:, 3] * mech) + joule
    speed_ratio = np.abs(rate) / limit[:, 1]
    lim = np.where(np.abs(rate) * limit[:, 0] > limit[:, 2],
                   limit[:, 2] / np.maximum(np.abs(rate), 1e-300), limit[:, 0])
    torque_ratio = np.where(speed_ratio <= 1.0, np.abs(tau) / lim, 0.0)
    return {"power_electrical": float(np.trapezoid(p_el.sum(axis=1), tw) / (tw[-1] - tw[0])),
            "actuator_torque_ratio_peak": float(torque_ratio.max()),
            "actuator_speed_ratio_peak": float(speed_ratio.max())}


def assist_phase_error_reference(t, feet, estimate, t_end, t_start, tol) -> float:
    """Plain-NumPy reference of accumulators.accumulate_phase + metrics.finalize_phase
    (issue 46 item 2) from the samples a rollout observed: t float64[k] (s, increasing),
    feet [k, 2] (right, left on the ground), estimate [k, 2] (the device's phase after
    each sample). Each leg's heel strikes (gait_agreement.heel_strikes at every sample);
    on the grid j GAIT_SAMPLE_S <= t_end the estimate of the first sample with
    j GAIT_SAMPLE_S <= t + tol, its wrapped error against true_phase there; the RMS over
    grid times >= t_start where both are known, both legs pooled (NaN: none)."""
    from codesign.control.phase import phase_error, true_phase
    from codesign.walking.gait_agreement import heel_strikes
    from codesign.walking.metrics import GAIT_SAMPLE_S, gait_sample_count

    t = np.asarray(t, float)
    grid = np.arange(gait_sample_count(t_end)) * GAIT_SAMPLE_S
    first = np.searchsorted(t + tol, grid, side="left")
    grid, first = grid[first < t.size], first[first < t.size]
    errors = []
    for leg in range(2):
        truth = true_phase(grid, heel_strikes(t, np.asarray(feet)[:, leg] > 0.0))
        e = phase_error(np.asarray(estimate, float)[first, leg], truth)
        errors.append(e[(grid >= t_start) & np.isfinite(e)])
    pooled = np.concatenate(errors)
    return math.sqrt(float(np.mean(pooled ** 2))) if pooled.size else math.nan


def muscle_metrics_reference(t, t_start, angles, feet, edot, standing_w, body_mass, speed) -> dict[str, float]:
    """Plain-NumPy reference of accumulators.accumulate_muscles / accumulate_knee_stance_peak
    + metrics.finalize_muscles (issue 45): per sample t (s), angles (engine, float[s, 6]:
    hip, knee, ankle right then left), feet (float[s, 2], 0/1), edot (W, float[s]; None:
    the impedance wearer); standing_w (W), body_mass (kg), speed (m/s)."""
    t = np.asarray(t, float)
    w = t >= t_start
    legs = [knee_stance_peak_reference(t, t_start, angles, feet, leg) for leg in range(2)]
    both = all(math.isfinite(v) for v in legs)
    out = {"knee_flexion_stance_peak_deg": max(legs) if both else math.nan,
           "knee_flexion_stance_peak_min_deg": min(legs) if both else math.nan,
           "metabolic_power": math.nan, "metabolic_cost": math.nan}
    if edot is not None:
        tw = t[w]
        power = np.trapezoid(np.asarray(edot, float)[w], tw) / (tw[-1] - tw[0]) - standing_w
        out["metabolic_power"] = power
        out["metabolic_cost"] = power / (body_mass * speed)
    return out


def knee_stance_peak_reference(t, t_start, angles, feet, leg, min_swing=0.2, share=0.3, yield_deg=2.0) -> float:
    """Plain reference of accumulators.accumulate_knee_stance_peak for one leg (0 right, 1
    left): from its foot's contact samples (float[s, 2], 0/1; the walk starts with both
    feet off) its touchdowns (back on after >= min_swing s off) and strides; a stance's
    loading window, when its touchdown is at t >= t_start, holds the samples within
    ``share`` of the previous stride after it; the knee has yielded from the first sample of the stride whose
    foot is on and whose flexion (deg; engine angles float[s, 6]) is ``yield_deg`` above
    the least flexion of the stride's foot-on samples so far. A window's peak, counted
    when a sample follows it: the largest flexion of its foot-on samples from the yield,
    or without a yield before the window's end its last foot-on sample's. The mean of the
    peaks; NaN: none."""
    t = np.asarray(t, float)
    knee = -np.degrees(np.asarray(angles, float)[:, 1 + 3 * leg])
    on = np.asarray(feet, float)[:, leg] > 0
    before = np.concatenate([[False], on[:-1]])
    lifts = t[before & ~on]
    downs = []
    for i in np.flatnonzero(on & ~before):
        earlier = lifts[lifts < t[i]]
        if earlier.size == 0 or t[i] - earlier[-1] >= min_swing:
            downs.append(i)
    bounds = downs + [t.size]
    peaks = []
    for j in range(1, len(downs)):
        a, b = bounds[j], bounds[j + 1]                   # this stride's samples [a, b)
        stride = t[a] - t[downs[j - 1]]
        window = np.flatnonzero((t[a] >= t_start) & (t[a:b] - t[a] <= share * stride)) + a
        if window.size == 0 or window[-1] + 1 >= t.size:  # none, or still open at the end
            continue
        close = window[-1] + 1
        low = np.minimum.accumulate(np.where(on[a:b], knee[a:b], np.inf))
        yields = np.flatnonzero(on[a:b] & (knee[a:b] >= low + yield_deg)) + a
        loading = window[on[window]]
        if loading.size == 0:
            continue
        if yields.size and yields[0] < close:
            top = loading[loading >= yields[0]]
            if top.size:
                peaks.append(float(knee[top].max()))
        else:
            peaks.append(float(knee[loading[-1]]))
    return float(np.mean(peaks)) if peaks else math.nan
