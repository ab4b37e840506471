"""Metrics from synthetic trajectories with known answers; the compiled accumulator equals
the plain-NumPy reference."""

import math

import numpy as np
import pytest

from codesign.walking import accumulators as ac
from codesign.walking import gait_agreement as ga
from codesign.walking import metrics as mt
from codesign.walking.samples import gait_samples
from metric_oracles import metrics_reference

F = 0.9            # gait frequency, Hz
W = 2 * math.pi * F


def synthetic(stance=0.6, dt=1e-3):
    """Walking-like signals on [0, 10] s with closed-form window (t >= 5 s) averages.

    The window [5, 10] s holds 4.5 gait periods: sinusoids of frequency 2F (integer number
    of periods) average exactly.
    """
    t = np.linspace(0.0, 10.0, int(round(10.0 / dt)) + 1)
    x = 1.25 * t + 0.02 * np.sin(2 * W * t)
    vx = 1.25 + 0.02 * 2 * W * np.cos(2 * W * t)
    tau = np.stack([40 * np.sin(2 * W * t), 25 * np.cos(2 * W * t)], axis=1)
    rate = np.stack([2 * np.cos(2 * W * t), -3 * np.sin(2 * W * t)], axis=1)
    assist = ((t >= 6.0) & (t < 7.0)).astype(float)
    phase = (F * t) % 1.0
    contact_r = (phase < stance).astype(float)
    contact_l = (((phase + 0.5) % 1.0) < stance).astype(float)
    force = np.stack([300 + 50 * np.sin(2 * W * t), 120 + 0 * t], axis=1)
    touchdowns = []
    for k in range(int(10 * F * 2) + 1):
        tk = k / (2 * F)
        touchdowns.append((tk, k % 2, 1.25 * tk + 0.02 * np.sin(2 * W * tk)))
    return t, x, vx, assist, contact_r, contact_l, tau, rate, force, touchdowns


def synthetic_gait(t):
    """Gait-physics samples with known window (t >= 5 s) answers: feet loaded 1 or 2, one
    foot sliding in [6, 6.5) s; a windowed GRF peaking at 1.3 BW (70 kg) at t = 7 s;
    angles: right knee hyperextended 7 deg at its peak, left hip flexed to 130 deg (10
    deg beyond its range), left knee flexed 30 deg; two cuffs, the larger 400 N; posture:
    the right foot on the ground throughout, the left from t = 7.5 s; the torso pitched
    3 + 4 sin(2 W t) deg from upright."""
    loaded = 1.0 + (np.sin(2 * W * t) > 0)
    sliding = ((t >= 6.0) & (t < 6.5)).astype(float)
    grf = 70 * 9.81 * (1.0 + 0.3 * np.exp(-((t - 7.0) / 0.05) ** 2) + 0.8 * np.exp(-((t - 0.3) / 0.05) ** 2))
    angles = np.zeros((len(t), 6))
    angles[:, 1] = np.radians(7.0) * np.sin(W * t)            # engine knee > 0: hyperextension
    angles[:, 2] = np.radians(15.0 * np.sin(W * t) - 5.0)     # ankle: 20 deg plantarflexion at its least
    angles[:, 5] = np.radians(-25.0) * (t < 5.0)              # left ankle: 25 deg before the window only
    angles[:, 3] = np.radians(130.0) * np.sin(W * t) ** 2     # left hip flexion
    angles[:, 4] = -np.radians(30.0)                          # left knee flexed 30 deg
    cuff = np.zeros((len(t), 2, 2))
    cuff[:, 0] = [240.0, 320.0]                              # 400 N
    cuff[:, 1, 1] = 100.0 * np.cos(W * t)
    feet = np.stack([np.ones_like(t), (t >= 7.5).astype(float)], axis=1)
    pitch = np.radians(3.0 + 4.0 * np.sin(2 * W * t))
    return dict(loaded=loaded, sliding=sliding, grf=grf, angles=angles, cuff=cuff, feet=feet,
                pitch=pitch)


def cuff_magnitude(cuff):
    """The largest attachment force of one sample (N; cuff float[k, 2]): what the cuff
    window (accumulators.push_cuff_bin) hands accumulate_gait."""
    return float(np.hypot(cuff[:, 0], cuff[:, 1]).max())


