"""The wearer with muscles in the time-stepping rollout (issue 45,
codesign/walking/muscle_wearer.py), against independent truths: the library's muscle and
reflex step computed by hand from the rollout's recorded state, replay bit for bit, and the
metabolic metric as Umberger's model integrated over the recorded muscle states."""

from __future__ import annotations

import math

import numpy as np
import pytest

from codesign.control.reflex import (GEYER_HERR_2010_DELAYS, LegMuscles, ReflexMemory, SignalHistory, delay_steps,
                                     reflex_muscle_step, reflex_params)
from codesign.errors import UserError
from codesign.model.metabolics import (BHARGAVA, METABOLIC_MODELS, UMBERGER_2010, bhargava_energy_rate,
                                       energy_rate, muscle_mass)
from codesign.model.muscle_table import NAMES as MUSCLE_NAMES
from codesign.model.muscle_table import muscle_table
from codesign.model.muscles import GEYER_HERR_2010, force_length, mtu_forces, muscles_step, paper_angles
from codesign.walking import WalkSettings
from codesign.walking import metrics as mt
from codesign.walking import stepping
from codesign.walking.design import load_design
from codesign.walking.setup import build_setup

DESIGN = "docs/designs/human-walking.json"
H = 1e-3


def muscle_setup(max_time=0.4, **evaluation):
    settings = WalkSettings.from_dict({"initial_state": "lowest_point", "phase0": 0.1, "max_time": max_time,
                                       "wearer_model": "muscles", **evaluation})
    setup, record, _ = build_setup(load_design(DESIGN), settings)
    assert setup is not None, record
    return setup


def walk_to(setup, x, t0, t1):
    """The stepping rollout from x (updated) at t0 to t1 on the set-up's data as found."""
    code, t, _ = stepping.walk(x, t1, setup.p, *stepping.no_records(x.shape[0], setup.model.n_contacts), t0)
    assert code == 0, (code, t)


def joint_coords(model, side):
    return [model.body_id(f"{b}_{side}") for b in ("thigh", "shank", "foot")]   # hip, knee, ankle


