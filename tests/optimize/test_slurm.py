"""`codesign optimize SPEC --cluster slurm` against a real single-node SLURM (issue 17,
item 5): two batch jobs of one worker each, Dask bound to loopback; the jobs' walltime
(1 minute, SLURM's smallest) ends in mid-run, the adaptive cluster submits replacement
jobs, and nothing is lost: the database equals the reference run's table by table. The
jobs' logs go to the run's jobs/ folder, none to the working directory.

SLURM comes from `.ci/slurm-up` (run by `.ci/run` before the suite: Debian packages,
a minimal slurm.conf for this host, munged, slurmctld, slurmd). Without it the test skips
and says why.

The reference is the same spec on a local cluster of 8 workers: evaluations sleep (the
run must outlast the walltime), so a serial reference would take 2x the SLURM run; a
local cluster's database equals the serial one's (tests/optimize/test_runner_faults.py).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from runtools import assert_same_run, codesign, listing, one_line, start_cli

pytestmark = pytest.mark.integration

SPEC = """
seed = 11
[problem]
name = "sphere"
[optimizer]
particles = 8
iterations = 150
[evaluation]
sleep_s = 0.16
[execution.cluster]
jobs = 2
cores = 1
memory = "1GB"
walltime = "00:01:00"
interface = "lo"
"""


def slurm_missing() -> str | None:
    """Why SLURM cannot be used here, or None when its node answers."""
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return "no SLURM on this machine (.ci/slurm-up installs and starts one: it needs root and apt)"
    done = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True, timeout=30)
    if done.returncode != 0 or not done.stdout.strip():
        return f"SLURM does not answer ({done.stderr.strip() or 'no node'}); start it with .ci/slurm-up"
    if done.stdout.split()[0].rstrip("*~#") not in ("idle", "mix", "alloc"):
        return f"the SLURM node is {done.stdout.split()[0]}; expected idle (see /var/log/slurm/)"
    return None


def test_slurm_jobs_that_reach_their_walltime_are_replaced_and_nothing_is_lost(tmp_path):
    reason = slurm_missing()
    if reason:
        pytest.skip(reason)
    work = tmp_path / "work"                     # the driver's working directory
    work.mkdir()
    spec = work / "sl.toml"
    spec.write_text(SPEC)
    reference = start_cli("optimize", spec, "--name", "reference", "--workers", 8, "--quiet",
                          "--results", tmp_path, cwd=work)
    driver = start_cli("optimize", spec, "--name", "slurm", "--cluster", "slurm", "--quiet",
                       "--results", tmp_path, cwd=work)
    try:
        assert reference.wait(300) == 0, reference.stderr.read()[-2000:]
        status = driver.wait(300)
    finally:
        for p in (reference, driver):
            if p.poll() is None:
                p.kill()
                p.wait(30)
    stderr = driver.stderr.read()
    assert status == 0, stderr[-3000:]
    assert stderr == "", stderr[-3000:]
    assert_same_run(tmp_path / "reference" / "run.sqlite", tmp_path / "slurm" / "run.sqlite")
    logs = sorted(p.name for p in (tmp_path / "slurm" / "jobs").iterdir())
    errors = [(tmp_path / "slurm" / "jobs" / name).read_text() for name in logs if name.endswith(".err")]
    assert len(errors) >= 3, logs                                      # 2 jobs and a replacement
    assert any("DUE TO TIME LIMIT" in text for text in errors), logs    # ended by its walltime
    assert sorted(p.name for p in work.iterdir()) == ["sl.toml"]        # no slurm-*.out here


def test_settings_slurm_refuses_are_one_line_before_any_job(tmp_path):
    reason = slurm_missing()
    if reason:
        pytest.skip(reason)
    spec = tmp_path / "q.toml"
    spec.write_text(SPEC.replace('interface = "lo"', 'interface = "lo"\nqueue = "no-such-partition"'))
    done = codesign("optimize", spec, "--cluster", "slurm", "--quiet", "--results", tmp_path / "results")
    one_line(done, 2, r"codesign optimize: error: --cluster slurm: sbatch refuses the worker job \(sbatch: "
                      r"error: invalid partition specified: no-such-partition.*\); expected "
                      r"\[execution.cluster\] settings it accepts")
    assert sorted(listing(tmp_path)) == ["q.toml"]             # no run folder, no jobs/ folder
