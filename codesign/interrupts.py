"""Signals held back while compiled code runs, or while a process starts its workers.

A numba-compiled function cannot be interrupted: a Ctrl-C (SIGINT) or a SIGTERM that
arrives while it runs only sets Python's flag, and the Python handler runs at the next
Python bytecode. In the first call of a compiled function in a process, that bytecode
is numba's own ``_numba_unpickle`` (boxing the returned record: its class is unpickled
once per process), where the handler's exception (KeyboardInterrupt, the run driver's
stop request) leaves a NULL that the compiled code does not check: the process dies of a
segmentation fault (exit 139) instead of stopping in one line. :func:`deferred_signals`
around a long compiled call records such a signal instead and hands it to the handler it
replaced once the call has returned.

:func:`sigint_blocked` blocks SIGINT instead (the kernel holds it pending), for code in
which no Python handler may run or the signal must stay ignored: a process that starts
worker processes meant to ignore it (:func:`codesign.run.executors.local_executor`), or
imports libraries that start native threads (:func:`codesign.cli.main`: those threads keep
it blocked, so that a Ctrl-C always reaches the main thread).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def deferred_signals(signums: tuple[int, ...] = DEFERRED) -> Iterator[None]:
    """Hold back ``signums`` (those with a Python handler) until the block is left, then
    call their handlers (each signal once, in the order they came). Outside the main
    thread (a Dask worker's thread) signals go to the main thread anyway: nothing to do."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {s: h for s in signums if callable(h := signal.getsignal(s))}
    for s in previous:
        signal.signal(s, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(caught):
            previous[s](s, None)


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread and in the threads it starts meanwhile (they keep it
    blocked); one that came meanwhile is raised (KeyboardInterrupt, or the handler in place)
    as the block is left. Linux keeps a blocked signal pending even while its action is to
    ignore it -- unless a thread that does not block it takes it. Nothing outside the main
    thread or without ``pthread_sigmask``."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
