"""`codesign study SPEC`: a spec with a ``[study]`` table run as its rounds -- the global
search, a focused round per promising topology, each round's best verified at half the
time step, with soft contacts and in MuJoCo -- into results/<name>/ (resumable)."""

from __future__ import annotations

import argparse

from codesign.commands.optimize import add_execution_arguments

HELP = "run a study: a global search, focused rounds per topology, each best verified (results/<name>/)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", help="job spec with a [study] table, e.g. pipelines/study.toml")
    parser.add_argument("--results", default="results", help="folder holding the study folder (default %(default)s)")
    parser.add_argument("--report", action="store_true",
                        help="also write the report of the round that holds the study's best "
                             "(results/<name>/<round>/report; its robustness replays left to the study's checks)")
    add_execution_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from codesign.commands.optimize import spec_and_execution
    from codesign.report.study import STUDY_CSV, STUDY_MD, best_line, run_study

    spec, execution = spec_and_execution(args, "study folder")
    folder, bests = run_study(spec, args.results, execution, progress=not args.quiet)
    print((folder / STUDY_MD).read_text(encoding="utf-8").rstrip())
    print(f"study table: {folder / STUDY_CSV}")
    if args.report:
        import matplotlib

        matplotlib.use("Agg")
        from codesign.report.build import build_report

        report = build_report(folder / bests[0].round, robustness=0)
        print(f"report of round {bests[0].round}: {report / 'index.html'}")
    print(best_line(bests[0], folder))      # last: the best's verdict under every check, its file
    return 0
