"""`codesign report RUN`: figures, index.html and summary.md of a run (finished or not).

Prints the report's path, then the best's verdict ("best (evaluation 288:25): walks 10 s,
too slow: ..."), and last, for a walking problem, the best design's file
(``<report>/best_design.json``: ``codesign simulate`` replays it) -- `make run` ends on
these two lines."""

from __future__ import annotations

import argparse
from pathlib import Path

from codesign.errors import UserError

HELP = ("write results/<run>/report/: the best design (verdict, design file, figures, loads), top "
        "solutions, progress, visit heatmaps, particle flow, index.html")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="run folder results/<name>, its run.sqlite, or a run name")
    parser.add_argument("-o", "--out", default=None,
                        help="report folder (default: <run folder>/report)")
    parser.add_argument("--top", type=int, default=5,
                        help="number of solutions in the top-solutions table (default 5)")
    parser.add_argument("--no-gait", action="store_true",
                        help="do not re-simulate the best co-design solution for gait "
                             "snapshots and an animation (saves the simulation time)")
    parser.add_argument("--robustness", type=int, default=1, metavar="N",
                        help="re-evaluate the best N designs at half the time step and with soft "
                             "contacts (default 1; 0: none; the soft model takes minutes per design)")
    parser.add_argument("--robustness-checks", default="half_step,soft", metavar="CHECKS",
                        help="the re-evaluations of --robustness, comma-separated among half_step, soft, "
                             "wearer_light, wearer_heavy (every wearer segment mass x0.9 / x1.1; "
                             "default half_step,soft)")
    parser.add_argument("--catalog", default=None,
                        help="topology catalog for co-design runs (default: the spec's "
                             "evaluation.catalog, else topologies/catalog.json)")


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from codesign.report.build import build
    from codesign.report.robustness import parse_checks

    if args.top < 1:
        raise UserError(f"--top: got {args.top}; expected an integer >= 1")
    if not 0 <= args.robustness <= args.top:
        raise UserError(f"--robustness: got {args.robustness}; expected an integer in [0, --top]")
    checks = parse_checks(args.robustness_checks)
    if args.catalog:                    # given, it must be read: not a silent generic layout
        from codesign.topology.catalog import load_catalog

        load_catalog(args.catalog)
    out, best = build(args.run, args.out, top=args.top,
                      catalog_path=Path(args.catalog) if args.catalog else None,
                      gait=not args.no_gait, robustness=args.robustness, checks=checks)
    print(f"report: {out / 'index.html'} (summary: {out / 'summary.md'})")
    print(best.line)                       # the verdict of the best, then its design file last
    if best.design is not None:
        print(f"design: {best.design}")
    return 0
