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
    assert table["best_stage"].tolist() == [0, 1, 1]
    assert table["best_value"].tolist() == [3.0, 9.0, 4.0]
    assert table["median_stage"].tolist() == [0.0, 0.0, 1.0]   # failed counts as stage 0
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