def compiled(t, x, vx, assist, cr, cl, tau, rate, force, touchdowns, **kw):
    acc = mt.new_accumulator(force.shape[1], 5.0)
    td = list(touchdowns)
    gait = synthetic_gait(t)
    gait_q = np.arange(6, dtype=np.int64)
    for i in range(len(t)):
        while td and td[0][0] <= t[i]:
            tk, foot, xf = td.pop(0)
            ac.accumulate_touchdown(acc, tk, foot, xf)
        ac.accumulate_ground_peak_start(acc, t[i], gait["grf"][i])
        ac.accumulate_gait(acc, t[i], gait["loaded"][i], gait["sliding"][i], gait["grf"][i],
                           gait["angles"][i], gait_q, cuff_magnitude(gait["cuff"][i]), gait["feet"][i],
                           gait["pitch"][i])
        ac.accumulate_knee_stance_peak(acc, t[i], gait["angles"][i], gait_q, gait["feet"][i])
        ac.accumulate_sample(acc, t[i], x[i], vx[i], assist[i], cr[i], cl[i], tau[i], rate[i],
                             force[i])
    return mt.finalize(acc, time=10.0, n_joints=tau.shape[1], **kw)


KW = dict(site_names=("hip_r", "knee_r"), total_mass=70.0, gravity=9.81)


def test_compiled_equals_reference():
    data = synthetic()
    got = compiled(*data, **KW)
    ref = metrics_reference(*data, t_start=5.0, time=10.0, gait=synthetic_gait(data[0]), **KW)
    assert got.keys() == ref.keys()
    for k in got:
        assert got[k] == pytest.approx(ref[k], rel=1e-10, abs=1e-12, nan_ok=True), k


def periodic_stance_knee_peak(flexion_of, rebound=(0.0, 0.0)) -> float:
    """knee_flexion_stance_peak_deg of strides of 1.1 s with 60 % stance (Winter's cycle),
    the left leg half a stride behind and starting in swing, each knee's flexion (deg)
    ``flexion_of(tau)`` at tau s after its touchdown, a 30-ms scuff in the right leg's
    swing with its knee at 60 deg, each foot in the air over ``rebound`` (s after its
    touchdown, [start, end)); 6 s sampled every ms, the window from 3 s."""
    stride, stance, dt = 1.1, 0.66, 1e-3
    t = np.arange(int(round(6.0 / dt))) * dt
    angles = np.zeros((t.size, 6))
    feet = np.zeros((t.size, 2))
    for leg in range(2):
        tau = np.mod(t - 0.5 * stride * leg, stride)          # s since its touchdown
        feet[:, leg] = (tau < stance) & ~((tau >= rebound[0]) & (tau < rebound[1]))
        flexion = flexion_of(tau)
        if leg == 0:
            scuff = (tau > 0.75) & (tau < 0.78)
            feet[scuff, 0] = 1.0
            flexion[scuff] = 60.0
        angles[:, 3 * leg + 1] = -np.radians(flexion)          # engine knee = -flexion
    feet[t < 0.5 * stride, 1] = 0.0
    acc = mt.new_accumulator(0, 3.0)
    gait_q = np.arange(6, dtype=np.int64)
    for k in range(t.size):
        ac.accumulate_knee_stance_peak(acc, t[k], angles[k], gait_q, feet[k])
    m = mt.finalize_muscles(acc, 70.0, 1.2)
    assert m["knee_flexion_stance_peak_min_deg"] == pytest.approx(m["knee_flexion_stance_peak_deg"], abs=0.01)
    return m["knee_flexion_stance_peak_deg"]


