"""Gait-physics metrics (issue 15) against closed-form truths: the foot-slip fraction of a
block sliding to rest (Coulomb stopping time), the windowed vertical ground reaction of a
dropped block (impulse-momentum, h-independent), and the cuff forces of a person standing
in a device (free body of the device: the cuffs carry its weight).

The block tests drive the engine's time step directly and feed its output through the
same compiled metric code as the walking rollout (metrics.foot_slip, push_ground_impulse,
accumulate_gait, finalize_gait)."""

import math

import numpy as np
import pytest

from codesign.dynamics import contact_rows as ct
from codesign.dynamics.testing import examples
from codesign.dynamics import timestep as ts
from codesign.dynamics.model import make_workspace
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt

G = 9.81
NO_JOINTS = np.full(6, -1, dtype=np.int64)
ONE_FOOT = np.array([1.0, 0.0])
EMPTY = np.zeros(0)


def block_run(q, v, steps, h, mu):
    """Run the sliding block (two corners, both 'foot 0') from (q, v) for ``steps`` time
    steps; per step the metric sample at the step's start time with that step's contact
    modes, slip velocities and vertical impulse, as stepping.observe takes it. Returns
    (accumulator, model)."""
    model = examples.sliding_block(mass=1.0, gravity=G)
    m, w, sw = model.arrays, make_workspace(model), ts.make_step_workspace(model)
    cs, ss = ct.make_settings("hard", mu=mu), ts.step_settings(h=h)
    n = model.n
    tau, K, D = np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
    foot = np.zeros(model.n_contacts, dtype=np.int64)
    acc = mt.new_accumulator(0, 0.0, mt.grf_window_steps(h), h)
    for k in range(steps):
        t = k * h
        assert ts.step(m, w, sw, cs, ss, q, v, tau, K, D) == ts.STEP_OK
        impulse = h * sw.force[:, 0].sum()                  # flat ground: normal = vertical
        grf = ac.push_ground_impulse(acc, impulse)
        loaded, sliding = ac.foot_slip(sw.mode, sw.ut, foot, mt.SLIP_SPEED)
        ac.accumulate_gait(acc, t, loaded, sliding, grf, q, NO_JOINTS, np.nan, ONE_FOOT, np.nan)
        ac.accumulate_sample(acc, t, 0.0, 0.0, 0.0, 1.0, 0.0, EMPTY, EMPTY, EMPTY)
    return acc, model


@pytest.mark.parametrize("v0, mu", [(2.0, 0.5), (1.0, 1.0)])
def test_slip_fraction_of_a_block_sliding_to_rest_is_its_stopping_time(v0, mu):
    # Coulomb: v(t) = v0 - mu g t, at rest from t_stop = v0 / (mu g); the block is loaded
    # throughout, so over a window of length T the slip fraction is t_stop / T -- less the
    # last SLIP_SPEED / (mu g) of deceleration below the slip threshold; the step's
    # semi-implicit Euler and the sampling add at most 2 h
    h, steps = 1e-3, 800
    acc, _ = block_run(np.array([0.0, 0.05, 0.0]), np.array([v0, 0.0, 0.0]), steps, h, mu)
    T = (steps - 1) * h                                     # first to last sample
    t_stop = v0 / (mu * G)
    out = mt.finalize_gait(acc, G, [])
    below_threshold = mt.SLIP_SPEED / (mu * G)
    assert out["foot_slip_fraction"] == pytest.approx((t_stop - below_threshold) / T, abs=2 * h / T)
    assert abs(out["foot_slip_fraction"] - t_stop / T) <= (below_threshold + 2 * h) / T
    assert out["grf_peak_bw"] == pytest.approx(1.0, rel=1e-5)  # resting on the ground: 1 BW


