"""Run store: every evaluation of an optimization run, and the state to resume it.

The contract is :class:`RunStore` (written in the manner of Optuna's ``BaseStorage``);
:class:`SQLiteRunStore` implements it on one SQLite file per run (``results/<name>/run.sqlite``,
WAL mode, stdlib ``sqlite3``). Schema (long format, DESIGN.md §5)::

    codesign_meta(key, value)                       application = "codesign-run", schema_version
    runs(run_id, name, spec_toml, spec_hash, parent_run_id, created, status, code_version,
         iterations_total, driver)
    subspaces(run_id, subspace_id, groups_json)     the group of each pool, as JSON
    evaluations(run_id, iteration, particle, subspace_id, stage, stage_value, status,
                message, wall_s, worker)
    eval_params(run_id, iteration, particle, name, value)
    eval_metrics(run_id, iteration, particle, name, value)
    iterations(run_id, iteration, best_stage, best_value, best_subspace_id, n_failed,
               evals_wall_s, finished, state_npz)

``state_npz`` is a zip of ``.npy`` arrays (numpy's .npz layout, no pickle, fixed zip
timestamps so equal states give equal bytes) holding the optimizer and RNG state after
that iteration. Only the latest iteration keeps its state (older ones are set to NULL in
the same transaction): the evaluations already record the whole history, and a
200-particle co-design state would otherwise grow the file by megabytes per iteration.
A NaN (failed stage value, non-finite metric) is stored as NULL.
"""

from __future__ import annotations

import abc
import contextlib
import io
import json
import math
import os
import socket
import sqlite3
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from codesign.errors import UserError
from codesign.types import Candidate, EvalRecord

APPLICATION = "codesign-run"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE codesign_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec_toml TEXT NOT NULL,
    spec_hash TEXT NOT NULL, parent_run_id TEXT, created TEXT NOT NULL, status TEXT NOT NULL,
    code_version TEXT, iterations_total INTEGER NOT NULL, driver TEXT);
CREATE TABLE subspaces (
    run_id INTEGER NOT NULL, subspace_id INTEGER NOT NULL, groups_json TEXT NOT NULL,
    PRIMARY KEY (run_id, subspace_id));
CREATE TABLE evaluations (
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, particle INTEGER NOT NULL,
    subspace_id INTEGER NOT NULL, stage INTEGER NOT NULL, stage_value REAL, status TEXT NOT NULL,
    message TEXT NOT NULL, wall_s REAL NOT NULL, worker TEXT NOT NULL,
    PRIMARY KEY (run_id, iteration, particle));
CREATE TABLE eval_params (
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, particle INTEGER NOT NULL,
    name TEXT NOT NULL, value REAL, PRIMARY KEY (run_id, iteration, particle, name));
CREATE TABLE eval_metrics (
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, particle INTEGER NOT NULL,
    name TEXT NOT NULL, value REAL, PRIMARY KEY (run_id, iteration, particle, name));
CREATE TABLE iterations (
    run_id INTEGER NOT NULL, iteration INTEGER NOT NULL, best_stage INTEGER, best_value REAL,
    best_subspace_id INTEGER, n_failed INTEGER NOT NULL, evals_wall_s REAL NOT NULL,
    finished TEXT NOT NULL, state_npz BLOB, PRIMARY KEY (run_id, iteration));
"""


TABLES = ("codesign_meta", "runs", "subspaces", "evaluations", "eval_params", "eval_metrics",
          "iterations")


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
    def params(self, run_id: int | None = None, wide: bool = False) -> pd.DataFrame: ...

    @abc.abstractmethod
    def metrics(self, run_id: int | None = None, wide: bool = False) -> pd.DataFrame: ...

    @abc.abstractmethod
    def iterations(self, run_id: int | None = None) -> pd.DataFrame: ...


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _real(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def state_to_bytes(state: dict[str, np.ndarray]) -> bytes:
    """An .npz archive (no pickle) with fixed timestamps: equal states -> equal bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(state):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            array_bytes = io.BytesIO()
            np.lib.format.write_array(array_bytes, np.asarray(state[name]), allow_pickle=False)
            archive.writestr(info, array_bytes.getvalue(), compresslevel=1)
    return buffer.getvalue()


