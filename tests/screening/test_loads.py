"""Load screening (issue 44): actuator loads along the reference gait, drivetrain sizing,
bad input. Independent truths: a parallelogram's G = I, a four-bar's ratio from circle
geometry by hand, a brute-force search of the catalog through the Drivetrain record."""

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest

from codesign.model.anthropometry import human_geometry
from codesign.model.drivetrain import Drivetrain, Motor, motor_catalog, stage_law
from codesign.model.morphology import build_morphology
from codesign.screening.examples import TWO_FOUR_BARS, parallelogram_positions, params_from_positions
from codesign.screening.loads import (CONTINUOUS_MARGIN, PEAK_TORQUE_MARGIN, RATIO_GRID, REFERENCE_GAIT_CSV,
                                      SPEED_MARGIN, ReferenceGait, lightest_drivetrain, read_reference_gait,
                                      reference_gait_text, screen_loads, stride_loads)

H = human_geometry()
REPO = REFERENCE_GAIT_CSV.parent.parent


def _morphology(positions):
    return build_morphology(TWO_FOUR_BARS, (1, 3), params_from_positions(TWO_FOUR_BARS, H, positions))


def test_parallelogram_actuators_carry_the_human_torques():
    """G = I: each actuator turns with its joint, so tau_a = tau_h and omega_a = h_dot."""
    gait = read_reference_gait()
    loads = stride_loads(_morphology(parallelogram_positions(H)), gait)
    assert loads.ok, loads.reason
    assert np.max(np.abs(loads.transmission - np.eye(2))) < 1e-9
    assert np.max(np.abs(loads.torque - gait.torques)) < 1e-9
    assert np.max(np.abs(loads.speed - gait.rates)) < 1e-9
    assert np.allclose(loads.rms_torque, np.sqrt(np.mean(gait.torques ** 2, axis=0)), rtol=1e-9)


def _hip_ratio(positions, h, eps=1e-6):
    """dh/da1 of the hip four-bar T (torso) - W - A (thigh) by circle geometry: the thigh
    point A turns about the hip by h, W is where the circles about T (radius |TW|) and A
    (radius |WA|) meet, on the branch followed from the upright pose; a1 is the turn of
    T -> W from upright. Central differences of a1(h)."""
    hip = np.array([0.0, H.hip_height])
    T, A0, W0 = positions[1], positions[2], positions[5]
    r1, r2 = np.linalg.norm(W0 - T), np.linalg.norm(W0 - A0)

    def coupler(angle, near):
        c, s = math.cos(angle), math.sin(angle)
        A = hip + np.array([[c, -s], [s, c]]) @ (A0 - hip)
        d = np.linalg.norm(A - T)
        x = (d * d + r1 * r1 - r2 * r2) / (2 * d)
        y = math.sqrt(r1 * r1 - x * x)
        e = (A - T) / d
        n = np.array([-e[1], e[0]])
        return min((T + x * e + y * n, T + x * e - y * n), key=lambda p: np.linalg.norm(p - near))

    W = W0
    steps = max(1, int(abs(h) / 0.01))
    for k in range(1, steps + 1):
        W = coupler(h * k / steps, W)

    def a1(angle):
        P = coupler(angle, W)
        return math.atan2(P[1] - T[1], P[0] - T[0]) - math.atan2(W0[1] - T[1], W0[0] - T[0])

    return 2 * eps / (a1(h + eps) - a1(h - eps))


def test_four_bar_transmission_by_hand():
    """A hip four-bar that is no parallelogram (its coupler joint moved) and the knee
    parallelogram: G = diag(dh/da1 from circle geometry, 1), so tau_a = (g tau_hip,
    tau_knee) and omega_a = (h_dot / g, knee rate)."""
    positions = parallelogram_positions(H)
    positions[5] = positions[5] + np.array([0.0, 0.03])   # passes the screening
    n = 24
    phase = np.arange(n) / n
    angles = np.column_stack([0.2 + 0.3 * np.sin(2 * np.pi * phase), -0.6 + 0.5 * np.cos(2 * np.pi * phase)])
    rates = np.column_stack([1.5 * np.cos(2 * np.pi * phase), -2.0 * np.sin(2 * np.pi * phase)])
    torques = np.column_stack([40 * np.sin(4 * np.pi * phase) + 10, 25 * np.cos(2 * np.pi * phase)])
    gait = ReferenceGait(phase, angles, rates, torques, 1.0, "synthetic")
    loads = stride_loads(_morphology(positions), gait)
    assert loads.ok, loads.reason
    g = np.array([_hip_ratio(positions, h) for h in angles[:, 0]])
    assert np.ptp(g) > 0.05                       # a real, varying ratio, not a parallelogram's 1
    assert np.allclose(loads.torque[:, 0], g * torques[:, 0], rtol=1e-6, atol=1e-6)
    assert np.allclose(loads.torque[:, 1], torques[:, 1], rtol=1e-6, atol=1e-6)
    assert np.allclose(loads.speed[:, 0], rates[:, 0] / g, rtol=1e-6, atol=1e-6)
    assert np.allclose(loads.speed[:, 1], rates[:, 1], rtol=1e-6, atol=1e-6)


def _brute_force(peak, rms, speed, motors, law):
    best = None
    for motor in motors:
        for ratio in RATIO_GRID:
            d = Drivetrain(motor, float(ratio), law)
            if (d.peak_torque >= PEAK_TORQUE_MARGIN * peak and d.rated_torque >= CONTINUOUS_MARGIN * rms
                    and d.max_speed >= SPEED_MARGIN * speed and (best is None or d.mass < best.mass)):
                best = d
    return best


