"""Optimization progress: lexicographic stage and stage value against the iteration.

Fitness convention (codesign.types): the stored ``stage`` = number of lexicographic
conditions met (larger is better), ``stage_value`` = value of the current stage (smaller
is better); a failed evaluation ranks worst. The best-so-far is the running minimum of the
key (failed, -stage, stage_value) over all evaluations up to and including an iteration.

What this module shows counts stages as people read them, the one numbering of every
output (:func:`codesign.objectives.stage_label`): a design at **stage k of n** optimizes
objective k, having met the k - 1 conditions before it (k = stored stage + 1); stage 0
means failed (no stage). A condition k "first met" at iteration i means some design
reached stage k + 1 at i.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from codesign.objectives import ranked


def progress_table(evaluations: pd.DataFrame) -> pd.DataFrame:
    """Per iteration: best_stage (the best-so-far design's stage k, 1-based: the objective
    it optimizes; 0 while every evaluation failed), best_value (its stage value),
    median_stage (the median stage k of that iteration's evaluations, a failed one counted
    as 0), median_value (median stage value of that iteration's evaluations at the
    best-so-far stage; NaN if none), n_failed."""
    rows = []
    best = None  # (bad, -stored stage, value)
    for it, group in evaluations.groupby("iteration", sort=True):
        top = ranked(group).iloc[0]
        ok = top["status"] == "ok" and np.isfinite(top["stage_value"])
        key = (0, -int(top["stage"]), float(top["stage_value"])) if ok else (1, 0, np.inf)
        if best is None or key < best:
            best = key
        stages = (group["stage"] + 1).where(group["status"] == "ok", 0)
        at_best = group[(group["status"] == "ok") & (group["stage"] == -best[1])]
        rows.append({"iteration": int(it), "best_stage": 1 - best[1] if best[0] == 0 else 0,
                     "best_value": best[2] if best[0] == 0 else np.nan,
                     "median_stage": float(np.median(stages)),
                     "median_value": float(at_best["stage_value"].median())
                     if len(at_best) else np.nan,
                     "n_failed": int((group["status"] != "ok").sum())})
    return pd.DataFrame(rows).set_index("iteration")


def first_satisfied(evaluations: pd.DataFrame) -> dict[int, int]:
    """Stage k (1-based) -> first iteration at which some evaluation satisfied it
    (stage >= k); stages never satisfied are absent."""
    ok = evaluations[evaluations["status"] == "ok"]
    out = {}
    for k in range(1, int(ok["stage"].max()) + 1 if len(ok) else 1):
        hit = ok.loc[ok["stage"] >= k, "iteration"]
        if len(hit):
            out[k] = int(hit.min())
    return out


def progress_figure(table: pd.DataFrame, first: dict[int, int],
                    stage_names: Sequence[str] | None = None) -> Figure:
    """Top: best-so-far and median stage k (1-based, :func:`progress_table`); bottom:
    best-so-far stage value (colour = stage) and the median value of the evaluations at
    that stage. Dotted lines: the iteration at which each stage was first reached (condition
    k of ``first`` met: stage k + 1)."""
    fig = Figure(figsize=(7.5, 5.6), layout="constrained")
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    t = table.index.to_numpy()
    n = len(stage_names) if stage_names else 0
    ax1.step(t, table["best_stage"], where="post", color="black", label="best so far")
    ax1.step(t, table["median_stage"], where="post", color="#377eb8", alpha=0.8,
             label="median of the iteration")
    ax1.set_ylabel(f"stage k{f' of {n}' if n else ''}\n(0: failed)", fontsize=9)
    ax1.yaxis.get_major_locator().set_params(integer=True)
    top_stage = int(max(table["best_stage"].max(), 1))
    ax1.set_ylim(-0.2, top_stage + 0.8)
    for k, it in first.items():
        reached = k + 1
        name = f"{reached}" if not stage_names or reached > n else f"{reached}: {stage_names[reached - 1]}"
        for ax in (ax1, ax2):
            ax.axvline(it, color="grey", linestyle=":", linewidth=0.8)
        ax1.annotate(f"stage {name} from {it}", (it, reached), xytext=(4, 3),
                     textcoords="offset points", fontsize=7, color="dimgray")
    ax1.legend(fontsize=8, loc="lower right")
    cmap = matplotlib.colormaps["tab10"]
    stages = table["best_stage"].to_numpy()
    for s in np.unique(stages):
        sel = stages == s
        colour = cmap(int(s) % 10)
        ax2.plot(t[sel], table["best_value"].to_numpy()[sel], ".", markersize=3,
                 color=colour, label=f"best, stage {s}")
        ax2.plot(t[sel], table["median_value"].to_numpy()[sel], "-", linewidth=0.6,
                 color=colour, alpha=0.5)
    values = table[["best_value", "median_value"]].to_numpy()
    finite = np.abs(values[np.isfinite(values)])
    if len(finite) and finite.max() > 100 * max(np.percentile(finite, 10), 1e-12):
        ax2.set_yscale("symlog", linthresh=max(np.percentile(finite, 10), 1e-12))
    ax2.set_ylabel("value of the current stage\n(smaller is better)", fontsize=9)
    ax2.set_xlabel("iteration")
    ax2.legend(fontsize=7, loc="upper right", ncols=2, title="dots: best so far; "
               "thin line: median at that stage", title_fontsize=7)
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    fig.suptitle("Progress of the lexicographic fitness (stage k: optimizing objective k, "
                 "the k - 1 before it met)", fontsize=10)
    return fig
