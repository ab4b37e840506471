"""Convert a run database of schema 1 (long format) to schema 2 (packed vectors), atomically.

``migrate_run(RUN)`` takes the run's driver lock (a live driver: refused), reads the old
file through :class:`codesign.run.schema1.SQLiteRunStoreV1`, writes every run, subspace,
evaluation and iteration (with the stored optimizer state, byte for byte) into a new file
beside it, and replaces the old file with it (``os.replace``): the path holds the old
database or the new one, never half of either. The new file is what an uninterrupted run
of today's code would have written (names sorted, name-set ids in first-seen order), plus
``codesign_meta.migrated_from = "1"``; its readers return the DataFrames the old ones did.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import NamedTuple

from codesign.errors import UserError
from codesign.run.schema1 import SQLiteRunStoreV1
from codesign.run.schema1 import VERSION as OLD_VERSION
from codesign.run.lock import DriverLock, driver_alive
from codesign.run.store import SCHEMA_VERSION, _transaction, create_schema, find_run_database, insert_evaluations


class Migration(NamedTuple):
    """What ``migrate_run`` did: ``path`` (the run database), the schema versions before
    and after (equal: nothing to do), evaluations copied, file sizes (bytes) before and after."""

    path: Path
    from_version: str
    to_version: str
    evaluations: int
    bytes_before: int
    bytes_after: int


def schema_version(path: Path) -> str | None:
    """The schema_version in a database's codesign_meta (None: not readable as one; the
    store then names what is wrong)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)) as c:
            row = c.execute("SELECT value FROM codesign_meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def migrate_run(run: str | Path) -> Migration:
    """Convert RUN (a run folder, its run.sqlite or a run name) to the current schema.
    UserError: a live driver, a database open in another process, not a schema-1 run."""
    path = find_run_database(run)
    before = path.stat().st_size
    with DriverLock(path):
        found = schema_version(path)
        if found == SCHEMA_VERSION:
            return Migration(path, found, found, 0, before, before)
        if found not in (OLD_VERSION, None):
            raise UserError(f"{path}: run database schema {found!r}; expected {OLD_VERSION!r} to "
                            f"migrate (or {SCHEMA_VERSION!r}: nothing to do)")
        tmp = path.with_name(f".{path.name}.migrate.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            with SQLiteRunStoreV1(path, readonly=True) as old:
                count = _copy(old, tmp)
            wal = path.with_name(path.name + "-wal")
            if wal.exists():       # another connection is open: replacing would strand it
                raise UserError(f"{path}: open in another process ({wal.name} present); expected no "
                                f"driver or reader while migrating: close it and run `codesign "
                                f"migrate {path.parent}` again")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return Migration(path, OLD_VERSION, SCHEMA_VERSION, count, before, path.stat().st_size)


def _copy(old: SQLiteRunStoreV1, tmp: Path) -> int:
    """Every row of ``old`` into a new schema-2 file ``tmp``; returns the evaluations copied."""
    runs = old.rows("SELECT * FROM runs ORDER BY run_id")
    for run in old.runs().itertuples():
        if run.status == "running" and driver_alive(run.driver, other_host=False):
            raise UserError(f"{old.path.parent}: run {run.name!r} is being run by {run.driver}; "
                            f"expected a stopped or finished run to migrate")
    count = 0
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        create_schema(conn)
        conn.execute("INSERT INTO codesign_meta VALUES ('migrated_from', ?)", (OLD_VERSION,))
        with _transaction(conn) as c:
            c.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", runs)
            c.executemany("INSERT INTO subspaces VALUES (?, ?, ?)",
                          old.rows("SELECT * FROM subspaces ORDER BY run_id, subspace_id"))
            known: dict[tuple[str, ...], int] = {}
            for iteration_row in old.rows("SELECT * FROM iterations ORDER BY run_id, iteration"):
                rows = old.iteration_rows(iteration_row[0], iteration_row[1])
                known = insert_evaluations(c, known, rows)
                c.execute("INSERT INTO iterations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", iteration_row)
                count += len(rows)
            stored = c.execute("SELECT count(*) FROM evaluations").fetchone()[0]
            expected = old.rows("SELECT count(*) FROM evaluations")[0][0]
            if stored != expected:   # evaluations of an iteration that has no iterations row
                raise UserError(f"{old.path}: {expected - stored} evaluations belong to no stored "
                                f"iteration; expected a database written by `codesign optimize`")
    finally:
        conn.close()          # the last connection: the WAL is checkpointed and removed
    return count
