"""What mass buys (issue 46 item 5): the non-dominated front of (device mass, reduction)
and the break-even mass of its linear fit, against hand-made points with known answers,
and the report's figure on a small stored run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from codesign.report.mass_buys import break_even, front, front_break_even, mass_points


def test_the_front_keeps_exactly_the_designs_nothing_lighter_beats():
    #         0    1    2    3    4    5    6        7    8
    mass = [10., 8.0, 12., 9.0, 12., 8.0, 11., math.nan, 7.0]
    red = [.10, .05, .20, .04, .15, .02, .10, 0.5, -.30]
    # by hand: 8 (lightest), 1 (8 kg beats 8 kg at .02 and 9 kg at .04), 0 (10 kg .10; 11 kg
    # .10 is no better), 2 (12 kg .20; 12 kg .15 is not); the NaN point is left out
    assert front(mass, red).tolist() == [8, 1, 0, 2]
    # equal points: the first is kept
    assert front([1.0, 1.0], [0.1, 0.1]).tolist() == [0]
    assert front([], []).tolist() == []


def test_the_break_even_of_a_straight_front_is_where_it_crosses_zero():
    # r = -0.3 + 0.05 m: zero at 6 kg, exact (no scatter: no uncertainty)
    m = np.array([2.0, 4.0, 8.0, 10.0])
    fit = break_even(m, -0.3 + 0.05 * m)
    assert fit.mass_kg == pytest.approx(6.0, abs=1e-12) and fit.mass_se_kg == pytest.approx(0.0, abs=1e-9)
    assert fit.slope_per_kg == pytest.approx(0.05) and fit.intercept == pytest.approx(-0.3)
    assert fit.n == 4 and not fit.extrapolated
    # beyond the front's masses: an extrapolation, said so
    assert break_even(m, 0.1 + 0.05 * m).extrapolated
    # two points: the line through them, no uncertainty
    two = break_even([4.0, 8.0], [-0.1, 0.1])
    assert two.mass_kg == pytest.approx(6.0) and math.isnan(two.mass_se_kg)
    # a front that does not rise, or one mass only: no break-even
    assert math.isnan(break_even([4.0, 8.0], [0.1, 0.1]).mass_kg)
    assert math.isnan(break_even([4.0], [0.1]).mass_kg) and "a line needs 2" in break_even([4.0], [0.1]).text()


def test_the_break_even_uncertainty_is_the_delta_method_on_the_fit():
    """Scattered points: the line and its covariance from numpy's polyfit (another
    implementation), and the standard error of m0 = -a/b by the delta method, by hand; and
    a Monte-Carlo check that the standard error is the spread of m0 over refits."""
    m = np.array([3.0, 5.0, 6.0, 8.0, 11.0])
    r = np.array([-0.21, -0.08, -0.06, 0.05, 0.18])
    fit = break_even(m, r)
    (b, a), cov = np.polyfit(m, r, 1, cov=True)       # polyfit's cov: residual variance / (n - 2)
    m0 = -a / b
    grad = np.array([a / b**2, -1.0 / b])             # d m0 / d(b, a)
    se = math.sqrt(grad @ cov @ grad)
    assert fit.mass_kg == pytest.approx(m0, rel=1e-10) and fit.mass_se_kg == pytest.approx(se, rel=1e-8)
    rng = np.random.default_rng(0)
    sigma = math.sqrt(np.sum((r - (a + b * m)) ** 2) / (len(m) - 2))
    draws = [break_even(m, a + b * m + rng.normal(0.0, sigma, len(m))).mass_kg for _ in range(4000)]
    assert np.std(draws) == pytest.approx(fit.mass_se_kg, rel=0.1)


def test_mass_points_takes_the_designs_that_walk_and_marks_the_front():
    metrics = pd.DataFrame({"eval": ["0:0", "0:1", "0:2", "0:3"], "added_mass": [5.0, 4.0, 6.0, 3.0],
                            "effort_reduction": [0.10, 0.12, 0.20, math.nan],
                            "metabolic_reduction": [0.2, 0.1, 0.3, 0.0]})
    points = mass_points(metrics, [True, True, False, True])
    assert points["eval"].tolist() == ["0:1", "0:0"] and points["front"].tolist() == [True, False]
    assert points["reduction [%]"].tolist() == pytest.approx([12.0, 10.0])
    # the reduction's metric is a parameter (the muscle model's reduction later)
    other = mass_points(metrics, [True] * 4, reduction="metabolic_reduction")
    assert other["front"].tolist() == [True, True, True, True]
    assert front_break_even(other).mass_kg == pytest.approx(3.0)    # r = 0.1 (m - 3)
    assert mass_points(metrics, [True] * 4, reduction="nothing").empty


TINY_ASSIST = """name = "tiny-assist"
seed = 3219
[problem]
name = "exo_assist"
[optimizer]
algorithm = "mmpso"
particles = 4
iterations = 1
[freeze.pools]
subspace = "t02_a2-3"
[space]
start_designs = "{root}/studies/active-wearer/assist-light-start.json"
start_spread = 0.02
[evaluation]
max_time = 0.6
wearer_design = "{root}/studies/human-like-gait/human-balance-3-best.json"
initial_state = "gait"
[execution]
mode = "serial"
"""


def test_the_report_of_an_assisting_run_draws_what_mass_buys(tmp_path):
    """A small exo_assist run: the report writes mass_buys.png and mass_buys.csv, whose rows
    are the stored evaluations that walk (the walking verdict of their stored metrics), with
    their stored mass and reduction, the front marked by the definition checked pairwise."""
    from pathlib import Path

    from codesign.problems import get_problem
    from codesign.problems.verdict import run_verdict
    from codesign.report.build import build_report
    from codesign.run.driver import start_run
    from codesign.run.spec import parse_spec
    from codesign.run.store import open_run

    root = Path(__file__).resolve().parents[2]
    spec = parse_spec(TINY_ASSIST.format(root=root))
    run = start_run(spec, results=tmp_path, progress=False)
    out = build_report(run.parent, tmp_path / "report", gait=False, robustness=0)
    with open_run(run, readonly=True) as store:
        metrics = store.metrics(wide=True)
        evaluations = store.evaluations()
    verdict = run_verdict(get_problem("exo_assist"), spec.evaluation)
    rows = []
    for row in metrics.itertuples(index=False):
        message = evaluations[(evaluations["iteration"] == row.iteration)
                              & (evaluations["particle"] == row.particle)]["message"].iloc[0] or ""
        if verdict(pd.Series(row._asdict()).dropna().to_dict(), message).walks:
            rows.append((f"{row.iteration}:{row.particle}", row.added_mass, 100 * row.effort_reduction))
    assert rows, "no design of the tiny run walks: nothing to draw"
    assert (out / "mass_buys.png").stat().st_size > 10_000
    table = pd.read_csv(out / "mass_buys.csv", dtype={"eval": str})
    assert sorted(table["eval"]) == sorted(r[0] for r in rows)
    for e, m, r in rows:
        line = table[table["eval"] == e].iloc[0]
        assert line["mass [kg]"] == pytest.approx(m, rel=1e-12) and line["reduction [%]"] == pytest.approx(r, rel=1e-12)
        dominated = any(m2 <= m and r2 >= r and (m2 < m or r2 > r) for _, m2, r2 in rows)
        assert bool(line["front"]) == (not dominated)
    assert "What mass buys" in (out / "summary.md").read_text()
