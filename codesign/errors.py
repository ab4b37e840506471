"""Errors a user can cause.

Every mistake a user can make (a bad spec, a bad path, an out-of-range value) is raised as
:class:`UserError` with one line naming what is wrong and what was expected. The command
line prints that line and exits with status 2; nothing else in the package catches it.
"""


class UserError(Exception):
    """A mistake in user input: one line, naming the key or path and what was expected."""

    exit_status = 2


class Stopped(Exception):
    """A run stopped on request (SIGINT, SIGTERM): one line saying where it stopped and how
    to continue. The command line prints it and exits with status 130 (as a shell does
    for an interrupt)."""

    exit_status = 130


class ClusterLost(Stopped):
    """The run lost its Dask cluster (the scheduler, or every worker a task ran on):
    one line saying where it stopped and how to
    continue, exit status 75 (EX_TEMPFAIL of sysexits.h: a temporary failure -- the
    same command can succeed once the cluster is back)."""

    exit_status = 75
