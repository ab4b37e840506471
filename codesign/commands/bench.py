"""`codesign bench NAME`: run a benchmark of :mod:`codesign.bench` (or all of them)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util

from codesign.bench import BENCHMARKS
from codesign.errors import UserError
from codesign.io import creatable_folder

HELP = "run a benchmark (engine, runner, evaluate, coldstart, screen, storage, scaling, search, mujoco, loads, all) and compare with peers"


def available() -> dict[str, str]:
    return {n: m for n, m in BENCHMARKS.items() if importlib.util.find_spec(m) is not None}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = sorted(available()) + ["all"]
    parser.add_argument("name", choices=names, help="which benchmark")
    parser.add_argument("--out", default="results/bench", help="folder for the CSV files (default %(default)s)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--full-peers", action="store_true",
                        help="evaluate: run the slow event-driven and soft-contact peers for the "
                             "whole simulated time (minutes) instead of 1 s")
    scaling = parser.add_argument_group("scaling (only with `codesign bench scaling`)")
    scaling.add_argument("--workers", metavar="LIST", help="worker counts, e.g. 1,2,16,64 (default 2,4,8,16,32,64; "
                         "--quick: 2,64)")
    scaling.add_argument("--iterations", type=int, metavar="N",
                         help="iterations replayed per worker count (default 10; --quick: 3)")
    scaling.add_argument("--profile", metavar="NAME|PATH", help="a bundled cost profile (codesign, demo) "
                         "or a profile file; default: both bundled ones")
    scaling.add_argument("--run", metavar="RUN", help="replay a stored run's costs (its folder or run.sqlite)")
    scaling.add_argument("--pipeline", action="store_true",
                         help="replay with the pipelined MMPSO ([optimizer] pipeline = true)")
    scaling.add_argument("--processes", type=int, metavar="N",
                         help="at most N worker processes, the workers being their threads (default 4)")
    scaling.add_argument("--json", action="store_true", help="print the figures as JSON")


SCALING_OPTIONS = ("workers", "iterations", "profile", "run", "pipeline", "processes", "json")


def run(args: argparse.Namespace) -> int:
    names = sorted(available()) if args.name == "all" else [args.name]
    given = [o for o in SCALING_OPTIONS if getattr(args, o, None) not in (None, False)]
    if given and names != ["scaling"]:
        raise UserError(f"--{given[0]}: an option of `codesign bench scaling`; expected it only "
                        f"with that benchmark, not {args.name!r}")
    creatable_folder(args.out, "--out")     # before minutes of measuring; made when the CSV is written
    checked = None
    if names == ["scaling"]:            # its bad options: one line, no header before it
        from codesign.bench import scaling

        checked = scaling.check_options(args)
    status = 0
    for name in names:
        module = importlib.import_module(BENCHMARKS[name])
        if not args.json:               # --json: stdout is the JSON document alone
            print(f"== codesign bench {name}: {module.DESCRIPTION}")
        status = max(status, int((module.run(args, checked) if checked else module.run(args)) or 0))
    return status
