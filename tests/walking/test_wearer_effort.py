"""An active wearer's effort (issue 32) against independent truths: the metabolic proxy of
a torque and speed worked out by hand; a device that applies nothing and weighs nothing
leaves the wearer's effort exactly as it was; an ideal massless device supplying the
wearer's own hip torque profile takes the hip's effort off the wearer; the assistance
profile's compiled signal equals its definition."""

import math
from pathlib import Path

import numpy as np
import pytest

from codesign.control import assist as asst
from codesign.control import signals as sg
from codesign.problems.effort import effort_comparison
from codesign.walking import Design, WalkSettings, build_setup, evaluate, load_design, metrics_of
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt
from codesign.walking import rollout as ro
from codesign.walking.setup import SITES, ideal_drive
from codesign.model.anthropometry import human_geometry
from codesign.walking.trajectory import actuator_table, trajectory_table

ROOT = Path(__file__).resolve().parents[2]
WEARER = load_design(ROOT / "docs/designs/human-thesis-walking.json")
ACTIVE = WalkSettings.from_dict({"max_time": 10.0, "wearer": "active"})
# issue 31's human-like wearer: the hip's torso term, started inside its gait (its file's settings)
LIKE = load_design(ROOT / "docs/designs/human-walking.json")
ACTIVE_LIKE = WalkSettings.from_dict({**LIKE.evaluation, "max_time": 10.0, "wearer": "active"})
WEARERS = pytest.mark.parametrize("wearer, active", [(WEARER, ACTIVE), (LIKE, ACTIVE_LIKE)],
                                  ids=["thesis-law", "human-like-law"])


def zero_profile() -> dict[str, float]:
    """An assistance profile of zero peaks (rise and fall in bounds)."""
    return {name: (0.1 if name.endswith(("rise", "fall")) else 0.0) for name in asst.parameter_bounds()}


def test_metabolic_proxy_by_hand():
    """Hip: tau = T sin(w t), rate = W sin(w t): power T W sin^2 >= 0, positive work per
    stride T W / (2 f) (a stride of 1/f seconds, w = 2 pi f; both legs the same: twice
    that). Knee: rate = -W' sin: negative work of the same form. Ankle: zero. Over a
    window of whole strides walked at v, the proxy is (W+ / 0.25 + |W-| / 1.2) / (m v D)."""
    f, T, W, Tk, Wk, v, m = 0.9, 60.0, 2.0, 30.0, 3.0, 1.25, 75.0
    strides = 4
    t = np.linspace(0.0, strides / f, 40001)
    acc = mt.new_accumulator(0, 0.0)
    s = np.sin(2 * np.pi * f * t)
    for k in range(len(t)):
        tau = np.array([T * s[k], T * s[k], Tk * s[k], Tk * s[k], 0.0, 0.0])
        rate = np.array([W * s[k], W * s[k], -Wk * s[k], -Wk * s[k], 0.0, 0.0])
        ac.accumulate_sample(acc, t[k], v * t[k], v, 0.0, 1.0, 1.0, np.zeros(0), np.zeros(0), np.zeros(0))
        ac.accumulate_wearer(acc, t[k], tau, rate)
    out = mt.finalize_wearer(acc, m, f)
    hip_pos = 2 * T * W / (2 * f)           # J per stride, both legs
    knee_neg = -2 * Tk * Wk / (2 * f)
    distance = v * strides / f
    assert out["wearer_hip_work_pos"] == pytest.approx(hip_pos, rel=1e-9)
    assert out["wearer_hip_work_neg"] == pytest.approx(0.0, abs=1e-9)
    assert out["wearer_knee_work_neg"] == pytest.approx(knee_neg, rel=1e-9)
    assert out["wearer_hip_torque_rms"] == pytest.approx(T / math.sqrt(2), rel=1e-9)
    hip = hip_pos * strides / 0.25 / (m * distance)
    knee = abs(knee_neg) * strides / 1.20 / (m * distance)
    assert out["wearer_hip_metabolic"] == pytest.approx(hip, rel=1e-9)
    assert out["wearer_knee_metabolic"] == pytest.approx(knee, rel=1e-9)
    assert out["wearer_ankle_metabolic"] == 0.0
    assert out["wearer_metabolic"] == pytest.approx(hip + knee, rel=1e-9)


