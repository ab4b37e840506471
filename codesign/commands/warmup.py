"""`codesign warmup`: compile the walking kernels into numba's disk cache once, so later
processes (each CLI call, each Dask worker) load them in about a second.

Prints one line before a compile (with its expected duration) and one after; with a warm
cache only the second, after checking numba's index files (about a second, no evaluation). ``make`` runs it at install (the venv stamp) and before ``make run``.
Exit status 1 if kernels are still missing afterwards (a cache folder that cannot be
written: see ``CODESIGN_CACHE_DIR``).
"""

from __future__ import annotations

import argparse
import sys

HELP = "compile the walking kernels into the disk cache (make does this at install)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from codesign.walking import compiled
    from codesign.walking.warmup import warm_up

    result = warm_up(stream=sys.stdout)
    folder = compiled.cache_dir()
    n = len(compiled.kernels())
    if result.missing_after:
        print(f"codesign warmup: {len(result.missing_after)} of {n} kernels still not cached in "
              f"{folder} ({', '.join(result.missing_after)}); expected a writable cache folder "
              "(set CODESIGN_CACHE_DIR)", file=sys.stderr)
        return 1
    done = (f" (compiled {len(result.missing_before)} in {result.seconds:.1f} s, "
            f"{result.cpu_s:.1f} s of CPU)" if result.missing_before else "")
    print(f"walking kernels: {n} of {n} cached in {folder}{done}")
    return 0
