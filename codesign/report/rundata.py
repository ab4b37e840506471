"""Everything a report needs from one run database, read once into pandas frames.

The run database is OPT's SQLite store (DESIGN.md §5, ``codesign/run/store.py``). It is opened
read-only, so a report can be made while the driver is still writing the run (WAL mode:
a reader sees the last committed iteration).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from codesign.errors import UserError
from codesign.problems.options import PRESETS
from codesign.run.spec import Spec, parse_spec
from codesign.run.store import find_run_database, open_run

# the co-design presets (a device for a passive wearer, every law's): their runs search the
# topology catalog's subspaces
CODESIGN_PROBLEMS = tuple(name for name, options in PRESETS.items()
                          if options.device == "linkage" and options.wearer == "passive")


def searches_catalog(spec: Spec) -> bool:
    """Whether the run's problem is a co-design one that searches the topology catalog's
    subspaces (a device for a passive wearer): a preset of :data:`CODESIGN_PROBLEMS` or a
    composed ``walking(...)`` problem with those options."""
    options = spec.options
    return options is not None and options.device == "linkage" and options.wearer == "passive"


@dataclass(frozen=True)
class RunData:
    """One run, as read from its database.

    run: the ``runs`` row (run_id, name, spec_toml, parent_run_id, status, ...).
    spec: the run's job spec (:class:`codesign.run.spec.Spec`, parsed from ``spec_toml``).
    evaluations: one row per evaluation (iteration, particle, subspace_id, stage,
        stage_value, status, message, wall_s, worker), sorted by (iteration, particle).
    iterations: per completed iteration: best_stage, best_value, best_subspace_id, ...
    subspace_groups: subspace id -> {pool name: group name}, for the run's valid subspaces.
    database: the run.sqlite file; folder: the run folder (``results/<name>``).

    Parameters and metrics are read on demand for the evaluations that need them
    (:meth:`params_of`, :meth:`metrics_of`): a thesis-scale run (200 particles x 800
    iterations) holds millions of them, and a report needs a handful.
    """

    run: pd.Series
    spec: Spec
    evaluations: pd.DataFrame
    iterations: pd.DataFrame
    subspace_groups: dict[int, dict[str, str]]
    database: Path
    folder: Path

    @property
    def name(self) -> str:
        return str(self.run["name"])

    def params_of(self, keys) -> pd.DataFrame:
        """Parameters of the evaluations ``keys`` [(iteration, particle), ...]: a wide frame
        indexed by (iteration, particle), one column per parameter name (NaN = unused)."""
        return self._values("params", keys)

    def metrics_of(self, keys) -> pd.DataFrame:
        """Metrics of the evaluations ``keys``, as :meth:`params_of`."""
        return self._values("metrics", keys)

    def _values(self, kind: str, keys) -> pd.DataFrame:
        keys = [(int(i), int(p)) for i, p in keys]
        index = pd.MultiIndex.from_tuples(keys, names=["iteration", "particle"]) if keys else \
            pd.MultiIndex.from_arrays([[], []], names=["iteration", "particle"])
        if not keys:
            return pd.DataFrame(index=index)
        with open_run(self.database, readonly=True) as store:
            read = store.params if kind == "params" else store.metrics
            long = read(int(self.run["run_id"]), keys=keys)
        long["value"] = pd.to_numeric(long["value"]).astype(float)
        wide = long.pivot_table(index=["iteration", "particle"], columns="name",
                                values="value", aggfunc="first", dropna=False)
        wide.columns.name = None
        return wide.reindex(index)


def load_run(run: str | Path) -> RunData:
    """Read the (newest) run of a run database through OPT's store, read-only."""
    path = find_run_database(run)
    with open_run(path, readonly=True) as store, store.snapshot():
        # one read transaction: every frame sees the same committed iterations
        runs = store.runs()
        if runs.empty:
            raise UserError(f"{path}: the database holds no run yet; expected a started run")
        row = runs.iloc[-1]
        rid = int(row["run_id"])
        iterations = store.iterations(rid)
        evaluations = store.evaluations(rid)
        subspaces = store.subspaces(rid)
    evaluations = evaluations.reset_index(drop=True)
    # NULL (a failed evaluation's stage value) -> NaN, even when every value is NULL
    evaluations["stage_value"] = pd.to_numeric(evaluations["stage_value"]).astype(float)
    try:
        spec = parse_spec(row["spec_toml"], source=f"{path}:spec_toml")
    except UserError as exc:
        raise UserError(f"{path}: the stored spec does not load ({exc})") from None
    groups = {int(r.subspace_id): json.loads(r.groups_json) for r in subspaces.itertuples()}
    return RunData(run=row, spec=spec, evaluations=evaluations, iterations=iterations,
                   subspace_groups=groups, database=path, folder=path.parent)


def run_settings(data: RunData):
    """The run's settings record: its problem's ``parse_settings`` of the stored
    ``[evaluation]`` table (UserError, one line, when it no longer parses)."""
    from codesign.problems import get_problem

    return get_problem(data.spec.problem).parse_settings(data.spec.evaluation)


def run_catalog_path(data: RunData, path: str | Path | None = None) -> Path:
    """The topology catalog of a co-design run: ``path``, else its settings' (the spec's
    ``evaluation.catalog``, else ``topologies/catalog.json`` of the working directory,
    else the repository's copy: :func:`~codesign.topology.catalog.catalog_path`)."""
    return Path(path) if path else Path(run_settings(data).walk.catalog)


def load_run_catalog(data: RunData, path: str | Path | None = None):
    """The run's :class:`~codesign.topology.catalog.Catalog` (UserError if unreadable)."""
    from codesign.topology.catalog import load_catalog

    return load_catalog(run_catalog_path(data, path))