def state_from_bytes(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def this_driver() -> str:
    """HOST:PID of this process, as run databases and driver locks record a driver."""
    return f"{socket.gethostname()}:{os.getpid()}"


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


def _build_and_link(path: Path, run: dict | None) -> int | None:
    """Write the schema (and the run) into a temporary file beside ``path``, then link it
    to ``path`` (fails if ``path`` exists: no overwrite, no half-made database)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    run_id = None
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript("BEGIN;" + _SCHEMA + "COMMIT;")
            conn.executemany("INSERT INTO codesign_meta VALUES (?, ?)",
                             [("application", APPLICATION), ("schema_version", SCHEMA_VERSION)])
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

    def __init__(self, path: str | Path, create: bool = False, readonly: bool = False,
                 run: dict | None = None):
        """``create=True``: a new file holding the schema and, if ``run`` is given (the
        keyword arguments of :meth:`create_run`), that run -- built under a temporary name
        and linked into place, so the path either does not exist or holds all of it (two
        drivers creating the same path: one wins, the other gets a UserError)."""
        self.path = Path(path)
        self.run_id: int | None = None
        if create:
            if self.path.exists():
                raise UserError(f"{self.path}: already exists; expected a new run database path")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.run_id = _build_and_link(self.path, run)
            self._conn = _connect(self.path, readonly=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")   # WAL: safe against process death
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
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise UserError(f"{self.path}: run database schema {meta.get('schema_version')!r}; "
                            f"expected {SCHEMA_VERSION!r}")
        missing = [t for t in TABLES if t not in tables]
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
        key, best_subspace = best
        has_best = key[0] == 0.0
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
                write_rows(c)

        def write_rows(c):
            c.executemany("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", eval_rows)
            c.executemany("INSERT INTO eval_params VALUES (?, ?, ?, ?, ?)", param_rows)
            c.executemany("INSERT INTO eval_metrics VALUES (?, ?, ?, ?, ?)", metric_rows)
            c.execute("UPDATE iterations SET state_npz = NULL WHERE run_id = ? AND state_npz IS NOT NULL",
                      (run_id,))
            c.execute("INSERT INTO iterations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (run_id, iteration, int(-key[1]) if has_best else None,
                       _real(key[2]) if has_best else None, int(best_subspace) if has_best else None,
                       sum(not r.ok for r in records), float(sum(r.wall_s for r in records)),
                       _now(), state_blob))
        self._guard(write)

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

    def _frame(self, sql: str, run_id: int | None) -> pd.DataFrame:
        where = "" if run_id is None else " WHERE run_id = ?"
        params = () if run_id is None else (int(run_id),)
        return self._guard(lambda: pd.read_sql_query(sql + where, self._conn, params=params))

    def runs(self) -> pd.DataFrame:
        return self._frame("SELECT * FROM runs", None)

    def subspaces(self, run_id: int | None = None) -> pd.DataFrame:
        return self._frame("SELECT * FROM subspaces", run_id)

    def evaluations(self, run_id=None) -> pd.DataFrame:
        return self._frame("SELECT * FROM evaluations", run_id).sort_values(
            ["run_id", "iteration", "particle"], ignore_index=True)

    def params(self, run_id=None, wide=False) -> pd.DataFrame:
        return self._long_or_wide(self._frame("SELECT * FROM eval_params", run_id), wide)

    def metrics(self, run_id=None, wide=False) -> pd.DataFrame:
        return self._long_or_wide(self._frame("SELECT * FROM eval_metrics", run_id), wide)

    def iterations(self, run_id=None) -> pd.DataFrame:
        return self._frame("SELECT run_id, iteration, best_stage, best_value, best_subspace_id, "
                           "n_failed, evals_wall_s, finished FROM iterations", run_id).sort_values(
            ["run_id", "iteration"], ignore_index=True)

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


def driver_alive(driver: str | None, other_host: bool = True) -> bool:
    """Whether the driver process recorded as host:pid still runs (another host: cannot
    tell, ``other_host`` is returned)."""
    host, _, pid = (driver or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return other_host
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lock_path(database: Path) -> Path:
    """The driver lock of a run database: ``results/<name>/run.sqlite.lock``."""
    return database.with_name(database.name + ".lock")


class DriverLock:
    """One driver per run database, for as long as the driver lives.

    The lock is ``flock`` on ``run.sqlite.lock`` beside the database, which holds the
    HOST:PID of its driver. The kernel releases an flock when its process dies however it
    dies (SIGKILL, a crash), so a lock left by a dead driver is stale by construction: the
    next driver takes it and writes its own HOST:PID. A live holder's HOST:PID is what the
    refusal names. On a file system without flock the HOST:PID in the file decides, as
    :func:`driver_alive` judges it (another host: assumed alive; delete the file when
    that driver is known to be gone). Released (the file removed) on :meth:`release`.
    """

    def __init__(self, database: str | Path):
        self.database = Path(database)
        self.path = lock_path(self.database)
        self._fd: int | None = None

    def _refuse(self, holder: str, note: str = "") -> UserError:
        host, _, pid = holder.rpartition(":")
        how = (f"wait for it or stop it (kill -INT {pid} on {host})" if holder else
               "wait for it")
        return UserError(f"{self.database.parent}: already being run by {holder or 'another driver'}"
                         f"{note}; expected one driver per run: {how}, then `codesign resume "
                         f"{self.database.parent}`")

    def acquire(self) -> "DriverLock":
        import fcntl

        me = this_driver()
        for _ in range(20):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                raise UserError(f"{self.path}: cannot create the driver lock ({exc.strerror}); "
                                f"expected a writable run folder") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise self._refuse(holder) from None
            except OSError:          # no flock here: the recorded HOST:PID decides
                holder = _read_holder(fd)
                if holder and holder != me and driver_alive(holder, other_host=True):
                    os.close(fd)
                    raise self._refuse(holder, f" (no file locks here; if it is gone, delete "
                                               f"{self.path})") from None
            try:                     # a releasing driver removes the file: lock the one at path
                same = os.path.samestat(os.stat(self.path), os.fstat(fd))
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, me.encode(), 0)
            self._fd = fd
            return self
        raise UserError(f"{self.path}: the driver lock keeps changing hands; expected one driver per run")

    def release(self) -> None:
        if self._fd is not None:
            try:
                self.path.unlink(missing_ok=True)    # while still holding it (see acquire)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> "DriverLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        return os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def find_run_database(run: str | Path) -> Path:
    """The database file of RUN as the commands accept it: the file itself, a run folder
    (``results/<name>``) or a bare run name looked up as ``results/<name>``."""
    path = Path(run)
    if path.is_file():
        return path
    candidates = list(dict.fromkeys([path / RUN_FILE, Path("results") / path / RUN_FILE]))
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
