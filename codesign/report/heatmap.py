"""Subspace visit heatmaps (thesis Fig. 5.10) and their pass-rate variant.

Each cell is one subspace (for co-design: topology x actuator pair). Colour is the number
of evaluations on a log scale; invalid cells (a pair the topology does not have) are grey
and hatched, never-visited cells are white with a cross, and the subspace of the best
solution is outlined and starred — as the thesis marks cells with 0, x and T.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from codesign.report.grid import SubspaceGrid

INVALID_COLOUR = "#d9d9d9"
UNVISITED_MARK = "\u00d7"  # ×
BEST_MARK = "\u2605"  # ★
BEST_COLOUR = "#e31a1c"


def visit_counts(evaluations: pd.DataFrame) -> pd.Series:
    """Number of evaluations per subspace id (int64 Series indexed by subspace id)."""
    return evaluations.groupby("subspace_id").size().astype("int64")


def phase_bounds(iterations: Sequence[int], n_phases: int = 3) -> list[tuple[int, int]]:
    """Split the iterations present into ``n_phases`` contiguous, nearly equal ranges.

    Returns [(first, last), ...] inclusive, early to late; fewer phases when there are
    fewer iterations than phases.
    """
    its = np.unique(np.asarray(iterations, dtype=np.int64))
    chunks = [c for c in np.array_split(its, min(n_phases, len(its))) if len(c)]
    return [(int(c[0]), int(c[-1])) for c in chunks]


def _draw_cells(ax, grid: SubspaceGrid, values: np.ndarray, norm, cmap, *,
                missing: np.ndarray, best_subspace: int | None, annotate: str | None):
    """Draw one heatmap panel; returns the image (for a colour bar).

    values: float[rows, cols] (NaN = invalid); missing: bool[rows, cols], valid cells
    drawn white with a cross. annotate: None, "count" or "rate" (text in each cell).
    """
    valid = grid.valid_mask()
    shown = np.ma.masked_array(values, mask=~valid | missing)
    image = ax.imshow(shown, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest",
                      origin="upper")
    n_rows, n_cols = grid.shape
    small = max(n_rows, n_cols) > 12
    text_size = 6 if small else 8
    for r in range(n_rows):
        for c in range(n_cols):
            if not valid[r, c]:
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor=INVALID_COLOUR,
                                       edgecolor="#bdbdbd", hatch="///", linewidth=0))
            elif missing[r, c]:
                ax.text(c, r, UNVISITED_MARK, ha="center", va="center", color="#b2182b",
                        fontsize=text_size + 3)
            elif annotate is not None:
                v = values[r, c]
                label = f"{v:.0%}" if annotate == "rate" else _short_count(v)
                rgba = image.cmap(image.norm(v))
                dark = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5
                ax.text(c, r, label, ha="center", va="center", fontsize=text_size,
                        color="white" if dark else "black")
    if best_subspace is not None and int(best_subspace) in grid.cells:
        r, c = grid.cells[int(best_subspace)]
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor=BEST_COLOUR,
                               linewidth=2.5))
        ax.text(c + 0.45, r - 0.45, BEST_MARK, ha="right", va="top", fontsize=text_size + 3,
                color=BEST_COLOUR)
    ax.set_xticks(range(n_cols), grid.column_labels, fontsize=8)
    if grid.row_labels == ("\u2014",):  # a single unnamed row
        ax.set_yticks([])
    else:
        ax.set_yticks(range(n_rows), grid.row_labels, fontsize=8)
    ax.set_xlabel(grid.column_title)
    ax.set_ylabel(grid.row_title)
    ax.set_xticks(np.arange(n_cols + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(n_rows + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=0.8)
    ax.tick_params(which="minor", length=0)
    return image


def _short_count(v: float) -> str:
    n = int(round(v))
    return f"{n / 1000:.0f}k" if n >= 10_000 else f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _legend_text(best_subspace: int | None, unvisited: str = "never visited") -> str:
    parts = ["grey hatched: no such subspace", f"{UNVISITED_MARK}: {unvisited}"]
    if best_subspace is not None:
        parts.append(f"outlined {BEST_MARK}: best solution")
    return "   ".join(parts)


def visit_heatmap(grid: SubspaceGrid, counts: Mapping[int, int], *,
                  best_subspace: int | None = None, title: str = "Evaluations per subspace"
                  ) -> Figure:
    """Heatmap of evaluations per subspace, log colour scale (thesis Fig. 5.10).

    counts: subspace id -> number of evaluations (ids absent = never visited).
    The drawn array (``fig.axes[0].images[0].get_array()``) holds the counts, masked where
    a cell is invalid or never visited.
    """
    values = grid.to_array({k: float(v) for k, v in counts.items() if v > 0}, fill=0.0)
    missing = grid.valid_mask() & ~(values > 0)
    vmax = max(1.0, np.nanmax(values, initial=1.0))
    n_rows, n_cols = grid.shape
    fig = Figure(figsize=(max(5.0, 0.55 * n_cols + 2.2), max(2.6, 0.36 * n_rows + 1.8)),
                 layout="constrained")
    ax = fig.add_subplot()
    image = _draw_cells(ax, grid, values, LogNorm(vmin=1, vmax=max(vmax, 10.0)), "viridis",
                        missing=missing, best_subspace=best_subspace, annotate="count")
    fig.colorbar(image, ax=ax, label="evaluations (log scale)", shrink=0.9)
    ax.set_title(title, fontsize=10)
    fig.text(0.01, 0.005, _legend_text(best_subspace), fontsize=7, ha="left", va="bottom")
    fig.get_layout_engine().set(h_pad=0.25)
    return fig


def phase_heatmaps(grid: SubspaceGrid, evaluations: pd.DataFrame, *,
                   best_subspace: int | None = None, n_phases: int = 3) -> Figure:
    """Visit heatmaps for the early / middle / late thirds of the iterations run so far,
    on one shared log colour scale."""
    bounds = phase_bounds(evaluations["iteration"], n_phases)
    names = ["early", "middle", "late"] if len(bounds) == 3 else [f"phase {i + 1}" for i in
                                                                  range(len(bounds))]
    per_phase = []
    for lo, hi in bounds:
        sel = evaluations[(evaluations["iteration"] >= lo) & (evaluations["iteration"] <= hi)]
        per_phase.append(grid.to_array({k: float(v) for k, v in visit_counts(sel).items()}))
    vmax = max([np.nanmax(v, initial=1.0) for v in per_phase] + [10.0])
    n_rows, n_cols = grid.shape
    width = max(3.0, 0.3 * n_cols + 0.9) * max(1, len(bounds)) + 1.0
    fig = Figure(figsize=(width, max(3.2, 0.3 * n_rows + 1.8)), layout="constrained")
    axes = fig.subplots(1, max(1, len(bounds)), sharey=True, squeeze=False)[0]
    image = None
    for ax, values, (lo, hi), name in zip(axes, per_phase, bounds, names):
        missing = grid.valid_mask() & ~(values > 0)
        image = _draw_cells(ax, grid, values, LogNorm(vmin=1, vmax=vmax), "viridis",
                            missing=missing, best_subspace=best_subspace, annotate=None)
        ax.set_title(f"{name}: iterations {lo}\u2013{hi}", fontsize=10)
    for ax in axes[1:]:
        ax.set_ylabel("")
    if image is not None:
        fig.colorbar(image, ax=list(axes), label="evaluations (log scale)", shrink=0.9)
    fig.text(0.01, 0.005, _legend_text(best_subspace, "not visited in that phase"), fontsize=7,
             ha="left", va="bottom")
    fig.get_layout_engine().set(h_pad=0.25)
    return fig


def pass_rate_heatmap(grid: SubspaceGrid, passed: Mapping[int, int], total: Mapping[int, int],
                      *, title: str = "Screening pass rate per subspace") -> Figure:
    """Fraction of screened morphologies that passed, per subspace (linear 0..1 scale).

    passed, total: subspace id -> counts; cells with no screened sample are crossed.
    """
    rates = {k: passed.get(k, 0) / n for k, n in total.items() if n > 0}
    values = grid.to_array(rates, fill=np.nan)
    missing = grid.valid_mask() & ~np.isfinite(values)
    n_rows, n_cols = grid.shape
    fig = Figure(figsize=(max(5.0, 0.55 * n_cols + 2.2), max(2.6, 0.36 * n_rows + 1.8)),
                 layout="constrained")
    ax = fig.add_subplot()
    top = np.nanmax(values, initial=0.0)
    vmax = min(1.0, max(0.1, np.ceil(top * 10.0) / 10.0))  # colour contrast for low rates
    image = _draw_cells(ax, grid, values, Normalize(0.0, vmax), "YlGnBu", missing=missing,
                        best_subspace=None, annotate="rate")
    fig.colorbar(image, ax=ax, label="pass rate", shrink=0.9)
    sizes = sorted({n for n in total.values() if n > 0})
    if len(sizes) == 1:
        title += f" ({sizes[0]} morphologies each)"
    ax.set_title(title, fontsize=10)
    fig.text(0.01, 0.005, "grey hatched: no such subspace   \u00d7: not screened", fontsize=7,
             ha="left", va="bottom")
    fig.get_layout_engine().set(h_pad=0.25)
    return fig