def test_drivetrain_choice_is_the_brute_force_lightest():
    motors, law = list(motor_catalog().values()), stage_law()
    rng = np.random.default_rng(3)
    cases = [(rng.uniform(5, 250), rng.uniform(2, 80), rng.uniform(0.5, 12)) for _ in range(25)]
    cases += [(1.0, 0.5, 1.0), (400.0, 50.0, 2.0), (50.0, 20.0, 60.0)]
    found = 0
    for peak, rms, speed in cases:
        rms = min(rms, peak)
        choice = lightest_drivetrain(peak, rms, speed, motors, law)
        best = _brute_force(peak, rms, speed, motors, law)
        if best is None:
            assert choice.drivetrain is None and choice.reason
        else:
            found += 1
            assert choice.drivetrain is not None and choice.reason == ""
            assert (choice.drivetrain.motor.name, choice.drivetrain.stage_ratio) == (best.motor.name, best.stage_ratio)
            assert choice.drivetrain.mass == pytest.approx(best.mass, rel=1e-12)
    assert 5 <= found < len(cases)                # both outcomes are exercised


def test_a_catalog_with_no_unit_that_fits_says_none_and_why():
    tiny = Motor("tiny", "a toy", 10.0, 0.5, 0.2, 30.0, 24.0, 0.1, 1.0, 1e-6, 0.1)
    law = stage_law()
    choice = lightest_drivetrain(80.0, 30.0, 3.0, [tiny], law)
    assert choice.drivetrain is None and choice.reason.startswith("peak torque")
    slow = dataclasses.replace(tiny, name="slow", peak_torque=500.0, rated_torque=300.0, no_load_speed=1.0)
    assert lightest_drivetrain(80.0, 30.0, 3.0, [slow], law).reason.startswith("speed")
    screened = screen_loads(_morphology(parallelogram_positions(H)), read_reference_gait(), [tiny], law)
    assert not screened.served and math.isnan(screened.device_mass)
    assert screened.reason.startswith("actuator j1: peak torque")


def test_served_design_mass_and_cuffs():
    """The parallelogram is served by the shipped catalog; its device mass is the
    morphology's with each 2-kg actuator replaced by its drivetrain (both legs)."""
    m = _morphology(parallelogram_positions(H))
    screened = screen_loads(m, read_reference_gait(), list(motor_catalog().values()), stage_law())
    assert screened.served, screened.reason
    drives = [c.drivetrain for c in screened.drivetrains]
    assert screened.device_mass == pytest.approx(2 * (m.added_mass_per_leg - 4.0 + sum(d.mass for d in drives)))
    assert screened.load_scale == pytest.approx((H.mass_kg + screened.device_mass) / H.mass_kg, rel=0.05)
    assert 50.0 < screened.loads.cuff_force_peak < 5000.0


def test_reference_gait_file_round_trips_and_walks():
    gait = read_reference_gait()
    again = reference_gait_text(gait)
    assert again == REFERENCE_GAIT_CSV.read_text()
    assert 0.8 < gait.period < 1.4 and gait.time.shape == (100,)


@pytest.mark.slow
def test_reference_gait_is_current():
    """human/reference_gait.csv is what `codesign screen --record-gait` writes now."""
    from codesign.commands.screen import DEFAULT_GAIT_DESIGN, record_reference_gait

    fresh = record_reference_gait(REPO / DEFAULT_GAIT_DESIGN)
    stored = read_reference_gait()
    assert fresh.period == pytest.approx(stored.period, rel=1e-6)
    for a, b in ((fresh.angles, stored.angles), (fresh.rates, stored.rates), (fresh.torques, stored.torques)):
        assert np.allclose(a, b, rtol=1e-6, atol=1e-6)


def _gait_file(path, rows):
    text = REFERENCE_GAIT_CSV.read_text().splitlines()
    path.write_text("\n".join(text[:4] + rows) + "\n")


@pytest.mark.integration
def test_bad_reference_gait_is_one_line_exit_2_nothing_written(tmp_path):
    """Real processes: a malformed file and a stride that does not walk."""
    lines = REFERENCE_GAIT_CSV.read_text().splitlines()[4:]
    malformed = tmp_path / "malformed.csv"
    _gait_file(malformed, lines[:50] + ["0.6,1,2,x,4,5,6"] + lines[51:])
    standing = tmp_path / "standing.csv"
    _gait_file(standing, [",".join([ln.split(",")[0]] + ["0.01"] * 6) for ln in lines])
    for path, said in ((malformed, "not 7 numbers"), (standing, "expected a stride that walks")):
        out = tmp_path / f"out-{path.stem}"
        done = subprocess.run([sys.executable, "-m", "codesign.cli", "screen", "--samples", "1", "--workers", "1",
                               "--reference-gait", str(path), "--out", str(out)],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        assert done.returncode == 2, done.stderr
        err = done.stderr.strip()
        assert len(err.splitlines()) == 1 and str(path) in err and said in err, err
        assert not out.exists()


@pytest.mark.integration
def test_recording_a_gait_that_does_not_walk_is_one_line_exit_2(tmp_path):
    """A real process: the human-like gait with its hip and knee stiffness taken away falls;
    --record-gait says so in one line and writes no reference gait."""
    import json

    design = json.loads((REPO / "docs" / "designs" / "human-walking.json").read_text())
    for name in design["params"]:
        if name.startswith(("hip.K", "knee.K")):
            design["params"][name] = 1.0
    path = tmp_path / "limp.json"
    path.write_text(json.dumps(design))
    out = tmp_path / "gait.csv"
    done = subprocess.run([sys.executable, "-m", "codesign.cli", "screen", "--record-gait", str(path),
                           "--reference-gait", str(out)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and "falls at" in err and "expected a design that walks" in err, err
    assert not out.exists()
