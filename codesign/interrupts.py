"""Signals held back while compiled code runs.

A numba-compiled function cannot be interrupted: a Ctrl-C (SIGINT) or a SIGTERM that
arrives while it runs only sets Python's flag, and the Python handler runs at the next
Python bytecode. In the first call of a compiled function in a process, that bytecode
is numba's own ``_numba_unpickle`` (boxing the returned record: its class is unpickled
once per process), where the handler's exception (KeyboardInterrupt, the run driver's
stop request) leaves a NULL that the compiled code does not check: the process dies of a
segmentation fault (exit 139) instead of stopping in one line. :func:`deferred_signals`
around a long compiled call records such a signal instead and hands it to the handler it
replaced once the call has returned.
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
