"""Issue 17: the cluster under a run fails, with real processes -- an external `dask
scheduler` and `dask worker` processes on loopback, the `codesign` CLI as the driver.

- workers SIGKILLed at random (one per stored iteration) and replaced: nothing lost, the database
  equals the serial run's table by table (the truth: :func:`runtools.assert_same_run`);
- the scheduler killed: one line with the resume command, exit 75, status stopped, and
  the resumed run equals the serial one;
- no worker at all: one warning line after the set time, then the driver keeps waiting
  and finishes when a worker comes;
- a local cluster's dashboard: the address printed answers HTTP; --no-dashboard: none.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import threading
import time
import urllib.request

import pytest

from runtools import (BIN, assert_same_run, codesign, free_port, iterations_done, one_line, query, start_cli,
                      wait_for)

pytestmark = pytest.mark.integration

QUIET = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
SPHERE = """
seed = 5
[problem]
name = "sphere"
[optimizer]
particles = 8
iterations = {iterations}
[evaluation]
sleep_s = {sleep}
"""
# the random-kills run's length: long enough for several kills mid-run (one per stored
# iteration, an iteration ~1 s on 3 workers), short enough for CI (150 took 270 s)
FAULT_ITERATIONS = 40
CODESIGN = """
seed = 3
[problem]
name = "exo_codesign"
[optimizer]
algorithm = "mmpso"
particles = 12
iterations = {iterations}
[optimizer.migration]
exploration = 0.3
local = 0.1
global = 0.1
[evaluation]
max_time = 3.0
"""


class Cluster:
    """A `dask scheduler` and `dask worker` processes (single-threaded, no nanny: a SIGKILL
    ends the worker for good) on a free loopback port; every process is ours, ended by pid."""

    def __init__(self, workers: int, env: dict | None = None):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.env = {**os.environ, **(env or {})}
        self.scheduler = subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                           str(self.port), "--no-dashboard"], env=self.env, **QUIET)
        self.workers: list[subprocess.Popen] = []
        self.dead: list[subprocess.Popen] = []
        for _ in range(workers):
            self.add_worker()

    def add_worker(self) -> subprocess.Popen:
        worker = subprocess.Popen([BIN / "dask", "worker", self.address, "--nthreads", "1", "--no-nanny",
                                   "--no-dashboard", "--name", f"w{len(self.workers) + len(self.dead)}"],
                                  env=self.env, **QUIET)
        self.workers.append(worker)
        return worker

    def kill_worker(self, worker: subprocess.Popen) -> None:
        worker.kill()
        worker.wait(30)
        self.workers.remove(worker)
        self.dead.append(worker)

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client
        with Client(self.address, timeout="30s") as client:
            client.wait_for_workers(n, timeout=120)

    def close(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                p.kill()
            p.wait(30)


@pytest.fixture
def cluster_of():
    made: list[Cluster] = []

    def make(workers: int, env: dict | None = None) -> Cluster:
        made.append(Cluster(workers, env))
        return made[-1]

    yield make
    for cluster in made:
        cluster.close()


def test_workers_killed_at_random_lose_nothing(tmp_path, cluster_of):
    # a task may be on the worker killed several times: the scheduler's allowed-failures
    # (3) would end it as KilledWorker, which this test is not about
    cluster = cluster_of(3, env={"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1000"})
    spec = tmp_path / "exo.toml"
    spec.write_text(CODESIGN.format(iterations=FAULT_ITERATIONS))
    started = time.monotonic()
    reference = codesign("optimize", spec, "--name", "serial", "--workers", 0, "--quiet", "--results", tmp_path)
    assert reference.returncode == 0, reference.stderr[-2000:]
    t_reference = time.monotonic() - started
    cluster.wait_for_workers(3)
    started = time.monotonic()
    db = tmp_path / "faults" / "run.sqlite"
    driver = start_cli("optimize", spec, "--name", "faults", "--scheduler", cluster.address, "--quiet",
                       "--results", tmp_path)
    kills: list[int] = []                 # iterations stored when each kill happened
    rng = random.Random(17)

    def killer():
        # from the first stored iteration on, one kill per stored iteration at a random
        # moment within it: on a loaded machine a replacement worker takes seconds to start
        # (imports, kernels from the cache), and kills on a clock alone (every 0.3-1 s) can
        # then end every worker before it finishes a task -- a run that never ends
        last = 0
        while driver.poll() is None:
            done = iterations_done(db)
            if done >= FAULT_ITERATIONS:
                return
            if done <= last:
                time.sleep(0.05)
                continue
            time.sleep(rng.uniform(0.0, 0.5))
            if driver.poll() is not None:
                return
            cluster.kill_worker(rng.choice(cluster.workers))     # SIGKILL, no goodbye
            cluster.add_worker()
            kills.append(done)
            last = done

    thread = threading.Thread(target=killer)
    thread.start()
    status = driver.wait(400)
    t_faults = time.monotonic() - started
    thread.join(60)
    stderr = driver.stderr.read()
    assert status == 0, stderr[-3000:]
    assert stderr == "", stderr[-3000:]
    assert len(kills) >= 3 and 0 < kills[0] and kills[-1] < FAULT_ITERATIONS, kills   # mid-run, several times
    assert_same_run(tmp_path / "serial" / "run.sqlite", db)
    print(f"kills at iterations {kills}; reference {t_reference:.1f} s, under faults {t_faults:.1f} s")


def sphere_and_serial_run(tmp_path, iterations: int, sleep: float):
    """tmp_path/slow.toml, a sphere spec, and its serial run tmp_path/serial: the truth."""
    spec = tmp_path / "slow.toml"
    spec.write_text(SPHERE.format(iterations=iterations, sleep=sleep))
    done = codesign("optimize", spec, "--name", "serial", "--workers", 0, "--quiet", "--results", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return spec


def test_a_lost_scheduler_stops_the_run_in_one_line_and_it_resumes(tmp_path, cluster_of):
    cluster = cluster_of(1)
    spec = sphere_and_serial_run(tmp_path, iterations=30, sleep=0.03)
    cluster.wait_for_workers(1)
    db = tmp_path / "lost" / "run.sqlite"
    driver = start_cli("optimize", spec, "--name", "lost", "--scheduler", cluster.address, "--quiet",
                       "--results", tmp_path)
    wait_for(lambda: iterations_done(db) >= 3)
    cluster.scheduler.kill()                                     # SIGKILL: the scheduler is gone
    status = driver.wait(60)
    done = subprocess.CompletedProcess(driver.args, status, driver.stdout.read(), driver.stderr.read())
    folder = re.escape(str(tmp_path / "lost"))
    line = one_line(done, 75, rf"codesign optimize: lost the dask scheduler {re.escape(cluster.address)} "
                              rf"\(\w+\): stopped at iteration \d+ of 30 — continue with: codesign resume {folder}")
    stopped_at = int(line.split("iteration ")[1].split()[0])
    assert 3 <= stopped_at < 30 and iterations_done(db) == stopped_at
    assert query(db, "SELECT status FROM runs") == "stopped"
    assert sorted(p.name for p in (tmp_path / "lost").iterdir()) == ["run.sqlite"]    # lock released
    resumed = codesign("resume", tmp_path / "lost", "--workers", 0, "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert_same_run(tmp_path / "serial" / "run.sqlite", db)


def test_no_worker_gives_one_warning_then_the_run_waits_for_one(tmp_path, cluster_of):
    cluster = cluster_of(0)
    spec = sphere_and_serial_run(tmp_path, iterations=5, sleep=0.01)
    driver = start_cli("optimize", spec, "--name", "waits", "--scheduler", cluster.address, "--quiet",
                       "--no-worker-warning", 2, "--results", tmp_path)
    started = time.monotonic()
    warning = driver.stderr.readline()                           # blocks until the line comes
    waited = time.monotonic() - started
    assert re.fullmatch(rf"warning: no dask worker connected to {re.escape(cluster.address)} for 2 s; still "
                        rf"waiting \(start one: dask worker {re.escape(cluster.address)}; Ctrl-C stops the "
                        rf"run, `codesign resume` continues it\)\n", warning), warning
    assert 2.0 <= waited < 60
    time.sleep(3)
    assert driver.poll() is None                                 # it keeps waiting, one line only
    cluster.add_worker()
    assert driver.wait(120) == 0
    assert driver.stderr.read() == ""
    assert_same_run(tmp_path / "serial" / "run.sqlite", tmp_path / "waits" / "run.sqlite")


def test_a_local_cluster_serves_its_dashboard_at_the_address_printed(tmp_path):
    spec = tmp_path / "slow.toml"
    spec.write_text(SPHERE.format(iterations=400, sleep=0.02))
    driver = start_cli("optimize", spec, "--name", "live", "--workers", 1, "--results", tmp_path,
                       start_new_session=True)
    try:
        first = driver.stderr.readline()
        match = re.fullmatch(r"dashboard: (http://127\.0\.0\.1:\d+/status)\n", first)
        assert match, first
        with urllib.request.urlopen(match.group(1), timeout=30) as page:
            assert page.status == 200 and b"Dask" in page.read()
    finally:
        os.killpg(driver.pid, signal.SIGINT)
        assert driver.wait(60) == 130
    quiet = tmp_path / "quick.toml"
    quiet.write_text(SPHERE.format(iterations=2, sleep=0.0))
    done = codesign("optimize", quiet, "--name", "none", "--workers", 1, "--no-dashboard", "--results", tmp_path)
    assert done.returncode == 0 and "dashboard" not in done.stderr and "http" not in done.stderr, done.stderr
