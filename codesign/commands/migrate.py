"""`codesign migrate RUN`: convert a run database of an older schema to the current one."""

from __future__ import annotations

import argparse

HELP = "convert a run database of schema 1 (long format) to the compact schema 2, in place and atomically"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="run folder results/<name>, its run.sqlite, or the run name")


def run(args: argparse.Namespace) -> int:
    from codesign.run.migrate import migrate_run

    done = migrate_run(args.run)
    if done.from_version == done.to_version:
        print(f"{done.path}: already schema {done.to_version}; nothing to do")
        return 0
    print(f"{done.path}: schema {done.from_version} -> {done.to_version}, {done.evaluations} evaluations, "
          f"{done.bytes_before / 1e6:.2f} MB -> {done.bytes_after / 1e6:.2f} MB")
    return 0