def test_stance_knee_peak_is_the_loading_response_of_a_periodic_gait():
    """A knee that flexes 18 deg at 15 % of the cycle (loading response) and 40 deg at 45 %
    (late stance, the other foot still off: the single-support rule read it, as a searched
    stiff-kneed gait showed) reads 18 deg: not the 40 deg nor the scuff's 60 deg. A knee
    that lands at 15 deg and locks straight (-3 deg) reads its angle at the window's end,
    30 % of the stride (0.33 s) after touchdown, not the flexion it landed with, also with
    an impact's 1-deg flexion on the way."""
    yielding = periodic_stance_knee_peak(lambda tau: 18.0 * np.exp(-((tau - 0.165) / 0.04) ** 2)
                                         + 40.0 * np.exp(-((tau - 0.50) / 0.02) ** 2))
    assert yielding == pytest.approx(18.0, abs=1e-3)
    stiff = periodic_stance_knee_peak(lambda tau: -3.0 + 18.0 * np.exp(-tau / 0.03) * (tau < 0.66)
                                      + 60.0 * (tau >= 0.66))
    assert stiff == pytest.approx(-3.0 + 18.0 * math.exp(-0.33 / 0.03), abs=0.01)
    # the same with a 1-deg impact bump 10 ms after touchdown: not a yield
    bumped = periodic_stance_knee_peak(lambda tau: -3.0 + 18.0 * np.exp(-tau / 0.03) * (tau < 0.66)
                                       + 60.0 * (tau >= 0.66) + 1.0 * np.exp(-((tau - 0.01) / 0.003) ** 2))
    assert bumped == pytest.approx(stiff, abs=0.01)
    # or a 3-ms rebound 2 ms after touchdown (foot in the air, knee still at ~14 deg): not
    # the window's end
    rebound = periodic_stance_knee_peak(lambda tau: -3.0 + 18.0 * np.exp(-tau / 0.03) * (tau < 0.66)
                                        + 60.0 * (tau >= 0.66), rebound=(0.002, 0.005))
    assert rebound == pytest.approx(stiff, abs=0.01)


def test_known_answers():
    m = compiled(*synthetic(), **KW)
    speed = (1.25 * 5 + 0.02 * (np.sin(2 * W * 10) - np.sin(2 * W * 5))) / 5
    assert m["speed"] == pytest.approx(speed, rel=1e-12)
    assert m["speed_ratio"] == pytest.approx(speed / 1.3, rel=1e-12)
    assert m["speed_match"] == pytest.approx(1 - abs(speed / 1.3 - 1), rel=1e-12)
    assert m["speed_std"] == pytest.approx(0.02 * 2 * W / math.sqrt(2), rel=1e-4)
    assert m["assist_fraction"] == pytest.approx(0.2, abs=2e-4)       # [6, 7) of [5, 10]
    assert m["assist_free"] == pytest.approx(0.8, abs=2e-4)
    assert m["non_contact_time"] == 0.0                              # 60 % stance: overlap
    # |40 sin * 2 cos| + |25 cos * -3 sin| = 155 |sin cos|, mean |sin cos| = 1/pi
    assert m["power"] == pytest.approx(155 / math.pi, rel=1e-4)
    # the right foot on from the start, the left's one stance open: no whole stride yet
    assert math.isnan(m["knee_flexion_stance_peak_deg"]) and math.isnan(m["knee_flexion_stance_peak_min_deg"])
    assert math.isnan(m["metabolic_power"]) and math.isnan(m["metabolic_cost"])   # no muscles
    assert m["torque_rms"] == pytest.approx(math.sqrt((40**2 / 2 + 25**2 / 2) / 2), rel=1e-4)
    assert m["cost_of_transport"] == pytest.approx(155 / math.pi * 5 / (70 * 9.81 * speed * 5), rel=1e-4)
    assert m["step_length"] == pytest.approx(1.25 / (2 * F), rel=1e-9)
    assert m["stance_fraction"] == pytest.approx(0.6, abs=5e-4)
    assert m["hip_r_force_peak"] == pytest.approx(350.0, rel=1e-6)
    assert m["hip_r_force_rms"] == pytest.approx(math.sqrt(300**2 + 50**2 / 2), rel=1e-6)
    assert m["knee_r_force_rms"] == pytest.approx(120.0, rel=1e-12)
    # gait physics (issue 15)
    loaded = 1.5                                   # mean feet loaded (sin > 0 half the time)
    assert m["foot_slip_fraction"] == pytest.approx(0.5 / (loaded * 5.0), rel=2e-3)
    assert m["grf_peak_bw"] == pytest.approx(1.3, rel=1e-9)
    assert m["grf_peak_bw_start"] == pytest.approx(1.8, rel=1e-9)     # the bump at 0.3 s, before the window
    assert m["ankle_plantarflexion_peak_deg"] == pytest.approx(20.0, rel=1e-5)   # sampled peak
    assert m["knee_hyperextension_peak_deg"] == pytest.approx(7.0, rel=1e-5)   # sampled peak
    assert m["joint_range_violation_deg"] == pytest.approx(10.0, abs=1e-4)
    assert m["cuff_force_peak"] == pytest.approx(400.0, rel=1e-12)
    assert m["interaction_force_peak_bw"] == pytest.approx(400.0 / (70 * 9.81), rel=1e-9)
    # posture: 9 periods of sin(2 W t) in the window, RMS^2 = 3^2 + 4^2 / 2
    assert m["torso_pitch_rms_deg"] == pytest.approx(math.sqrt(17.0), rel=1e-6)
    # the right knee's flexion -7 sin(W t) over [5, 10] s (its integral 14 / W: 4.5
    # periods) and the left's 30 deg over [7.5, 10] s, over 5 + 2.5 s of feet on the
    # ground; the left foot's step at 7.5 s moves the trapezoid by ~h / 2 of 30 deg
    assert m["knee_flexion_stance_mean_deg"] == pytest.approx((14 / W + 30 * 2.5) / 7.5, abs=5e-3)


