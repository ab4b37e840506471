"""`codesign warmup`: compile the walking kernels into numba's disk cache once, so later
processes (each CLI call, each Dask worker) load them in about a second.

Prints one line before a compile (with its expected duration) and one after; with a warm
cache only the second, after checking numba's index files (about a second, no evaluation). ``make`` runs it at install (the venv stamp), before ``make run`` and before ``make test``.
Exit status 1 if kernels are still missing afterwards (a cache folder that cannot be
written: see ``CODESIGN_CACHE_DIR``).

``--peers`` also compiles the event-driven and soft rollouts (:func:`compile_peers`) in
one process of its own, started first (numba compiles on one thread; the install's two
cores then both work; the two rollouts are one specialization, the contact model a number
in its settings), and says how long that took. The tests use those rollouts (``make
run``'s checks do not: its soft check steps the soft law), and their first compile costs
minutes. ``--peers-in-background`` (``make test``) returns once the walking kernels are
cached and leaves that process compiling, holding the peers' lock
(:func:`codesign.walking.compiled.compiling_peers`): the tests start at once, and a
test's first peer rollout waits for the compile (:func:`~codesign.walking.compiled.wait_for_peers`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

HELP = "compile the walking kernels into the disk cache (make does this at install)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    peers = parser.add_mutually_exclusive_group()
    peers.add_argument("--peers", action="store_true",
                       help="also compile the event-driven and soft rollouts, in a process of its own at the same time")
    peers.add_argument("--peers-in-background", action="store_true",
                       help="as --peers, but return once the walking kernels are cached and leave the peers compiling "
                            "(make test does: a test's first peer rollout waits for them)")


PEER_MODELS = ("hard_event", "soft")   # the contact models of the other rollouts
PEER_SCRIPT = "from codesign.commands.warmup import compile_peers; compile_peers()"


def warm_up_peer(model: str) -> None:
    """Compile (or load) the rollout of the contact ``model`` (one of PEER_MODELS): a 50-ms
    evaluation of the typical human and co-design, without and with recorded samples (the
    two specializations a run and a replay call)."""
    import numpy as np

    from codesign.walking.evaluation import evaluate_detailed
    from codesign.walking.examples import typical_codesign_design, typical_human_design
    from codesign.walking.settings import WalkSettings
    from codesign.walking.warmup import SHORT_S
    settings = WalkSettings.from_dict({"max_time": SHORT_S, "contact_model": model})
    for design in (typical_human_design(settings), typical_codesign_design(settings)):
        evaluate_detailed(design, settings)
        evaluate_detailed(design, settings, record_times=np.array([0.0, 0.5 * SHORT_S]))


def compile_peers() -> None:
    """Compile (or load) every peer's rollout (:data:`PEER_MODELS`) holding the peers'
    lock, then print one line with the time it took."""
    from codesign.walking import compiled

    t0 = time.perf_counter()
    with compiled.compiling_peers():
        for model in PEER_MODELS:
            warm_up_peer(model)
    print(f"event-driven and soft rollouts: compiled or loaded alongside ({time.perf_counter() - t0:.1f} s)",
          flush=True)


def start_peers(background: bool, errors) -> subprocess.Popen:
    """The process of :func:`compile_peers`, once it holds the peers' lock (or has ended).
    ``background``: a session of its own that outlives this one, its output this
    process's; else its stdout piped, its stderr to the file ``errors``."""
    from codesign.walking import compiled

    peer = subprocess.Popen([sys.executable, "-c", PEER_SCRIPT], text=True, start_new_session=background,
                            stdout=None if background else subprocess.PIPE, stderr=None if background else errors)
    while not compiled.peers_locked() and peer.poll() is None:
        time.sleep(0.02)
    return peer


def run(args: argparse.Namespace) -> int:
    from codesign.walking import compiled
    from codesign.walking.warmup import warm_up

    errors = tempfile.TemporaryFile("w+")    # the peers' stderr in a file (a full pipe would block it)
    want_peers = args.peers or args.peers_in_background
    peer = start_peers(args.peers_in_background, errors) if want_peers else None
    result = warm_up(stream=sys.stdout)
    folder = compiled.cache_dir()
    n = len(compiled.kernels())
    if result.missing_after:
        print(f"codesign warmup: {len(result.missing_after)} of {n} kernels still not cached in "
              f"{folder} ({', '.join(result.missing_after)}); expected a writable cache folder "
              "(set CODESIGN_CACHE_DIR)", file=sys.stderr)
        if peer is not None:
            peer.kill()
        return 1
    done = (f" (compiled {len(result.missing_before)} in {result.seconds:.1f} s, "
            f"{result.cpu_s:.1f} s of CPU)" if result.missing_before else "")
    print(f"walking kernels: {n} of {n} cached in {folder}{done}")
    if peer is None or args.peers_in_background:
        return 0
    out, _ = peer.communicate()
    if peer.returncode != 0:
        errors.seek(0)
        last = (errors.read().strip().splitlines() or ["no message"])[-1]
        print(f"codesign warmup: the peers' rollouts did not compile: {last}", file=sys.stderr)
        return 1
    print(out.strip())
    return 0
