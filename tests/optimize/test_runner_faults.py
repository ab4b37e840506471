"""Execution with real processes: determinism across worker counts, a worker killed in
mid-run, the driver killed with SIGKILL and resumed. The truth is the serial run: every
database must equal it (evaluations, parameters, metrics, bests and the final optimizer
state), apart from wall times, worker names and timestamps."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from codesign.run.store import open_run
from runtools import BIN, assert_same_run, free_port, iterations_done, wait_for
from runtools import codesign as run_cli

pytestmark = pytest.mark.integration

TOY = """
seed = 9
[problem]
name = "mmpso_toy"
[optimizer]
particles = 16
iterations = 12
[optimizer.migration]
exploration = 0.2
local = 0.2
global = 0.2
"""


def codesign(*args, **kwargs):
    """The CLI in a new process; it must succeed."""
    done = run_cli(*args, **kwargs)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


SLOW = """
seed = 5
[problem]
name = "sphere"
[optimizer]
particles = 16
iterations = {iterations}
[evaluation]
sleep_s = {sleep}
"""


def test_same_database_with_one_and_two_workers(tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(TOY)
    for name, workers in (("serial", 0), ("one", 1), ("two", 2)):
        codesign("optimize", spec, "--name", name, "--workers", workers, "--quiet", "--results", tmp_path)
    assert_same_run(tmp_path / "serial/run.sqlite", tmp_path / "one/run.sqlite")
    assert_same_run(tmp_path / "serial/run.sqlite", tmp_path / "two/run.sqlite")
    with sqlite3.connect(tmp_path / "two/run.sqlite") as c:
        workers = {r[0] for r in c.execute("SELECT DISTINCT worker FROM evaluations")}
        subspaces = {r[0] for r in c.execute("SELECT DISTINCT subspace_id FROM evaluations")}
    assert len(workers) == 2 and subspaces == {1, 2}


@pytest.fixture(scope="module")
def dask_cluster():
    """A `dask scheduler` and two `dask worker` processes (no nanny) on loopback."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    scheduler = subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], **quiet)
    workers = [subprocess.Popen([BIN / "dask", "worker", address, "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard", "--name", f"w{k}"], **quiet) for k in range(2)]
    procs = {"scheduler": scheduler, "workers": workers, "address": address}
    try:
        from distributed import Client
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield procs
    finally:
        for p in [*procs["workers"], scheduler]:     # our own processes, by pid
            p.kill()
            p.wait(10)


def test_killed_worker_loses_nothing(tmp_path, dask_cluster):
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW.format(iterations=10, sleep=0.015) + "count_warmups = true\n")
    codesign("optimize", spec, "--name", "reference", "--workers", 0, "--quiet", "--results", tmp_path)
    db = tmp_path / "cluster/run.sqlite"
    driver = subprocess.Popen([sys.executable, "-m", "codesign.cli", "optimize", str(spec), "--name", "cluster",
                               "--scheduler", dask_cluster["address"], "--quiet", "--results", str(tmp_path)])
    wait_for(lambda: iterations_done(db) >= 3)
    victim = dask_cluster["workers"][0]
    os.kill(victim.pid, signal.SIGKILL)                    # a worker dies in mid-run
    assert driver.wait(120) == 0
    assert iterations_done(db) == 10
    assert_same_run(tmp_path / "reference/run.sqlite", db)
    with sqlite3.connect(db) as c:
        late = {r[0] for r in c.execute("SELECT DISTINCT worker FROM evaluations WHERE iteration >= 8")}
        early = {r[0] for r in c.execute("SELECT DISTINCT worker FROM evaluations WHERE iteration < 2")}
    with open_run(db, readonly=True) as store:
        warmups = set(store.metrics().query("name == 'warmups'")["value"])
    assert len(early) == 2 and len(late) == 1              # both worked, then only the survivor
    assert warmups == {1.0}           # the warm-up hook ran once in each worker before evaluating
    # restart a worker for the next test
    dask_cluster["workers"][0] = subprocess.Popen(
        [BIN / "dask", "worker", dask_cluster["address"], "--nthreads", "1", "--no-nanny", "--no-dashboard",
         "--name", "w2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def test_sigkilled_driver_resumes_to_the_same_database(tmp_path, dask_cluster):
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW.format(iterations=12, sleep=0.008))
    codesign("optimize", spec, "--name", "reference", "--workers", 0, "--quiet", "--results", tmp_path)
    db = tmp_path / "killed/run.sqlite"
    driver = subprocess.Popen([sys.executable, "-m", "codesign.cli", "optimize", str(spec), "--name", "killed",
                               "--workers", "0", "--quiet", "--results", str(tmp_path)])
    wait_for(lambda: iterations_done(db) >= 3)
    driver.send_signal(signal.SIGKILL)
    driver.wait(30)
    stopped_at = iterations_done(db)
    assert 3 <= stopped_at < 12
    listing = codesign("runs", "--results", tmp_path).stdout
    assert "killed" in listing and "stopped" in listing and f"{stopped_at}/12" in listing
    # resume on the dask cluster: the executor may change, the result may not
    codesign("resume", tmp_path / "killed", "--scheduler", dask_cluster["address"], "--quiet")
    assert_same_run(tmp_path / "reference/run.sqlite", db)
    assert "finished" in codesign("runs", "--results", tmp_path).stdout


CODESIGN = """
seed = {seed}
[problem]
name = "exo_codesign"
[optimizer]
algorithm = "mmpso"
particles = 6
iterations = 3
[optimizer.migration]
exploration = 0.3
local = 0.1
global = 0.1
[evaluation]
max_time = 0.5
"""


def test_codesign_same_seed_identical_other_seed_different_but_valid(tmp_path):
    # make run's promise on the real problem, small: serial and two-worker runs of one
    # seed are the same database; another seed differs, and both are valid runs
    dbs = {}
    for name, seed, workers in (("a", 3, 0), ("b", 3, 2), ("c", 4, 0)):
        spec = tmp_path / f"{name}.toml"
        spec.write_text(CODESIGN.format(seed=seed))
        codesign("optimize", spec, "--name", name, "--workers", workers, "--quiet", "--results", tmp_path)
        dbs[name] = tmp_path / name / "run.sqlite"
    assert_same_run(dbs["a"], dbs["b"])
    read = "SELECT subspace_id, stage, stage_value, status FROM evaluations ORDER BY iteration, particle"
    with sqlite3.connect(dbs["a"]) as ca, sqlite3.connect(dbs["c"]) as cc:
        left, right = ca.execute(read).fetchall(), cc.execute(read).fetchall()
        assert len(left) == len(right) == 18 and left != right
        for con in (ca, cc):
            assert con.execute("SELECT status FROM runs").fetchone()[0] == "finished"
            statuses = {r[0] for r in con.execute("SELECT status FROM evaluations")}
            assert statuses <= {"ok"}, statuses   # every candidate gave a record, none failed
