"""Errors a user can cause.

Every mistake a user can make (a bad spec, a bad path, an out-of-range value) is raised as
:class:`UserError` with one line naming what is wrong and what was expected. The command
line prints that line and exits with status 2; nothing else in the package catches it.
"""


class UserError(Exception):
    """A mistake in user input: one line, naming the key or path and what was expected."""

    exit_status = 2
