"""Where each subspace sits in a heatmap (thesis Fig. 5.10).

A :class:`SubspaceGrid` places every subspace id of a run in one cell of a 2-D grid: for
the co-design problem the columns are topologies and the rows the actuator-pair index
within a topology (1 = the topology's first pair in catalog order), so a topology with
fewer pairs than the longest one leaves *invalid* cells at the bottom of its column. For
any other problem the columns are the groups of the first pool with several groups and the
rows those of the second (one row if there is no second).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np


@dataclass(frozen=True)
class SubspaceGrid:
    """Cell of every subspace id in a (rows x columns) grid.

    row_title, column_title: axis titles (e.g. "actuator pair", "topology").
    row_labels, column_labels: tick labels, one per row / column.
    cells: subspace id -> (row index, column index); a cell no subspace maps to is invalid.
    """

    row_title: str
    column_title: str
    row_labels: tuple[str, ...]
    column_labels: tuple[str, ...]
    cells: Mapping[int, tuple[int, int]]

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.row_labels), len(self.column_labels))

    def valid_mask(self) -> np.ndarray:
        """bool[rows, columns]: True where a subspace exists."""
        mask = np.zeros(self.shape, dtype=bool)
        for r, c in self.cells.values():
            mask[r, c] = True
        return mask

    def to_array(self, values: Mapping[int, float], fill: float = 0.0) -> np.ndarray:
        """float[rows, columns] of ``values`` (subspace id -> number); ``fill`` for valid
        cells without a value, NaN for invalid cells. Unknown subspace ids raise KeyError."""
        out = np.full(self.shape, np.nan)
        out[self.valid_mask()] = fill
        for sid, value in values.items():
            r, c = self.cells[int(sid)]
            out[r, c] = value
        return out

    def column_of(self, subspace_id: int) -> int:
        return self.cells[int(subspace_id)][1]


def grid_from_labels(subspace_labels: Mapping[int, tuple[str, str]], *, row_title: str,
                     column_title: str, row_order=None, column_order=None) -> SubspaceGrid:
    """Grid from subspace id -> (row label, column label).

    Labels keep their first-seen order (subspace ids ascending) unless an explicit order is
    given.
    """
    rows = list(row_order) if row_order is not None else []
    cols = list(column_order) if column_order is not None else []
    for sid in sorted(subspace_labels):
        r, c = subspace_labels[sid]
        if r not in rows:
            rows.append(r)
        if c not in cols:
            cols.append(c)
    cells = {int(sid): (rows.index(r), cols.index(c)) for sid, (r, c) in subspace_labels.items()}
    return SubspaceGrid(row_title=row_title, column_title=column_title,
                        row_labels=tuple(rows), column_labels=tuple(cols), cells=cells)


def grid_from_catalog(catalog) -> SubspaceGrid:
    """Co-design grid: columns = topologies, rows = actuator-pair index within the
    topology (1-based, catalog order); subspace id = the catalog's subspace id.

    catalog: :class:`codesign.topology.catalog.Catalog`.
    """
    labels, order = {}, []
    for topology in catalog.topologies:
        for k, pair in enumerate(topology.actuator_pairs, start=1):
            sid = len(labels) + 1
            labels[sid] = (str(k), str(topology.id))
            order.append(k)
    rows = [str(k) for k in range(1, max(order, default=0) + 1)]
    return grid_from_labels(labels, row_title="actuator pair (index in the topology)",
                            column_title="topology", row_order=rows)


def grid_from_groups(subspace_groups: Mapping[int, Mapping[str, str]]) -> SubspaceGrid:
    """Generic grid from the run's subspaces (id -> {pool: group}, as the store keeps
    them): columns = groups of the first pool whose group varies, rows = groups of the
    other varying pools (joined with "/"); a combination that is not a subspace of the
    run (excluded, or frozen away) is an invalid cell."""
    ids = sorted(subspace_groups)
    pools = list(subspace_groups[ids[0]]) if ids else []
    varying = [p for p in pools if len({subspace_groups[i][p] for i in ids}) > 1]
    if not varying:
        return grid_from_labels({i: ("\u2014", "all") for i in ids}, row_title="",
                                column_title="subspace")
    first, rest = varying[0], varying[1:]
    labels = {i: ("/".join(subspace_groups[i][p] for p in rest) if rest else "\u2014",
                  subspace_groups[i][first]) for i in ids}
    return grid_from_labels(labels, row_title=" / ".join(rest), column_title=first)
