"""The Dask clusters an executor runs on, apart from the executors themselves.

- :func:`children_ignore_sigint`: worker processes started in its block ignore Ctrl-C
  (only the driver acts on it), as :func:`codesign.run.executors.local_executor` starts
  its ``LocalCluster``;
- :func:`jobqueue_cluster`: a SLURM or PBS cluster (dask-jobqueue) from the spec's
  ``[execution]`` table, its jobs' logs in the run's ``jobs/`` folder (JOBS_FOLDER);
- :func:`check_batch_system`: refuse, in one line, a cluster whose batch system would
  not run its worker job (instead of failing in the background while the driver waits).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import threading
from pathlib import Path

from codesign.errors import UserError
from codesign.interrupts import sigint_blocked
from codesign.run.spec import ExecutionSpec


@contextlib.contextmanager
def children_ignore_sigint():
    """Worker processes started in here ignore SIGINT (an ignored signal stays ignored
    across exec): Ctrl-C at a terminal reaches the whole process group, and only the
    driver should act on it -- it stops the run and closes the cluster, whose workers
    would otherwise each print a KeyboardInterrupt traceback.

    A SIGINT in these seconds is held back and raised as the block is left
    (:func:`~codesign.interrupts.sigint_blocked`) -- unless a thread that does not block
    it takes it (and ignores it). The ``codesign`` command starts its libraries' native
    threads (OpenBLAS's) with SIGINT blocked (:func:`codesign.cli.main`), and threads
    started in here (Dask's event loop) inherit the block, so there it is never lost; a
    program that calls this with such threads of its own may still lose one (press again)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()      # its start unblocks SIGINT in the thread starting it
    with sigint_blocked():
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


JOBS_FOLDER = "jobs"     # in the run's folder: the batch jobs' logs


def jobqueue_cluster(execution: ExecutionSpec, folder: Path | None = None):
    """A SLURM or PBS cluster of ``jobs`` jobs x ``cores`` single-threaded worker processes;
    the jobs' logs in ``folder/jobs`` (else the working directory)."""
    try:
        import dask_jobqueue
    except ImportError:
        raise UserError("--cluster: dask-jobqueue is not installed; expected `pip install "
                        "codesign[cluster]`") from None
    c = execution.cluster
    kwargs = dict(cores=c.cores, processes=c.cores, memory=c.memory, walltime=c.walltime,
                  scheduler_options={"dashboard_address": ":0" if execution.dashboard else None})
    if folder is not None:
        kwargs["log_directory"] = str(Path(folder).resolve() / JOBS_FOLDER)
    if c.queue:
        kwargs["queue"] = c.queue
    if c.account:
        kwargs["account"] = c.account
    if c.interface:
        kwargs["interface"] = c.interface
    if c.lifetime:
        kwargs["worker_extra_args"] = ["--lifetime", c.lifetime, "--lifetime-stagger", "2m"]
    kind = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[execution.mode]
    return kind(**kwargs)


def check_batch_system(cluster, mode: str) -> None:
    """The batch system would run the cluster's worker job: its submit command exists and,
    on SLURM, ``sbatch --test-only`` accepts the job script. Otherwise every submission
    would fail in the background (tracebacks) while the driver waits for workers: close
    the cluster, UserError with the batch system's reason."""
    import subprocess
    import tempfile

    submit = cluster.job_cls.submit_command
    reason = None
    if shutil.which(submit) is None:
        reason = f"`{submit}` not found on this machine; expected to run where {mode.upper()} jobs are submitted"
    elif mode == "slurm":
        with tempfile.NamedTemporaryFile("w", suffix=".sh") as script:
            script.write(cluster.job_script())
            script.flush()
            done = subprocess.run([submit, "--test-only", script.name], capture_output=True, text=True,
                                  timeout=60)
        if done.returncode != 0:
            said = " ".join((done.stderr or done.stdout).split()) or f"exit status {done.returncode}"
            reason = f"sbatch refuses the worker job ({said}); expected [execution.cluster] settings it accepts"
    if reason is not None:
        cluster.close()
        raise UserError(f"--cluster {mode}: {reason}")