@pytest.mark.parametrize("h", [1e-3, 2.5e-4])
@pytest.mark.parametrize("drop", [0.02, 0.1])
def test_windowed_ground_reaction_of_a_dropped_block_is_impulse_momentum(drop, h):
    # A rigid block dropped from `drop` m lands plastically: the ground's impulse stops
    # its momentum m v_b and then carries its weight. The window of N = T / h steps from
    # the first loaded step holds J = m v_b + m g T, so the windowed peak is
    # m v_b / T + m g, whatever h (the per-step force impulse / h grows as 1 / h).
    # Discrete free fall (semi-implicit Euler): v_k = g h k, z_k = drop - g h^2 k (k + 1) / 2;
    # the first loaded step k0 has z_k0 >= 0 > z_k0+1 (free), so
    # sqrt(2 g drop) - 2 g h < v_b = g h k0 <= sqrt(2 g drop): |peak - truth| <= 2 m g h / T.
    mass, T = 1.0, mt.GRF_WINDOW
    steps = int(round((math.sqrt(2 * drop / G) + 3 * T) / h))
    acc, model = block_run(np.array([0.0, 0.05 + drop, 0.0]), np.zeros(3), steps, h, 1.0)
    weight = mass * G
    assert model.total_mass() == mass
    peak = mt.finalize_gait(acc, weight, [])["grf_peak_bw"] * weight
    truth = mass * math.sqrt(2 * G * drop) / T + weight
    assert abs(peak - truth) <= 2 * mass * G * h / T
    # the per-step mean force of the impact step is an impulse / h: far above the window's
    assert truth > 1.5 * weight


@pytest.mark.parametrize("seed", [0, 1])
def test_binned_continuous_ground_force_is_the_windowed_impulse(seed):
    # a continuous force (the soft contact's) sampled at irregular times, integrated into
    # bins of h: a steady weight W reads W; a half-sine impact pulse of peak P and length
    # tau (< the window) on top of it adds its impulse 2 P tau / pi spread over the window
    # T, whatever the sampling. Trapezoid rule with steps <= 0.2 ms on a 10-ms sine:
    # relative error (pi dt / tau)^2 / 12 <= 3e-4 of the pulse
    h, T, W, P, tau, t_hit = 1e-3, mt.GRF_WINDOW, 700.0, 5000.0, 0.01, 0.0437
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(1e-6, 2e-4, 4000))
    t = t[t < 0.12]
    pulse = np.where((t >= t_hit) & (t < t_hit + tau), P * np.sin(np.pi * (t - t_hit) / tau), 0.0)
    acc = mt.new_accumulator(0, 0.0, mt.grf_window_steps(h), h)
    out = np.array([ac.accumulate_ground_force(acc, ti, W + fi) for ti, fi in zip(t, pulse)])
    done = out[np.isfinite(out)]
    assert len(done) == int((t[-1] - t[0]) / h)        # one value per completed bin
    n = mt.grf_window_steps(h)                          # the ring fills from zero first
    assert done[n - 1:n + 9] == pytest.approx(W, rel=1e-12) and done[-5:] == pytest.approx(W, rel=1e-12)
    truth = W + 2 * P * tau / (np.pi * T)
    assert done.max() == pytest.approx(truth, rel=3e-4 * (truth - W) / truth + 1e-9)
    acc_off = mt.new_accumulator(0, 0.0, 0, h)          # no ring: nothing measured
    assert math.isnan(ac.accumulate_ground_force(acc_off, 0.5, W))


def test_cuff_window_counts_an_impact_impulse_over_30_ms():
    # Two attachments, steady forces F_a (N) every step of h; at one step attachment 1 also
    # takes an impact impulse J (N s; its step's mean force J / h). The ring of N = T / h
    # steps then holds F N h + J: the windowed force is F + J / T, whatever h (issue 46:
    # cuff peaks over the ground reaction's window, impacts included).
    for h in (1e-3, 2.5e-4):
        T = mt.GRF_WINDOW
        acc = mt.new_accumulator(0, 0.0, 0, h, 0, n_cuffs=2)
        F = np.array([[30.0, -200.0], [-50.0, 120.0]])
        J = np.array([4.0, 9.0])
        n = mt.grf_window_steps(h)
        out = [ac.push_cuff_impulse(acc, F, h) for _ in range(n)]
        assert out[-1] == pytest.approx(np.hypot(*F[0]), rel=1e-12)          # the larger steady force
        hit = F.copy()
        hit[1] += J / h
        peak = ac.push_cuff_impulse(acc, hit, h)
        assert peak == pytest.approx(np.hypot(*(F[1] + J / T)), rel=1e-12)
        after = [ac.push_cuff_impulse(acc, F, h) for _ in range(n)]           # the impulse leaves the ring
        assert max(after[:n - 1]) == pytest.approx(peak, rel=1e-12)
        assert after[-1] == pytest.approx(np.hypot(*F[0]), rel=1e-12)


