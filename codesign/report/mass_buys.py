"""What mass buys (issue 46 item 5): an assisting design's effort reduction against its
device mass, the non-dominated front and the break-even mass.

Over a run's evaluated designs that walk (the walking verdict of their stored metrics:
10 s, speed within 5 % of the unassisted walk, ...), each design is a point (device mass
``added_mass`` in kg, reduction ``effort_reduction``, a fraction, positive = less effort
with the device). The reduction's metric is a parameter (:func:`mass_points`): today the
active wearer's mechanical-work proxy; the muscle model's ``metabolic_cost``-based
reduction takes its place by name.

* **The front** (:func:`front`): the designs no other design beats on both -- none
  lighter (or as light) with at least as much reduction. Sorted by mass, its reduction
  rises: on the front, mass buys reduction.
* **The break-even mass** (:func:`break_even`): the device mass at which the front's
  reduction reaches zero -- a device of that mass on the front saves what carrying it
  costs. Method: a least-squares line through the front's points, r = a + b m, and
  m0 = -a / b (defined when the slope b > 0, the front rising). Its standard error is the
  delta method's on the fit's covariance (the residual scatter about the line, n - 2
  degrees of freedom; from 3 front points on). Assumptions, stated with the number in
  docs/reports.md: the reduction varies linearly with mass along the front; the front is
  the search's, only as good as what it explored (a longer search moves it up and left);
  evaluations are deterministic, so the scatter is the line's misfit, not noise; m0
  outside the front's mass range is an extrapolation (:attr:`BreakEven.extrapolated`).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

REDUCTION = "effort_reduction"      # default reduction metric (fraction, positive = less effort)
MASS = "added_mass"                 # device mass (kg)


class BreakEven(NamedTuple):
    """The linear fit of the front, r = intercept + slope x mass (r a fraction, mass in kg),
    and where it crosses zero: ``mass_kg`` (NaN where the slope is not > 0 or fewer than 2
    front points), ``mass_se_kg`` its standard error (delta method; NaN with fewer than 3
    points), ``n`` front points, ``extrapolated``: m0 outside the front's mass range."""

    mass_kg: float
    mass_se_kg: float
    slope_per_kg: float
    intercept: float
    n: int
    extrapolated: bool

    def text(self, metric: str = REDUCTION, points: str = "front designs", rising: bool = True) -> str:
        """The break-even in words, with its method: the line through the ``points`` (the
        front's designs; or the masses one design walked, whose line falls: not ``rising``)."""
        if self.n < 2:
            return f"no break-even mass: {self.n} {points} (a line needs 2)"
        line = (f"a least-squares line through the {self.n} {points}, {metric} = "
                f"{100 * self.intercept:+.1f} % {100 * self.slope_per_kg:+.2f} % per kg")
        if not math.isfinite(self.mass_kg):
            return f"no break-even mass: {line} does not {'rise' if rising else 'fall'} with mass"
        se = f" +- {self.mass_se_kg:.2f}" if math.isfinite(self.mass_se_kg) else " (no uncertainty from 2 points)"
        where = f", extrapolated beyond the {points}' masses" if self.extrapolated else ""
        return f"break-even mass {self.mass_kg:.2f}{se} kg{where}: {line}, crosses zero there"


def front(mass: Sequence[float], reduction: Sequence[float]) -> np.ndarray:
    """Indices of the non-dominated points (less mass, more reduction), by increasing
    mass: a point is on it when no other point has mass <= its mass and reduction >= its
    reduction with one of them strictly better. Non-finite points are left out; of equal
    points the first is kept."""
    m, r = np.asarray(mass, dtype=float), np.asarray(reduction, dtype=float)
    keep = np.flatnonzero(np.isfinite(m) & np.isfinite(r))
    order = keep[np.lexsort((-r[keep], m[keep]))]     # by mass, then the larger reduction first
    out, best = [], -math.inf
    for i in order:
        if r[i] > best:
            out.append(i)
            best = r[i]
    return np.asarray(out, dtype=int)