def test_flight_phase_counts_non_contact_time():
    m = compiled(*synthetic(stance=0.4), **KW)
    # each foot on the ground 40 % of the period, half a period apart: 2 x 10 % flight
    assert m["non_contact_time"] == pytest.approx(0.2 * 5.0, abs=3e-3)
    assert m["stance_fraction"] == pytest.approx(0.4, abs=5e-4)


def test_empty_window_gives_nan_not_error():
    acc = mt.new_accumulator(0, 5.0)
    ac.accumulate_sample(acc, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, np.zeros(1), np.zeros(1), np.zeros(0))
    m = mt.finalize(acc, time=1.0, n_joints=1)
    assert m["time"] == 1.0 and math.isnan(m["speed"]) and math.isnan(m["power"])
    for name in ("foot_slip_fraction", "grf_peak_bw", "knee_hyperextension_peak_deg",
                 "joint_range_violation_deg", "torso_pitch_rms_deg", "knee_flexion_stance_mean_deg",
                 "cuff_force_peak", "interaction_force_peak_bw"):
        assert math.isnan(m[name]), name


def test_nominal_gait_agreement_known_answers():
    from codesign.model.gait import nominal_gait

    gait = nominal_gait()
    f, phi0 = 0.9, 0.3
    t = np.arange(0.0, 10.0, 0.01)
    right = gait.angles(f * t + phi0)
    left = gait.angles(f * t + phi0 + 0.5)
    angles = {}
    for k, joint in enumerate(("hip", "knee", "ankle")):
        angles[f"{joint}_r"] = right[:, k] + 0.1        # offset: r stays 1, RMS = offset
        angles[f"{joint}_l"] = left[:, k] + 0.1
    out = ga.nominal_gait_agreement(t, angles, gait, f, phi0, 5.0)
    for joint in ("hip", "knee", "ankle"):
        assert out[f"{joint}_corr"] == pytest.approx(1.0, abs=1e-12)
        assert out[f"{joint}_rms_rad"] == pytest.approx(0.1, abs=1e-12)
    # the left leg driven in phase with the right (no half-period shift): no longer equal
    angles["knee_l"] = right[:, 1]
    shifted = ga.nominal_gait_agreement(t, angles, gait, f, phi0, 5.0)
    assert shifted["knee_corr"] < 0.9 and shifted["knee_rms_rad"] > 0.1


