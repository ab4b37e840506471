"""Transfer of a human-gait controller to a co-design (codesign.walking.transfer).

Truths: signals the fits must recover exactly (a 5-point ppoly, step signals, wrapping
arcs included); the parallelogram device (topology 1, actuators 1 and 3), whose links
stay parallel to thigh and shank, so its actuated angles are the hip and knee angles and
the transmission is the identity: the transfer must give back the human's law."""

import numpy as np
import pytest

from codesign.control import signals as sg
from codesign.model.anthropometry import human_geometry
from codesign.screening.examples import params_from_positions, parallelogram_positions
from codesign.walking import WalkSettings, human_control_layout, typical_human_design
from codesign.topology.catalog import cached_catalog
from codesign.walking.setup import wr_control_layout
from codesign.walking.transfer import SAMPLES, fit_ppoly, fit_step, transfer_human_control

PHASES = np.arange(SAMPLES) / SAMPLES


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppoly_fit_recovers_a_five_point_ppoly(seed):
    rng = np.random.default_rng(seed)
    truth = sg.ppoly(rng.uniform(0.2, 1.0, 6), rng.uniform(-1.0, 1.0, 5))
    dx, y, rms = fit_ppoly(PHASES, truth(PHASES), 5, (-np.pi, np.pi))
    assert rms < 1e-6
    assert np.max(np.abs(sg.ppoly(dx, y)(PHASES) - truth(PHASES))) < 1e-5


@pytest.mark.parametrize("t1, dt", [(0.5851, 0.1022), (0.95, 0.3), (0.0, 0.61)])
def test_step_fit_recovers_steps_on_the_samples_and_fits_levels_by_least_squares(t1, dt):
    values = sg.step(t1, dt, 7137.0, 1457.0)(PHASES)
    f1, fdt, v1, v2, rms = fit_step(values, (0.0, 12000.0))
    assert rms == 0.0 and np.array_equal(sg.step(f1, fdt, v1, v2)(PHASES), values)
    noise = np.random.default_rng(4).normal(0.0, 50.0, SAMPLES)
    f1, fdt, v1, v2, _ = fit_step(values + noise, (0.0, 12000.0))
    inside = sg.step(f1, fdt, 1.0, 0.0)(PHASES) == 1.0
    assert v1 == pytest.approx((values + noise)[inside].mean(), abs=1e-9)   # least-squares levels
    assert fit_step(values, (0.0, 5000.0))[2:4] in ((5000.0, 1457.0), (1457.0, 5000.0))   # clipped


def test_parallelogram_device_takes_over_the_human_law_exactly():
    settings = WalkSettings()
    human = typical_human_design(settings, stiffness=3000.0, damping=40.0)
    human.params.update({"hip.K.v1": 7000.0, "hip.K.v2": 1500.0, "hip.step.t1": 0.585,
                         "hip.step.dt": 0.102, "knee.D.v1": 20.0, "knee.D.v2": 50.0})
    geometry = human_geometry()
    topology = cached_catalog(settings.catalog).topology(1)
    morphology = params_from_positions(topology, geometry, parallelogram_positions(geometry))
    result = transfer_human_control(human, 1, (1, 3), morphology, settings)
    assert result.transmission == pytest.approx({"j1": 1.0, "j3": 1.0}, abs=1e-6)
    law = {j.name: j for j in human_control_layout(settings).decode(human.params).active}
    device = {j.name: j for j in wr_control_layout(topology, (1, 3), settings)
              .decode(result.design.params).active}
    for wr, joint in (("j1", "hip"), ("j3", "knee")):
        # the device's angle is the human's (an offset would show here), its impedance the same
        assert np.max(np.abs(device[wr].reference(PHASES) - law[joint].reference(PHASES))) < 1e-4
        np.testing.assert_allclose(device[wr].stiffness(PHASES), law[joint].stiffness(PHASES), rtol=1e-6)
        np.testing.assert_allclose(device[wr].damping(PHASES), law[joint].damping(PHASES), rtol=1e-6)
    np.testing.assert_allclose(device["ankle"].stiffness(PHASES), law["ankle"].stiffness(PHASES))
    assert np.max(np.abs(device["ankle"].reference(PHASES) - law["ankle"].reference(PHASES))) < 1e-5
    assert all(k in result.design.params for k in morphology)


@pytest.mark.slow
def test_the_capped_human_gait_transferred_to_the_parallelogram_device_walks():
    # the human-capped study's best (hip and knee on the WR's actuator envelope) walks 10 s;
    # its law on the parallelogram device -- the same torques through an identity
    # transmission, now carrying 12.7 kg of device -- still walks 10 s, in the actuators'
    # envelope, at the human's speed within 15 %
    from pathlib import Path

    from codesign.walking import evaluate, load_design

    root = Path(__file__).resolve().parents[2]
    settings = WalkSettings()
    human = load_design(root / "docs/designs/human-capped-thesis-walking.json")
    alone = evaluate(human, {"human_actuated": ["hip", "knee"]}).metrics
    assert alone["time"] == 10.0 and alone["actuator_torque_ratio_peak"] == 1.0
    geometry = human_geometry()
    morphology = params_from_positions(cached_catalog(settings.catalog).topology(1), geometry,
                                       parallelogram_positions(geometry))
    worn = evaluate(transfer_human_control(human, 1, (1, 3), morphology, settings).design, settings).metrics
    assert worn["time"] == 10.0 and worn["actuator_torque_ratio_peak"] <= 1.0
    assert worn["speed"] == pytest.approx(alone["speed"], rel=0.15)
    assert worn["added_mass"] > 10.0


@pytest.mark.parametrize("args, pattern", [
    (["docs/designs/codesign-walking.json"], r".*a co-design \(topology 1\); expected a human-gait design.*"),
    (["docs/designs/human-thesis-walking.json", "--like", "docs/designs/human-thesis-walking.json"],
     r".*--like .*: a human design; expected a co-design.*"),
    (["no/such.json"], r".*no/such\.json.*"),
])
def test_transfer_refuses_bad_input_in_one_line_and_writes_nothing(tmp_path, args, pattern):
    from pathlib import Path

    from runtools import codesign, one_line

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "out.json"
    done = codesign("transfer", *args, "--out", out, cwd=root)
    one_line(done, 2, pattern)
    assert not out.exists()
