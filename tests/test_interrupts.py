"""A Ctrl-C during a compiled call stops the process in one line, never a segfault.

Real processes: a numba function returning a record (as the rollouts do) is called for
the first time in a fresh interpreter while a SIGINT arrives; unguarded, numba's boxing
of the record runs the KeyboardInterrupt's handler inside its unpickler and the process
dies of SIGSEGV (numba/numba#2324); under :func:`codesign.interrupts.deferred_signals`
the call returns and the interrupt is raised after it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from codesign.interrupts import deferred_signals

SCRIPT = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    from typing import NamedTuple
    import numba, numpy as np
    from codesign.interrupts import deferred_signals

    class Out(NamedTuple):
        total: float
        n: int

    @numba.njit
    def spin(n):
        s = 0.0
        for i in range(n):
            s += np.sin(i * 1e-3)
        return Out(s, n)

    spin.compile("(int64,)")
    HANDLER
    subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -s {signal.SIGNUM.name[3:]} {os.getpid()}"])
    returned = None
    try:
        with GUARD:
            started = time.perf_counter()
            out = spin(200_000_000)             # ~1.6 s on the 2-core reference machine
            returned = time.perf_counter() - started
        print("returned without the signal")
    except KeyboardInterrupt:
        print("KeyboardInterrupt; the call had returned after", returned)
        sys.exit(130)
""")


def run_script(guarded: bool, signum: str = "SIGINT") -> subprocess.CompletedProcess:
    """The script in a fresh interpreter: ``signum`` 0.2 s into the compiled call's first
    run (SIGTERM with a Python handler that raises, as the run driver installs one), sent
    by another process: a thread of the script would need the GIL, which the compiled call
    holds, and on a loaded machine its signal came after the call (a suite run failed so)."""
    handler = "signal.signal(signal.SIGTERM, signal.default_int_handler)" if signum == "SIGTERM" else ""
    code = (SCRIPT.replace("SIGNUM", signum).replace("HANDLER", handler)
            .replace("GUARD", "deferred_signals()" if guarded else "__import__('contextlib').nullcontext()"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_signal_during_a_compiled_first_call_is_raised_after_it(signum):
    done = run_script(guarded=True, signum=signum)
    assert done.returncode == 130, done.stderr[-2000:]
    assert done.stdout.startswith("KeyboardInterrupt; the call had returned after"), done.stdout
    call_s = float(done.stdout.split()[-1])       # None (not a number) had it been cut short
    assert call_s > 0.2, "the signal must have come during the call"


def test_unguarded_the_same_call_crashes():
    """The control: without the guard the same process dies of SIGSEGV (if numba ever
    fixes its boxing path, this fails and the guard can go)."""
    done = run_script(guarded=False)
    assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stdout, done.stderr[-500:])


def test_handlers_are_restored_and_called_once_per_signal():
    calls = []
    previous = signal.signal(signal.SIGINT, lambda s, f: calls.append(s))
    try:
        with deferred_signals():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            assert calls == []                      # held back inside
        assert calls == [signal.SIGINT]             # once, after
        with deferred_signals():
            pass
        assert calls == [signal.SIGINT]             # nothing came: nothing called
        assert signal.getsignal(signal.SIGINT) is not None and signal.getsignal(signal.SIGINT)(0, None) is None
        assert calls == [signal.SIGINT, 0]          # the handler in place is the previous one
    finally:
        signal.signal(signal.SIGINT, previous)