def test_the_rollouts_muscle_torques_are_the_librarys_step_by_hand():
    """At t1 the rollout's recorded state (engine x, the last step's contact forces, the
    muscles and reflexes) gives, through the library's reflex_muscle_step with the paper's
    angles from paper_angles (anatomical = engine x (+1, -1, +1)), each leg's load summed
    by hand from the contact forces, and the trunk's forward lean = -torso pitch, torques
    whose engine image d(phi)/d(q) tau (by finite differences of paper_angles) is what the
    next step's controller applies to each hip, knee and ankle."""
    setup = muscle_setup()
    model, p = setup.model, setup.p
    stepping.reset_data(p)
    x = setup.x0.copy()
    wd = p.data.walk
    md = wd.muscle
    t1 = 0.1
    walk_to(setup, x, 0.0, t1)
    while not (md.load.sum() > 0.5 * setup.wearer_mass * 9.81 and md.mem.stance.any()):   # a loaded leg in stance
        walk_to(setup, x, t1, t1 + H)
        t1 += H
        assert t1 < 0.3
    n = model.n
    q, v = x[:n], x[n:]
    # by hand: the inputs
    foot = p.model.walk.contact_foot
    force = p.data.step_work.force
    load = np.array([force[foot == leg, 0].sum() for leg in (0, 1)])   # level ground: the normal forces
    np.testing.assert_allclose(md.load, load, rtol=1e-12, atol=1e-9)   # what the next step reads
    phi, phi_rate = np.zeros((2, 3)), np.zeros((2, 3))
    eps = 1e-6
    dphi = np.zeros((2, 3))
    for leg, side in enumerate(("r", "l")):
        hip, knee, ankle = joint_coords(model, side)
        anat = np.array([q[hip], -q[knee], q[ankle]])
        rate = np.array([v[hip], -v[knee], v[ankle]])
        phi[leg] = paper_angles(*anat)
        phi_rate[leg] = (paper_angles(*(anat + eps * rate)) - paper_angles(*(anat - eps * rate))) / (2 * eps)
        # d(paper angle)/d(engine angle) of (ankle, knee, hip)
        for j, (k, s) in enumerate(((2, 1.0), (1, -1.0), (0, 1.0))):
            step = np.zeros(3)
            step[k] = s * eps
            dphi[leg, j] = (paper_angles(*(anat + step))[j] - paper_angles(*(anat - step))[j]) / (2 * eps)
    torso = model.body_id("torso")
    hist = SignalHistory(*(a.copy() for a in md.hist))
    mem = ReflexMemory(*(a.copy() for a in md.mem))
    mus = LegMuscles(*(a.copy() for a in md.mus))
    torque = np.zeros((2, 3))
    table = muscle_table()
    reflex_muscle_step(table, GEYER_HERR_2010, reflex_params(setup.wearer_mass),
                       delay_steps(GEYER_HERR_2010_DELAYS, H), hist, mem, mus, H, phi, phi_rate, load,
                       -q[torso], -v[torso], torque)
    walk_to(setup, x, t1, t1 + H)
    np.testing.assert_allclose(md.phi, phi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(md.torque, torque, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(md.mus.stim, mus.stim, rtol=1e-9, atol=1e-12)
    ctrl_names = [j.name for j in setup.layout.decode(load_design(DESIGN).params).active]
    rows = p.model.walk.muscle.rows
    for leg in range(2):
        for j in range(3):
            assert abs(dphi[leg, j]) == pytest.approx(1.0)
            expected = dphi[leg, j] * torque[leg, j]
            assert wd.joint_tau[rows[leg, j]] == pytest.approx(expected, rel=1e-9, abs=1e-9)
            assert np.all(wd.joint_gain[rows[leg, j]] == 0.0)
    assert [ctrl_names[r // 2] for r in rows[0]] == ["ankle", "knee", "hip"]
    assert mem.stance.tolist() == md.mem.stance.tolist() and md.mem.stance.any()
    assert np.abs(torque).max() > 1.0     # the muscles do act


def test_a_setup_replays_bit_for_bit():
    setup = muscle_setup(max_time=0.25)
    first = stepping.run(setup.x0, setup.p, WalkSettings().rollout.__class__(max_time=0.25))
    second = stepping.run(setup.x0, setup.p, WalkSettings().rollout.__class__(max_time=0.25))
    again = muscle_setup(max_time=0.25)
    third = stepping.run(again.x0, again.p, WalkSettings().rollout.__class__(max_time=0.25))
    assert first.status == "ok"
    for other in (second, third):
        assert np.array_equal(first.x, other.x)
        assert np.array_equal(first.acc, other.acc, equal_nan=True)
    assert first.acc[mt.M_SAMPLES] > 10


def standing_by_hand(table, s0, met=UMBERGER_2010):
    """Both legs upright (paper angles pi/2, pi, pi) under s0 for 1 s of 1-ms steps: the
    muscles' summed rate (W) by the metabolic model ``met``."""
    total = 0.0
    phi = np.array([0.5 * math.pi, math.pi, math.pi])
    for _ in range(2):
        act = np.full(7, s0)
        l_ce = table.l_opt.copy()
        v_ce, l_mtu, f_se = np.zeros(7), np.zeros(7), np.zeros(7)
        for _ in range(1000):
            muscles_step(table, GEYER_HERR_2010, phi, np.full(7, s0), H, l_ce, act, v_ce, l_mtu, f_se)
        total += sum(rate_by_hand(table, i, s0, act[i], l_ce[i], v_ce[i], l_mtu[i], met) for i in range(7))
    return total


def rate_by_hand(table, i, u, a, l_ce, v_ce, l_mtu, met=UMBERGER_2010):
    cst = GEYER_HERR_2010
    l_opt = table.l_opt[i]
    _, f_ce, _, _ = mtu_forces(l_ce, v_ce, l_mtu, a, table.f_max[i], table.v_max[i], l_opt, table.l_slack[i], cst)
    mass = muscle_mass(table.f_max[i], l_opt, met.specific_tension, met.density)
    f_l = force_length(l_ce / l_opt, cst.w, cst.c)
    if met.model == BHARGAVA:
        return bhargava_energy_rate(u, a, l_ce / l_opt, f_l, f_ce, v_ce, table.f_max[i], mass, table.slow_twitch[i],
                                    met)[3]
    return energy_rate(u, a, l_ce / l_opt, v_ce / l_opt, f_l, f_ce, v_ce, mass, table.slow_twitch[i],
                       table.v_max[i], met)[3]


@pytest.mark.parametrize("model", ["umberger2010", "bhargava2004"])
def test_metabolic_power_is_the_metabolic_model_over_the_recorded_muscle_states(model):
    """metabolic_power = the trapezoid mean over the window's 1-ms samples of the model's
    rate (Umberger 2010, the default, or Bhargava 2004: evaluation.metabolic_model) summed
    over the 14 muscles, each from the muscle state recorded after its step and the
    stimulation held over it, less the standing rate computed here from the library's
    muscle step (relative 1e-9: the same formulas, summed in another order)."""
    max_time = 0.25
    met = METABOLIC_MODELS[model]
    setup = muscle_setup(max_time=max_time, metabolic_model=model)
    p = setup.p
    stepping.reset_data(p)
    x = setup.x0.copy()
    table = muscle_table()
    md = p.data.walk.muscle
    t_start = 0.5 * max_time
    times, rates = [], []
    steps = int(round(max_time / H))
    for k in range(steps):
        t = k * H
        walk_to(setup, x, t, t + H)
        if t >= t_start - 1e-12:
            rates.append(sum(rate_by_hand(table, i, md.stim_held[leg, i], md.mus.act[leg, i], md.mus.l_ce[leg, i],
                                          md.mus.v_ce[leg, i], md.mus.l_mtu[leg, i], met)
                             for leg in range(2) for i in range(7)))
            times.append(t)
    times, rates = np.array(times), np.array(rates)
    mean = np.sum(0.5 * (rates[1:] + rates[:-1]) * np.diff(times)) / (times[-1] - times[0])
    standing = standing_by_hand(table, reflex_params(setup.wearer_mass).s0, met)
    metrics = mt.finalize_muscles(p.data.walk.acc, setup.wearer_mass, 1.25)
    assert metrics["metabolic_power"] == pytest.approx(mean - standing, rel=1e-9)
    assert metrics["metabolic_cost"] == pytest.approx((mean - standing) / (setup.wearer_mass * 1.25), rel=1e-9)
    assert standing > 0 and mean > standing


def test_impedance_wearer_reports_no_metabolic_power_but_its_stance_knee():
    settings = WalkSettings.from_dict({"initial_state": "gait", "max_time": 3.0})
    setup, _, _ = build_setup(load_design(DESIGN), settings)
    result = stepping.run(setup.x0, setup.p, settings.rollout)
    m = mt.finalize_muscles(result.acc, setup.wearer_mass, 1.3)
    assert math.isnan(m["metabolic_power"]) and math.isnan(m["metabolic_cost"])
    assert math.isfinite(m["knee_flexion_stance_peak_deg"])


def test_an_unknown_wearer_model_is_one_line_naming_the_nearest():
    with pytest.raises(UserError, match="wearer_model") as err:
        WalkSettings.from_dict({"wearer_model": "muscle"})
    assert "\n" not in str(err.value) and "did you mean muscles" in str(err.value)


@pytest.mark.peers
def test_the_soft_rollout_steps_the_muscles_on_their_clock_as_a_replay_by_hand():
    """Under the soft contact model (adaptive integrator) the muscles are a sampled-data
    controller on the grid k h: a time guard stops the integrator at each tick. Replaying
    the muscle step by hand from the start record on the walk's states at t = k h (its
    dense output) with each leg's load summed by hand from the recorded spring forces gives
    the muscle state and torques the walk ends with. Ticks are located within the
    integrator's event tolerance (1e-10 s), so the replayed states differ from the ticks'
    by ~1e-10 s x their rates: agreement to 1e-6 relative."""
    from codesign.walking import rollout as ro
    from codesign.walking.muscle_wearer import clone_muscle_data, muscle_step
    T = 0.15
    settings = WalkSettings.from_dict({"initial_state": "lowest_point", "phase0": 0.1, "max_time": T,
                                       "wearer_model": "muscles", "contact_model": "soft"})
    setup, record, _ = build_setup(load_design(DESIGN), settings)
    assert setup is not None, record
    p = setup.p
    ticks = np.arange(int(round(T / H)) + 1) * H
    result = ro.run(setup.x0.copy(), setup.mode0, p, settings.rollout, ticks)
    assert result.status == "ok", result.message
    md = p.data.walk.muscle
    mm = p.model.walk.muscle
    last = int(round(md.tick[0] / H)) - 1            # the walk's last tick
    assert last in (len(ticks) - 2, len(ticks) - 1)
    hand = clone_muscle_data(mm.start)
    n = setup.model.n
    foot = p.model.walk.contact_foot
    for k in range(last + 1):
        if k > 0:                                    # the first tick: the start record's loads
            hand.load[:] = [result.record_forces[k][foot == leg, 0].sum() for leg in (0, 1)]
        x = result.records[k]
        muscle_step(x[:n], x[n:], mm, hand)
    np.testing.assert_allclose(hand.mus.act, md.mus.act, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hand.mus.l_ce, md.mus.l_ce, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(hand.torque, md.torque, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hand.load, md.load, rtol=1e-6, atol=1e-6)
    assert md.load.sum() > 0.5 * setup.wearer_mass * 9.81 and np.abs(md.torque).max() > 1.0


def test_the_compiled_muscle_metrics_match_their_oracle():
    """accumulate_knee_stance_peak / accumulate_muscles + finalize_muscles on random samples
    against the plain-NumPy oracle (tests/metric_oracles.py)."""
    from codesign.walking import accumulators as ac
    from metric_oracles import muscle_metrics_reference
    rng = np.random.default_rng(4)
    t = np.arange(800) * 0.005
    angles = rng.normal(0.0, 0.4, (800, 6))
    # on and off spells of 20-400 ms: scuffs (< MIN_SWING_S off) and whole strides both
    flips = np.cumsum(rng.uniform(0.02, 0.4, (20, 2)), axis=0)
    feet = np.stack([(np.searchsorted(flips[:, leg], t) % 2 == 1) for leg in range(2)], axis=1).astype(float)
    edot = rng.uniform(100.0, 900.0, 800)
    for muscles in (False, True):
        acc = mt.new_accumulator(0, 0.5)
        if muscles:                      # as rollout_base.with_muscle_wearer marks it
            acc[mt.M_ON], acc[mt.M_STANDING] = 1.0, 123.0
        gait_q = np.array([0, 1, 2, 3, 4, 5], dtype=np.int64)
        for k in range(800):
            ac.accumulate_knee_stance_peak(acc, t[k], angles[k], gait_q, feet[k])
            ac.accumulate_muscles(acc, t[k], edot[k])
        got = mt.finalize_muscles(acc, 70.0, 1.2)
        want = muscle_metrics_reference(t, 0.5, angles, feet, edot if muscles else None, 123.0, 70.0, 1.2)
        assert math.isfinite(want["knee_flexion_stance_peak_deg"])     # whole strides were seen
        for name, value in want.items():
            if math.isnan(value):
                assert math.isnan(got[name]), name
            else:
                assert got[name] == pytest.approx(value, rel=1e-12), name


def test_the_problem_option_sets_the_evaluations_wearer_model():
    """wearer_model is a problem option (human alone or an active wearer) whose problem's
    settings parser sets the evaluation's; a design file's "problem" names it only when it
    is not the default; a passive wearer and a contradicting [evaluation] are refused."""
    from codesign.problems.compose import walking_problem
    from codesign.problems.options import ProblemOptions, options_of_key, parse_options, problem_key
    _, options = parse_options({"name": "human_gait", "wearer_model": "muscles"})
    key = problem_key(options)
    assert 'wearer_model="muscles"' in key and options_of_key(key) == options
    assert options.to_json()["wearer_model"] == "muscles" and "wearer_model" not in ProblemOptions().to_json()
    problem = walking_problem(options)
    assert problem.parse_settings({}).walk.wearer_model == "muscles"
    assert walking_problem(parse_options({"name": "human_gait"})[1]).parse_settings({}).walk.wearer_model == "impedance"
    with pytest.raises(UserError, match="wearer_model"):
        problem.parse_settings({"wearer_model": "impedance"})
    with pytest.raises(UserError, match="passive wearer"):
        parse_options({"name": "exo_codesign", "wearer_model": "muscles"})


SILENT = dict(s0=0.0, s0_vas=0.0, s0_bal=0.0, g_sol=0.0, g_ta=0.0, g_sol_ta=0.0, g_gas=0.0, g_vas=0.0, k_phi=0.0,
              k_bw=0.0, delta_s=0.0, g_hfl=0.0, k_lean=0.0, g_ham_hfl=0.0, g_ham=0.0, g_glu=0.0, stim_min=0.0)


def test_with_zero_stimulation_the_skeletons_energy_changes_by_the_joint_torques_work():
    """Every stimulation 0 (pre-stimulations and gains 0, the clip's floor 0: zero
    activation), the body released 0.5 m above the ground with the gait's joint rates:
    over 0.25 s of flight its mechanical energy (kinetic + gravity + ligament,
    dynamics.testing.flows) changes by the work of the controller's generalized forces
    sum_k h tau_k . v_(k+1) (the muscles' passive forces; the pitch assist) within the
    time step's O(h) band (0.5 % of the potential energy released), as for the engine's
    own rollouts; and the silent muscles carry no active force."""
    from codesign.dynamics.model import make_workspace
    from codesign.dynamics.testing.flows import mechanical_energy
    from codesign.walking import muscle_wearer as mw
    settings = WalkSettings.from_dict({"initial_state": "lowest_point", "max_time": 0.25, "wearer_model": "muscles",
                                       "max_airborne_time": 1.0, "max_hip_rise": 1.0})
    setup, record, _ = build_setup(load_design(DESIGN), settings)
    model = setup.model
    n = model.n
    x0 = setup.x0.copy()
    x0[model.body_id("torso_z")] += 0.5
    old = setup.p.model.walk.muscle
    mm = mw.make_muscle_model(True, old.rows, old.coord, int(old.pitch[0]), 0.0, H, setup.wearer_mass, x0,
                              np.zeros(2), **SILENT)
    p = stepping.with_muscles(setup.p, model, mm, mw.standing_rate(mm))
    setup.p = p
    stepping.reset_data(p)
    w = make_workspace(model)
    x = x0.copy()
    energy = [sum(mechanical_energy(model.arrays, w, x[:n], x[n:]))]
    work = 0.0
    potential0 = mechanical_energy(model.arrays, w, x0[:n], np.zeros(n))[1]
    for k in range(250):
        walk_to(setup, x, k * H, (k + 1) * H)
        work += H * float(p.data.walk.tau @ x[n:])
        energy.append(sum(mechanical_energy(model.arrays, w, x[:n], x[n:])))
    released = potential0 - mechanical_energy(model.arrays, w, x[:n], np.zeros(n))[1]
    assert released > 0.5 * model.total_mass() * model.gravity * 0.2      # it fell
    assert np.all(p.data.step_work.mode == 0)                             # in the air throughout
    assert np.all(p.data.walk.muscle.mus.act == 0.0)
    assert abs(energy[-1] - energy[0] - work) < 5e-3 * released


def assisted_muscle_setup(max_time):
    """The muscle wearer with an ideal assisting device (issue 32's profile on the
    unaugmented human, G = I: the co-design's law and profile, no linkage)."""
    import json
    from pathlib import Path
    from codesign.walking import Design
    start = json.loads((Path(__file__).resolve().parents[2] / "studies/active-wearer/assist-b-start.json").read_text())
    settings = WalkSettings.from_dict({"initial_state": "lowest_point", "phase0": 0.1, "max_time": max_time,
                                       "wearer_model": "muscles", "wearer": "active"})
    law = {k: v for k, v in start[0]["params"].items() if k.split(".")[0] in ("hip", "knee", "ankle", "assist")}
    setup, record, _ = build_setup(Design(law), settings)
    assert setup is not None, record
    return setup, settings


def test_an_active_wearers_device_adds_to_the_muscles_torques():
    """An ideal assisting device on the muscle wearer: no compensation -- the hip's and
    knee's generalized force is the muscles' torque plus the device's (which relief keeps,
    G = I: the actuator's torque), and the wearer's own torque is the muscles'."""
    setup, _ = assisted_muscle_setup(0.2)
    stepping.reset_data(setup.p)
    x = setup.x0.copy()
    walk_to(setup, x, 0.0, 0.15)
    wd, mm = setup.p.data.walk, setup.p.model.walk.muscle
    md, dd = wd.muscle, wd.drive
    assert np.abs(dd.tau).max() > 1.0                     # the device assists here
    for leg in range(2):
        for j, k in ((2, 0), (1, 1)):                     # paper hip -> actuator 0, knee -> 1
            muscle = mm.sign[j] * md.torque[leg, j]
            assert wd.relief[mm.rows[leg, j]] == dd.tau[2 * leg + k]
            assert wd.tau[mm.coord[leg, j]] == pytest.approx(muscle + dd.tau[2 * leg + k], rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(wd.wearer_tau, wd.joint_tau[p_rows(setup)], rtol=0, atol=0)


def p_rows(setup):
    return setup.p.model.walk.wearer_source


def test_the_records_hold_each_steps_muscle_state():
    """Rollout.record_muscles at a record time t: the activations and held torques the
    walk had after its muscle step at t -- the same walk stepped by hand to t + h leaves
    them in its data record, bit for bit."""
    setup = muscle_setup(max_time=0.2)
    times = np.array([0.0, 0.05, 0.1, 0.15])
    out = stepping.run(setup.x0, setup.p, WalkSettings().rollout.__class__(max_time=0.2), times)
    assert out.status == "ok" and out.record_muscles.shape == (4, 2, 17)
    assert out.record_muscles[:, :, :7].max() > 0.05            # the stance leg's extensors are on
    for k, t in enumerate(times):
        stepping.reset_data(setup.p)
        x = setup.x0.copy()
        walk_to(setup, x, 0.0, t + H)
        md = setup.p.data.walk.muscle
        assert np.array_equal(out.record_muscles[k, :, :7], md.mus.act)
        assert np.array_equal(out.record_muscles[k, :, 7:10], md.torque)
        assert np.array_equal(out.record_muscles[k, :, 10:], md.rate)


def test_the_recorded_muscle_rates_integrate_to_metabolic_power():
    """The trajectory's per-muscle rates (``edot_<muscle>_<side>_W``, records every step):
    summed over the 14 muscles and integrated by the trapezoid over the window's records,
    less the standing rate, they are the walk's ``metabolic_power`` (relative 1e-9: the
    accumulator's own samples at the same times, summed in another order); and
    ``muscle_rates``, their plain mean per muscle from the window's start (to the walk's
    end: one record more), sums to it within 1 % (the mean of 1-ms samples against the
    trapezoid)."""
    from codesign.walking.trajectory import muscle_rates, trajectory_table

    max_time = 0.5
    setup = muscle_setup(max_time=max_time)
    times = np.arange(0.0, max_time + 0.5 * H, H)
    out = stepping.run(setup.x0, setup.p, WalkSettings().rollout.__class__(max_time=max_time), times)
    assert out.status == "ok"
    table = trajectory_table(out, setup)
    acc = setup.p.data.walk.acc
    t = table["t_s"].to_numpy()
    late = table[(t >= acc[mt.M_T_FIRST] - 1e-12) & (t <= acc[mt.M_T_PREV] + 1e-12)]
    total = sum(late[f"edot_{name}_{side}_W"].to_numpy() for name in MUSCLE_NAMES for side in "rl")
    t = late["t_s"].to_numpy()
    assert acc[mt.M_T_FIRST] == pytest.approx(0.5 * max_time) and len(t) == acc[mt.M_SAMPLES]
    mean = np.sum(0.5 * (total[1:] + total[:-1]) * np.diff(t)) / (t[-1] - t[0])
    power = mt.finalize_muscles(acc, setup.wearer_mass, 1.25)["metabolic_power"]
    assert power == pytest.approx(mean - acc[mt.M_STANDING], rel=1e-9)
    rates = muscle_rates(table, 0.5 * max_time)
    assert list(rates) == list(MUSCLE_NAMES) and min(rates.values()) > 0.0
    assert sum(rates.values()) - acc[mt.M_STANDING] == pytest.approx(power, rel=0.01)


def test_the_actuator_tables_muscle_torques_are_the_ones_the_walk_integrated():
    """The simulate table's wearer torques of a muscle wearer with an ideal device
    assisting (records at every step): integrated as the rollout's accumulator integrates
    them (the trapezoid over the window's step starts, both legs), they give the walk's own
    wearer_<joint>_torque_rms to 1e-9 -- so the table holds the muscles' torques, not the
    device's; and the device's torque at the hip and knee is its actuators' (G = I)."""
    from codesign.walking import metrics_of
    from codesign.walking.trajectory import actuator_table

    max_time = 0.3
    setup, settings = assisted_muscle_setup(max_time)
    rs = settings.rollout
    times = np.arange(0.0, max_time, rs.h)
    out = stepping.run(setup.x0, setup.p, rs, times)
    assert out.status == "ok"
    table = actuator_table(out, setup)
    metrics = metrics_of(out, setup)
    window = times >= 0.5 * max_time
    t = times[window]
    for joint in ("hip", "knee", "ankle"):
        tau2 = sum(table[f"tau_wearer_{joint}_{side}_Nm"].to_numpy()[window] ** 2 for side in "rl")
        rms = math.sqrt(np.trapezoid(tau2, t) / ((t[-1] - t[0]) * 2))
        assert rms > 5.0, joint                                   # N m: muscles work
        assert rms == pytest.approx(metrics[f"wearer_{joint}_torque_rms"], rel=1e-9), joint
    device = table[[c for c in table.columns if c.startswith("tau_device_")]].to_numpy()
    assert np.abs(device).max() > 1.0                             # N m: the device assists
    names = setup.effort_names                                    # the drive's actuators first, per leg
    for leg, side in enumerate("rl"):
        for a, joint in enumerate(("hip", "knee")):
            np.testing.assert_array_equal(table[f"tau_device_{joint}_{side}_Nm"], table[f"tau_{names[2 * leg + a]}_Nm"])


@pytest.mark.peers
def test_the_event_driven_hard_contact_walks_the_muscles_as_the_stepping_rollout():
    """The same hybrid system integrated two ways: the event-driven rollout (DOPRI5, exact
    impacts and mode switches, the muscles on their clock) and the 1-ms time-stepping
    rollout agree to the stepping rollout's first-order error over the first step of
    the muscle-driven human (0.5 s, before the left heel strike): joint angles within
    0.05 rad (measured 0.040 at 0.5 s), activations within 0.1 (0.085)."""
    from codesign.walking import rollout as ro
    design = load_design("docs/designs/human-muscles.json")
    times = np.arange(0.0, 0.5001, 0.05)
    out = {}
    for contact_model in ("hard", "hard_event"):
        settings = WalkSettings.from_dict({**design.evaluation, "wearer_model": "muscles", "max_time": 0.5,
                                           "contact_model": contact_model})
        setup, record, _ = build_setup(design, settings)
        assert setup is not None, record
        result = ro.run(setup.x0.copy(), setup.mode0, setup.p, settings.rollout, times)
        assert result.status == "ok", result.message
        out[contact_model] = result
    n = setup.model.n
    joints = [setup.model.body_id(f"{b}_{side}") for b in ("thigh", "shank", "foot") for side in ("r", "l")]
    angles = {k: r.records[:, joints] for k, r in out.items()}
    assert np.abs(angles["hard"] - angles["hard_event"]).max() < 0.05
    assert np.abs(out["hard"].record_muscles[:, :, :7] - out["hard_event"].record_muscles[:, :, :7]).max() < 0.1
    assert np.ptp(angles["hard"], axis=0).min() > 0.1          # the joints do move
    assert out["hard_event"].n_events > 500                    # the muscles' ticks are events


def test_mujocos_rollout_steps_the_muscles_every_control_step():
    """MuJoCo's rollout steps the muscles once per control step h = 1 ms, every ten of its
    0.1-ms steps (a step that is not a whole number of them is refused), and its walk of
    the muscle-driven human starts as the engine's: joint angles within 0.05 rad after
    0.05 s (measured 0.030; the two contact models then part: 0.06 rad at 0.1 s, 0.34 at
    0.5 s, docs/muscles.md), with a metabolic rate measured."""
    from codesign.walking import rollout as ro
    from codesign.walking.mujoco_model import export_setup
    from codesign.walking.mujoco_rollout import muscle_ticks, run_mujoco
    design = load_design("docs/designs/human-muscles.json")
    settings = WalkSettings.from_dict({**design.evaluation, "wearer_model": "muscles", "max_time": 0.05})
    setup, record, _ = build_setup(design, settings)
    assert setup is not None, record
    muscle = setup.p.model.walk.muscle
    assert muscle_ticks(muscle, 1e-4) == 10 and muscle_ticks(muscle, 5e-4) == 2
    with pytest.raises(ValueError, match="whole number"):
        muscle_ticks(muscle, 3e-4)
    times = np.array([0.0, 0.05])
    engine = ro.run(setup.x0.copy(), setup.mode0, setup.p, settings.rollout, times)
    mj = run_mujoco(export_setup(setup, settings), 0.05, times)
    assert engine.status == "ok" and mj.status == "ok", (engine.message, mj.message)
    joints = [setup.model.body_id(f"{b}_{side}") for b in ("thigh", "shank", "foot") for side in ("r", "l")]
    assert np.abs(engine.records[-1, joints] - mj.records[-1, joints]).max() < 0.05
    assert np.abs(engine.records[-1, joints] - engine.records[0, joints]).max() > 0.05   # they moved
    assert mj.metrics["metabolic_power"] > 0.0


def test_geyer_herrs_soft_joint_limits_by_hand():
    """nms_model_MechInit.m's soft limits (0.3 N m per degree beyond the limit, relaxing at
    most at 1 deg/s) by hand: the knee 3 deg beyond its 175 deg, still, entering at 2 deg/s,
    leaving at 0.5 and 2 deg/s; the ankle 5 deg below its 70 entering at 3 deg/s; none
    inside. In the rollout the controller's generalized force at each joint grows by
    exactly that torque (paper sign), and nothing else changes."""
    from codesign.walking.muscle_wearer import SOFT_LIMIT_K, SOFT_LIMIT_LOW, SOFT_LIMIT_UP, soft_limit_torque
    deg = math.radians(1.0)
    knee = lambda phi, rate: soft_limit_torque(phi * deg, rate * deg, SOFT_LIMIT_LOW[1], SOFT_LIMIT_UP[1],
                                               SOFT_LIMIT_K)
    assert knee(178.0, 0.0) == pytest.approx(-0.9, rel=1e-12)
    assert knee(178.0, 2.0) == pytest.approx(-0.9 * 3.0, rel=1e-12)
    assert knee(178.0, -0.5) == pytest.approx(-0.9 * 0.5, rel=1e-12)
    assert knee(178.0, -2.0) == 0.0 and knee(170.0, 5.0) == 0.0
    ankle = soft_limit_torque(65.0 * deg, -3.0 * deg, SOFT_LIMIT_LOW[0], SOFT_LIMIT_UP[0], SOFT_LIMIT_K)
    assert ankle == pytest.approx(0.3 * 5.0 * 4.0, rel=1e-12)

    from codesign.walking.rollout_base import control
    plain, limited = muscle_setup(), muscle_setup(soft_joint_limits=True)
    model = plain.model
    n = model.n
    x = plain.x0.copy()
    hip, kn, an = joint_coords(model, "r")
    x[kn], x[n + kn] = -math.radians(2.0), math.radians(4.0)      # 2 deg of flexion, extending at 4 deg/s
    x[an], x[n + an] = math.radians(25.0), 0.0                   # 25 deg of dorsiflexion: paper 65 deg
    taus = []
    for setup in (plain, limited):
        stepping.reset_data(setup.p)
        tau = np.zeros(n)
        p = setup.p
        control(0.0, x[:n], x[n:], p.model.arrays, p.model.walk, p.data.walk, tau)
        taus.append(tau)
    extra = taus[1] - taus[0]
    assert extra[kn] == pytest.approx(-0.3 * 3.0 * (1 + 4.0), rel=1e-9)      # paper knee = pi + q: sign +1
    assert extra[an] == pytest.approx(-0.3 * 5.0, rel=1e-9)                  # paper ankle = pi/2 - q: sign -1
    others = np.ones(n, bool)
    others[[kn, an]] = False
    assert np.abs(extra[others]).max() < 1e-12


def test_the_metabolic_model_prices_the_same_walk_and_names_a_known_model_of_muscles():
    """Bhargava 2004 prices the walk Umberger 2010 prices: the state after 0.25 s bit for
    bit the same, the net power another (both positive); an unknown model, or one on the
    impedance wearer, is one UserError line."""
    runs = {}
    for model in ("umberger2010", "bhargava2004"):
        setup = muscle_setup(max_time=0.25, metabolic_model=model)
        stepping.reset_data(setup.p)
        x = setup.x0.copy()
        walk_to(setup, x, 0.0, 0.25)
        runs[model] = x, mt.finalize_muscles(setup.p.data.walk.acc, setup.wearer_mass, 1.25)["metabolic_power"]
    assert np.array_equal(runs["umberger2010"][0], runs["bhargava2004"][0])
    assert runs["umberger2010"][1] > 0 and runs["bhargava2004"][1] > 0
    assert runs["umberger2010"][1] != runs["bhargava2004"][1]
    with pytest.raises(UserError, match=r'metabolic_model: got "bhargava" \(did you mean bhargava2004\?\)'):
        WalkSettings.from_dict({"wearer_model": "muscles", "metabolic_model": "bhargava"})
    with pytest.raises(UserError, match='metabolic_model: got "bhargava2004"; expected.*wearer_model'):
        WalkSettings.from_dict({"metabolic_model": "bhargava2004"})
    with pytest.raises(UserError, match=r'metabolic_model: got \["bhargava2004"\]; expected one of'):
        WalkSettings.from_dict({"wearer_model": "muscles", "metabolic_model": ["bhargava2004"]})


def test_the_published_standing_reference_prices_the_walk_net_of_the_papers_standing():
    """standing_reference = "published": the walk's net power is its muscles' rate less their
    standing rate under Geyer & Herr's s0 = 0.01, not under the walk's own pre-stimulation
    (human-muscles-lab.json's searched 0.053). The same walk; its net power higher by
    exactly the difference of the two standing rates computed by hand here (relative 1e-9),
    under each metabolic model; the walker's own standing costs more (Umberger's A^0.6)."""
    from codesign.problems.robust import read_robust_checks
    design = load_design("docs/designs/human-muscles-lab.json")
    evaluation = dict(design.evaluation)
    read_robust_checks(evaluation)
    s0 = design.params["reflex.s0"]
    assert reflex_params(70.0).s0 == 0.01 and s0 > 0.05
    for model in ("umberger2010", "bhargava2004"):
        power = {}
        for reference in ("walker", "published"):
            settings = WalkSettings.from_dict({**evaluation, "wearer_model": "muscles", "max_time": 0.25,
                                               "metabolic_model": model, "standing_reference": reference})
            setup, record, _ = build_setup(design, settings)
            assert setup is not None, record
            stepping.reset_data(setup.p)
            x = setup.x0.copy()
            walk_to(setup, x, 0.0, 0.25)
            power[reference] = mt.finalize_muscles(setup.p.data.walk.acc, setup.wearer_mass, 1.25)["metabolic_power"]
        met = METABOLIC_MODELS[model]
        own, paper = standing_by_hand(muscle_table(), s0, met), standing_by_hand(muscle_table(), 0.01, met)
        assert own > paper > 0
        assert power["published"] - power["walker"] == pytest.approx(own - paper, rel=1e-9)
    with pytest.raises(UserError, match='standing_reference: got "own"; expected one of walker, published'):
        WalkSettings.from_dict({"wearer_model": "muscles", "standing_reference": "own"})


def test_soft_joint_limits_need_the_muscle_wearer():
    with pytest.raises(UserError, match="soft_joint_limits.*wearer_model"):
        WalkSettings.from_dict({"soft_joint_limits": True})
    with pytest.raises(UserError, match="soft_joint_limits: got"):
        WalkSettings.from_dict({"wearer_model": "muscles", "soft_joint_limits": "yes"})


def test_the_trailing_balance_option_reaches_the_reflexes_and_only_the_muscle_wearer():
    """evaluation.trailing_balance = false sets the reflexes' trail_balance to 0 (SCONE's
    trailing leg, the law by hand in tests/control/test_reflex.py), every other reflex
    parameter as by default (1: Appendix I's); a value that is not a boolean, or the option
    on the impedance wearer, is one line."""
    paper = muscle_setup(max_time=0.05).p.model.walk.muscle.p
    scone = muscle_setup(max_time=0.05, trailing_balance=False).p.model.walk.muscle.p
    assert (paper.trail_balance, scone.trail_balance) == (1.0, 0.0)
    assert paper._replace(trail_balance=0.0) == scone
    with pytest.raises(UserError, match="trailing_balance: got \"no\"; expected true or false"):
        WalkSettings.from_dict({"wearer_model": "muscles", "trailing_balance": "no"})
    with pytest.raises(UserError, match="trailing_balance.*wearer_model = \"muscles\""):
        WalkSettings.from_dict({"trailing_balance": False})
