"""Helpers of the tests that start real runs (tests/optimize): the CLI as a process, a
run database read without disturbing it, waiting for a condition, and the comparison of
two run databases table by table.

The truth of every "same result" test is :func:`assert_same_run`: all tables equal except
what legitimately differs between executions (wall times, worker names, timestamps, the
driver's host:pid)."""

from __future__ import annotations

import contextlib
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

BIN = Path(sys.executable).parent      # the virtual environment's scripts (dask, codesign)


def codesign(*args, cwd=None, timeout=180) -> subprocess.CompletedProcess:
    """The CLI in a new process, its output captured."""
    return subprocess.run([sys.executable, "-m", "codesign.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


def chosen(*argv):
    """The design, problem, settings and objectives a command's design options ARGV pick
    (:func:`codesign.commands.options.chosen_design`, in this process), as ``codesign
    simulate ARGV`` would replay them."""
    import argparse

    from codesign.commands.options import add_design_arguments, chosen_design

    parser = argparse.ArgumentParser()
    add_design_arguments(parser)
    return chosen_design(parser.parse_args([str(a) for a in argv]))


def replayed(*argv) -> dict[str, float]:
    """The metrics of a stored design replayed as ``codesign simulate ARGV`` does (the
    file and its options, e.g. ``--settings``), in this process."""
    picked = chosen(*argv)
    return picked.problem.walking.replay(picked.design, picked.settings).record.metrics


def start_cli(*args, **kwargs) -> subprocess.Popen:
    """The CLI started in a new process (stdout and stderr piped, text)."""
    return subprocess.Popen([sys.executable, "-m", "codesign.cli", *map(str, args)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def one_line(done: subprocess.CompletedProcess, status: int, pattern: str) -> str:
    """stderr is exactly one line matching ``pattern`` (a regex), and the exit status is ``status``."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == status, done.stderr[-3000:]
    assert len(lines) == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert re.fullmatch(pattern, lines[0]), lines[0]
    return lines[0]


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and mtime: "nothing was written" = equal
    listings (a database's -wal and -shm files left beside it would show here)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if not p.is_dir()}


def query(db: Path, sql: str):
    """One value read by a connection that is closed again (a read-write one: the last
    connection to close removes the -wal and -shm files, a mode=ro one would leave them)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=rw", uri=True)) as c:
        return c.execute(sql).fetchone()[0]


def iterations_done(db: Path) -> int:
    """Complete iterations stored in a run database (0 while it does not exist yet)."""
    try:
        return query(db, "SELECT count(*) FROM iterations")
    except sqlite3.Error:
        return 0


def wait_for(condition, timeout: float = 90.0, poll_s: float = 0.05) -> None:
    """Poll ``condition()`` until it is true; TimeoutError after ``timeout`` seconds."""
    end = time.time() + timeout
    while time.time() < end:
        if condition():
            return
        time.sleep(poll_s)
    raise TimeoutError("condition not reached")


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def comparable(db: Path) -> dict[str, pd.DataFrame]:
    """The tables that must equal an uninterrupted run's: all but wall times, workers and
    timestamps (and the driver)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=rw", uri=True)) as c:
        read = lambda sql: pd.read_sql_query(sql, c)  # noqa: E731
        return {
            "evaluations": read("SELECT run_id, iteration, particle, subspace_id, stage, stage_value, "
                                "status, message FROM evaluations ORDER BY iteration, particle"),
            "packed": read("SELECT run_id, iteration, particle, param_names, params, metric_names, "
                           "metrics FROM evaluations ORDER BY iteration, particle"),
            "name_sets": read("SELECT * FROM name_sets ORDER BY set_id"),
            "iterations": read("SELECT run_id, iteration, best_stage, best_value, best_subspace_id, "
                               "n_failed, state_npz FROM iterations ORDER BY iteration"),
            "runs": read("SELECT spec_hash, status, iterations_total FROM runs"),
            "subspaces": read("SELECT * FROM subspaces ORDER BY run_id, subspace_id"),
        }


def assert_same_run(reference: Path, db: Path) -> None:
    """``db`` equals ``reference`` table by table (:func:`comparable`), exactly, and finished."""
    left, right = comparable(reference), comparable(db)
    for table in left:
        pd.testing.assert_frame_equal(left[table], right[table], check_exact=True, obj=table)
    assert right["runs"].loc[0, "status"] == "finished"
