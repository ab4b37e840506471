"""Actuator metrics (issue 15): the compiled accumulator equals the plain-NumPy reference;
models without motors leave them out; a walking rollout delivers torques inside the
envelope under the bounded model and keeps the thesis's numbers under the thesis's rule."""

import math

import numpy as np
import pytest

from codesign.model import actuators as act
from codesign.walking import metrics as mt


def synthetic(seed=3, n=4001):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 4.0, n)
    rate = np.stack([9.0 * np.sin(3.1 * t), 2.5 * np.cos(1.7 * t), -6.0 * np.sin(2.3 * t + 1)], axis=1)
    tau = np.stack([150.0 * np.cos(3.1 * t), 60.0 * np.sin(5.0 * t), 90.0 * np.cos(2.3 * t)], axis=1)
    tau += rng.normal(0.0, 1.0, tau.shape)
    kind = np.array([act.REPORT, act.NO_MOTOR, act.SATURATE])
    a, b = act.Actuator(), act.Actuator(peak_torque=100.0, max_speed=7.0, rated_power=300.0,
                                        regeneration=0.5)
    limit = np.stack([a.limit_row(), act.UNBOUNDED_LIMIT, b.limit_row()])
    motor = np.stack([a.motor_row(), act.NO_MOTOR_ROW, b.motor_row()])
    return t, tau, rate, kind, limit, motor


def test_compiled_actuator_metrics_equal_the_reference():
    t, tau, rate, kind, limit, motor = synthetic()
    acc = mt.new_accumulator(0, 1.0)
    for i in range(len(t)):
        mt.accumulate_actuators(acc, t[i], tau[i], rate[i], kind, limit, motor)
        mt.accumulate_sample(acc, t[i], 0.0, 0.0, 0.0, 1.0, 1.0, tau[i], rate[i], np.zeros(0))
    got = mt.finalize(acc, time=4.0, n_joints=3)
    ref = mt.actuator_metrics_reference(t, tau, rate, kind, limit, motor, t_start=1.0)
    assert set(ref) == {"power_electrical", "actuator_torque_ratio_peak", "actuator_speed_ratio_peak"}
    for k in ref:
        assert got[k] == pytest.approx(ref[k], rel=1e-12), k
    assert got["actuator_speed_ratio_peak"] == pytest.approx(9.0 / 8.0, rel=1e-4)   # motor 0
    assert got["actuator_torque_ratio_peak"] > 1.0        # the unbounded REPORT motor exceeds it


def test_without_motors_the_actuator_metrics_are_left_out():
    t, tau, rate, _, limit, motor = synthetic()
    kind = np.full(3, act.NO_MOTOR)
    acc = mt.new_accumulator(0, 1.0)
    for i in range(len(t)):
        mt.accumulate_actuators(acc, t[i], tau[i], rate[i], kind, limit, motor)
        mt.accumulate_sample(acc, t[i], 0.0, 0.0, 0.0, 1.0, 1.0, tau[i], rate[i], np.zeros(0))
    m = mt.finalize(acc, time=4.0, n_joints=3)
    assert all(math.isnan(m[k]) for k in ("power_electrical", "actuator_torque_ratio_peak",
                                          "actuator_speed_ratio_peak"))
    assert "power_electrical" not in mt.measured_record(m).metrics
    assert m["power"] > 0                                 # `power` keeps all active joints
