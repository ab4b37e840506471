"""Actuator envelope, mass law and electrical power against hand-computed values (issue 15)."""

import math

import numpy as np
import pytest

from codesign.errors import UserError
from codesign.model import actuators as act
from codesign.model.anthropometry import human_geometry
from codesign.model.lumping import load_metrics, segment_loads
from codesign.model.morphology import ACTUATOR_MASS, build_morphology, mass_report
from codesign.screening.examples import TWO_FOUR_BARS, parallelogram_positions, params_from_positions
from codesign.walking.settings import WalkSettings


def test_envelope_of_the_default_actuator_by_hand():
    # 120 N m up to P / tau_p = 240 / 120 = 2 rad/s, then 240 W / |w| up to 8 rad/s, then 0
    lim = act.Actuator().limit_row()
    for w, expected in [(0.0, 120.0), (1.0, 120.0), (2.0, 120.0), (-2.0, 120.0), (3.0, 80.0),
                        (-4.0, 60.0), (6.0, 40.0), (8.0, 30.0), (-8.0, 30.0), (8.000001, 0.0),
                        (-20.0, 0.0)]:
        assert act.torque_limit(w, lim) == expected, w
    # an envelope whose maximum speed comes before its power corner has no power region
    assert act.torque_limit(2.5, np.array([10.0, 3.0, 1000.0])) == 10.0
    assert act.torque_limit(3.5, np.array([10.0, 3.0, 1000.0])) == 0.0
    # no limits: unbounded at any speed, also at rest (no 0 * inf trouble)
    assert act.torque_limit(0.0, act.UNBOUNDED_LIMIT) == math.inf
    assert act.torque_limit(-7.0, act.UNBOUNDED_LIMIT) == math.inf


def test_saturation_delivers_exactly_the_limit_and_passes_what_fits():
    lim = act.Actuator().limit_row()
    assert act.saturate(500.0, 0.5, lim) == (120.0, True)
    assert act.saturate(-500.0, 0.5, lim) == (-120.0, True)
    assert act.saturate(500.0, 5.0, lim) == (48.0, True)          # 240 W / 5 rad/s
    assert act.saturate(-500.0, -5.0, lim) == (-48.0, True)
    assert act.saturate(30.0, 9.0, lim) == (0.0, True)            # beyond max speed
    assert act.saturate(47.5, 5.0, lim) == (47.5, False)
    assert act.saturate(-119.0, 1.0, lim) == (-119.0, False)


def test_electrical_power_by_hand():
    motor = act.Actuator().motor_row()        # N 64, Kt 0.091 N m/A, R 0.17 ohm, eta 0
    current = 120.0 / (0.091 * 64)            # A at 120 N m
    joule = current ** 2 * 0.17
    assert act.electrical_power(120.0, 1.5, motor) == pytest.approx(180.0 + joule, rel=1e-14)
    assert act.electrical_power(120.0, -1.5, motor) == pytest.approx(joule, rel=1e-14)
    assert act.electrical_power(0.0, 3.0, motor) == 0.0
    regen = act.Actuator(regeneration=0.6).motor_row()
    assert act.electrical_power(-120.0, 1.5, regen) == pytest.approx(-0.6 * 180.0 + joule, rel=1e-14)
    # the datasheet's motor constant Km = Kt / sqrt(R) = 0.2207 N m / sqrt(W) (AK80-6: 0.2206)
    assert 0.091 / math.sqrt(0.17) == pytest.approx(0.2206, abs=2e-4)
    assert joule == pytest.approx((120.0 / 64) ** 2 / (0.091 / math.sqrt(0.17)) ** 2, rel=1e-12)


def test_mass_law_by_hand():
    assert act.Actuator().mass() == pytest.approx(0.25 + 120.0 / 70.0, rel=1e-15)   # 1.964 kg
    assert act.Actuator(peak_torque=12.0).mass() == pytest.approx(0.25 + 12.0 / 70.0)  # 0.421 kg
    # the conservative law: one torque density of 24 N m/kg (AK80-6: 12 N m / 0.485 kg)
    assert act.Actuator(mass_offset=0.0, torque_density=24.0).mass() == pytest.approx(5.0)
    assert act.Actuator(model="thesis", peak_torque=1000.0).mass() == ACTUATOR_MASS == 2.0


def test_actuator_mass_moves_the_design_and_its_lumped_baseline():
    # two actuated joints per leg: the added mass changes by 4 (m - 2 kg) from the thesis's
    h = human_geometry()
    params = params_from_positions(TWO_FOUR_BARS, h, parallelogram_positions(h))
    thesis = build_morphology(TWO_FOUR_BARS, (1, 3), params, h)
    m = act.Actuator(peak_torque=60.0).mass()                      # 0.25 + 60 / 70 kg
    light = build_morphology(TWO_FOUR_BARS, (1, 3), params, h, m)
    assert light.actuator_mass == m and thesis.actuator_mass == 2.0
    d = mass_report(light)["added_mass_kg"] - mass_report(thesis)["added_mass_kg"]
    assert d == pytest.approx(4 * (m - 2.0), abs=1e-12)
    lumped = load_metrics(segment_loads(light, "attachments"))["added_mass"]
    assert lumped == pytest.approx(mass_report(light)["added_mass_kg"], abs=1e-12)


@pytest.mark.parametrize("table, needle", [
    ({"actuators": {"peak_torque": 0}}, "evaluation.actuators.peak_torque"),
    ({"actuators": {"max_speed": float("nan")}}, "evaluation.actuators.max_speed"),
    ({"actuators": {"rated_power": "200"}}, "evaluation.actuators.rated_power"),
    ({"actuators": {"gear_ratio": True}}, "evaluation.actuators.gear_ratio"),
    ({"actuators": {"regeneration": 1.5}}, "evaluation.actuators.regeneration"),
    ({"actuators": {"mass_offset": -0.1}}, "evaluation.actuators.mass_offset"),
    ({"actuators": {"torque": 10}}, "evaluation.actuators.torque: unknown key"),
    ({"actuators": 120}, "evaluation.actuators:"),
    ({"actuator_model": "qdd"}, "evaluation.actuator_model"),
    ({"human_actuated": ["hip", "elbow"]}, "evaluation.human_actuated"),
    ({"human_actuated": "hip"}, "evaluation.human_actuated"),
    ({"human_actuated": ["knee", "knee"]}, "evaluation.human_actuated"),
    ({"human_actuated": [["hip"]]}, "evaluation.human_actuated"),
])
def test_bad_actuator_settings_are_one_line_user_errors(table, needle):
    with pytest.raises(UserError) as exc:
        WalkSettings.from_dict(table)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_actuator_settings_defaults_and_overrides():
    assert WalkSettings.from_dict({}).actuators == act.Actuator()
    s = WalkSettings.from_dict({"actuator_model": "thesis",
                                "actuators": {"peak_torque": 60, "regeneration": 0.0}})
    assert s.actuators == act.Actuator(peak_torque=60.0, model="thesis")
    assert not s.actuators.enforced and WalkSettings().actuators.enforced
