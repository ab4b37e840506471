"""Report tables on small hand-made evaluation sets whose answers are worked out by hand."""

from __future__ import annotations

import math

import pandas as pd

from codesign.report.heatmap import phase_bounds
from codesign.report.migration import observed_migration_rate
from codesign.objectives import ranked
from codesign.report.progress import first_satisfied, progress_table


def _evaluations(rows):
    return pd.DataFrame(rows, columns=["iteration", "particle", "subspace_id", "stage",
                                       "stage_value", "status"])


EV = _evaluations([
    # iteration 0: stage 0 everywhere, one failure
    (0, 0, 1, 0, 5.0, "ok"), (0, 1, 2, 0, 3.0, "ok"), (0, 2, 2, 0, math.nan, "failed"),
    # iteration 1: particle 1 satisfies stage 1 (worse value than before does not matter)
    (1, 0, 2, 0, 1.0, "ok"), (1, 1, 2, 1, 9.0, "ok"), (1, 2, 1, 0, 2.0, "ok"),
    # iteration 2: nothing better than (stage 1, 9.0) except a stage-1 value of 4.0
    (2, 0, 2, 1, 4.0, "ok"), (2, 1, 1, 0, 0.5, "ok"), (2, 2, 1, 1, 6.0, "ok"),
])


def test_ranked_orders_by_stage_then_value_failures_last():
    order = list(zip(ranked(EV)["iteration"], ranked(EV)["particle"]))
    assert order[:3] == [(2, 0), (2, 2), (1, 1)]     # stage 1 by value 4 < 6 < 9
    assert order[-1] == (0, 2)                        # the failure ranks last


def test_progress_table_by_hand():
    table = progress_table(EV)
    # one numbering (issue 42): stage k of n, 1-based -- the stored count of conditions met + 1
    assert table["best_stage"].tolist() == [1, 2, 2]
    assert table["best_value"].tolist() == [3.0, 9.0, 4.0]
    assert table["median_stage"].tolist() == [1.0, 1.0, 2.0]   # failed counts as 0: [1, 1, 0], [1, 2, 1], [2, 1, 2]
    everything_failed = progress_table(_evaluations([(0, 0, 1, 0, math.nan, "failed")]))
    assert everything_failed["best_stage"].tolist() == [0] and everything_failed["median_stage"].tolist() == [0.0]
    # median of the iteration's evaluations at the best-so-far stage
    assert table["median_value"].tolist() == [4.0, 9.0, 5.0]
    assert table["n_failed"].tolist() == [1, 0, 0]
    assert first_satisfied(EV) == {1: 1}


def test_observed_migration_rate_by_hand():
    # particle 0: 1 -> 2 -> 2, particle 1: 2 -> 2 -> 1, particle 2: 2 -> 1 -> 1
    rate = observed_migration_rate(EV)
    assert rate.to_dict() == {1: 2 / 3, 2: 1 / 3}


def test_phase_bounds_partition_the_iterations():
    assert phase_bounds(range(10)) == [(0, 3), (4, 6), (7, 9)]
    assert phase_bounds([5, 6]) == [(5, 5), (6, 6)]


def test_values_beyond_physical_bounds_are_flagged_and_parts_cover_every_column():
    """format_table flags exactly the cells above their column's bound (the credibility
    limits of problems.objectives.LIMITS; a motor at its torque limit), and page_tables
    cuts the table into captioned parts that each lead with rank and eval and together
    hold every column once."""
    from codesign.problems.objectives import LIMITS
    from codesign.report.table import FLAG, format_table, page_tables

    raw = pd.DataFrame({"rank": [1, 2], "eval": ["3:1", "0:2"], "stage": ["5 of 14: grf_peak_bw", "-"],
                        "ground reaction [BW]": [LIMITS["grf_peak_bw"] + 0.4, 1.1],
                        "actuator torque / limit": [1.0, 0.62],
                        "cuff force [N]": [LIMITS["cuff_force_peak"], 1483.86],
                        "speed [m/s]": [1.24, math.nan],
                        "h/2 speed [m/s]": [1.2, math.nan]})
    shown = format_table(raw)
    assert shown["ground reaction [BW]"].tolist() == [f"{FLAG} 3.40", "1.10"]
    assert shown["actuator torque / limit"].tolist() == [f"{FLAG} 1.00", "0.62"]
    assert shown["cuff force [N]"].tolist() == ["700", f"{FLAG} 1484"]   # the bound is allowed
    assert shown["speed [m/s]"].tolist() == ["1.24", ""]
    parts = page_tables(shown)
    assert [p.attrs["caption"] for p in parts] == ["Which design, and how far it got", "Gait (second half of the walk)",
                                                  "Actuators and the wearer's loads",
                                                  "The same design re-evaluated (robustness)"]
    assert all(list(p.columns[:2]) == ["rank", "eval"] for p in parts)
    held = [c for p in parts for c in p.columns if c not in ("rank", "eval")]
    assert sorted(held) == sorted(c for c in raw.columns if c not in ("rank", "eval"))
