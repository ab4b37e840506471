"""Hybrid integrator against exact solutions: harmonic oscillator, bouncing ball, Zeno ball.

Two systems only (each system costs one compile of the integrator): an oscillator without
events, and a ball with one guard (the ground), a restitution jump and an optional
second guard (a height threshold) for ordering and refiring checks.
"""

import numba as nb
import numpy as np
import pytest

from codesign.dynamics import hybrid as H

G = 9.81


@nb.njit
def osc_flow(t, x, mode, p, xdot):
    # q'' = -w^2 q
    xdot[0] = x[1]
    xdot[1] = -p[0] * p[0] * x[0]


OSC = H.HybridSystem(osc_flow, H.no_guards, H.no_jump, H.observe_nothing, 0)


@nb.njit
def ball_flow(t, x, mode, p, xdot):
    xdot[0] = x[1]
    xdot[1] = -p[0]


@nb.njit
def ball_guards(t, x, mode, p, g):
    g[0] = x[0]  # ground contact (positive above)
    g[1] = x[0] - p[2]  # falling through the height p[2] (only counted, no state change)


@nb.njit
def ball_jump(t, x, mode, p, k):
    if k == 0:
        x[1] = -p[1] * x[1]
        mode[0] += 1
    else:
        mode[1] += 1
    return 0


@nb.njit
def ball_observe(t, x, mode, p):
    # stop (code 7) once the bounce counter reaches p[3] (if p[3] > 0)
    if p[3] > 0 and mode[0] >= p[3]:
        return 7
    return 0


BALL = H.HybridSystem(ball_flow, ball_guards, ball_jump, ball_observe, 2)


def ball_impacts(z0, e, n):
    """Analytic impact times and speeds of a ball dropped from rest at height z0."""
    v = np.sqrt(2 * G * z0)
    t = [np.sqrt(2 * z0 / G)]
    for i in range(1, n):
        t.append(t[-1] + 2 * e**i * v / G)
    return np.array(t), v * e ** np.arange(1, n + 1)


def ball_height(t, z0, e, n=60):
    """Analytic height at times t (piecewise parabolas between the impacts)."""
    times, speeds = ball_impacts(z0, e, n)
    z = np.empty_like(t)
    for i, ti in enumerate(t):
        j = np.searchsorted(times, ti, side="right")  # impacts at or before ti
        if j == 0:
            z[i] = z0 - 0.5 * G * ti**2
        else:
            tau = ti - times[j - 1]
            z[i] = speeds[j - 1] * tau - 0.5 * G * tau**2
    return z


def test_dopri5_harmonic_oscillator_matches_the_analytic_solution_at_exact_record_times():
    w = 2.0
    rt = np.linspace(0.0, 10.0, 37)  # not aligned with any step
    res = H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, 10.0), (w,), record_times=rt, rtol=1e-13, atol=1e-13)
    assert res.status == H.SUCCESS and res.success
    exact = np.stack([np.cos(w * rt), -w * np.sin(w * rt)], axis=1)
    assert np.abs(res.records - exact).max() <= 1e-10
    assert abs(res.t - 10.0) == 0.0
    assert np.abs(res.x - exact[-1]).max() <= 1e-10
    # the dense output is what samples between steps: far fewer steps than samples
    rt_dense = np.linspace(0.0, 10.0, 2001)
    res = H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, 10.0), (w,), record_times=rt_dense, rtol=1e-13, atol=1e-13)
    assert res.n_steps < 2000
    assert np.abs(res.records[:, 0] - np.cos(w * rt_dense)).max() <= 1e-10


def test_dopri5_error_follows_the_tolerance():
    errs = []
    for tol in (1e-6, 1e-9, 1e-12):
        res = H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, 10.0), (1.0,), rtol=tol, atol=tol)
        errs.append(abs(res.x[0] - np.cos(10.0)))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] <= 1e-10


def fixed_step_error(method, h):
    res = H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, 5.0), (1.0,), method=method, h=h, n_pos=1)
    return abs(res.x[0] - np.cos(5.0)) + abs(res.x[1] + np.sin(5.0))


