"""Run store: every evaluation of an optimization run, and the state to resume it.

The contract is :class:`RunStore` (written in the manner of Optuna's ``BaseStorage``);
:class:`SQLiteRunStore` implements it on one SQLite file per run (``results/<name>/run.sqlite``,
WAL mode, stdlib ``sqlite3``). Schema version 2 (compact: one row per evaluation)::

    codesign_meta(key, value)                       application = "codesign-run", schema_version
    runs(run_id, name, spec_toml, spec_hash, parent_run_id, created, status, code_version,
         iterations_total, driver)
    subspaces(run_id, subspace_id, groups_json)     the group of each pool, as JSON
    name_sets(set_id, names_json)                   each distinct list of names, once
    evaluations(run_id, iteration, particle, subspace_id, stage, stage_value, status,
                message, wall_s, worker, param_names, params, metric_names, metrics)
    iterations(run_id, iteration, best_stage, best_value, best_subspace_id, n_failed,
               evals_wall_s, finished, state_npz)

An evaluation's parameters (and its metrics) are one BLOB of little-endian float64 values,
8 bytes each, in the order of the names of its ``name_sets`` row (``param_names``,
``metric_names``; names sorted, so equal runs give equal bytes): a co-design evaluation's
40-odd parameters and 30-odd metrics take ~600 bytes instead of ~6 kB of long-format rows
with a text name each (schema 1, :mod:`codesign.run.schema1`; ``codesign migrate``
converts). The readers unpack them into the long (or wide) DataFrames schema 1 gave.

``state_npz`` is a zip of ``.npy`` arrays (numpy's .npz layout, no pickle, fixed zip
timestamps so equal states give equal bytes) holding the optimizer and RNG state after
that iteration; arrays that are mostly zeros are stored as their nonzero values and
positions (:mod:`codesign.run.state_archive`). Only the latest iteration keeps its state (older ones are set to NULL in
the same transaction): the evaluations already record the whole history, and a
200-particle co-design state would otherwise grow the file by megabytes per iteration.
A NaN (failed stage value, non-finite metric or parameter) is stored as NULL in a column
and as NaN in a packed vector; both read back as NaN.
"""

from __future__ import annotations

import abc
import contextlib
import json
import math
import os
import sqlite3
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from codesign.errors import UserError
from codesign.run.lock import this_driver
from codesign.run.state_archive import state_from_bytes, state_to_bytes
from codesign.types import Candidate, EvalRecord

APPLICATION = "codesign-run"
SCHEMA_VERSION = "2"

# the tables schema 1 and 2 share, and the columns of an evaluation both store
SCHEMA_RUNS = """
CREATE TABLE codesign_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec_toml TEXT NOT NULL,
    spec_hash TEXT NOT NULL, parent_run_id TEXT, created TEXT NOT NULL, status TEXT NOT NULL,
    code_version TEXT, iterations_total INTEGER NOT NULL, driver TEXT);
CREATE TABLE subspaces (
    run_id INTEGER NOT NULL, subspace_id INTEGER NOT NULL, groups_json TEXT NOT NULL,
    PRIMARY KEY (run_id, subspace_id));
"""
SCHEMA_EVALUATION_COLUMNS = """
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, particle INTEGER NOT NULL,
    subspace_id INTEGER NOT NULL, stage INTEGER NOT NULL, stage_value REAL, status TEXT NOT NULL,
    message TEXT NOT NULL, wall_s REAL NOT NULL, worker TEXT NOT NULL,"""
SCHEMA_ITERATIONS = """CREATE TABLE iterations (
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, best_stage INTEGER, best_value REAL,
    best_subspace_id INTEGER, n_failed INTEGER NOT NULL, evals_wall_s REAL NOT NULL,
    finished TEXT NOT NULL, state_npz BLOB, PRIMARY KEY (run_id, iteration));
"""
_SCHEMA = SCHEMA_RUNS + """CREATE TABLE name_sets (set_id INTEGER PRIMARY KEY, names_json TEXT NOT NULL);
CREATE TABLE evaluations (""" + SCHEMA_EVALUATION_COLUMNS + """
    param_names INTEGER NOT NULL, params BLOB NOT NULL,
    metric_names INTEGER NOT NULL, metrics BLOB NOT NULL,
    PRIMARY KEY (run_id, iteration, particle));
""" + SCHEMA_ITERATIONS


