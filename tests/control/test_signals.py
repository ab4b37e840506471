"""Periodic signals: exact knots, periodicity, monotonicity / no overshoot, C1 continuity,
and agreement with SciPy's PchipInterpolator (same Fritsch-Butland knot derivatives)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.interpolate import PchipInterpolator

from codesign.control import signals as sg

dx_st = st.lists(st.floats(0.05, 1.0), min_size=6, max_size=6)
y_st = st.lists(st.floats(-1.5, 1.5), min_size=5, max_size=5)


def test_differential_knots_thesis_encoding():
    # x_i = sum_{j<=i} dx_j / sum_j dx_j, N + 1 = 5 deltas -> 4 knots
    assert np.allclose(sg.differential_knots([1, 1, 2, 1, 5]), [0.1, 0.2, 0.4, 0.5])
    assert np.allclose(sg.differential_knots([0, 0, 0]), [1 / 3, 2 / 3])


def test_constant_and_step():
    assert np.all(sg.constant(3.5)(np.linspace(-2, 2, 9)) == 3.5)
    s = sg.step(0.2, 0.3, 10.0, -1.0)  # 10 on [0.2, 0.5)
    t = np.array([0.0, 0.19999, 0.2, 0.35, 0.49999, 0.5, 0.9, 1.2, -0.7])
    assert list(s(t)) == [-1, -1, 10, 10, 10, -1, -1, 10, 10]
    w = sg.step(0.8, 0.4, 1.0, 2.0)  # wraps: 1 on [0.8, 1) u [0, 0.2)
    assert list(w(np.array([0.1, 0.1999, 0.2001, 0.5, 0.8, 0.95]))) == [1, 1, 2, 2, 1, 1]
    assert np.all(sg.step(0.3, 1.0, 1.0, 2.0)(np.linspace(0, 1, 11)) == 1.0)
    assert np.all(sg.step(0.3, 0.0, 1.0, 2.0)(np.linspace(0, 1, 11)) == 2.0)


@settings(max_examples=60, deadline=None)
@given(dx_st, y_st)
def test_ppoly_knots_period_and_continuity(dx, y):
    s = sg.ppoly(dx, y)
    assert np.allclose(s(s.x), y, atol=1e-12, rtol=0)                 # exact knots
    t = np.linspace(0.0, 1.0, 401)
    assert np.allclose(s(t), s(t + 1.0), atol=1e-12) and abs(s(0.0) - s(1.0 - 1e-13)) < 1e-9
    # C0 and C1 across every knot (including the wrap): one-sided values and slopes agree
    e = 1e-6
    for xk, mk in zip(s.x, s.slopes):
        assert abs(s(xk - 1e-12) - s(xk)) < 1e-9
        # second-order one-sided differences on each side equal the knot derivative
        d_left = (3 * s(xk) - 4 * s(xk - e) + s(xk - 2 * e)) / (2 * e)
        d_right = (-3 * s(xk) + 4 * s(xk + e) - s(xk + 2 * e)) / (2 * e)
        assert abs(d_left - mk) < 1e-3 * (1 + abs(mk)) and abs(d_right - mk) < 1e-3 * (1 + abs(mk))


@settings(max_examples=60, deadline=None)
@given(dx_st, y_st)
def test_ppoly_no_overshoot_and_monotone(dx, y):
    s = sg.ppoly(dx, y)
    xs = np.append(s.x, s.x[0] + 1.0)
    ys = np.append(s.y, s.y[0])
    for k in range(len(s.x)):
        t = np.linspace(xs[k], xs[k + 1], 200)
        v = s(t)
        lo, hi = min(ys[k], ys[k + 1]), max(ys[k], ys[k + 1])
        assert v.min() >= lo - 1e-12 and v.max() <= hi + 1e-12          # no overshoot
        dv = np.diff(v)
        assert np.all(dv * np.sign(ys[k + 1] - ys[k]) >= -1e-12)       # monotone in between


@settings(max_examples=40, deadline=None)
@given(dx_st, y_st)
def test_ppoly_matches_scipy_pchip_on_periodic_extension(dx, y):
    """Interior pieces of SciPy's pchip on three periods equal our closed signal."""
    s = sg.ppoly(dx, y)
    x3 = np.concatenate([s.x - 1.0, s.x, s.x + 1.0])
    ref = PchipInterpolator(x3, np.tile(s.y, 3))
    t = np.linspace(0.0, 1.0, 500, endpoint=False)
    assert np.allclose(s(t), ref(t), atol=1e-12, rtol=1e-12)


def test_ppoly_repeated_knot_is_a_jump_not_nan():
    s = sg.ppoly([0.0, 0.5, 0.0, 0.5], [1.0, 2.0, 3.0])  # knots 0, 0.5, 0.5
    v = s(np.linspace(0, 1, 101))
    assert np.all(np.isfinite(v)) and v.min() >= 1.0 - 1e-12 and v.max() <= 3.0 + 1e-12


def test_decode_and_names_roundtrip():
    names = sg.parameter_names("ankle.ref", sg.PPOLY, 5)
    assert len(names) == sg.n_parameters(sg.PPOLY, 5) == 11
    assert names[0] == "ankle.ref.dx0" and names[-1] == "ankle.ref.y4"
    s = sg.decode(sg.STEP, [0.1, 0.5, 3.0, 4.0])
    assert s(0.3) == 3.0 and s(0.7) == 4.0
    with pytest.raises(ValueError):
        sg.decode(sg.PPOLY, [1.0] * 10, 5)


def test_table_packs_mixed_signals():
    sigs = [sg.constant(2.0), sg.step(0.0, 0.5, 1.0, 0.0), sg.ppoly([1] * 6, [0, 1, 2, 1, 0])]
    tab = sg.SignalTable.pack(sigs)
    for i, s in enumerate(sigs):
        for p in (0.0, 0.13, 0.5, 0.77, 0.999):
            assert sg.table_value(*tab.arrays(), i, p) == s(p)
