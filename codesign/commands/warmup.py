"""`codesign warmup`: compile the walking kernels into numba's disk cache once, so later
processes (each CLI call, each Dask worker) load them in about a second.

Prints one line before a compile (with its expected duration) and one after; with a warm
cache only the second, after checking numba's index files (about a second, no evaluation). ``make`` runs it at install (the venv stamp), before ``make run`` and before ``make test``.
Exit status 1 if kernels are still missing afterwards (a cache folder that cannot be
written: see ``CODESIGN_CACHE_DIR``).

``--peers`` (``make test``) also compiles the event-driven and soft rollouts
(:func:`warm_up_peer`, :data:`PEER_MODELS`), each in a process of its own started first, so
the compiles run at once (numba compiles on one thread; the install's two cores then both
work): the tests use those rollouts (``make run``'s checks do not: its soft check steps
the soft law), and their first compile costs minutes. One more line says how long it took.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

HELP = "compile the walking kernels into the disk cache (make does this at install)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--peers", action="store_true",
                        help="also compile the event-driven and soft rollouts, each in a process of its own at the same "
                             "time (make test does: the tests use them)")


PEER_MODELS = ("hard_event", "soft")   # the contact models of the other rollouts
PEER_SCRIPT = "from codesign.commands.warmup import warm_up_peer; warm_up_peer({model!r})"


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


def run(args: argparse.Namespace) -> int:
    from codesign.walking import compiled
    from codesign.walking.warmup import warm_up

    t0 = time.perf_counter()
    # one process per peer model, each its stderr in a file (a full pipe would block it)
    errors = [tempfile.TemporaryFile("w+") for _ in PEER_MODELS] if args.peers else []
    peers = [subprocess.Popen([sys.executable, "-c", PEER_SCRIPT.format(model=model)], stdout=subprocess.DEVNULL,
                              stderr=err, text=True) for model, err in zip(PEER_MODELS, errors)]
    result = warm_up(stream=sys.stdout)
    folder = compiled.cache_dir()
    n = len(compiled.kernels())
    if result.missing_after:
        print(f"codesign warmup: {len(result.missing_after)} of {n} kernels still not cached in "
              f"{folder} ({', '.join(result.missing_after)}); expected a writable cache folder "
              "(set CODESIGN_CACHE_DIR)", file=sys.stderr)
        for peer in peers:
            peer.kill()
        return 1
    done = (f" (compiled {len(result.missing_before)} in {result.seconds:.1f} s, "
            f"{result.cpu_s:.1f} s of CPU)" if result.missing_before else "")
    print(f"walking kernels: {n} of {n} cached in {folder}{done}")
    if not peers:
        return 0
    for model, peer, err in zip(PEER_MODELS, peers, errors):
        if peer.wait() != 0:
            err.seek(0)
            last = (err.read().strip().splitlines() or ["no message"])[-1]
            print(f"codesign warmup: the {model} rollout did not compile: {last}", file=sys.stderr)
            return 1
    print(f"event-driven and soft rollouts: compiled or loaded alongside ({time.perf_counter() - t0:.1f} s)")
    return 0