def test_rk4_converges_with_order_four():
    e1, e2 = fixed_step_error("rk4", 0.05), fixed_step_error("rk4", 0.025)
    assert 3.8 <= np.log2(e1 / e2) <= 4.2


def test_semi_implicit_euler_is_first_order_and_symplectic():
    e1, e2 = fixed_step_error("symplectic_euler", 0.01), fixed_step_error("symplectic_euler", 0.005)
    assert 0.9 <= np.log2(e1 / e2) <= 1.1
    # symplectic: v += -h q; q += h v conserves the modified energy q^2 + v^2 - h q v
    # exactly (the invariant quadratic form of the map), so the true energy oscillates
    # within O(h) and does not drift (here over ~800 periods)
    h = 0.01
    n = 500_000
    rt = np.arange(0, n + 1, 100) * h  # on the grid t0 + i h (the same products)
    res = H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, n * h), (1.0,), record_times=rt,
                         method="symplectic_euler", h=h, n_pos=1)
    q, v = res.records[:, 0], res.records[:, 1]
    modified = q**2 + v**2 - h * q * v
    assert np.abs(modified - 1.0).max() <= 1e-10
    energy = 0.5 * (q**2 + v**2)
    assert np.abs(energy - 0.5).max() <= h  # bounded by O(h) ...
    first, last = energy[: len(energy) // 10], energy[-len(energy) // 10:]
    assert np.abs(last - 0.5).max() <= 1.01 * np.abs(first - 0.5).max()  # ... with no drift


@pytest.mark.parametrize("method,h", [("dopri5", 0.0), ("rk4", 1e-2)])
def test_bouncing_ball_impact_times_and_record_times_are_exact(method, h):
    z0, e = 1.0, 0.8
    rt = np.linspace(0.0, 3.0, 61)
    res = H.solve_hybrid(BALL, [z0, 0.0], [0, 0], (0.0, 3.0), (G, e, -1.0, 0.0), record_times=rt,
                         method=method, h=h, rtol=1e-12, atol=1e-12, event_tol=1e-13)
    assert res.status == H.SUCCESS, res.message
    times, speeds = ball_impacts(z0, e, 40)
    n = len(res.events.t)
    assert n == np.searchsorted(times, 3.0)  # every impact before t = 3 s, no extra one
    assert np.all(res.events.guard == 0)
    assert np.abs(res.events.t - times[:n]).max() <= 1e-10
    assert np.abs(res.events.x_after[:, 1] - speeds[:n]).max() <= 1e-9
    assert np.abs(res.records[:, 0] - ball_height(rt, z0, e)).max() <= 1e-9
    assert np.array_equal(res.record_modes[:, 0], np.searchsorted(times, rt, side="right"))


def test_fixed_step_methods_locate_events_between_grid_points():
    # a 0.1 s step is far coarser than the event precision asked for
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 1.0), (G, 0.8, -1.0, 0.0), method="rk4", h=0.1,
                         event_tol=1e-13)
    times, _ = ball_impacts(1.0, 0.8, 3)
    assert abs(res.events.t[0] - times[0]) <= 1e-12  # RK4 + Hermite are exact on parabolas
    # semi-implicit Euler: located on its own (linear) interpolant; the state is O(h) off
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 1.0), (G, 0.8, -1.0, 0.0),
                         method="symplectic_euler", h=1e-4, n_pos=1)
    assert abs(res.events.t[0] - times[0]) <= 1e-3


def test_two_guards_in_one_step_fire_earliest_first_and_do_not_refire():
    # guard 1 (z = 0.5 on the way down) and guard 0 (ground) both cross within one 1 s step
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 1.0), (G, 0.8, 0.5, 0.0), method="rk4", h=1.0)
    t_half = np.sqrt(2 * 0.5 / G)
    times, _ = ball_impacts(1.0, 0.8, 2)
    assert list(res.events.guard[:2]) == [1, 0]
    assert abs(res.events.t[0] - t_half) <= 1e-12
    assert abs(res.events.t[1] - times[0]) <= 1e-12
    # guard 1 fires once per crossing downward: after the bounce the ball rises only to
    # 0.64 m, so guard 1 fires again on the way down, never twice in a row at one crossing
    t = res.events.t
    assert np.all(np.diff(t) > 1e-3)


