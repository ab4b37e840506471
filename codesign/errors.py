"""Errors a user can cause.

Every mistake a user can make (a bad spec, a bad path, an out-of-range value) is raised as
:class:`UserError` with one line naming what is wrong and what was expected. The command
line prints that line and exits with status 2; nothing else in the package catches it.
"""

from __future__ import annotations

from typing import Iterable


def shown(value: object, limit: int = 60) -> str:
    """A value from a spec or a JSON file as the user wrote it, for a one-line message:
    TOML/JSON spelling (``true``, ``"text"``, ``[1, "a"]``, ``inf``), not Python's
    (``True``, ``'text'``); cut to ``limit`` characters."""
    def spell(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(spell(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k} = {spell(x)}" for k, x in v.items()) + "}"
        return str(v)

    text = spell(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def listed(names: Iterable[object], limit: int = 12) -> str:
    """Names for a one-line message: ``a, b, c`` (no Python list or quotes); beyond
    ``limit`` the first ones and how many there are in all (``a, b, ... (1459 in all)``),
    so that a long list cannot swamp the line."""
    names = [str(n) for n in names]
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])}, ... ({len(names)} in all)"


def nearest(name: object, choices: Iterable[object]) -> str:
    """The valid name nearest a misspelt one, for a one-line message: " (did you mean
    max_time?)", or "" when none is close (:func:`difflib.get_close_matches`, its default
    cutoff 0.6). Every "unknown key / option / name" message puts it after the word
    "unknown ...", before what was expected."""
    import difflib

    match = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1)
    return f" (did you mean {match[0]}?)" if match else ""


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
