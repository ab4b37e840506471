"""Issue 17: the run machinery under misuse and accidents. Every refusal is one line on
stderr with exit status 2 (an interrupt: 130), names the culprit, and writes nothing."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codesign.run.driver import start_run
from codesign.run.spec import parse_spec

SPHERE = """
name = "{name}"
seed = 3
[problem]
name = "sphere"
[optimizer]
algorithm = "pso"
particles = {particles}
iterations = {iterations}
[evaluation]
{evaluation}
[execution]
mode = "serial"
"""


def sphere(name="run", particles=4, iterations=3, evaluation="") -> str:
    return SPHERE.format(name=name, particles=particles, iterations=iterations, evaluation=evaluation)


def codesign(*args, cwd=None, timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codesign.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


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


# -- 1. `codesign runs` survives a run whose evaluations all failed ---------------------------

def test_runs_lists_a_run_whose_evaluations_all_failed(tmp_path):
    start_run(parse_spec(sphere("allfailed", evaluation="raise_above = -5.0")), tmp_path, progress=False)
    start_run(parse_spec(sphere("fine")), tmp_path, progress=False)
    before = listing(tmp_path)
    done = codesign("runs", "--results", tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:]}
    assert rows["allfailed"][1:6] == ["finished", "3/3", "-", "-", "-"]
    assert rows["fine"][1:3] == ["finished", "3/3"] and rows["fine"][3] != "-"
    assert listing(tmp_path) == before


# -- 7. a damaged database: refused in one line, nothing left beside it -----------------------

def test_resume_and_report_refuse_a_database_without_evaluations(tmp_path):
    path = start_run(parse_spec(sphere("damaged")), tmp_path, progress=False)
    with sqlite3.connect(path) as c:
        c.execute("DROP TABLE evaluations")
    c.close()
    before = listing(tmp_path)
    assert sorted(before) == ["damaged/run.sqlite"]
    for args in (("resume", tmp_path / "damaged"), ("report", tmp_path / "damaged", "--no-gait")):
        done = codesign(*args)
        one_line(done, 2, rf"codesign {args[0]}: error: {re.escape(str(path))}: damaged run database "
                          r"\(table evaluations missing\); expected the tables of a codesign run database")
        assert listing(tmp_path) == before, args         # no -wal, -shm or report/ beside it
    done = codesign("runs", "--results", tmp_path)       # listed as unreadable, not a crash
    assert done.returncode == 0 and "unreadable" in done.stdout and "table evaluations missing" in done.stdout
    assert listing(tmp_path) == before


# -- 2. run names are file names of their own under results/ ----------------------------------

RULE = re.escape("expected a run name of letters, digits, '-', '_', '.' (not starting with '.', at most 200)")


@pytest.mark.parametrize("name", ["../../escaped", "x/y", ".hidden", ""])
def test_optimize_refuses_a_name_that_is_not_a_file_name(tmp_path, name):
    work = tmp_path / "work"
    work.mkdir()
    (work / "s.toml").write_text(sphere("fine"))
    before = listing(tmp_path)
    done = codesign("optimize", "s.toml", "--name", name, "--results", "results", "--quiet", cwd=work)
    one_line(done, 2, rf"codesign optimize: error: --name: got {re.escape(repr(name))}; {RULE}")
    assert listing(tmp_path) == before and not (work / "results").exists()


def test_the_spec_name_follows_the_same_rule(tmp_path):
    (tmp_path / "s.toml").write_text(sphere("../up"))
    done = codesign("optimize", tmp_path / "s.toml", "--results", tmp_path / "results", "--quiet")
    one_line(done, 2, rf"codesign optimize: error: {re.escape(str(tmp_path / 's.toml'))}: name: "
                      rf"got '../up'; {RULE}")
    assert sorted(listing(tmp_path)) == ["s.toml"]
