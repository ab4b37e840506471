"""Run databases of schema version 1 (long format), kept to read old runs and to compare.

Schema 1 stored every parameter and metric of an evaluation as its own row with a text
name (``eval_params``, ``eval_metrics``: run_id, iteration, particle, name, value), ~7 kB
per co-design evaluation. :class:`SQLiteRunStoreV1` is the schema-1 store as it was
written before schema 2 (:mod:`codesign.run.store`): its writer and its long-format
readers are the old code, unchanged. ``codesign migrate`` reads old runs through it
(:mod:`codesign.run.migrate`); ``codesign bench storage`` and the tests write runs through
it to compare the two schemas on the same iterations. New runs are never written in it.
"""

from __future__ import annotations

import math

import pandas as pd

from codesign.run.state_archive import state_to_bytes
from codesign.run.store import (EVALUATION_COLUMNS, SCHEMA_EVALUATION_COLUMNS, SCHEMA_ITERATIONS, SCHEMA_RUNS,
                                EvaluationRow, SQLiteRunStore, _real, _transaction, insert_iteration)

VERSION = "1"

# the schema as schema 1 wrote it (git: codesign/run/store.py before schema 2)
SCHEMA = SCHEMA_RUNS + """CREATE TABLE evaluations (""" + SCHEMA_EVALUATION_COLUMNS + """
    PRIMARY KEY (run_id, iteration, particle));
CREATE TABLE eval_params (
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, particle INTEGER NOT NULL,
    name TEXT NOT NULL, value REAL, PRIMARY KEY (run_id, iteration, particle, name));
CREATE TABLE eval_metrics (
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, particle INTEGER NOT NULL,
    name TEXT NOT NULL, value REAL, PRIMARY KEY (run_id, iteration, particle, name));
""" + SCHEMA_ITERATIONS

TABLES = ("codesign_meta", "runs", "subspaces", "evaluations", "eval_params", "eval_metrics",
          "iterations")


class SQLiteRunStoreV1(SQLiteRunStore):
    """A run store in schema 1: same contract, long-format parameters and metrics."""

    schema_sql = SCHEMA
    schema_version = VERSION
    tables = TABLES
    page_size = 4096          # SQLite's default, as schema 1 was written

    def write_iteration(self, run_id, iteration, candidates, records, best, state) -> None:
        eval_rows, param_rows, metric_rows = [], [], []
        for cand, rec in zip(candidates, records, strict=True):
            eval_rows.append((run_id, iteration, cand.particle, cand.subspace_id, int(rec.stage),
                              _real(rec.stage_value), rec.status, rec.message, float(rec.wall_s),
                              rec.worker))
            param_rows += [(run_id, iteration, cand.particle, n, _real(v)) for n, v in cand.params.items()]
            metric_rows += [(run_id, iteration, cand.particle, n, _real(v)) for n, v in rec.metrics.items()]
        state_blob = state_to_bytes(state)

        def write():
            with _transaction(self._conn) as c:
                c.executemany("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", eval_rows)
                c.executemany("INSERT INTO eval_params VALUES (?, ?, ?, ?, ?)", param_rows)
                c.executemany("INSERT INTO eval_metrics VALUES (?, ?, ?, ?, ?)", metric_rows)
                insert_iteration(c, run_id, iteration, records, best, state_blob)
        self._guard(write)

    def params(self, run_id=None, wide=False, keys=None) -> pd.DataFrame:
        return self._long_or_wide(self._keyed("eval_params", run_id, keys), wide)

    def metrics(self, run_id=None, wide=False, keys=None) -> pd.DataFrame:
        return self._long_or_wide(self._keyed("eval_metrics", run_id, keys), wide)

    def _keyed(self, table: str, run_id, keys) -> pd.DataFrame:
        """``SELECT * FROM table`` (as schema 1's readers), limited to ``keys`` as the
        report's query of a few evaluations was."""
        if keys is None:
            return self._frame(f"SELECT * FROM {table}", run_id)
        wanted = sorted({(int(i), int(p)) for i, p in keys})
        match = "(iteration, particle) IN (VALUES " + ", ".join(["(?, ?)"] * len(wanted)) + ")"
        where = [match] + ([] if run_id is None else ["run_id = ?"])
        args = [v for k in wanted for v in k] + ([] if run_id is None else [int(run_id)])
        return self._guard(lambda: pd.read_sql_query(f"SELECT * FROM {table} WHERE " + " AND ".join(where),
                                                     self._conn, params=args))

    def iteration_rows(self, run_id: int, iteration: int) -> list[EvaluationRow]:
        """The evaluations of one iteration in particle order, their parameters and metrics
        as name -> value (NULL -> NaN): what schema 2 stores of them."""
        where = "WHERE run_id = ? AND iteration = ?"
        columns = self.rows(f"SELECT {', '.join(EVALUATION_COLUMNS)} FROM evaluations {where} "
                            "ORDER BY particle", (run_id, iteration))
        values: dict[str, dict[int, dict[str, float]]] = {}
        for table in ("eval_params", "eval_metrics"):
            by_particle = values[table] = {}
            for particle, name, value in self.rows(f"SELECT particle, name, value FROM {table} {where} "
                                                   "ORDER BY particle, name", (run_id, iteration)):
                by_particle.setdefault(particle, {})[name] = math.nan if value is None else float(value)
        return [EvaluationRow(tuple(row), values["eval_params"].get(row[2], {}),
                              values["eval_metrics"].get(row[2], {})) for row in columns]