def test_simultaneous_crossings_fire_at_the_same_time_in_index_order():
    # guard 1 at height 0 is the ground guard again: both cross at every impact
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 1.5), (G, 0.8, 0.0, 0.0), rtol=1e-12, atol=1e-12)
    times, _ = ball_impacts(1.0, 0.8, 3)
    assert list(res.events.guard) == [0, 1, 0, 1]
    assert np.array_equal(res.events.t[0::2], res.events.t[1::2])
    assert np.abs(res.events.t[0::2] - times[:2]).max() <= 1e-10
    assert list(res.mode) == [2, 2]


def test_a_step_shorter_than_event_tol_fires_only_guards_that_crossed():
    # h = 1e-12 s < event_tol = 1e-10 s: event_tol / h = 100 step fractions, so a guard
    # with no crossing in the step (its root slot still "none") must not count as
    # simultaneous. Guard 1 (height -1 m) is never reached; before the fix it fired, then
    # the ground guard again, and so on at one instant until CHATTERING.
    z0, v0, e = 2e-11, -1.0, 0.8
    res = H.solve_hybrid(BALL, [z0, v0], [0, 0], (0.0, 4e-11), (G, e, -1.0, 0.0), method="rk4",
                         h=1e-12, event_tol=1e-10)
    assert res.success, res.message
    assert list(res.events.guard) == [0]
    assert list(res.mode) == [1, 0]
    t_hit = z0 / -v0   # gravity changes it by ~G t^2 / 2 ~ 1e-21 m: negligible
    assert abs(res.events.t[0] - t_hit) <= 1e-12
    assert abs(res.x[1] - e * (-v0)) <= 1e-9


def test_zeno_ball_stops_with_chattering():
    z0, e = 1.0, 0.5
    res = H.solve_hybrid(BALL, [z0, 0.0], [0, 0], (0.0, 10.0), (G, e, -1.0, 0.0), rtol=1e-12, atol=1e-12,
                         max_transitions=20, chatter_window=0.05)
    assert res.status == H.CHATTERING and not res.success
    assert "chattering" in res.message and "20 transitions" in res.message
    # the accumulation time of the impacts, t_inf = t1 (1 + 2 e / (1 - e))
    t1 = np.sqrt(2 * z0 / G)
    t_inf = t1 * (1 + 2 * e / (1 - e))
    assert t_inf - 0.05 < res.t < t_inf
    times, _ = ball_impacts(z0, e, len(res.events.t))
    assert np.abs(res.events.t - times).max() <= 1e-9


def test_terminal_guard_user_codes_and_max_steps():
    p = (G, 0.8, -1.0, 0.0)
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 10.0), p, terminal=[3, 0])
    assert res.status == H.TERMINAL_EVENT and res.user_code == 0 and len(res.events.t) == 3
    assert abs(res.t - ball_impacts(1.0, 0.8, 3)[0][-1]) <= 1e-10
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 10.0), (G, 0.8, -1.0, 2.0))
    assert res.status == H.TERMINATED and res.user_code == 7 and res.mode[0] == 2
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 10.0), p, method="rk4", h=1e-3, max_steps=100)
    assert res.status == H.MAX_STEPS and "max_steps" in res.message
    assert res.t == pytest.approx(0.1)
    rt = np.array([0.05, 0.5])  # the second sample lies after the stop: left NaN
    res = H.solve_hybrid(BALL, [1.0, 0.0], [0, 0], (0.0, 10.0), p, record_times=rt, method="rk4", h=1e-3,
                         max_steps=100)
    assert np.isfinite(res.records[0]).all() and np.isnan(res.records[1]).all()


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="method"):
        H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, 1.0), (1.0,), method="euler")
    with pytest.raises(ValueError, match="n_pos"):
        H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, 1.0), (1.0,), method="symplectic_euler", h=0.1)
    with pytest.raises(ValueError, match="record_times"):
        H.solve_hybrid(OSC, [1.0, 0.0], [0], (0.0, 1.0), (1.0,), record_times=[0.5, 0.2])