def test_binned_continuous_cuff_force_equals_the_ground_reactions_binning():
    # the same continuous vertical force (a steady weight and a half-sine pulse, irregular
    # samples) on one attachment and into the ground-reaction ring: the two windows are one
    # algorithm, so the values agree to rounding; a second attachment carrying a
    # horizontal force only never exceeds its own constant magnitude
    h, W, P, tau, t_hit = 1e-3, 700.0, 5000.0, 0.01, 0.0437
    t = np.cumsum(np.random.default_rng(3).uniform(1e-6, 2e-4, 4000))
    t = t[t < 0.12]
    pulse = np.where((t >= t_hit) & (t < t_hit + tau), P * np.sin(np.pi * (t - t_hit) / tau), 0.0)
    grf_acc = mt.new_accumulator(0, 0.0, mt.grf_window_steps(h), h)
    cuff_acc = mt.new_accumulator(0, 0.0, 0, h, 0, n_cuffs=2)
    grf, cuff = [], []
    for ti, fi in zip(t, pulse):
        grf.append(ac.accumulate_ground_force(grf_acc, ti, W + fi))
        cuff.append(ac.accumulate_cuff_force(cuff_acc, ti, np.array([[0.0, W + fi], [100.0, 0.0]])))
    grf, cuff = np.array(grf), np.array(cuff)
    assert np.array_equal(np.isfinite(grf), np.isfinite(cuff))
    done = np.isfinite(grf)
    n = mt.grf_window_steps(h)
    assert cuff[done][n - 1:] == pytest.approx(grf[done][n - 1:], rel=1e-12)
    assert cuff[done].max() > 1.2 * W                     # the pulse is in it
    off = mt.new_accumulator(0, 0.0, 0, h)                # no attachments: nothing measured
    assert math.isnan(ac.push_cuff_impulse(off, np.zeros((0, 2)), h))
    assert math.isnan(ac.accumulate_cuff_force(off, 0.5, np.zeros((0, 2))))


def person_in_device(contact_model="hard", max_time=3.0):
    """The typical co-design's device on the standing human, held upright by a stiff, well
    damped PD at every human joint: (model, p, x0, mode0, rollout settings, n_cuffs)."""
    from codesign import walking as ev
    from codesign.control import impedance as imp
    from codesign.control import signals as sg
    from codesign.model.anthropometry import human_geometry
    from codesign.model.human import upright_configuration
    from codesign.walking import rollout as ro
    from codesign.walking.rollout_base import attachment_joints, place_on_ground
    from codesign.walking.setup import SITES, build_setup

    settings = ev.WalkSettings.from_dict({"max_time": max_time})
    setup, early, _ = build_setup(ev.typical_codesign_design(settings), settings)
    assert early is None
    model, human = setup.model, human_geometry()
    n = model.n
    joints, rows = [], {}
    for name, body in (("hip", "thigh"), ("knee", "shank"), ("ankle", "foot")):
        joints.append(imp.ActiveJoint(name, sg.constant(0.0), sg.constant(3000.0), sg.constant(600.0)))
        rows[name] = tuple(imp.tree_joint_row(n, model.body_id(f"{body}_{s}")) for s in "rl")
    ctrl = imp.compile_controller(imp.Controller(active=tuple(joints)), n, rows, {},
                                  model.body_id("torso"))
    rs = ro.RolloutSettings(max_time=max_time, contact_model=contact_model)
    p = ro.make_params(model, ctrl, rs, human.hip_height, SITES)
    q, qd, low = place_on_ground(model, upright_configuration(model, human), np.zeros(n))
    x0 = np.concatenate([q, qd])          # upright: the WR loops close at WR angles 0
    mode0, code = ro.initial_modes(x0, p, low)
    return model, p, x0, mode0, rs, attachment_joints(model).shape[0]


