"""Closed-loop rollouts (time-stepping hard contacts): standing statics (ground reactions,
joint forces), ballistic phases against the step's exact discrete solution, determinism,
records for bad or singular designs."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from codesign.control import impedance as imp
from codesign.control import signals as sg
from codesign import walking as ev
from codesign.walking.setup import SITE_NAMES, SITES
from codesign.walking import metrics as mt
from codesign.walking import rollout as ro

pytestmark = pytest.mark.slow


def standing_setup(max_time=10.0, **overrides):
    from codesign.model.anthropometry import human_geometry
    from codesign.model.human import build_human, upright_configuration

    human = human_geometry()
    model = build_human()
    n = model.n
    joints, rows = [], {}
    for name, body in (("hip", "thigh"), ("knee", "shank"), ("ankle", "foot")):
        joints.append(imp.ActiveJoint(name, sg.constant(0.0), sg.constant(3000.0), sg.constant(60.0)))
        rows[name] = tuple(imp.tree_joint_row(n, model.body_id(f"{body}_{s}")) for s in "rl")
    ctrl = imp.compile_controller(imp.Controller(active=tuple(joints)), n, rows, {},
                                  model.body_id("torso"))
    settings = ro.RolloutSettings(max_time=max_time, **overrides)
    p = ro.make_params(model, ctrl, settings, human.hip_height, SITES)
    x0 = np.concatenate([upright_configuration(model, human), np.zeros(n)])
    mode0, code = ro.initial_modes(x0, p, 0)
    assert code == 0
    return model, human, p, x0, mode0, settings


def test_standing_ten_seconds_sticking_and_ground_reaction_equals_weight():
    model, human, p, x0, mode0, settings = standing_setup()
    r = ro.run(x0, mode0, p, settings, record_times=np.array([10.0]))
    assert r.status == "ok" and r.time == 10.0
    assert list(r.mode) == [1] * model.n_contacts          # every foot point sticking
    forces = r.record_forces[0]
    weight = model.total_mass() * model.gravity
    assert abs(forces[:, 0].sum() - weight) <= 1e-3 * weight  # flat ground: normal = vertical
    assert np.all(forces[:, 0] > 0)
    m = mt.finalize(r.acc, time=r.time, n_joints=6, site_names=SITE_NAMES,
                    total_mass=model.total_mass())
    # statics: each hip carries half the torso's weight, each knee also its thigh
    g = model.gravity
    torso = model.mass[model.body_id("torso")]
    thigh = model.mass[model.body_id("thigh_r")]
    assert m["hip_r_force_rms"] == pytest.approx(torso * g / 2, rel=1e-4)
    assert m["knee_l_force_peak"] == pytest.approx((torso / 2 + thigh) * g, rel=1e-4)
    assert m["non_contact_time"] == 0.0 and m["stance_fraction"] == 1.0
    assert abs(m["speed"]) < 1e-6 and m["assist_fraction"] == 0.0
    # gait physics (issue 15): the windowed ground reaction of a standing body is its
    # weight; nothing slides; straight knees within every range; no device, no cuffs
    assert m["grf_peak_bw"] == pytest.approx(1.0, rel=1e-6)
    assert m["foot_slip_fraction"] == 0.0
    assert m["knee_hyperextension_peak_deg"] < 0.5 and m["joint_range_violation_deg"] == 0.0
    assert math.isnan(m["cuff_force_peak"])
    assert m["interaction_force_peak_bw"] == pytest.approx(m["knee_l_force_peak"] / weight)


def airborne_start(rise, vz, max_time, **overrides):
    """The standing human lifted ``rise`` m off the ground with upward base velocity ``vz``
    (m/s), every contact inactive: a ballistic body until a foot touches down."""
    model, human, p, x0, _, settings = standing_setup(max_time, **overrides)
    iz = model.body_id("torso_z")
    x0 = x0.copy()
    x0[iz] += rise
    x0[model.n + iz] = vz
    return model, human, p, x0, np.zeros(model.n_contacts, dtype=np.int64), settings


@pytest.mark.parametrize("drop, airborne", [(0.03, False), (0.10, True)])
def test_dropped_human_is_airborne_only_if_free_fall_outlasts_the_limit(drop, airborne):
    # free fall from `drop` m lasts sqrt(2 drop / g): 0.078 s (lands, then stands: ok)
    # and 0.143 s (still in the air at the 0.1-s limit: stops there, in free fall)
    limit = 0.1
    model, human, p, x0, mode0, settings = airborne_start(drop, 0.0, 0.2, max_airborne_time=limit)
    g = model.gravity
    assert (math.sqrt(2 * drop / g) > limit) == airborne
    r = ro.run(x0, mode0, p, settings)
    if not airborne:
        assert r.status == "ok" and r.time == 0.2
        assert p.data.walk.last_contact[0] == pytest.approx(0.2)  # on the ground at the end
        return
    assert r.status == "airborne" and "max_airborne_time" in r.message
    h = settings.h
    assert limit < r.time <= limit + h + 1e-12        # the first step past the limit
    # free fall under semi-implicit Euler: v_k = -g h k, z_k = z_0 - g h^2 k (k + 1) / 2
    # (the exact solution -g t^2 / 2 plus the method's O(h) lag g h t / 2)
    iz, k = model.body_id("torso_z"), round(r.time / h)
    assert r.x[iz] == pytest.approx(x0[iz] - g * h * h * k * (k + 1) / 2, abs=1e-9)
    assert r.x[model.n + iz] == pytest.approx(-g * h * k, abs=1e-9)
    assert abs(r.x[iz] - (x0[iz] - 0.5 * g * r.time ** 2)) <= 0.5 * g * h * r.time + 1e-9


def test_human_launched_upward_stops_when_thrown_above_the_hip_bound():
    # ballistic hip: z(t) = z0 + v t - g t^2 / 2 reaches hip_height + max_hip_rise at
    # t* = (v - sqrt(v^2 - 2 g (bound - z0))) / g
    v = 3.0
    model, human, p, x0, mode0, settings = airborne_start(1e-3, v, 1.0)
    g, iz = model.gravity, model.body_id("torso_z")
    rise = human.hip_height + settings.max_hip_rise - x0[iz]
    t_star = (v - math.sqrt(v * v - 2 * g * rise)) / g
    assert t_star < settings.max_airborne_time
    r = ro.run(x0, mode0, p, settings)
    assert r.status == "thrown_up" and "max_hip_rise" in r.message
    h, k = settings.h, round(r.time / settings.h)
    assert t_star <= r.time <= t_star + 2 * h      # the step past the bound (+ O(h) lag)
    assert r.x[iz] == pytest.approx(x0[iz] + v * r.time - g * h * h * k * (k + 1) / 2, abs=1e-9)


def test_typical_human_design_is_deterministic_and_records_its_end():
    settings = ev.WalkSettings.from_dict({"max_time": 2.0})
    design = ev.typical_human_design(settings)
    a = ev.evaluate(design, settings)
    b = ev.evaluate(design, settings)
    assert a.ok and a.metrics == b.metrics and a.message == b.message
    assert 0.0 < a.metrics["time"] <= 2.0
    assert (a.message == "") == (a.metrics["time"] == 2.0)


@pytest.mark.integration
def test_same_metrics_in_another_process():
    settings = {"max_time": 1.0}
    design = ev.typical_human_design(ev.WalkSettings.from_dict(settings))
    here = ev.evaluate(design, settings).metrics
    code = ("import json, sys; from codesign import walking as ev; "
            "d = ev.Design.from_json(json.loads(sys.argv[1])); "
            "print(json.dumps(ev.evaluate(d, json.loads(sys.argv[2])).metrics))")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(design.to_json()),
                          json.dumps(settings)], capture_output=True, text=True, check=True)
    there = json.loads(out.stdout.strip().splitlines()[-1])
    assert there == here       # JSON floats round-trip exactly (repr)


def test_bad_designs_are_records_not_exceptions():
    settings = ev.WalkSettings.from_dict({"max_time": 0.5})
    rec = ev.evaluate(ev.Design({}), settings)          # no control parameters
    assert not rec.ok and "missing parameter" in rec.message
    rec = ev.evaluate(ev.Design({"x": 1.0}, topology=1, actuators=(9, 9)), settings)
    assert not rec.ok and rec.message.startswith("design:")


@pytest.mark.peers
def test_event_driven_peer_agrees_with_stepping_on_a_drop():
    # the human dropped 3 cm, rigid bodies with PD joints: in free fall the stepping's
    # semi-implicit Euler lags the exact (event-driven, DOPRI5) height by g h t / 2; both
    # land plastically and stand with every point sticking and the ground reactions
    # equal to the weight (exact statics in both models)
    times = np.array([0.05, 0.3, 0.5])
    out, landing = {}, {}
    for model_name in ("hard", "hard_event"):
        model, human, p, x0, _, settings = airborne_start(0.03, 0.0, 0.5, contact_model=model_name)
        r = ro.run(x0, np.zeros(model.n_contacts, dtype=np.int64), p, settings, record_times=times)
        assert r.status == "ok", r.message
        assert list(r.mode) == [1] * model.n_contacts
        weight = model.total_mass() * model.gravity
        assert r.record_forces[-1, :, 0].sum() == pytest.approx(weight, rel=1e-9)
        out[model_name] = r.records[:, model.body_id("torso_z")]
        # gait physics (issue 15): both measure slip (none: standing) and joint angles, and
        # the 30-ms ground reaction, the landing's impact by its impulse in both (the event
        # model's is a jump): standing, exactly the weight; the landing, by hand, ~ m v / (m g
        # 0.03 s) + 1 = 3.6 BW for v = sqrt(2 g 0.03 m) if the whole body stopped at once
        m = mt.finalize(r.acc, time=r.time, n_joints=6, site_names=SITE_NAMES,
                        total_mass=model.total_mass(), gravity=model.gravity)
        assert m["foot_slip_fraction"] == 0.0 and m["joint_range_violation_deg"] == 0.0
        assert m["grf_peak_bw"] == pytest.approx(1.0, rel=1e-9)
        landing[model_name] = m["grf_peak_bw_start"]
    assert landing["hard"] == pytest.approx(1.0 + math.sqrt(2 * 0.03 / model.gravity) / 0.03, rel=0.03)
    assert landing["hard_event"] == pytest.approx(landing["hard"], rel=1e-3)     # measured 3e-4
    g, h = model.gravity, ro.RolloutSettings().h
    lag = out["hard_event"][0] - out["hard"][0]
    assert 0.0 < lag <= 0.5 * g * h * times[0] * (1 + 1e-6) + 1e-9
    # standing heights after landing: the same to the penetration/closure tolerances
    assert out["hard"][1:] == pytest.approx(out["hard_event"][1:], abs=1e-5)


@pytest.mark.peers
def test_soft_peer_ground_reaction_of_a_drop_lies_between_plastic_and_elastic():
    # the human dropped 10 cm lands at v_b = sqrt(2 g drop), the metrics' window opening
    # 20 ms before: impulse-momentum puts the window's ground impulse between m v_b + W T
    # (plastic, the stepping's rigid impact: its peak is that to within the joints'
    # give) and 2 m v_b + W T (elastic), so the windowed peak lies in
    # [hard stepping's, 2 m v_b / T + W]; the penalty contact's bounce puts it inside
    drop = 0.1
    t_fall = math.sqrt(2 * drop / 9.81)
    peaks = {}
    for model_name in ("hard", "soft", "soft_step"):
        model, human, p, x0, _, settings = airborne_start(drop, 0.0, 2 * (t_fall - 0.02),
                                                          contact_model=model_name,
                                                          max_airborne_time=0.5)
        r = ro.run(x0, np.zeros(model.n_contacts, dtype=np.int64), p, settings)
        assert r.status == "ok", r.message
        m = mt.finalize(r.acc, time=r.time, n_joints=6, site_names=SITE_NAMES,
                        total_mass=model.total_mass(), gravity=model.gravity)
        peaks[model_name] = m["grf_peak_bw"]
    g, T = model.gravity, mt.GRF_WINDOW
    plastic = math.sqrt(2 * g * drop) / (g * T) + 1.0         # body weights
    assert peaks["hard"] == pytest.approx(plastic, rel=0.01)
    assert peaks["hard"] < peaks["soft"] < 2 * (plastic - 1.0) + 1.0
    # the same law stepped: inside the same bounds, and within 5 % of the event-driven peak
    assert peaks["hard"] < peaks["soft_step"] < 2 * (plastic - 1.0) + 1.0
    assert peaks["soft_step"] == pytest.approx(peaks["soft"], rel=0.05)


@pytest.mark.parametrize("name", ["human-thesis-walking", "codesign-walking"])
def test_sparse_factor_changes_a_ten_second_walk_only_by_rounding(name):
    """The step factors M~ along the tree (issue 16); forced dense (every pair in the
    factor's pattern) the same 10-s walk of each reference design gives the same metrics to
    1e-8 relative -- rounding, carried through 10 000 steps of a walking gait -- while
    halving the step (the stepping's own first-order error) moves the speed by 1.3 % (human)
    and 7 % (co-design), six orders of magnitude more."""
    from pathlib import Path

    from codesign.dynamics import timestep as ts
    from codesign.walking import stepping
    from codesign.walking.evaluation import metrics_of
    from codesign.walking.setup import build_setup

    design = ev.load_design(str(Path(__file__).resolve().parents[2] / f"docs/designs/{name}.json"))
    settings = ev.WalkSettings.from_dict({"max_time": 10.0})
    metrics = {}
    for factor in ("sparse", "dense"):
        setup, early, _ = build_setup(design, settings)
        assert early is None
        p = setup.p
        if factor == "dense":
            p = p._replace(data=p.data._replace(
                step_work=ts.make_step_workspace(setup.model, np.ones((1, setup.model.n)))))
        rollout = stepping.run(setup.x0, p, settings.rollout)
        assert rollout.status == "ok"
        metrics[factor] = metrics_of(rollout, setup)
        assert p.data.step_work.stats[ts.STAT_DENSE] == 0
    for key, value in metrics["sparse"].items():
        if math.isfinite(value):
            assert metrics["dense"][key] == pytest.approx(value, rel=1e-8, abs=1e-9), key
    half = ev.evaluate(design, ev.WalkSettings.from_dict({"max_time": 10.0, "h": 5e-4}))
    step_error = abs(half.metrics["speed"] - metrics["sparse"]["speed"]) / metrics["sparse"]["speed"]
    assert step_error > 1e-3


def test_recorded_ground_forces_carry_the_impulses_that_change_the_bodys_momentum():
    """The stepping rollout records each contact point's mean force since the previous
    record, so a walking human's recorded ground forces obey the impulse-momentum theorem
    over every record interval: sum_c Fz dt = M dvz_com + M g dt, sum_c Fx dt = M dvx_com
    (flat ground: normal = vertical, tangent = horizontal; joint torques and the pitch
    assist's torque are internal or pure torques). A force sampled at the record instants
    (what was recorded before) misses or multiplies the 1-ms impacts between them.

    Bounds: summed over the 1.95 s after the start's settling (the first 50 ms) the
    balance telescopes to the round-off (measured 1.2e-6 of M g T vertically, 3e-5
    horizontally); per 10-ms interval the semi-implicit step's momentum uses M(q) at the
    step's start while the centre of mass's velocity is measured at its end, an O(h) error
    largest at heel strikes (measured at most 1.5 % of M g dt, 95 % of intervals within
    0.6 %). The figure's 30-ms means (windowed_ground_reaction) are windows the metric's
    1-ms sliding window also takes, so their peak is at most grf_peak_bw, and within 10 %
    of it (a window shifted by at most 5 ms of 30)."""
    from pathlib import Path

    from codesign.dynamics.kinematics import center_of_mass, forward_kinematics
    from codesign.dynamics.model import make_workspace
    from codesign.walking.trajectory import trajectory_table, windowed_ground_reaction

    design = ev.load_design(Path(__file__).resolve().parents[2] / "docs" / "designs" / "human-thesis-walking.json")
    times = np.round(np.arange(0.0, 2.0 + 1e-9, 0.01), 9)
    record, _, r, setup = ev.evaluate_detailed(design, ev.WalkSettings.from_dict({"max_time": 2.0}), times)
    assert record.ok and r.status == "ok"
    model = setup.model
    n, mass, g = model.n, model.total_mass(), model.gravity
    w, com = make_workspace(model), np.zeros(4)
    velocity = []
    for x in r.records:
        forward_kinematics(model.arrays, x[:n], x[n:], w)
        center_of_mass(model.arrays, w, com)
        velocity.append(com[2:4].copy())
    vx, vz = np.array(velocity).T
    span = np.diff(times)
    impulse = r.record_forces[1:].sum(axis=1) * span[:, None]          # (intervals, [normal, tangent]) N s
    settled = times[1:] > 0.05
    vertical = impulse[:, 0] - mass * (np.diff(vz) + g * span)
    horizontal = impulse[:, 1] - mass * np.diff(vx)
    total = mass * g * span[settled].sum()
    assert abs(vertical[settled].sum()) <= 1e-5 * total
    assert abs(horizontal[settled].sum()) <= 1e-4 * total
    per_interval = np.abs(vertical[settled]) / (mass * g * span[settled])
    assert per_interval.max() <= 0.03 and np.percentile(per_interval, 95) <= 0.01
    assert np.abs(horizontal[settled]).max() <= 0.01 * mass * g * 0.01
    assert impulse[settled, 0].max() > 2 * mass * g * 0.01    # heel strikes are in there

    grf = windowed_ground_reaction(trajectory_table(r, setup))["total"] / (mass * g)
    peak = mt.finalize(r.acc, time=r.time, n_joints=6, site_names=SITE_NAMES,
                       total_mass=mass)["grf_peak_bw"]
    window = times >= 1.0                                               # the metrics' window
    assert 0.9 * peak <= grf[window].max() <= peak * (1 + 1e-9)