def test_stride_agreement_aligns_each_stride_at_heel_strike():
    # a gait that is Winter's, but with strides of varying length (1.0-1.2 s) and started
    # at an arbitrary phase of the controller's clock: stride-normalized it is Winter's
    # exactly (r = 1, RMS = the offset); at the controller's phase it is not
    from codesign.model.gait import nominal_gait

    gait = nominal_gait()
    t = np.arange(0.0, 12.0, 0.002)
    rng = np.random.default_rng(5)
    angles, strikes = {}, {}
    for side, first in (("r", 0.13), ("l", 0.68)):
        s = first + np.cumsum(np.concatenate([[0.0], rng.uniform(1.0, 1.2, 12)]))
        k = np.clip(np.searchsorted(s, t, side="right") - 1, 0, len(s) - 2)
        phase = (t - s[k]) / (s[k + 1] - s[k])
        a = gait.angles(phase)
        for j, joint in enumerate(("hip", "knee", "ankle")):
            angles[f"{joint}_{side}"] = a[:, j] - 0.05
        # touchdown detection from a contact signal: on the ground for the first 60 %
        on = (phase < 0.6) & (t >= s[0])
        found = ga.heel_strikes(t, on)
        expected = s[(s <= t[-1]) & (s >= 0.2)]         # the first needs 0.2 s off before
        assert found.shape == expected.shape and np.allclose(found, expected, atol=0.002)
        strikes[side] = expected                         # the exact ones: r = 1 to round-off
    out = ga.stride_gait_agreement(t, angles, gait, strikes, 5.0)
    for joint in ("hip", "knee", "ankle"):
        assert out[f"{joint}_corr"] == pytest.approx(1.0, abs=1e-9)
        assert out[f"{joint}_rms_rad"] == pytest.approx(0.05, abs=1e-9)
    clock = ga.nominal_gait_agreement(t, angles, gait, 0.9, 0.0, 5.0)
    assert clock["knee_corr"] < 0.9
    # a lift shorter than the minimum swing (0.2 s) is not a stride
    lift = (np.arange(100) < 20) | (np.arange(100) >= 35)          # off for 0.15 s
    assert ga.heel_strikes(np.arange(100) * 0.01, lift).size == 0


def test_a_bounce_or_a_scuff_is_not_a_step_and_a_scuff_is_counted():
    """Touchdowns 0.55 s apart, alternating feet, 0.70 m apart: 0.70-m steps. Add what
    the stepping rollout reports of a hard heel strike's rebound (the foot off for 2 ms)
    and of a toe scuffing the ground in mid-swing (0.15 s after its lift-off): still
    0.70-m steps; without the lift-offs every touchdown counts (the 0.2-s rule needs
    them). The three scuffs in the window, not the rebounds, are ``scuffs_per_step``: 3 / 9."""
    def steps(events, t_start=1.0):
        acc = mt.new_accumulator(0, t_start)
        for kind, t, foot, x in events:
            if kind == "off":
                ac.accumulate_liftoff(acc, t, foot)
            else:
                ac.accumulate_touchdown(acc, t, foot, x)
        scuffs = mt.finalize(acc, time=7.0, n_joints=0)["scuffs_per_step"]
        return acc[mt.STEP_SUM] / acc[mt.STEP_COUNT], int(acc[mt.STEP_COUNT]), scuffs

    clean = []
    for k in range(12):                               # foot k % 2 lands at 0.55 k s, 0.7 k m
        t, foot = 0.55 * k, k % 2
        clean += [("off", t - 0.40, foot, 0.0), ("on", t, foot, 0.7 * k)]
    noisy = list(clean)
    for k in range(2, 12, 3):                         # rebounds: off 1 ms after landing, back 2 ms later
        t, foot = 0.55 * k, k % 2
        noisy += [("off", t + 0.001, foot, 0.0), ("on", t + 0.003, foot, 0.7 * k)]
    for k in range(3, 12, 4):                         # scuffs: a swing toe touches 0.15 s after lift-off
        t, foot = 0.55 * k, k % 2
        noisy += [("on", t - 0.25, foot, 0.7 * k - 0.45), ("off", t - 0.24, foot, 0.0)]
    noisy.sort(key=lambda e: e[1])
    assert steps(clean) == pytest.approx((0.7, 9, 0.0))    # touchdowns 2..11 in the window: 9 steps
    assert steps(noisy) == pytest.approx((0.7, 9, 3 / 9))   # scuffs at k = 3, 7, 11; rebounds not
    assert steps(noisy, t_start=2.0)[2] == pytest.approx(2 / 7)   # the window from 2 s: 7 steps, 2 scuffs
    touchdowns_only = [e for e in noisy if e[0] == "on"]
    # what the metric reported before: each scuff (0.25 m from the other foot) taken for
    # the step, the real touchdown after it for the same foot again
    assert steps(touchdowns_only)[:2] == pytest.approx(((6 * 0.7 + 3 * 0.25) / 9, 9))