@pytest.mark.slow
def test_cuff_forces_of_a_person_standing_in_a_device_carry_its_weight():
    # Free body of the device (every body named wr*): gravity and the forces of the
    # attachment joints (cuffs) only -- its actuators and springs act inside it or as
    # torques. Standing still, the cuffs' forces on the device sum to its weight, upward.
    from codesign.walking import rollout as ro
    from codesign.walking.setup import SITE_NAMES

    model, p, x0, mode0, rs, n_cuffs = person_in_device()
    n = model.n
    # topology 1: a four-bar at the hip (torso, thigh) and one at the knee (thigh, shank),
    # per leg: four attachments a leg
    assert n_cuffs == 8
    r = ro.run(x0, mode0, p, rs)
    assert r.status == "ok", r.message
    assert np.abs(r.x[n:]).max() < 1e-6                      # standing still
    device = sum(model.mass[b] for b, name in enumerate(model.body_names) if name.startswith("wr"))
    assert device > 1.0
    f = p.data.walk.cuff_force                                    # on the device, N (last sample)
    g = model.gravity
    assert f[:, 1].sum() == pytest.approx(device * g, rel=1e-6)
    assert abs(f[:, 0].sum()) <= 1e-6 * device * g
    m = mt.finalize(r.acc, time=r.time, n_joints=6, site_names=SITE_NAMES,
                    total_mass=model.total_mass(), gravity=g)
    assert m["cuff_force_peak"] == pytest.approx(np.hypot(f[:, 0], f[:, 1]).max(), rel=1e-6)
    peaks = [m[f"{s}_force_peak"] for s in SITE_NAMES] + [m["cuff_force_peak"]]
    assert m["interaction_force_peak_bw"] == pytest.approx(max(peaks) / (model.total_mass() * g))
    assert m["grf_peak_bw"] == pytest.approx(1.0, rel=1e-6)
    assert m["foot_slip_fraction"] == 0.0


@pytest.mark.peers
@pytest.mark.slow
def test_an_impacts_cuff_impulses_are_the_devices_momentum_jump():
    # Free body of the device over an impact (no finite force acts in an instant, its
    # actuators act inside it): the impulses its attachments take
    # (rollout_event.impact_cuff_impulses, from RNEA's wrenches and the loop impulses) sum
    # to its linear momentum jump sum_b m_b dv_b, each body's centre-of-mass velocity jump
    # taken here by central differences of its position along the velocity jump. (The
    # single cuffs' share is not unique: the loops are redundant, each solver splits it
    # its own way; the sum is.)
    from codesign.dynamics import contact_event as ct
    from codesign.dynamics.kinematics import body_point_world, forward_kinematics
    from codesign.dynamics.model import make_workspace
    from codesign.walking import rollout_event as re

    model, p, x0, _, _, n_cuffs = person_in_device("hard_event", max_time=0.2)
    m, s, wm = p.model
    w, cw, wd = p.data.work, p.data.contact_work, p.data.walk
    n, c = model.n, model.n_contacts
    x = x0.copy()
    x[n + model.body_id("torso_z")] = -0.5             # m/s: landing, every foot point on the ground
    before = x[n:].copy()
    assert ct.impact(m, w, cw, s, x, np.zeros(c, dtype=np.int64), -1) == 0
    jump = x[n:] - before
    impulse = re.impact_cuff_impulses(m, w, cw, s, c, wm, wd)
    assert impulse.shape == (n_cuffs, 2)
    device = [b for b, name in enumerate(model.body_names) if name.startswith("wr")]
    wk, point, eps = make_workspace(model), np.empty(2), 1e-6
    momentum = np.zeros(2)
    for sign in (1.0, -1.0):
        forward_kinematics(m, x0[:n] + sign * eps * jump, np.zeros(n), wk)
        for b in device:
            body_point_world(wk, b, model.com_xz[b, 0], model.com_xz[b, 1], point)
            momentum += sign * model.mass[b] * point / (2 * eps)
    mass = sum(model.mass[b] for b in device)
    assert abs(momentum[1]) > 0.3 * mass * 0.5                 # the device is stopped, largely
    assert impulse.sum(axis=0) == pytest.approx(momentum, abs=1e-6 * mass * 0.5)
