"""Issue 17: the run machinery under misuse and accidents. Every refusal is one line on
stderr with exit status 2 (an interrupt: 130), names the culprit, and writes nothing."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from codesign.run.driver import start_run
from codesign.run.spec import parse_spec
from runtools import assert_same_run, codesign, iterations_done, listing, one_line, query, start_cli, wait_for

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
    with contextlib.closing(sqlite3.connect(path)) as c:
        c.execute("DROP TABLE evaluations")
        c.commit()
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


# -- 3. one driver per run --------------------------------------------------------------------

def driver_field(db: Path) -> str:
    return query(db, "SELECT driver FROM runs")


@pytest.mark.integration
def test_a_second_driver_is_refused_and_a_dead_ones_lock_is_taken_over(tmp_path):
    import socket
    spec = tmp_path / "slow.toml"
    spec.write_text(sphere("slow", particles=4, iterations=400, evaluation="sleep_s = 0.01"))
    results = tmp_path / "results"
    db = results / "slow" / "run.sqlite"
    driver = start_cli("optimize", spec, "--results", results, "--quiet")
    try:
        wait_for(lambda: iterations_done(db) >= 2)
        live = f"{socket.gethostname()}:{driver.pid}"
        assert (results / "slow" / "run.sqlite.lock").read_text() == live
        refusal = (rf"codesign (resume|optimize): error: {re.escape(str(results / 'slow'))}: already being "
                   rf"run by {re.escape(live)}; expected one driver per run: wait for it or stop it "
                   rf"\(kill -INT {driver.pid} on {re.escape(socket.gethostname())}\), then `codesign "
                   rf"resume {re.escape(str(results / 'slow'))}`")
        one_line(codesign("resume", results / "slow", "--quiet"), 2, refusal)
        one_line(codesign("optimize", spec, "--results", results, "--quiet"), 2, refusal)
        assert driver_field(db) == live                       # the losers wrote nothing
        assert driver.poll() is None
    finally:
        driver.kill()                                         # a crash: the lock file stays
        driver.wait(30)
    assert (results / "slow" / "run.sqlite.lock").read_text() == live
    resumed = start_cli("resume", results / "slow", "--quiet")
    wait_for(lambda: driver_field(db) == f"{socket.gethostname()}:{resumed.pid}")
    resumed.send_signal(signal.SIGINT)                         # (no need to wait for 400 iterations)
    assert resumed.wait(60) == 130, resumed.stderr.read()
    assert not (results / "slow" / "run.sqlite.lock").exists()   # released


@pytest.mark.integration
def test_two_drivers_racing_for_one_name_one_runs_the_other_gets_one_line(tmp_path):
    spec = tmp_path / "race.toml"
    spec.write_text(sphere("race", particles=4, iterations=5, evaluation="sleep_s = 0.002"))
    for round in range(3):
        results = tmp_path / f"results{round}"
        drivers = [start_cli("optimize", spec, "--results", results, "--quiet") for _ in range(3)]
        done = [(d.wait(120), d.stderr.read()) for d in drivers]
        assert sorted(status for status, _ in done) == [0, 2, 2], done
        folder = re.escape(str(results / "race"))
        for status, stderr in done:
            if status == 2:
                assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
                assert re.fullmatch(rf"codesign optimize: error: ({folder}: already being run by (\S+:\d+|another driver); "
                                    rf"expected one driver per run: .*|{folder}/run.sqlite: already exists; "
                                    rf"expected a new --name, or `codesign resume {folder}`)",
                                    stderr.strip()), stderr
        assert sorted(p.name for p in (results / "race").iterdir()) == ["run.sqlite"]
        assert iterations_done(results / "race" / "run.sqlite") == 5


# -- 4. interrupts ----------------------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("how", ["ctrl-c on a local cluster", "sigterm, serial"])
def test_an_interrupted_run_stops_in_one_line_and_resumes_to_the_same_database(tmp_path, how):
    cluster = how.startswith("ctrl-c")
    spec = tmp_path / "slow.toml"
    spec.write_text(sphere("slow", particles=8, iterations=14, evaluation="sleep_s = 0.03")
                    .replace('mode = "serial"', 'mode = "local"\nworkers = 2' if cluster else 'mode = "serial"'))
    reference = tmp_path / "reference"
    assert codesign("optimize", spec, "--results", reference, "--workers", 0, "--quiet").returncode == 0
    results = tmp_path / "results"
    db = results / "slow" / "run.sqlite"
    driver = start_cli("optimize", spec, "--results", results, "--quiet", start_new_session=True)
    wait_for(lambda: iterations_done(db) >= 3)
    if cluster:      # Ctrl-C at a terminal: SIGINT to the whole process group, workers too
        os.killpg(driver.pid, signal.SIGINT)
    else:
        driver.send_signal(signal.SIGTERM)
    status, stderr = driver.wait(60), driver.stderr.read()
    done = subprocess.CompletedProcess(driver.args, status, driver.stdout.read(), stderr)
    line = one_line(done, 130, rf"codesign optimize: stopped at iteration \d+ of 14 — continue with: "
                               rf"codesign resume {re.escape(str(results / 'slow'))}")
    stopped_at = int(line.split("iteration ")[1].split()[0])
    assert 3 <= stopped_at < 14 and iterations_done(db) == stopped_at
    assert done.stdout == ""
    assert sorted(p.name for p in (results / "slow").iterdir()) == ["run.sqlite"]
    assert query(db, "SELECT status FROM runs") == "stopped"
    assert "stopped" in codesign("runs", "--results", results).stdout
    resumed = codesign("resume", results / "slow", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert_same_run(reference / "slow" / "run.sqlite", db)


@pytest.mark.integration
def test_a_ctrl_c_while_the_local_workers_start_stops_the_run(tmp_path):
    """The worker processes start with SIGINT ignored (a terminal's Ctrl-C reaches them
    too); a Ctrl-C in those seconds used to be ignored by the driver with them, and the
    run went on to its end. Sent the moment the first worker process exists: one line,
    exit 130, no run left behind or a stopped one, no worker left running."""
    import psutil

    spec = tmp_path / "slow.toml"
    spec.write_text(sphere("slow", particles=8, iterations=300, evaluation="sleep_s = 0.03")
                    .replace('mode = "serial"', 'mode = "local"\nworkers = 2'))
    results = tmp_path / "results"
    driver = start_cli("optimize", spec, "--results", results, "--quiet", start_new_session=True)
    me = psutil.Process(driver.pid)

    def workers() -> list:
        with contextlib.suppress(psutil.Error):
            return [c for c in me.children(recursive=True) if "spawn_main" in " ".join(c.cmdline())]
        return []

    wait_for(lambda: workers() or driver.poll() is not None, poll_s=0.01)
    started = workers()
    os.killpg(driver.pid, signal.SIGINT)             # Ctrl-C at a terminal: the whole group
    status, stderr = driver.wait(60), driver.stderr.read()
    done = subprocess.CompletedProcess(driver.args, status, driver.stdout.read(), stderr)
    one_line(done, 130, r"codesign optimize: stopped (before the run started; nothing was written|"
                        r"at iteration \d+ of 300 — continue with: codesign resume .*)")
    assert started and not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in started)


# -- 6. the spec is judged before the run starts ----------------------------------------------

@pytest.mark.parametrize("problem, table, message", [
    ("sphere", '[evaluation]\nmax_time = 1.0', "evaluation.max_time: unknown key for problem 'sphere'; "
     "expected one of busy_s, sleep_s, raise_above, nan_below, count_warmups"),
    ("sphere", '[evaluation]\nsleep_s = "ten"', 'evaluation.sleep_s: got "ten"; expected a finite number >= 0'),
    ("six_hump_camel", '[evaluation]\nsleep_s = 1', "evaluation.sleep_s: unknown key; expected no keys "
     "(this problem takes no settings)"),
    ("human_gait", '[evaluation]\nmax_time = "ten"', 'evaluation.max_time: got "ten"; expected a duration > 0 s'),
    ("human_gait", '[evaluation]\nmax_time = -5', "evaluation.max_time: got -5; expected a duration > 0 s"),
    ("exo_codesign", '[evaluation]\nh = 0.05', "evaluation.h: got 0.05; expected a time step in (0, 0.01] s"),
    ("exo_codesign", '[evaluation]\nmaxtime = 5', "evaluation.maxtime: unknown key (did you mean max_time?); "
     "expected one of actuator_model, actuators, assist_onset_strides, assist_timing, assisted_joints, atol, [...], "
     "max_time, [...], soft_v_reg, standing_reference, structure, trailing_balance, wearer, wearer_mass_scale, "
     "wearer_model"),
    ("six_hump_camel", '[[objectives]]\nmetric = "g"', "objectives[0].metric: 'g' is not a metric of problem "
     "'six_hump_camel'; expected one of f, fx, fy"),
    ("sphere", '[space.parameters.x]\nbounds = [0, inf]', "space.parameters.x.bounds: got [0, inf]; "
     "expected [low, high] with finite numbers, low < high"),
    ("sphere", '[space.parameters.x]\nbounds = [0, 5]', "space.parameters.x.bounds: [0, 5] outside the range "
     "of problem 'sphere' [-1, 1]; expected bounds inside it"),
])
def test_bad_specs_are_refused_before_the_run_is_created(tmp_path, problem, table, message):
    spec = tmp_path / "v.toml"
    spec.write_text(f'name = "v"\n[problem]\nname = "{problem}"\n[optimizer]\nparticles = 2\n'
                    f'iterations = 1\n[execution]\nmode = "local"\nworkers = 2\n{table}\n')
    done = codesign("optimize", spec, "--results", tmp_path / "results", "--quiet")
    pattern = re.escape(f"codesign optimize: error: {spec}: {message}").replace(re.escape("[...]"), ".*")
    one_line(done, 2, pattern)
    assert sorted(listing(tmp_path)) == ["v.toml"]          # no results/, no run folder


# -- 8. a batch cluster that cannot run the jobs, an empty --results ---------------------------

def test_a_batch_system_that_is_not_there_is_refused_before_any_job(tmp_path):
    import shutil
    if shutil.which("qsub"):
        pytest.skip("PBS is installed here")
    (tmp_path / "s.toml").write_text(sphere("pbs").replace('mode = "serial"', 'mode = "pbs"'))
    before = listing(tmp_path)
    done = codesign("optimize", "s.toml", "--results", "results", "--quiet", cwd=tmp_path)
    one_line(done, 2, r"codesign optimize: error: --cluster pbs: `qsub` not found on this machine; "
                      r"expected to run where PBS jobs are submitted")
    assert listing(tmp_path) == before              # no results/, no jobs/ folder


def test_an_empty_results_option_is_refused(tmp_path):
    (tmp_path / "s.toml").write_text(sphere("here"))
    done = codesign("optimize", "s.toml", "--results", "", "--quiet", cwd=tmp_path)
    one_line(done, 2, r"codesign optimize: error: --results: got ''; expected the folder to hold the run "
                      r"folders \(e\.g\. results\)")
    assert sorted(listing(tmp_path)) == ["s.toml"]  # the run did not land in the working directory


def test_a_run_is_found_by_folder_file_or_bare_name_and_a_miss_names_only_real_places(tmp_path, monkeypatch):
    from codesign.errors import UserError
    from codesign.run.store import find_run_database

    monkeypatch.chdir(tmp_path)
    db = Path("results") / "demo" / "run.sqlite"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"")
    for given in ("demo", "results/demo", "results/demo/run.sqlite", tmp_path / "results" / "demo"):
        assert find_run_database(given).resolve() == db.resolve(), given
    with pytest.raises(UserError, match=r"^results/nope: no run found \(looked for results/nope/run\.sqlite\);"):
        find_run_database("results/nope")            # not results/results/nope
    with pytest.raises(UserError, match=r"looked for nope/run\.sqlite, results/nope/run\.sqlite\)"):
        find_run_database("nope")