def test_gait_samples_are_taken_on_the_recording_grid():
    # the stepping rollout's states after each step, at t = (k + 1) h: sample k keeps the
    # state at the step start within h / 2 of k GAIT_SAMPLE_S, as walk's records do
    # (the first, at t = 0, takes the first state there is: h)
    h = 1e-3
    acc = mt.new_accumulator(0, 0.5, gait_samples=mt.gait_sample_count(1.0))
    assert mt.gait_sample_count(1.0) == 101
    gait_q = np.arange(6, dtype=np.int64)
    for k in range(1000):
        t = (k + 1) * h
        ac.accumulate_gait_sample(acc, t, t + np.arange(6.0), gait_q, np.array([1.0, float(t > 0.5)]), 0.5 * h)
    samples = gait_samples(acc)
    assert samples.t.shape == (101,) and np.array_equal(samples.t, np.arange(0.0, 1.005, 0.01))
    assert samples.angles[0, 0] == pytest.approx(h, abs=1e-15)
    assert np.allclose(samples.angles[1:, 0], samples.t[1:], atol=1e-12, rtol=0)
    assert np.allclose(samples.angles[:, 5] - samples.angles[:, 0], 5.0, atol=1e-12, rtol=0)
    assert np.array_equal(samples.feet[:, 1], (samples.t > 0.505).astype(float))
    absent = np.array([0, 1, 2, -1, -1, -1], dtype=np.int64)       # no left leg: NaN
    ac.accumulate_gait_sample(acc := mt.new_accumulator(0, 0.5, gait_samples=3), 0.0, np.ones(3), absent,
                              np.ones(2), 0.0)
    assert gait_samples(acc).t.shape == (1,) and np.isnan(gait_samples(acc).angles[0, 3:]).all()


def stride_samples(left_sign):
    """An accumulator whose gait samples (every 10 ms over 12 s) are Winter's gait
    stride-normalized over strides of 1.00-1.20 s, minus 0.05 rad; the left leg
    ``left_sign`` times Winter's (minus 0.05) over the right leg's strides, each foot on the ground for
    the first 60 % of its stride."""
    from codesign.model.gait import nominal_gait

    gait = nominal_gait()
    acc = mt.new_accumulator(0, 6.0, gait_samples=mt.gait_sample_count(12.0))
    # heel strikes on the sampling grid (the samples' times, k GAIT_SAMPLE_S), so that
    # the strikes found in the samples are the exact ones
    strides = np.random.default_rng(7).integers(100, 121, 12)
    s = (13 + np.cumsum(np.concatenate([[0], strides]))) * mt.GAIT_SAMPLE_S
    gait_q = np.arange(6, dtype=np.int64)
    for t in np.arange(mt.gait_sample_count(12.0)) * mt.GAIT_SAMPLE_S:
        k = min(max(int(np.searchsorted(s, t, side="right")) - 1, 0), len(s) - 2)
        phase = (t - s[k]) / (s[k + 1] - s[k])
        a = gait.angles(phase)
        on = float(phase < 0.6 and t >= s[0])
        ac.accumulate_gait_sample(acc, t, np.concatenate([a - 0.05, left_sign * a - 0.05]), gait_q, np.array([on, on]), 0.0)
    return acc, s


def test_stride_metrics_of_the_gait_samples_know_their_answers():
    # stride-normalized Winter's gait (strides of varying length): r = 1 for each joint,
    # the RMS difference the 0.05-rad offset
    from codesign.model.gait import nominal_gait

    acc, _ = stride_samples(1.0)
    out = ga.sampled_stride_agreement(acc, nominal_gait())
    for joint in ("hip", "knee", "ankle"):
        assert out[f"{joint}_corr"] == pytest.approx(1.0, abs=1e-9), joint
        assert out[f"{joint}_rms_rad"] == pytest.approx(0.05, rel=1e-9), joint
    assert ga.stride_metrics(out) == {f"stride_r_{j}": out[f"{j}_corr"] for j in ("hip", "knee", "ankle")}
    # the left leg mirrored over the same samples: x = [f - 0.05, -f - 0.05], y = [f, f]
    # has mean(x y) = -0.05 mean(f) = mean(x) mean(y): r = 0 exactly
    acc, _ = stride_samples(-1.0)
    out = ga.sampled_stride_agreement(acc, nominal_gait())
    for joint in ("hip", "knee", "ankle"):
        assert out[f"{joint}_corr"] == pytest.approx(0.0, abs=1e-9), joint
    # a window with no whole stride: NaN
    acc = mt.new_accumulator(0, 11.5, gait_samples=mt.gait_sample_count(12.0))
    assert math.isnan(ga.sampled_stride_agreement(acc, nominal_gait())["hip_corr"])
