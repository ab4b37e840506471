"""Migration probability curves actually used (thesis Figs. 3.6 and 5.8).

The curves are the spec's P_e (exploration), P_l (local) and P_g (global) schedules,
evaluated by the optimizer's own schedule functions, next to the fraction of particles
that actually changed subspace at each iteration of the run.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

CURVE_STYLE = {"P_e": ("#377eb8", "exploration $P_e$"),
               "P_l": ("#4daf4a", "local $P_l$"),
               "P_g": ("#e41a1c", "global $P_g$")}


def observed_migration_rate(evaluations: pd.DataFrame) -> pd.Series:
    """Fraction of particles whose subspace differs from the previous iteration's,
    indexed by iteration (from the second iteration present on)."""
    where = evaluations.pivot(index="iteration", columns="particle",
                              values="subspace_id").sort_index()
    now, before = where.iloc[1:].to_numpy(), where.iloc[:-1].to_numpy()
    both = ~(pd.isna(now) | pd.isna(before))
    moved = (now != before) & both
    rate = moved.sum(axis=1) / np.maximum(both.sum(axis=1), 1)
    return pd.Series(rate, index=where.index[1:], name="migrated")


def migration_figure(n_iterations: int, schedules: Mapping[str, Callable[[int], float]],
                     observed: pd.Series | None = None) -> Figure:
    """P_e, P_l, P_g against the iteration 0..n_iterations-1 (top) and, when given, the
    observed fraction of particles migrating per iteration (bottom, with a 20-iteration
    running mean)."""
    t = np.arange(max(1, int(n_iterations)))
    two = observed is not None and len(observed) > 0
    fig = Figure(figsize=(7.0, 5.0 if two else 3.2), layout="constrained")
    axes = fig.subplots(2 if two else 1, 1, sharex=True, squeeze=False)[:, 0]
    ax = axes[0]
    for name, schedule in schedules.items():
        colour, label = CURVE_STYLE.get(name, (None, name))
        ax.plot(t, [schedule(int(i)) for i in t], color=colour, label=label, linewidth=1.6)
    ax.set_ylabel("probability per particle\nand iteration", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="best")
    ax.set_title("Migration probabilities used by the run", fontsize=10)
    if two:
        ax2 = axes[1]
        ax2.plot(observed.index, observed.to_numpy(), color="grey", linewidth=0.6,
                 label="observed, per iteration")
        smooth = observed.rolling(20, min_periods=1, center=True).mean()
        ax2.plot(smooth.index, smooth.to_numpy(), color="black", linewidth=1.4,
                 label="20-iteration mean")
        ax2.set_ylabel("fraction of particles\nthat changed subspace", fontsize=9)
        ax2.set_ylim(bottom=0)
        ax2.legend(fontsize=8, loc="best")
    axes[-1].set_xlabel("iteration")
    for a in axes:
        a.grid(alpha=0.3)
        a.tick_params(labelsize=8)
    return fig
