"""`codesign freeze RUN --keep PARTS -o SPEC`: a new job spec with parts of a solution fixed."""

from __future__ import annotations

import argparse
from pathlib import Path

from codesign.errors import UserError

HELP = "write a new job spec with parts of a run's solution frozen (iterative co-design, thesis 5.6)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="parent run folder results/<name>, its run.sqlite, or a run name")
    parser.add_argument("--keep", required=True, action="append",
                        help="parts to fix to the solution's values, comma-separated: topology, "
                             "actuators, morphology, control, pool:NAME, param:NAME (fnmatch "
                             "pattern); may be repeated")
    parser.add_argument("--open", action="append", default=[], dest="open_parts",
                        help="parameter parts to leave open after --keep (e.g. --keep "
                             "morphology --open 'param:j5_*' leaves one sub-chain open)")
    parser.add_argument("--solution", default="best",
                        help="best (default) or ITERATION:PARTICLE (the report's eval column)")
    parser.add_argument("--warm-start", type=int, default=0, metavar="N",
                        help="start the open parameters in the range of the parent's N best "
                             "matching evaluations (default 0: no warm start)")
    parser.add_argument("--name", default=None, help="run name in the new spec (default: the "
                                                     "output file's stem)")
    parser.add_argument("-o", "--out", required=True, help="new spec path, e.g. pipelines/NAME.toml")
    parser.add_argument("--force", action="store_true", help="overwrite an existing spec file")
    parser.add_argument("--catalog", default=None, help="topology catalog (co-design runs)")


def run(args: argparse.Namespace) -> int:
    from codesign.io import writable_folder
    from codesign.report.freeze import freeze_spec, parse_parts, write_spec_atomic
    from codesign.run.spec import check_run_name

    keep = [p for text in args.keep for p in parse_parts(text, "--keep")]
    open_parts = [p for text in args.open_parts for p in parse_parts(text, "--open")]
    if args.warm_start < 0:
        raise UserError(f"--warm-start: got {args.warm_start}; expected an integer >= 0")
    out = Path(args.out)
    if out.suffix != ".toml":
        raise UserError(f"-o: got {out}; expected a path ending in .toml")
    check_run_name(args.name or out.stem, "--name" if args.name else "-o (the run name is its stem)")
    if out.exists() and not args.force:
        raise UserError(f"{out}: already exists; expected a new spec path (or --force)")
    writable_folder(out.parent, "-o", create=False, given=out)   # before reading the run
    if args.catalog:                    # given, it must be read, even where --keep needs none
        from codesign.topology.catalog import load_catalog

        load_catalog(args.catalog)
    text, summary = freeze_spec(args.run, keep, open_parts=open_parts, solution=args.solution,
                                name=args.name or out.stem, warm_start=args.warm_start,
                                catalog_path=Path(args.catalog) if args.catalog else None)
    write_spec_atomic(text, out, force=args.force)
    print(f"{out}: from run {summary['parent']}, solution {summary['solution']} "
          f"(subspace {summary['subspace']}); frozen pools {_pools(summary['frozen_pools'])}, "
          f"{summary['frozen_parameters']} frozen / {summary['open_parameters']} open parameters, "
          f"{summary['subspaces']} subspace(s)")
    return 0


def _pools(pools: dict) -> str:
    """``topology = T3, actuators = A1`` (pool = its frozen group), or ``-`` for none."""
    return ", ".join(f"{pool} = {group}" for pool, group in pools.items()) or "-"
