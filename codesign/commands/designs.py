"""`codesign designs`: the stored designs' index and the record of what `make run` ends on.

    codesign designs index [--folder docs/designs] [--check]
    codesign designs make-run [RUN] [--machine TEXT] [--date YYYY-MM-DD]

``index`` writes ``docs/designs/README.md`` from the design files and ``index.toml``
(:mod:`codesign.report.design_index`); ``--check`` writes nothing and exits 1 when the
README is not what it would write. ``make-run`` replays the best of the demo's finished run
(default ``results/demo``) and writes ``docs/make-run.json`` and the README's `make run`
sentence from it (:mod:`codesign.report.make_run`); run it from the repository root after
`make run`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
from pathlib import Path

from codesign.errors import UserError

HELP = "index the stored designs (docs/designs/README.md); record what `make run` ends on"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    sub.required = True
    index = sub.add_parser("index", help="write docs/designs/README.md from the design files and index.toml",
                           description="write docs/designs/README.md from the design files and index.toml")
    index.add_argument("--folder", default="docs/designs", help="the designs' folder (default: docs/designs)")
    index.add_argument("--check", action="store_true",
                       help="write nothing; exit 1 when the README is not what would be written")
    record = sub.add_parser("make-run", help="replay the demo's best and record what `make run` ends on",
                            description="replay the best of the demo's finished run; write docs/make-run.json "
                                        "and the README's `make run` sentence")
    record.add_argument("run", nargs="?", default="results/demo", help="the demo study (or a run) (default: results/demo)")
    record.add_argument("--machine", default=None,
                        help="where it ran, in words (default: the CPU count and platform of this machine)")
    record.add_argument("--date", default=None, help="YYYY-MM-DD of the run (default: today, UTC)")


def run(args: argparse.Namespace) -> int:
    if args.action == "index":
        return _index(args)
    return _make_run(args)


def _index(args: argparse.Namespace) -> int:
    from codesign.report.design_index import README_FILE, index_markdown, write_index

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UserError(f"--folder {folder}: not a folder; expected the designs' folder (docs/designs)")
    root = Path.cwd()
    if args.check:
        current = (folder / README_FILE).read_text(encoding="utf-8") if (folder / README_FILE).is_file() else ""
        if current != index_markdown(folder, root):
            print(f"{folder / README_FILE}: not current; run `codesign designs index`")
            return 1
        print(f"{folder / README_FILE}: current")
        return 0
    print(write_index(folder, root))
    return 0


def _make_run(args: argparse.Namespace) -> int:
    from codesign.report.make_run import README, RECORD_FILE, measure_make_run, make_run_sentence, write_make_run

    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise UserError(f"--date: {date!r}; expected YYYY-MM-DD") from None
    machine = args.machine or f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}"
    if not README.is_file():
        raise UserError(f"{README}: not found; expected to run from the repository root")
    record = measure_make_run(args.run, date, machine)
    write_make_run(record, RECORD_FILE, README)
    print(make_run_sentence(record))
    print(RECORD_FILE)
    return 0
