"""`codesign resume RUN`: continue a stopped or killed run from its last stored iteration."""

from __future__ import annotations

import argparse

from codesign.commands.optimize import add_execution_arguments, execution_of
from codesign.run.driver import resume_run
from codesign.run.spec import parse_spec
from codesign.run.store import open_run

HELP = "continue an interrupted optimization run (results/<name>) bit-exactly"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="run folder results/<name>, its run.sqlite, or the run name")
    add_execution_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from codesign.run.store import find_run_database

    path = find_run_database(args.run)
    with open_run(path, readonly=True) as store:
        runs = store.runs()
    spec = parse_spec(runs.iloc[-1]["spec_toml"], source=f"{path}:spec_toml") if len(runs) else None
    execution = execution_of(args, spec) if spec else None
    print(resume_run(path, execution, progress=not args.quiet))
    return 0
