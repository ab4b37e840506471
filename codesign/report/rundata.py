"""Everything a report needs from one run database, read once into pandas frames.

The run database is OPT's SQLite store (DESIGN.md §5, ``codesign/store.py``). It is opened
read-only, so a report can be made while the driver is still writing the run (WAL mode:
a reader sees the last committed iteration).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from codesign.errors import UserError
from codesign.spec import Spec, parse_spec
from codesign.store import open_run

DATABASE_NAME = "run.sqlite"
CODESIGN_PROBLEM = "exo_codesign"  # registered by the walking stage
DEFAULT_CATALOG = Path("topologies/catalog.json")


@dataclass(frozen=True)
class RunData:
    """One run, as read from its database.

    run: the ``runs`` row (run_id, name, spec_toml, parent_run_id, status, ...).
    spec: the run's job spec (:class:`codesign.spec.Spec`, parsed from ``spec_toml``).
    evaluations: one row per evaluation (iteration, particle, subspace_id, stage,
        stage_value, status, message, wall_s, worker), sorted by (iteration, particle).
    params, metrics: wide frames indexed by (iteration, particle), one column per name.
    iterations: per completed iteration: best_stage, best_value, best_subspace_id, ...
    subspace_groups: subspace id -> {pool name: group name}, for the run's valid subspaces.
    folder: the run folder (``results/<name>``), where the report goes.
    """

    run: pd.Series
    spec: Spec
    evaluations: pd.DataFrame
    params: pd.DataFrame
    metrics: pd.DataFrame
    iterations: pd.DataFrame
    subspace_groups: dict[int, dict[str, str]]
    folder: Path

    @property
    def name(self) -> str:
        return str(self.run["name"])


def resolve_database(run: str | Path) -> Path:
    """The database of RUN: a run folder (``results/<name>``), its ``run.sqlite``, or a
    bare run name looked up as ``results/<name>``."""
    path = Path(run)
    candidates = [path] if path.suffix in (".sqlite", ".db") else [
        path / DATABASE_NAME, Path("results") / path / DATABASE_NAME]
    for c in candidates:
        if c.is_file():
            return c
    raise UserError(f"{run}: no run database found (looked for {', '.join(map(str, candidates))}); "
                    "expected a run folder results/<name> made by `codesign optimize`")


def _wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Store's wide frame (run_id, iteration, particle, names...) -> indexed by
    (iteration, particle)."""
    if frame.empty:
        return pd.DataFrame(index=pd.MultiIndex.from_arrays([[], []],
                                                            names=["iteration", "particle"]))
    return frame.drop(columns="run_id").set_index(["iteration", "particle"]).sort_index()


def load_run(run: str | Path) -> RunData:
    """Read the (newest) run of a run database through OPT's store, read-only."""
    path = resolve_database(run)
    with open_run(path, readonly=True) as store, store.snapshot():
        # one read transaction: every frame sees the same committed iterations
        runs = store.runs()
        if runs.empty:
            raise UserError(f"{path}: the database holds no run yet; expected a started run")
        row = runs.iloc[-1]
        rid = int(row["run_id"])
        iterations = store.iterations(rid)
        evaluations = store.evaluations(rid)
        params = _wide(store.params(rid, wide=True))
        metrics = _wide(store.metrics(rid, wide=True))
        subspaces = store.subspaces(rid)
    evaluations = evaluations.reset_index(drop=True)
    # NULL (a failed evaluation's stage value) -> NaN, even when every value is NULL
    evaluations["stage_value"] = pd.to_numeric(evaluations["stage_value"]).astype(float)
    try:
        spec = parse_spec(row["spec_toml"], source=f"{path}:spec_toml")
    except UserError as exc:
        raise UserError(f"{path}: the stored spec does not load ({exc})") from None
    groups = {int(r.subspace_id): json.loads(r.groups_json) for r in subspaces.itertuples()}
    return RunData(run=row, spec=spec, evaluations=evaluations, params=params, metrics=metrics,
                   iterations=iterations, subspace_groups=groups, folder=path.parent)


def load_run_catalog(data: RunData, path: str | Path | None = None):
    """The topology catalog of a co-design run: ``path``, else the spec's
    ``evaluation.catalog``, else ``topologies/catalog.json`` (UserError if unreadable)."""
    from codesign.topology.catalog import load_catalog

    return load_catalog(path or data.spec.evaluation.get("catalog", DEFAULT_CATALOG))
