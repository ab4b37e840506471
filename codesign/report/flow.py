"""Particle flow between subspaces (thesis Fig. 3.7).

Occupancy of a subspace (or of a topology, summing its subspaces) at iteration t is the
number of particles evaluated there at t. In-flow at t is the number of particles there at
t that were elsewhere at t-1; out-flow the number there at t-1 that are elsewhere at t, so
occupancy(t) = occupancy(t-1) + in(t) - out(t) (a conservation law the tests check).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

IN_COLOUR = "#4daf4a"
OUT_COLOUR = "#ff7f00"


@dataclass(frozen=True)
class ParticleFlow:
    """occupancy, inflow, outflow: DataFrames indexed by iteration, one column per key;
    flows are 0 at the first iteration."""

    occupancy: pd.DataFrame
    inflow: pd.DataFrame
    outflow: pd.DataFrame


def particle_flow(evaluations: pd.DataFrame,
                  key_of: Callable[[int], Hashable] = lambda sid: sid) -> ParticleFlow:
    """Occupancy and in/out flow per key (default: per subspace id).

    evaluations: columns iteration, particle, subspace_id (one row per particle and
    iteration). key_of maps a subspace id to the unit shown (e.g. its topology).
    """
    keys = evaluations["subspace_id"].map(lambda s: key_of(int(s)))
    where = (evaluations.assign(key=keys)
             .pivot(index="iteration", columns="particle", values="key").sort_index())
    all_keys = sorted(pd.unique(keys))
    iterations = where.index
    occ = pd.DataFrame(0, index=iterations, columns=all_keys, dtype="int64")
    inflow = occ.copy()
    outflow = occ.copy()
    previous = None
    for it, row in where.iterrows():
        now = row.to_numpy()
        counts = pd.Series(now).value_counts()
        occ.loc[it, counts.index] = counts.to_numpy()
        if previous is not None:
            both = pd.notna(now) & pd.notna(previous)
            moved = both & (now != previous)
            for k, n in pd.Series(now[moved]).value_counts().items():
                inflow.loc[it, k] = n
            for k, n in pd.Series(previous[moved]).value_counts().items():
                outflow.loc[it, k] = n
        previous = now
    return ParticleFlow(occ, inflow, outflow)


def flow_figure(flow: ParticleFlow, *, label: Callable[[Hashable], str] = str,
                max_panels: int = 12, title: str = "Particle flow") -> Figure:
    """Small multiples, one per key (all in key order, or the ``max_panels`` most occupied):
    occupancy line, in-flow up (green) and out-flow down (orange) — as thesis Fig. 3.7."""
    total = flow.occupancy.sum().sort_values(ascending=False, kind="stable")
    keys = list(total.index[:max_panels])
    if len(total) <= max_panels:
        keys = sorted(keys)
    n = len(keys)
    n_cols = min(4, n) if n > 1 else 1
    n_rows = int(np.ceil(n / n_cols))
    fig = Figure(figsize=(2.9 * n_cols + 0.6, 2.1 * n_rows + 0.9), layout="constrained")
    axes = fig.subplots(n_rows, n_cols, sharex=True, sharey=True, squeeze=False).ravel()
    t = flow.occupancy.index.to_numpy()
    for ax, key in zip(axes, keys):
        ax.fill_between(t, 0, flow.inflow[key], step="mid", color=IN_COLOUR, alpha=0.8,
                        linewidth=0, label="in-flow")
        ax.fill_between(t, 0, -flow.outflow[key], step="mid", color=OUT_COLOUR, alpha=0.8,
                        linewidth=0, label="out-flow")
        ax.step(t, flow.occupancy[key], where="mid", color="black", linewidth=1.0,
                label="particles")
        ax.axhline(0, color="grey", linewidth=0.5)
        ax.set_title(label(key), fontsize=9)
        ax.tick_params(labelsize=8)
    for ax in axes[n:]:
        ax.set_visible(False)
    for ax in axes[(n_rows - 1) * n_cols:]:
        ax.set_xlabel("iteration", fontsize=8)
    for ax in axes[::n_cols]:
        ax.set_ylabel("particles", fontsize=8)
    hidden = len(total) - n
    note = f" (the {n} most occupied of {len(total)}; out-flow drawn negative)" if hidden > 0 \
        else " (out-flow drawn negative)"
    fig.suptitle(title + note, fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    return fig