def test_a_passive_wearer_measures_no_wearer_effort():
    assert mt.finalize_wearer(mt.new_accumulator(0, 0.0), 75.0, 0.9) == {}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_profile_signal_is_the_sum_of_its_bumps(seed):
    """The compiled PPOLY signal equals the bumps' definition everywhere (to rounding),
    also for bumps that wrap through phase 0 and overlap each other."""
    rng = np.random.default_rng(seed)
    bumps = tuple(asst.Bump(rng.uniform(-50, 50), rng.uniform(0, 1), rng.uniform(0.05, 0.4),
                            rng.uniform(0.05, 0.4)) for _ in range(asst.BUMPS))
    phase = rng.uniform(0.0, 1.0, 2000)
    expected = asst.profile_values(bumps, phase)
    got = asst.profile_signal(bumps)(phase)
    assert np.abs(got - expected).max() <= 1e-9 * max(abs(b.peak) for b in bumps)


@WEARERS
def test_a_device_of_zero_torque_and_mass_changes_nothing(wearer, active):
    """An ideal device (no linkage, no mass) with a zero profile on the wearer alone: the
    walk and the wearer's effort are bit for bit the unassisted ones, effort_reduction 0."""
    alone = evaluate(wearer, active)
    assisted = evaluate(Design({**wearer.params, **zero_profile()}), active)
    assert alone.ok and assisted.ok and alone.metrics["time"] == 10.0
    assert alone.metrics["wearer_metabolic"] > 0
    for name, value in alone.metrics.items():
        if name.startswith("wearer_") or name == "speed":
            assert assisted.metrics[name] == value, name
    comparison = effort_comparison(assisted.metrics, alone.metrics)
    assert comparison["effort_reduction"] == 0.0
    assert comparison["speed_change"] == 0.0


RECORDING_FREQUENCY = 0.05   # Hz: the test device's clock, one period = 20 s = both legs' 10-s records


def recorded_profile(table) -> sg.Signal:
    """The wearer's hip law torque of a recorded walk (rows every step from t = 0) as one
    signal on a clock of RECORDING_FREQUENCY: the right leg's at phase t f, the left's at
    t f + 1/2 (the drive's phase offset of the left leg), knots at the recorded times."""
    t = table["t_s"].to_numpy()
    x = np.concatenate([RECORDING_FREQUENCY * t, RECORDING_FREQUENCY * t + 0.5])
    y = np.concatenate([table["tau_hip_r_Nm"].to_numpy(), table["tau_hip_l_Nm"].to_numpy()])
    m = np.zeros(len(x))
    sg.periodic_pchip_slopes(x, y, len(x), m)
    return sg.Signal(sg.PPOLY, x, y, m)


@WEARERS
def test_an_ideal_device_supplying_the_hip_law_takes_the_hip_effort_off_the_wearer(wearer, active):
    """The unassisted walk's hip law torque, recorded at every 1-ms step, supplied by an
    ideal massless device (G = I, no mass, unbounded) on a clock that replays the record
    (its knots at the steps' times): the walk is unchanged (the device does no net work:
    knee and ankle effort, speed equal to 1e-9 relative) and the wearer's own hip torque
    is the law's less the device's, zero at every step to rounding (measured: exactly
    0, the state bit for bit the unassisted one). Bound: the hip's
    torque RMS below 1e-6 of the unassisted (the records' torques are rounded to nothing,
    but the device's torque added and taken off the hip row, (x + a) - a, differs from x
    by a rounding, and a walk with impacts may carry such differences a little)."""
    setup, _, _ = build_setup(Design({**wearer.params, **zero_profile()}), active)
    rs = active.rollout
    times = np.arange(0.0, rs.max_time, rs.h)
    base = ro.run(setup.x0.copy(), setup.mode0.copy(), setup.p, rs, times)
    table = actuator_table(base, setup).assign(t_s=trajectory_table(base, setup)["t_s"])
    assert len(table) == len(times)
    drive = ideal_drive(setup.model, (recorded_profile(table), sg.constant(0.0)), ("hip", "knee"),
                        tuple(j.name for j in setup.layout.active), (RECORDING_FREQUENCY, 0.0))
    p = ro.make_params(setup.model, setup.ctrl, rs, human_geometry().hip_height, SITES, drive=drive,
                       active_wearer=True)
    assisted = metrics_of(ro.run(setup.x0.copy(), setup.mode0.copy(), p, rs), setup)
    alone = metrics_of(base, setup)
    assert assisted["time"] == alone["time"] == rs.max_time
    assert alone["wearer_hip_torque_rms"] > 20.0        # N m: a walking hip works
    assert assisted["wearer_hip_torque_rms"] <= 1e-6 * alone["wearer_hip_torque_rms"]
    assert assisted["wearer_hip_metabolic"] <= 1e-6 * alone["wearer_hip_metabolic"]
    for name in ("speed", "wearer_knee_metabolic", "wearer_ankle_metabolic", "wearer_knee_torque_rms"):
        assert assisted[name] == pytest.approx(alone[name], rel=1e-9), name
