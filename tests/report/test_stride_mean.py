"""The gait-cycle mean of the figures (codesign/report/gait.py, ``stride_mean``): each
walk's own strides from heel strike to heel strike, against a synthetic walk whose strides
and series are known in closed form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from codesign.report.gait import heel_strikes, stride_mean

DT = 1e-3    # s, the records' step


STRIKES = {"r": np.array([0.1, 1.1, 2.3, 3.2, 4.3]), "l": np.array([0.55, 1.6, 2.75, 3.8, 4.7])}   # s


def synthetic_walk(stance=0.6):
    """A table of records every DT: each foot's heel strikes at STRIKES, loaded for the
    first ``stance`` of each stride (unloaded before its first strike and after its last
    stride); the series ``x_<side>`` is the foot's fraction of its stride (0-1) squared."""
    t = np.arange(0.0, 5.0, DT)
    table = {"t_s": t}
    for side, strikes in STRIKES.items():
        k = np.searchsorted(strikes, t, side="right") - 1
        inside = (k >= 0) & (k < len(strikes) - 1)
        kk = np.clip(k, 0, len(strikes) - 2)
        fraction = np.where(inside, (t - strikes[kk]) / (strikes[kk + 1] - strikes[kk]), 0.0)
        table[f"fn_heel_{side}_N"] = np.where(inside & (fraction < stance), 400.0, 0.0)
        table[f"fn_toe_{side}_N"] = np.zeros_like(t)
        table[f"x_{side}"] = fraction ** 2
    return pd.DataFrame(table)


def test_heel_strikes_are_where_the_foot_loads_after_a_swing():
    """Touchdowns after at least MIN_SWING_S (0.2 s) off the ground, the stride metrics'
    rule: the right foot's first (0.1 s after the start, off only that long) is not one, nor
    a toe scuffing the ground for 7 ms in mid-swing (as an assisted muscle walk's does,
    0.23 s before its heel strike)."""
    table = synthetic_walk()
    np.testing.assert_allclose(heel_strikes(table, "r"), STRIKES["r"][1:-1], atol=1.5 * DT)
    np.testing.assert_allclose(heel_strikes(table, "l"), STRIKES["l"][:-1], atol=1.5 * DT)
    t = table["t_s"].to_numpy()
    scuff = (t >= 1.95) & (t < 1.957)              # 0.13 s into the right foot's swing (1.82-2.3 s)
    table.loc[scuff, "fn_toe_r_N"] = 50.0
    np.testing.assert_allclose(heel_strikes(table, "r"), STRIKES["r"][1:-1], atol=1.5 * DT)


@pytest.mark.parametrize("step", [DT, 10 * DT])
def test_the_stride_mean_of_a_phase_series_is_its_value_at_each_bins_centre(step):
    """x = (fraction of the stride)^2 over strides of different lengths, both legs: each
    stride time-normalized (linear between samples) gives centre^2 at each bin's centre,
    to the linear interpolation's error between samples h = step / stride apart (h^2 / 4
    of x'' = 2: 2.5e-5 at 10 ms) and the heel strikes' detection at the records' step
    (a stride's fraction off by up to ~step / stride: 2 x 0.01 at 10 ms, 2e-3 at 1 ms);
    records every 10 ms (the simulate command's) do not make the mean zig-zag between bins."""
    table = synthetic_walk().iloc[::int(round(step / DT))].reset_index(drop=True)
    values = {f"x_{side}": table[f"x_{side}"].to_numpy() for side in "rl"}
    centres, means = stride_mean(table, values, t_from=0.0)
    bound = 2.5 * step / 0.9
    np.testing.assert_allclose(means["x"], centres ** 2, atol=bound)
    assert means["x"][-1] == pytest.approx(centres[-1] ** 2, abs=bound)   # the stride's end, not the next one's start
    assert np.all(np.diff(means["x"]) > 0)                               # as x: rising, no zig-zag


def test_strides_before_the_window_are_left_out():
    table = synthetic_walk()
    values = {f"x_{side}": np.where(table["t_s"] < 2.0, 100.0, table[f"x_{side}"]).astype(float) for side in "rl"}
    _, means = stride_mean(table, values, t_from=2.0)
    assert np.nanmax(means["x"]) < 1.0


def test_the_muscle_figure_draws_a_walk_without_a_stride_in_its_window():
    """A muscle walk that fell before its window (no stride to average): the figure is
    drawn, its shares NaN, no warning turned error."""
    from codesign.model.emg_timing import PERRY
    from codesign.report.gait import muscle_figure, plt

    table = synthetic_walk()
    for e in PERRY:
        for side in "rl":
            table[f"act_{e.group}_{side}"] = 0.1
    fig = muscle_figure(table, t_from=10.0)
    assert len(fig.axes) == len(PERRY)
    assert "nan %" in fig.axes[0].get_title(loc="right")
    plt.close(fig)