def break_even(mass: Sequence[float], reduction: Sequence[float], rising: bool = True) -> BreakEven:
    """:class:`BreakEven` of points (mass in kg, reduction a fraction): the least-squares
    line r = a + b m, m0 = -a / b when b > 0 (``rising``: a front, where mass buys
    reduction) or b < 0 (not ``rising``: one device carried at several masses, where mass
    costs it; :mod:`codesign.commands.carry`), its standard error
    sqrt(var a + m0^2 var b + 2 m0 cov(a, b)) / |b| from the fit's covariance (residual
    variance over n - 2)."""
    m, r = np.asarray(mass, dtype=float), np.asarray(reduction, dtype=float)
    n = len(m)
    if n < 2 or np.ptp(m) == 0.0:
        return BreakEven(math.nan, math.nan, math.nan, math.nan, n, False)
    mean_m, mean_r = m.mean(), r.mean()
    sxx = float(np.sum((m - mean_m) ** 2))
    b = float(np.sum((m - mean_m) * (r - mean_r))) / sxx
    a = float(mean_r - b * mean_m)
    if not (b > 0.0 if rising else b < 0.0):
        return BreakEven(math.nan, math.nan, b, a, n, False)
    m0 = -a / b
    se = math.nan
    if n >= 3:
        s2 = float(np.sum((r - a - b * m) ** 2)) / (n - 2)      # residual variance
        var_a, var_b, cov_ab = s2 * (1.0 / n + mean_m ** 2 / sxx), s2 / sxx, -s2 * mean_m / sxx
        se = math.sqrt(max(var_a + m0 * m0 * var_b + 2 * m0 * cov_ab, 0.0)) / abs(b)
    return BreakEven(float(m0), float(se), float(b), float(a), n, not m.min() <= m0 <= m.max())


def mass_points(metrics: pd.DataFrame, walks: Sequence[bool], reduction: str = REDUCTION,
                mass: str = MASS) -> pd.DataFrame:
    """The designs that walk with both metrics finite: columns ``eval`` (kept from
    ``metrics``), ``mass [kg]``, ``reduction [%]`` (of the metric ``reduction``), ``front``
    (on the non-dominated front), sorted by mass. ``metrics``: one row per evaluation
    (``eval``, the two metrics); ``walks``: each row's walking verdict."""
    if reduction not in metrics or mass not in metrics:
        return pd.DataFrame(columns=["eval", "mass [kg]", "reduction [%]", "front"])
    rows = metrics[np.asarray(walks, dtype=bool)]
    m = pd.to_numeric(rows[mass], errors="coerce").to_numpy(dtype=float)
    r = pd.to_numeric(rows[reduction], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(m) & np.isfinite(r)
    out = pd.DataFrame({"eval": rows["eval"].to_numpy()[ok], "mass [kg]": m[ok], "reduction [%]": 100.0 * r[ok]})
    on = np.zeros(len(out), dtype=bool)
    on[front(out["mass [kg]"], out["reduction [%]"])] = True
    return out.assign(front=on).sort_values(["mass [kg]", "reduction [%]"], ascending=[True, False],
                                            ignore_index=True)


def front_break_even(points: pd.DataFrame) -> BreakEven:
    """:func:`break_even` of :func:`mass_points`' front (reduction back to a fraction)."""
    on = points[points["front"]]
    return break_even(on["mass [kg]"].to_numpy(dtype=float), on["reduction [%]"].to_numpy(dtype=float) / 100.0)


def draw_fit(ax, fit: BreakEven, low: float, high: float, label: str) -> None:
    """On ``ax`` (reduction in % against mass in kg): the fitted line from ``low`` to
    ``high`` kg, widened to reach the break-even mass (dashed), the break-even mass (red)
    and its +- standard error (shaded); nothing of what the fit does not define."""
    if math.isfinite(fit.slope_per_kg):
        if math.isfinite(fit.mass_kg):
            low, high = min(low, fit.mass_kg), max(high, fit.mass_kg)
        xs = np.linspace(low, high, 50)
        ax.plot(xs, 100.0 * (fit.intercept + fit.slope_per_kg * xs), "--", color="tab:blue", label=label)
    if math.isfinite(fit.mass_kg):
        ax.axvline(fit.mass_kg, color="tab:red", lw=1.2, label=f"break-even {fit.mass_kg:.1f} kg")
        if math.isfinite(fit.mass_se_kg):
            ax.axvspan(fit.mass_kg - fit.mass_se_kg, fit.mass_kg + fit.mass_se_kg, color="tab:red", alpha=0.12)


def mass_figure(points: pd.DataFrame, fit: BreakEven, metric: str = REDUCTION) -> Figure:
    """Reduction (%) against device mass (kg): every walking design (grey), the front
    (black, joined), the fitted line over the front's masses and out to the break-even
    mass (dashed), the break-even mass (red, its +- standard error shaded), zero (thin)."""
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    rest, on = points[~points["front"]], points[points["front"]]
    ax.scatter(rest["mass [kg]"], rest["reduction [%]"], s=14, color="0.65", label="designs that walk")
    ax.plot(on["mass [kg]"], on["reduction [%]"], "o-", color="black", ms=5, label="front (less mass, more reduction)")
    ax.axhline(0.0, color="0.4", lw=0.8)
    if len(on):
        draw_fit(ax, fit, on["mass [kg]"].min(), on["mass [kg]"].max(), "linear fit of the front")
    ax.set_xlabel("device mass (added_mass) [kg]")
    ax.set_ylabel(f"{metric} [%] (positive: less effort)")
    ax.set_title("What mass buys: reduction against device mass")
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
