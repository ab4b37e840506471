"""The compiled kernels of one evaluation on numba's disk cache: which are missing, and the
one-line announcement of a first compile.

Every kernel of an evaluation is ``njit(cache=True)`` and the rollout is one compiled
function (:func:`codesign.walking.stepping.walk`), so a process whose cache holds them
loads them in about a second; a process that finds them missing compiles them, ~4 min of
CPU (``codesign bench coldstart`` measures both). The cache lives in
``NUMBA_CACHE_DIR``, keyed by a digest of the sources compiled code can reach
(:mod:`codesign` sets it), so the first process after an edit of those sources compiles.

:data:`EVALUATION_KERNELS` (and :data:`ROBOT_KERNELS` for a design with a wearable robot)
are the kernels an evaluation calls from Python (each links its callees into its own
cached code): what ``NUMBA_DEBUG_CACHE=1`` shows as loaded in a process with a warm cache
(``tests/walking/test_cold_start.py`` checks the list against it). A kernel is missing
when numba's index file for it does not exist. :func:`announce_first_compile` prints one
line to stderr before the first evaluation of a process that will compile (at most once
per process); ``codesign warmup`` (:mod:`codesign.walking.warmup`) compiles them ahead
(``make`` runs it at install) and records the CPU time that took, the figure the next
announcement quotes.

The event-driven and soft rollouts (the peers) are compiled apart from these, by ``codesign
warmup --peers`` (minutes of CPU). While a process compiles them it holds
:func:`compiling_peers`, a lock file in the cache folder, and :func:`wait_for_peers` makes
any other process's first peer rollout wait for it and load its result instead of
compiling the same code again: ``make test`` starts that compile and the tests at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from importlib import import_module
from pathlib import Path
from typing import Iterator, TextIO

import numba

from codesign.io import write_text_atomic

# module:kernel, called from Python during one evaluation (set-up, rollout) of any design
EVALUATION_KERNELS = ("codesign.control.signals:periodic_pchip_slopes",
                      "codesign.dynamics.kinematics:forward_kinematics",
                      "codesign.dynamics.kinematics:body_point_world",
                      "codesign.dynamics.kinematics:point_jacobian",
                      "codesign.walking.stepping:walk")
# ... and of a design with a wearable robot (screening, closing its loops)
ROBOT_KERNELS = ("codesign.screening.screen:screen_kernel",
                 "codesign.screening.screen:close_loops_kernel",
                 "codesign.screening.kinematics:loop_residual_jacobian")
# CPU s: a first compile of all of them in one process on the 2-core reference machine
# (240 s by `codesign warmup --peers` on 2026-11-28, the rollouts' peer compiling on the
# other core; 38-46 s before the muscles and the sensed phase joined the kernels), quoted
# until this machine has its own figure
DEFAULT_COMPILE_S = 240.0
RECORD_NAME = "last-compile.json"
PEER_LOCK_NAME = "peers.lock"   # in the cache folder: held while a process compiles the peers

_checked: set[str] = set()   # kernels this process has checked already
_announced = [False]
_peers_waited = [False]


def cache_dir() -> Path:
    """numba's cache folder of this process (``NUMBA_CACHE_DIR``, set by :mod:`codesign`)."""
    return Path(numba.config.CACHE_DIR)


def kernels(robot: bool = True) -> tuple[str, ...]:
    """The kernels an evaluation calls: of any design, plus the robot's if ``robot``."""
    return EVALUATION_KERNELS + (ROBOT_KERNELS if robot else ())


def is_cached(kernel: str) -> bool:
    """True if numba's index file of ``module:name`` exists (or numba keeps no disk cache
    for it, e.g. under ``NUMBA_DISABLE_JIT``: nothing to compile ahead). Reads the
    dispatcher's ``_cache._cache_file._index_path`` (numba 0.59-0.68); should numba move
    it, every kernel would count as cached and the cold-start test fails."""
    module_name, name = kernel.split(":")
    cache = getattr(getattr(import_module(module_name), name), "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return index is None or os.path.exists(index)


def missing_kernels(robot: bool = True) -> list[str]:
    """``module:name`` of each evaluation kernel not on the disk cache."""
    return [k for k in kernels(robot) if not is_cached(k)]


def expected_compile_s() -> tuple[float, str]:
    """(CPU seconds, where the figure comes from): the last full ``codesign warmup`` compile
    on this machine if recorded next to the cache, else :data:`DEFAULT_COMPILE_S`. On a
    loaded machine the wall time is longer."""
    try:
        seconds = float(json.loads((cache_dir().parent / RECORD_NAME).read_text())["compile_s"])
        return seconds, "the last compile on this machine"
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_COMPILE_S, "on the 2-core reference machine"


def record_compile_s(seconds: float) -> None:
    """Remember a full compile's CPU time (s) for the next announcement."""
    path = cache_dir().parent / RECORD_NAME
    with contextlib.suppress(OSError):   # a read-only cache parent: announcements quote the default
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps({"compile_s": round(float(seconds), 1)}) + "\n")


def announcement(missing: list[str]) -> str:
    """The one line announcing a compile of ``missing`` kernels."""
    seconds, source = expected_compile_s()
    return (f"codesign: compiling {len(missing)} walking kernels missing from the cache "
            f"{cache_dir()}: about {seconds:.0f} s of CPU ({source}), once for these sources")


def announce_first_compile(robot: bool = True, stream: TextIO | None = None) -> bool:
    """Before an evaluation (of a design with a wearable robot if ``robot``): print
    :func:`announcement` to ``stream`` (stderr) if a kernel it calls is not cached. Each
    kernel is checked once per process (a few file look-ups), and the line is printed at
    most once per process. True if it printed."""
    unchecked = [k for k in kernels(robot) if k not in _checked]
    if not unchecked:
        return False
    _checked.update(unchecked)
    missing = [k for k in unchecked if not is_cached(k)]
    if not missing or _announced[0]:
        return False
    _announced[0] = True
    print(announcement(missing), file=stream or sys.stderr, flush=True)
    return True


def peer_lock_path() -> Path:
    """The lock file of the peers' compile into this process's cache folder."""
    return cache_dir() / PEER_LOCK_NAME


@contextlib.contextmanager
def compiling_peers() -> Iterator[None]:
    """Hold the peers' lock (exclusive, ``flock``) for the duration: other processes'
    first peer rollouts wait (:func:`wait_for_peers`). The kernel releases it if this
    process dies. This process's own peer rollouts then do not wait (they are the compile)."""
    _peers_waited[0] = True
    path = peer_lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def peers_locked() -> bool:
    """True while a process holds :func:`compiling_peers` on this cache folder."""
    try:
        with open(peer_lock_path()) as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            return False
    except FileNotFoundError:
        return False


def wait_for_peers() -> None:
    """Before this process's first peer rollout: wait while another process compiles the
    peers into this cache folder (:func:`compiling_peers`), so this one loads them. At most
    once per process; no wait when none is compiling."""
    if _peers_waited[0]:
        return
    _peers_waited[0] = True
    with contextlib.suppress(FileNotFoundError), open(peer_lock_path()) as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
