"""The pipelined MMPSO with real processes: the same database serially and on 1 and 3
Dask workers (whose tasks finish in whatever order), and a driver killed with SIGKILL
resumes to the uninterrupted run's database. The truth is the serial run, apart from
wall times, worker names and timestamps."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from runtools import assert_same_run, iterations_done, wait_for
from runtools import codesign as run_cli

pytestmark = pytest.mark.integration

TOY = """
seed = 12
[problem]
name = "mmpso_toy"
[optimizer]
particles = 12
iterations = 10
pipeline = true
[optimizer.migration]
exploration = 0.2
local = 0.2
global = 0.2
"""

SLOW = """
seed = 5
[problem]
name = "sphere"
[optimizer]
particles = 12
iterations = 14
pipeline = true
[evaluation]
sleep_s = 0.012
"""


def codesign(*args, **kwargs):
    done = run_cli(*args, **kwargs)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_pipelined_runs_are_the_same_database_on_any_number_of_workers(tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(TOY)
    for workers in (0, 1, 3):                   # 0: serial, in the driver: the reference
        codesign("optimize", spec, "--name", f"w{workers}", "--workers", workers, "--quiet", "--results", tmp_path)
        assert iterations_done(tmp_path / f"w{workers}/run.sqlite") == 10
        assert_same_run(tmp_path / "w0/run.sqlite", tmp_path / f"w{workers}/run.sqlite")


def test_a_sigkilled_pipelined_driver_resumes_to_the_same_database(tmp_path):
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW)
    codesign("optimize", spec, "--name", "reference", "--workers", 0, "--quiet", "--results", tmp_path)
    db = tmp_path / "killed/run.sqlite"
    driver = subprocess.Popen([sys.executable, "-m", "codesign.cli", "optimize", str(spec), "--name", "killed",
                               "--workers", "2", "--quiet", "--results", str(tmp_path)])
    try:
        wait_for(lambda: iterations_done(db) >= 4)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(30)
    stopped_at = iterations_done(db)
    assert 4 <= stopped_at < 14
    codesign("resume", tmp_path / "killed", "--workers", "3", "--quiet")
    assert_same_run(tmp_path / "reference/run.sqlite", db)
