"""Geyer & Herr 2010's reflex controller (codesign/control/reflex.py) against truths written
out here: delayed reads against the values pushed that many steps before, each law against
its formula evaluated by hand with the published numbers, the clip, the stance/swing switch
with the contralateral load, and two closed loops on muscles held still -- the soleus's
positive force feedback and the ankle torque of a standing leg -- against fixed points of
the paper's static muscle balance found here with brentq."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from codesign.control import reflex as R
from codesign.errors import UserError
from codesign.model.muscle_table import MUSCLES, NAMES, muscle_table
from codesign.model.muscles import GEYER_HERR_2010

BW = 80.0 * R.STANDARD_GRAVITY
DELAYS = R.GEYER_HERR_2010_DELAYS


def params(**changes):
    return R.reflex_params(80.0, **changes)


# --------------------------------------------------------------------------- delays
@pytest.mark.parametrize("h, expected", [(1e-3, (20, 10, 5, 0)), (5e-4, (40, 20, 10, 0))])
def test_delays_are_whole_steps(h, expected):
    assert tuple(R.delay_steps(DELAYS, h)) == expected


@pytest.mark.parametrize("h", [1e-3, 5e-4])
def test_a_delayed_read_returns_the_value_pushed_that_many_steps_before(h):
    steps = R.delay_steps(DELAYS._replace(contact=0.003), h)
    hist = R.signal_history(steps)
    f = np.zeros((2, 7))
    lce = np.zeros((2, 7))
    zero2 = np.zeros(2)
    written = []
    for k in range(3 * hist.buf.shape[0] + 7):      # wraps the ring several times
        value = 1.0 + 0.5 * k
        f[:] = value
        lce[:] = -value
        R.write_signals(hist, f, lce, zero2 + 2 * value, zero2 + 3 * value, zero2 + 4 * value, 5 * value, 6 * value)
        written.append(value)
        if k < max(steps):
            continue
        for n in (steps.long, steps.medium, steps.short, steps.contact, 0):
            v = written[-1 - n]
            assert R.history_read(hist, R.COL_FORCE + R.SOL, n) == v
            assert R.history_read(hist, R.PER_LEG + R.COL_LCE + R.HFL, n) == -v
            assert R.history_read(hist, R.COL_KNEE, n) == 2 * v
            assert R.history_read(hist, R.PER_LEG + R.COL_LOAD, n) == 4 * v
            assert R.history_read(hist, R.COL_TRUNK_RATE, n) == 6 * v
    # in time: the long delay looks back exactly 20 ms
    assert steps.long * h == pytest.approx(0.020, abs=1e-15)


@pytest.mark.parametrize("delays, h, name", [(DELAYS._replace(short=0.0045), 1e-3, "short"),
                                             (DELAYS, 1.5e-3, "long"),
                                             (DELAYS._replace(contact=0.0002), 5e-4, "contact")])
def test_a_delay_that_is_not_a_multiple_of_the_step_is_refused(delays, h, name):
    with pytest.raises(UserError) as err:
        R.delay_steps(delays, h)
    message = str(err.value)
    assert "\n" not in message and f"the {name} delay" in message and "multiple of h" in message


def test_bad_parameters_are_refused_in_one_line():
    for call in (lambda: R.reflex_params(-1.0), lambda: params(g_sool=1.0), lambda: params(stim_min=0.5, stim_max=0.4),
                 lambda: params(k_p=float("nan")), lambda: R.delay_steps(DELAYS, 0.0)):
        with pytest.raises(UserError) as err:
            call()
        assert "\n" not in str(err.value)


def test_every_parameter_has_a_source():
    names = {row.name for row in R.PARAMETER_SOURCES}
    assert names | {"body_weight"} == set(R.ReflexParams._fields)
    assert all(row.source and row.unit for row in R.PARAMETER_SOURCES + R.DELAY_SOURCES)
    assert tuple(row.value for row in R.DELAY_SOURCES) == tuple(DELAYS)


# --------------------------------------------------------------------------- the laws by hand
def law(p, stance, trailing=(0, 0), theta_to=(0.0, 0.0), f=None, lce=None, knee=(3.0, 3.0), knee_rate=(0.0, 0.0),
        load=(0.0, 0.0), trunk=0.105, trunk_rate=0.0):
    out = np.zeros((2, 7))
    f = np.zeros((2, 7)) if f is None else f
    lce = np.ones((2, 7)) if lce is None else lce
    a = lambda x, t=np.float64: np.asarray(x, dtype=t)  # noqa: E731
    R.reflex_stimulations(p, a(stance, np.int64), a(trailing, np.int64), a(theta_to), f, lce, a(knee), a(knee_rate),
                          a(load), trunk, trunk_rate, out)
    return out


def test_stance_laws_by_hand():
    f = np.zeros((2, 7))
    lce = np.ones((2, 7))
    f[0, [R.SOL, R.GAS, R.VAS]] = 0.3, 0.2, 0.25
    lce[0, R.TA] = 0.95
    knee_off = 2.97
    out = law(params(), stance=(1, 1), f=f, lce=lce, knee=(knee_off + 0.05, 3.0), knee_rate=(0.4, 0.0),
              load=(0.8 * BW, 0.2 * BW), trunk=0.2, trunk_rate=0.1)
    s = out[0]
    assert s[R.SOL] == pytest.approx(0.01 + 1.2 * 0.3)                       # F+ SOL
    assert s[R.TA] == pytest.approx(0.01 + 1.1 * (0.95 - 0.71) - 0.3 * 0.3)  # L+ TA, SOL inhibition
    assert s[R.GAS] == pytest.approx(0.01 + 1.1 * 0.2)                       # F+ GAS
    assert s[R.VAS] == pytest.approx(0.09 + 1.15 * 0.25 - 2.0 * 0.05)        # F+ VAS, knee over-extension
    u = 1.91 * (0.2 - 0.105) + 0.25 * 0.1                                    # trunk PD, leaning forward
    assert s[R.HAM] == pytest.approx(0.05 + u * 1.2 * 0.8)
    assert s[R.GLU] == pytest.approx(0.05 + (0.68 * 1.91 * (0.2 - 0.105) + 0.25 * 0.1) * 1.2 * 0.8)
    assert s[R.HFL] == pytest.approx(0.05)                                   # [-u]+ = 0
    # leaning back: the hip flexors act, the extensors rest at S0_BAL
    back = law(params(), stance=(1, 1), load=(0.5 * BW, 0.5 * BW), trunk=0.0, trunk_rate=-0.2)[1]
    u = 1.91 * (0.0 - 0.105) + 0.25 * (-0.2)
    assert back[R.HFL] == pytest.approx(0.05 - u * 1.2 * 0.5)
    assert back[R.HAM] == pytest.approx(0.05) and back[R.GLU] == pytest.approx(0.05)
    # flexing knee (rate < 0) or below phi_k,off: no over-extension term
    assert law(params(), stance=(1, 1), f=f, knee=(knee_off + 0.05, 3.0),
               knee_rate=(-0.4, 0.0))[0, R.VAS] == pytest.approx(0.09 + 1.15 * 0.25)


def test_trailing_leg_of_double_support_by_hand():
    f = np.zeros((2, 7))
    f[1, R.VAS] = 0.4
    out = law(params(), stance=(1, 1), trailing=(0, 1), f=f, load=(0.25 * BW, 0.75 * BW), trunk=0.105)
    s = out[1]
    assert s[R.VAS] == pytest.approx(0.09 + 1.15 * 0.4 - 1.2 * 0.25)   # the contralateral load
    assert s[R.GLU] == 0.01                                             # 0.05 - 0.25, clipped
    assert s[R.HFL] == pytest.approx(0.05 + 0.25)
    lead = out[0]                                                       # the leading leg: no swing initiation
    assert lead[R.VAS] == pytest.approx(0.09) and lead[R.HFL] == pytest.approx(0.05)


def test_trailing_leg_without_its_balance_reflexes_by_hand():
    """trail_balance = 0 (SCONE's Liftoff state): leaning forward in double support, the
    trailing leg's HAM, GLU and HFL take no trunk PD -- S0_BAL and Delta_S alone -- while
    the leading leg's keep Appendix I's, weighted by its load; with 1, the trailing leg's
    PD is the paper's."""
    u = 1.91 * (0.5 - 0.105) + 0.25 * 0.1                               # leaning forward
    u_glu = 0.68 * 1.91 * (0.5 - 0.105) + 0.25 * 0.1
    loads = (0.6 * BW, 0.4 * BW)                                        # right leading, left trailing
    off = law(params(trail_balance=0.0), stance=(1, 1), trailing=(0, 1), load=loads, trunk=0.5, trunk_rate=0.1)
    assert off[1, R.HAM] == pytest.approx(0.05)
    assert off[1, R.GLU] == 0.01                                        # 0.05 - 0.25, clipped
    assert off[1, R.HFL] == pytest.approx(0.05 + 0.25)
    assert off[0, R.HAM] == pytest.approx(0.05 + u * 1.2 * 0.6)
    assert off[0, R.GLU] == pytest.approx(0.05 + u_glu * 1.2 * 0.6)
    paper = law(params(), stance=(1, 1), trailing=(0, 1), load=loads, trunk=0.5, trunk_rate=0.1)
    assert paper[1, R.HAM] == pytest.approx(0.05 + u * 1.2 * 0.4)
    assert paper[1, R.GLU] == pytest.approx(0.05 + u_glu * 1.2 * 0.4 - 0.25)
    np.testing.assert_array_equal(paper[0], off[0])


def test_swing_laws_by_hand():
    f = np.zeros((2, 7))
    lce = np.ones((2, 7))
    f[0, [R.SOL, R.GAS, R.VAS, R.HAM, R.GLU]] = 0.5, 0.5, 0.5, 0.3, 0.2
    lce[0, [R.TA, R.HFL, R.HAM]] = 0.8, 0.9, 0.88
    s = law(params(), stance=(0, 1), theta_to=(0.2, 0.0), f=f, lce=lce, trunk=0.3)[0]
    assert s[R.SOL] == s[R.GAS] == s[R.VAS] == pytest.approx(0.01)     # off in swing, whatever their force
    assert s[R.TA] == pytest.approx(0.01 + 1.1 * (0.8 - 0.71))         # no SOL inhibition in swing
    assert s[R.HAM] == pytest.approx(0.01 + 0.65 * 0.3)
    assert s[R.GLU] == pytest.approx(0.01 + 0.4 * 0.2)
    assert s[R.HFL] == pytest.approx(0.01 + 1.15 * (0.2 - 0.105) + 0.35 * (0.9 - 0.6) - 4.0 * (0.88 - 0.85))
    # the length feedbacks are linear (Appendix I): a hamstring shorter than l_off,HAM adds to HFL
    lce[0, R.HAM] = 0.80
    s = law(params(), stance=(0, 1), theta_to=(0.105, 0.0), f=f, lce=lce)[0]
    assert s[R.HFL] == pytest.approx(0.01 + 0.35 * (0.9 - 0.6) + 4.0 * (0.85 - 0.80))


def test_stimulations_are_clipped_to_their_bounds():
    f = np.full((2, 7), 5.0)
    s = law(params(), stance=(1, 0), f=f, load=(BW, 0.0), trunk=2.0)
    assert s[0, R.SOL] == 1.0 and s[0, R.GAS] == 1.0 and s[0, R.HAM] == 1.0
    assert s[0, R.TA] == 0.01                                          # 0.01 - 0.3 * 5 < 0.01
    assert s[1, R.HFL] == 0.01                                         # 0.01 - 4 (l_HAM - 0.85)+ ... < 0.01 at l = 1
    assert np.all((s >= 0.01) & (s <= 1.0))
    s = law(params(stim_min=0.02, stim_max=0.5), stance=(1, 0), f=f, load=(BW, 0.0), trunk=2.0)
    assert s.min() == 0.02 and s.max() == 0.5


# --------------------------------------------------------------------------- delays through the step
def run_signals(p, steps, rows):
    """Push each row (load0, load1, trunk, trunk_rate, vas_force0) and run the controller;
    returns the stimulations and the memory after each step."""
    hist = R.signal_history(steps)
    mem = R.reflex_memory(p.theta_ref)
    out = np.zeros((2, 7))
    f = np.zeros((2, 7))
    lce = np.ones((2, 7))
    lce[:, [R.TA, R.HFL, R.HAM]] = 0.71, 0.60, 0.85   # every length feedback at its offset
    stims, states = [], []
    for k, (l0, l1, trunk, rate, vas) in enumerate(rows):
        f[0, R.VAS] = vas
        R.write_signals(hist, f, lce, np.full(2, 3.0), np.zeros(2), np.array([l0, l1]), trunk, rate)
        if k == 0:
            R.history_fill(hist)
        R.reflex_control_step(p, steps, hist, mem, out)
        stims.append(out.copy())
        states.append((mem.stance.copy(), mem.trailing.copy(), mem.theta_to.copy()))
    return stims, states


@pytest.mark.parametrize("h", [1e-3, 5e-4])
def test_trunk_pd_reads_the_trunk_with_the_short_delay(h):
    p = params()
    steps = R.delay_steps(DELAYS, h)
    n = 60
    trunk = [0.105 + 0.002 * k for k in range(n)]
    rate = [0.3 - 0.01 * k for k in range(n)]
    stims, _ = run_signals(p, steps, [(0.9 * BW, 0.0, trunk[k], rate[k], 0.0) for k in range(n)])
    for k in range(steps.short, n):
        j = k - steps.short                                   # exactly 5 ms before
        u = 1.91 * (trunk[j] - 0.105) + 0.25 * rate[j]
        assert stims[k][0, R.HAM] == pytest.approx(0.05 + max(u, 0.0) * 1.2 * 0.9, rel=1e-12)


@pytest.mark.parametrize("h", [1e-3, 5e-4])
def test_stance_swing_switch_with_the_contralateral_load(h):
    """Leg 0 stands; leg 1 lands at step `land` and leg 0 becomes the trailing leg, its VAS
    inhibited by leg 1's load read 5 ms before; leg 0 lifts off at step `off` and swings
    with the trunk lean it saw 5 ms before. The switches lag the loads by the contact delay."""
    p = params()
    steps = R.delay_steps(DELAYS._replace(contact=0.002), h)
    c = steps.contact
    n, land, off = 200, 60, 140
    rows = []
    for k in range(n):
        l1 = 0.0 if k < land else (0.2 + 0.8 * min(1.0, (k - land) / 40)) * BW
        l0 = BW if k < off else 0.0
        rows.append((l0, l1, 0.105 + 0.001 * k, 0.0, 0.2))
    stims, states = run_signals(p, steps, rows)
    load1 = [r[1] for r in rows]
    for k in range(n):
        stance, trailing, theta_to = states[k]
        assert stance[1] == (1 if k >= land + c else 0)
        assert stance[0] == (1 if k < off + c else 0)
        assert trailing[0] == (1 if land + c <= k < off + c else 0)
        assert trailing[1] == 0
        s = stims[k][0]
        if land + c <= k < off + c:       # trailing: the contralateral load at the short delay
            expected = 0.09 + 1.15 * 0.2 - 1.2 * load1[k - steps.short] / BW
            assert s[R.VAS] == pytest.approx(min(max(expected, 0.01), 1.0), rel=1e-12)
            assert s[R.HFL] == pytest.approx(0.05 + 0.25 + max(-1.91 * 0.001 * (k - steps.short), 0.0) * 1.2)
        elif k < land + c:
            assert s[R.VAS] == pytest.approx(0.09 + 1.15 * 0.2)
        else:                             # swing: theta_TO is the trunk 5 ms before the switch
            assert theta_to[0] == pytest.approx(0.105 + 0.001 * (off + c - steps.short))
            assert s[R.VAS] == pytest.approx(0.01)
            assert s[R.HFL] == pytest.approx(0.01 + 1.15 * 0.001 * (off + c - steps.short))


# --------------------------------------------------------------------------- closed loops on muscles held still
W, C_FL = 0.56, math.log(0.05)
SPECS = dict(zip(NAMES, MUSCLES))


def paper_mtu_length(spec, phi):
    """l_mtu (m) at the paper's angles phi = (ankle, knee, hip), from the paper's geometry."""
    length = spec.l_opt + spec.l_slack
    for a in spec.attachments:
        if math.isnan(a.phi_max):
            length += a.direction * a.rho * a.r0 * (phi[a.joint] - a.phi_ref)
        else:
            length += a.direction * a.rho * a.r0 * (math.sin(phi[a.joint] - a.phi_max) - math.sin(a.phi_ref - a.phi_max))
    return length


def static_balance(spec, act, l_mtu):
    """(F_se / F_max, l_ce / l_opt) of the paper's MTU held still at l_mtu under activation
    act: F_se(l_mtu - l_ce) = A F_max f_l + F_pe - F_be at v = 0, by brentq."""
    lo = spec.l_opt

    def tendon(l_ce):
        eps = (l_mtu - l_ce - spec.l_slack) / spec.l_slack
        return (eps / 0.04) ** 2 if eps > 0 else 0.0

    def ce(l_ce):
        x = l_ce / lo
        fl = math.exp(C_FL * abs((x - 1) / W) ** 3)
        pe = ((x - 1) / W) ** 2 if x > 1 else 0.0
        be = ((1 - W - x) / (W / 2)) ** 2 if x < 1 - W else 0.0
        return act * fl + pe - be

    l_ce = brentq(lambda x: tendon(x) - ce(x), 0.05 * lo, l_mtu - spec.l_slack, xtol=1e-15)
    return tendon(l_ce), l_ce / lo


def reflex_fixed_point(stim_of):
    """The smallest activation A in [0.01, 1] with A = stim_of(A) (a loop started from rest
    climbs to it), or 1 where the clipped loop saturates."""
    grid = np.linspace(0.01, 1.0, 400)
    h = [stim_of(a) - a for a in grid]
    for a0, a1, h0, h1 in zip(grid, grid[1:], h, h[1:]):
        if h0 >= 0.0 > h1:
            return brentq(lambda a: stim_of(a) - a, a0, a1, xtol=1e-14)
    return 1.0


POSTURE = np.array([math.radians(80.0), math.radians(170.0), math.pi])   # paper's (ankle, knee, hip)


def stand(p, h=1e-3, seconds=2.0):
    """Both legs loaded at POSTURE, held still, trunk at theta_ref: the controller and the
    muscles run together for `seconds`; returns the muscles and the last torques."""
    table = muscle_table()
    steps = R.delay_steps(DELAYS, h)
    phi = np.array([POSTURE, POSTURE])
    rates = np.zeros((2, 3))
    load = np.array([0.5 * BW, 0.5 * BW])
    hist, mem, mus = R.reflex_start(table, GEYER_HERR_2010, p, steps, h, phi, rates, load, p.theta_ref, 0.0)
    torque = np.zeros((2, 3))
    for _ in range(int(round(seconds / h))):
        R.reflex_muscle_step(table, GEYER_HERR_2010, p, steps, hist, mem, mus, h, phi, rates, load, p.theta_ref, 0.0,
                             torque)
    return table, mus, torque


@pytest.mark.parametrize("g_sol", [0.5, 1.2])
def test_soleus_positive_force_feedback_reaches_its_fixed_point(g_sol):
    """SOL isometric (ankle at its phi_ref) under S = 0.01 + G f(t - 20 ms). At G = 0.5 the
    loop gain G df/dA at rest is below 1 and the loop settles just above rest; at the
    paper's G = 1.2 it exceeds 1 and the force grows until the tendon's stretch, shortening
    the CE down its force-length curve, brings the gain below 1: a high fixed point. Either
    is the smallest A = clip(0.01 + G f_eq(A)), f_eq from the paper's static balance."""
    sol = SPECS["SOL"]
    l_mtu = paper_mtu_length(sol, POSTURE)
    assert l_mtu == pytest.approx(sol.l_opt + sol.l_slack)
    f_of = lambda a: static_balance(sol, a, l_mtu)[0]  # noqa: E731
    a_star = reflex_fixed_point(lambda a: min(max(0.01 + g_sol * f_of(a), 0.01), 1.0))
    gain_at_rest = g_sol * (f_of(0.02) - f_of(0.01)) / 0.01
    if g_sol == 1.2:
        assert gain_at_rest > 1.0 and a_star > 0.5
    else:
        assert gain_at_rest < 1.0 and a_star < 0.05
    table, mus, _ = stand(params(g_sol=g_sol), seconds=10.0)   # near the high point the loop gain is ~0.8: slow
    for leg in range(2):
        assert mus.act[leg, R.SOL] == pytest.approx(a_star, rel=1e-6)
        assert mus.f_se[leg, R.SOL] / sol.f_max == pytest.approx(f_of(a_star), rel=1e-6)


def test_standing_ankle_torque_equals_the_hand_computation():
    """At a static stance posture (trunk at theta_ref) the ankle muscles' loops settle
    independently of the hip and knee: SOL and GAS on their own force feedback, TA on its
    length feedback less SOL's inhibition. Their fixed points from the static balance give
    the ankle torque sum -d r0 cos(phi - phi_max) F by hand."""
    p = params(g_sol=0.5, g_gas=0.6)
    steady = {}
    for name, gain in (("SOL", 0.5), ("GAS", 0.6)):
        spec = SPECS[name]
        l_mtu = paper_mtu_length(spec, POSTURE)
        a = reflex_fixed_point(lambda a, s=spec, g=gain, l=l_mtu: min(max(0.01 + g * static_balance(s, a, l)[0], 0.01), 1.0))
        steady[name] = static_balance(spec, a, l_mtu)[0] * spec.f_max
    ta = SPECS["TA"]
    l_mtu = paper_mtu_length(ta, POSTURE)
    f_sol = steady["SOL"] / SPECS["SOL"].f_max

    def ta_stim(a):
        lce = static_balance(ta, a, l_mtu)[1]
        return min(max(0.01 + 1.1 * (lce - 0.71) - 0.3 * f_sol, 0.01), 1.0)

    steady["TA"] = static_balance(ta, reflex_fixed_point(ta_stim), l_mtu)[0] * ta.f_max
    ankle = 0.0
    for name in ("SOL", "TA", "GAS"):
        a = SPECS[name].attachments[0]
        ankle += -a.direction * a.r0 * math.cos(POSTURE[0] - a.phi_max) * steady[name]
    table, mus, torque = stand(p)
    for leg in range(2):
        for name in ("SOL", "TA", "GAS"):
            assert mus.f_se[leg, NAMES.index(name)] == pytest.approx(steady[name], rel=1e-6)
        assert torque[leg, 0] == pytest.approx(ankle, rel=1e-6)
    assert ankle > 0.0                      # the plantarflexors win: the leg pushes on the ground