TABLES = ("codesign_meta", "runs", "subspaces", "name_sets", "evaluations", "iterations")

# the evaluations' columns the readers return (the packed vectors are read apart)
EVALUATION_COLUMNS = ("run_id", "iteration", "particle", "subspace_id", "stage", "stage_value",
                      "status", "message", "wall_s", "worker")
VALUE_COLUMNS = ("run_id", "iteration", "particle", "name", "value")


def _connect(path: Path, readonly: bool) -> sqlite3.Connection:
    """A connection to an existing database file. Read-only: where the file and its folder
    are writable, a read-write connection with ``query_only`` -- SQLite then removes the
    -wal and -shm files when the last connection closes, which a ``mode=ro`` connection
    never does (it would leave them beside every run it read)."""
    writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    mode = "rw" if writable or not readonly else "ro"
    conn = sqlite3.connect(f"file:{path.resolve()}?mode={mode}", uri=True, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 10000")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    return conn


class RunStore(abc.ABC):
    """Contract of a run store (every backend must pass tests/optimize/test_store_*.py).

    - Only the driver writes; it calls :meth:`create_run` once, then
      :meth:`write_iteration` once per iteration, in iteration order, then
      :meth:`set_status`. Each ``write_iteration`` is atomic: after a crash the store holds
      whole iterations only, and the state of the last one (:meth:`load_state`) continues
      the run bit-exactly.
    - Readers (:meth:`runs`, :meth:`evaluations`, :meth:`params`, :meth:`metrics`,
      :meth:`iterations`) return pandas DataFrames and may run in other processes while a
      run is being written; they see whole iterations, and reads grouped in
      ``with store.snapshot():`` see the same iterations.
    - Records are stored as given; failed evaluations are stored like successful ones with
      their status and message; non-finite numbers are stored as missing (NULL / NaN).
    - A file that is not a store of this kind, or is damaged, raises :class:`UserError`
      naming the file, never a backend exception.
    """

    @abc.abstractmethod
    def create_run(self, name: str, spec_toml: str, spec_hash: str, parent: str,
                   iterations_total: int, subspaces: list[dict]) -> int:
        """A new run with status "running"; returns its run_id."""

    @abc.abstractmethod
    def write_iteration(self, run_id: int, iteration: int, candidates: Sequence[Candidate],
                        records: Sequence[EvalRecord], best: tuple, state: dict[str, np.ndarray]) -> None:
        """Atomically store one iteration: evaluations, parameters, metrics, best, state.

        best = (key, subspace_id) of the global best after the iteration (see fitness.py).
        """

    @abc.abstractmethod
    def set_status(self, run_id: int, status: str) -> None:
        """"running" | "finished" | "failed"."""

    @abc.abstractmethod
    def load_state(self, run_id: int) -> tuple[int, dict[str, np.ndarray]] | None:
        """(last stored iteration, optimizer state after it), or None before the first."""

    @abc.abstractmethod
    def runs(self) -> pd.DataFrame: ...

    @abc.abstractmethod
    def evaluations(self, run_id: int | None = None) -> pd.DataFrame: ...

    @abc.abstractmethod
    def params(self, run_id: int | None = None, wide: bool = False,
               keys: Sequence[tuple[int, int]] | None = None) -> pd.DataFrame: ...

    @abc.abstractmethod
    def metrics(self, run_id: int | None = None, wide: bool = False,
                keys: Sequence[tuple[int, int]] | None = None) -> pd.DataFrame: ...

    @abc.abstractmethod
    def iterations(self, run_id: int | None = None) -> pd.DataFrame: ...


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _real(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


PACKED = np.dtype("<f8")      # one packed value: little-endian float64, 8 bytes


def pack_values(values: Mapping[str, float]) -> tuple[tuple[str, ...], bytes]:
    """(names sorted, their values as one little-endian float64 BLOB); a non-finite value
    becomes NaN (as schema 1 stored it: NULL). Equal mappings give equal bytes."""
    names = tuple(sorted(values))
    packed = np.array([float(values[n]) for n in names], dtype=PACKED)
    packed[~np.isfinite(packed)] = np.nan
    return names, packed.tobytes()


def unpack_values(blob: bytes, count: int) -> np.ndarray:
    """The ``count`` float64 values of a packed BLOB (ValueError if its length differs)."""
    if len(blob) != count * PACKED.itemsize:
        raise ValueError(f"packed vector of {len(blob)} bytes; expected {count} x 8")
    return np.frombuffer(blob, dtype=PACKED)


def insert_name_sets(c: sqlite3.Connection, known: dict[tuple[str, ...], int],
                     wanted: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], int]:
    """The set ids of ``wanted`` name lists: ``known`` ones as they are, new ones inserted
    (ids in first-seen order, so equal runs get equal ids). Returns known + new; the caller
    keeps it only once the transaction commits."""
    ids = dict(known)
    for names in wanted:
        if names not in ids:
            ids[names] = max(ids.values(), default=0) + 1
            c.execute("INSERT INTO name_sets VALUES (?, ?)", (ids[names], json.dumps(list(names))))
    return ids


class EvaluationRow(NamedTuple):
    """One evaluation as schema 2 stores it: ``columns`` are the values of
    EVALUATION_COLUMNS in that order; ``params`` and ``metrics`` are packed on insert."""

    columns: tuple
    params: Mapping[str, float]
    metrics: Mapping[str, float]


def insert_evaluations(c: sqlite3.Connection, known: dict[tuple[str, ...], int],
                       rows: Sequence[EvaluationRow]) -> dict[tuple[str, ...], int]:
    """Insert evaluations (their vectors packed, new name lists into ``name_sets``) in the
    caller's transaction; returns the name-set ids known afterwards (see insert_name_sets)."""
    packed = [(row.columns, *pack_values(row.params), *pack_values(row.metrics)) for row in rows]
    ids = insert_name_sets(c, known, [names for p in packed for names in (p[1], p[3])])
    c.executemany("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  [(*columns, ids[pn], pb, ids[mn], mb) for columns, pn, pb, mn, mb in packed])
    return ids


def insert_iteration(c: sqlite3.Connection, run_id: int, iteration: int, records: Sequence[EvalRecord],
                     best: tuple, state_blob: bytes) -> None:
    """The iteration's row (best after it, failures, summed wall time, state) in the
    caller's transaction; the previous iterations' states are dropped (see the module)."""
    key, best_subspace = best
    has_best = key[0] == 0.0
    c.execute("UPDATE iterations SET state_npz = NULL WHERE run_id = ? AND state_npz IS NOT NULL", (run_id,))
    c.execute("INSERT INTO iterations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
              (run_id, iteration, int(-key[1]) if has_best else None,
               _real(key[2]) if has_best else None, int(best_subspace) if has_best else None,
               sum(not r.ok for r in records), float(sum(r.wall_s for r in records)), _now(), state_blob))


def read_name_sets(c: sqlite3.Connection) -> dict[int, tuple[str, ...]]:
    """set_id -> its names, from the ``name_sets`` table."""
    return {int(i): tuple(json.loads(text)) for i, text in c.execute("SELECT set_id, names_json FROM name_sets")}


def _insert_run(c: sqlite3.Connection, name, spec_toml, spec_hash, parent, iterations_total,
                subspaces) -> int:
    from codesign import __version__ as code_version

    with _transaction(c):
        cur = c.execute(
            "INSERT INTO runs (name, spec_toml, spec_hash, parent_run_id, created, status, "
            "code_version, iterations_total, driver) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
            (name, spec_toml, spec_hash, parent or None, _now(), str(code_version),
             int(iterations_total), this_driver()))
        run_id = int(cur.lastrowid)
        c.executemany("INSERT INTO subspaces VALUES (?, ?, ?)",
                      [(run_id, s["subspace_id"], json.dumps(s["groups"])) for s in subspaces])
    return run_id


@contextlib.contextmanager
def _transaction(c: sqlite3.Connection):
    """BEGIN IMMEDIATE ... COMMIT; anything raised in between (an interrupt too) rolls the
    whole transaction back, so the connection is usable again and nothing half is kept."""
    c.execute("BEGIN IMMEDIATE")
    try:
        yield c
    except BaseException:
        if c.in_transaction:
            c.execute("ROLLBACK")
        raise
    c.execute("COMMIT")


PAGE_SIZE = 16384     # bytes; 4096 (SQLite's default) leaves ~15 % of each evaluations page
                      # empty (3-4 rows of ~1 kB fit), 65536 costs a page per small table
WAL_PAGES = 256       # checkpoint the WAL at 4 MB, as SQLite's default (1000 pages of 4 kB)


def create_schema(conn: sqlite3.Connection, schema: str = _SCHEMA, version: str = SCHEMA_VERSION,
                  page_size: int = PAGE_SIZE) -> None:
    """The tables of a run database (WAL mode, ``page_size`` pages) in an empty one, with
    its codesign_meta."""
    conn.execute(f"PRAGMA page_size = {int(page_size)}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript("BEGIN;" + schema + "COMMIT;")
    conn.executemany("INSERT INTO codesign_meta VALUES (?, ?)",
                     [("application", APPLICATION), ("schema_version", version)])


def _build_and_link(path: Path, run: dict | None, schema: str = _SCHEMA,
                    version: str = SCHEMA_VERSION, page_size: int = PAGE_SIZE) -> int | None:
    """Write the schema (and the run) into a temporary file beside ``path``, then link it
    to ``path`` (fails if ``path`` exists: no overwrite, no half-made database)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    run_id = None
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            create_schema(conn, schema, version, page_size)
            if run is not None:
                run_id = _insert_run(conn, **run)
        finally:
            conn.close()          # the last connection: the WAL is checkpointed and removed
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise UserError(f"{path}: already exists; expected a new run database path") from None
        except OSError:           # a file system without hard links (the driver lock still
            if path.exists():     # keeps a second driver away)
                raise UserError(f"{path}: already exists; expected a new run database path") from None
            os.rename(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return run_id


class SQLiteRunStore(RunStore):
    """A run store in one SQLite file. ``create=True`` makes a new file (it must not exist)."""

    schema_sql = _SCHEMA
    schema_version = SCHEMA_VERSION
    tables = TABLES
    page_size = PAGE_SIZE

    def __init__(self, path: str | Path, create: bool = False, readonly: bool = False,
                 run: dict | None = None):
        """``create=True``: a new file holding the schema and, if ``run`` is given (the
        keyword arguments of :meth:`create_run`), that run -- built under a temporary name
        and linked into place, so the path either does not exist or holds all of it (two
        drivers creating the same path: one wins, the other gets a UserError)."""
        self.path = Path(path)
        self.run_id: int | None = None
        self._name_ids: dict[tuple[str, ...], int] | None = None    # the writer's name sets
        if create:
            if self.path.exists():
                raise UserError(f"{self.path}: already exists; expected a new run database path")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.run_id = _build_and_link(self.path, run, self.schema_sql, self.schema_version,
                                          self.page_size)
            self._conn = _connect(self.path, readonly=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")   # WAL: safe against process death
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
            return
        if not self.path.is_file():
            raise UserError(f"{self.path}: no such run database; expected results/<name>/run.sqlite")
        try:
            self._conn = _connect(self.path, readonly)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: unreadable or corrupt database ({exc}); "
                            f"expected a codesign run database") from None
        try:
            self._check_schema()
            if not readonly:
                self._guard(lambda: self._conn.execute("PRAGMA journal_mode=WAL"))
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
        except BaseException:
            self.close()       # the last connection to close removes the -wal and -shm files
            raise

    def _check_schema(self) -> None:
        try:
            tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "codesign_meta" not in tables:
                raise UserError(f"{self.path}: not a codesign run database (no codesign_meta table); "
                                f"expected a file written by `codesign optimize`")
            meta = dict(self._conn.execute("SELECT key, value FROM codesign_meta"))
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: unreadable or corrupt database ({exc}); "
                            f"expected a codesign run database") from None
        if meta.get("application") != APPLICATION:
            raise UserError(f"{self.path}: not a codesign run database (application = "
                            f"{meta.get('application')!r}); expected {APPLICATION!r}")
        found = meta.get("schema_version")
        if found != self.schema_version:
            if found == "1" and self.schema_version == SCHEMA_VERSION:
                raise UserError(f"{self.path}: run database schema '1' (long format, before compact "
                                f"storage); expected {SCHEMA_VERSION!r}: convert it with `codesign "
                                f"migrate {self.path.parent}`")
            raise UserError(f"{self.path}: run database schema {found!r}; "
                            f"expected {self.schema_version!r}")
        missing = [t for t in self.tables if t not in tables]
        if missing:
            raise UserError(f"{self.path}: damaged run database (table {', '.join(missing)} missing); "
                            f"expected the tables of a codesign run database")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "SQLiteRunStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _guard(self, action):
        """Run a database action; damage found on the way becomes a UserError."""
        try:
            return action()
        except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:
            raise UserError(f"{self.path}: corrupt run database ({exc}); "
                            f"expected a codesign run database") from None

    # -- writing ------------------------------------------------------------------------
    def create_run(self, name, spec_toml, spec_hash, parent, iterations_total, subspaces) -> int:
        return self._guard(lambda: _insert_run(self._conn, name, spec_toml, spec_hash, parent,
                                               iterations_total, subspaces))

    def write_iteration(self, run_id, iteration, candidates, records, best, state) -> None:
        rows = [EvaluationRow((run_id, iteration, cand.particle, cand.subspace_id, int(rec.stage),
                               _real(rec.stage_value), rec.status, rec.message, float(rec.wall_s),
                               rec.worker), cand.params, rec.metrics)
                for cand, rec in zip(candidates, records, strict=True)]
        state_blob = state_to_bytes(state)
        if self._name_ids is None:
            self._name_ids = {names: i for i, names in self._guard(
                lambda: read_name_sets(self._conn)).items()}

        def write():
            with _transaction(self._conn) as c:
                ids = insert_evaluations(c, self._name_ids, rows)
                insert_iteration(c, run_id, iteration, records, best, state_blob)
            self._name_ids = ids          # only once committed
        self._guard(write)

    def checkpoint(self) -> int:
        """Move the WAL's pages into the database file (a writer); returns the file's size
        in bytes, what the run occupies on disk once its WAL is gone."""
        self._guard(lambda: self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
        return self.path.stat().st_size

    def set_status(self, run_id, status) -> None:
        self._guard(lambda: self._conn.execute("UPDATE runs SET status = ?, driver = ? WHERE run_id = ?",
                                               (status, this_driver(), run_id)))

    def load_state(self, run_id):
        row = self._guard(lambda: self._conn.execute(
            "SELECT iteration, state_npz FROM iterations WHERE run_id = ? ORDER BY iteration DESC LIMIT 1",
            (run_id,)).fetchone())
        if row is None:
            return None
        if row[1] is None:
            raise UserError(f"{self.path}: iteration {row[0]} has no stored state; expected the "
                            f"latest iteration to hold the optimizer state")
        try:
            return int(row[0]), state_from_bytes(row[1])
        except (ValueError, OSError, zipfile.BadZipFile) as exc:
            raise UserError(f"{self.path}: stored optimizer state unreadable ({exc})") from None

    # -- reading ------------------------------------------------------------------------
    @contextlib.contextmanager
    def snapshot(self):
        """Reads inside ``with store.snapshot():`` all see the same committed iterations."""
        self._guard(lambda: self._conn.execute("BEGIN"))
        try:
            yield self
        finally:
            if self._conn.in_transaction:
                self._conn.execute("COMMIT")

    def rows(self, sql: str, args: Sequence = ()) -> list[tuple]:
        """The rows of one read-only SQL query (damage: UserError)."""
        return self._guard(lambda: self._conn.execute(sql, tuple(args)).fetchall())

    def _frame(self, sql: str, run_id: int | None) -> pd.DataFrame:
        where = "" if run_id is None else " WHERE run_id = ?"
        params = () if run_id is None else (int(run_id),)
        return self._guard(lambda: pd.read_sql_query(sql + where, self._conn, params=params))

    def runs(self) -> pd.DataFrame:
        return self._frame("SELECT * FROM runs", None)

    def subspaces(self, run_id: int | None = None) -> pd.DataFrame:
        return self._frame("SELECT * FROM subspaces", run_id)

    def evaluations(self, run_id=None) -> pd.DataFrame:
        return self._frame(f"SELECT {', '.join(EVALUATION_COLUMNS)} FROM evaluations", run_id).sort_values(
            ["run_id", "iteration", "particle"], ignore_index=True)

    def params(self, run_id=None, wide=False, keys=None) -> pd.DataFrame:
        """Parameters, long (run_id, iteration, particle, name, value; sorted) or ``wide``
        (one column per name, NaN where unused); ``keys`` [(iteration, particle), ...]
        limits them to those evaluations."""
        return self._long_or_wide(self._values("param_names", "params", run_id, keys), wide)

    def metrics(self, run_id=None, wide=False, keys=None) -> pd.DataFrame:
        """Metrics, as :meth:`params`."""
        return self._long_or_wide(self._values("metric_names", "metrics", run_id, keys), wide)

    def iterations(self, run_id=None) -> pd.DataFrame:
        return self._frame("SELECT run_id, iteration, best_stage, best_value, best_subspace_id, "
                           "n_failed, evals_wall_s, finished FROM iterations", run_id).sort_values(
            ["run_id", "iteration"], ignore_index=True)

    def _values(self, names_column: str, column: str, run_id: int | None, keys) -> pd.DataFrame:
        """The packed vectors of ``column`` unpacked into the long frame schema 1 stored:
        VALUE_COLUMNS, one row per (evaluation, name)."""
        sql = f"SELECT run_id, iteration, particle, {names_column}, {column} FROM evaluations"
        where, args = ([] if run_id is None else ["run_id = ?"]), ([] if run_id is None else [int(run_id)])
        if keys is None:
            rows = self._guard(lambda: self._conn.execute(
                sql + (" WHERE " + where[0] if where else ""), args).fetchall())
        else:
            wanted = sorted({(int(i), int(p)) for i, p in keys})
            rows = []
            for start in range(0, len(wanted), 5000):          # SQLite's limit on bound variables
                chunk = wanted[start:start + 5000]
                match = "(iteration, particle) IN (VALUES " + ", ".join(["(?, ?)"] * len(chunk)) + ")"
                rows += self._guard(lambda: self._conn.execute(
                    sql + " WHERE " + " AND ".join(where + [match]),
                    args + [v for k in chunk for v in k]).fetchall())
        sets = self._guard(lambda: read_name_sets(self._conn))
        return self._unpack(rows, sets, column)

    def _unpack(self, rows: list, sets: dict[int, tuple[str, ...]], column: str) -> pd.DataFrame:
        by_set: dict[int, list] = {}
        for row in rows:
            by_set.setdefault(row[3], []).append(row)
        parts = []
        for set_id, group in by_set.items():
            names = sets.get(set_id)
            if names is None:
                raise UserError(f"{self.path}: corrupt run database (evaluation {group[0][1]}:"
                                f"{group[0][2]} names set {set_id}, not in name_sets); expected a "
                                f"codesign run database")
            if not names:
                continue
            try:
                values = np.concatenate([unpack_values(r[4], len(names)) for r in group])
            except (ValueError, TypeError) as exc:
                raise UserError(f"{self.path}: corrupt run database ({column}: {exc}); expected a "
                                f"codesign run database") from None
            index = np.array([r[:3] for r in group], dtype=np.int64).repeat(len(names), axis=0)
            parts.append((index, np.tile(np.array(names, dtype=object), len(group)), values))
        if not parts:
            return pd.DataFrame(columns=list(VALUE_COLUMNS))   # as an empty query gave
        index = np.concatenate([p[0] for p in parts])
        return pd.DataFrame({"run_id": index[:, 0], "iteration": index[:, 1], "particle": index[:, 2],
                             "name": np.concatenate([p[1] for p in parts]),
                             "value": np.concatenate([p[2] for p in parts])})

    @staticmethod
    def _long_or_wide(frame: pd.DataFrame, wide: bool) -> pd.DataFrame:
        index = ["run_id", "iteration", "particle"]
        if not wide:
            return frame.sort_values(index + ["name"], ignore_index=True)
        table = frame.pivot_table(index=index, columns="name", values="value", aggfunc="first",
                                  dropna=False)
        table.columns.name = None
        return table.reset_index()


RUN_FILE = "run.sqlite"


def find_run_database(run: str | Path) -> Path:
    """The database file of RUN as the commands accept it: the file itself, a run folder
    (``results/<name>``) or a bare run name looked up as ``results/<name>``."""
    path = Path(run)
    if path.is_file():
        return path
    bare = len(path.parts) == 1 and not path.is_absolute()      # a run name
    candidates = [path / RUN_FILE] + ([Path("results") / path / RUN_FILE] if bare else [])
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise UserError(f"{run}: no run found (looked for {', '.join(map(str, candidates))}); expected "
                    f"a run folder results/<name> made by `codesign optimize`, its {RUN_FILE}, "
                    "or a run name")


def open_run(path: str | Path, readonly: bool = False) -> SQLiteRunStore:
    """The store of a run given its folder (results/<name>) or its run.sqlite file."""
    path = Path(path)
    if path.is_dir():
        path = path / RUN_FILE
    return SQLiteRunStore(path, readonly=readonly)
