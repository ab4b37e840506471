"""`codesign optimize SPEC`: run a job spec (MMPSO on Dask) into results/<name>/run.sqlite."""

from __future__ import annotations

import argparse

from codesign.errors import UserError
from codesign.run.driver import execution_with, start_run
from codesign.run.spec import load_spec

HELP = "run an optimization job spec (Metamorphic PSO) into results/<name>/run.sqlite"


def add_execution_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by `optimize` and `resume`: where the evaluations run."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="local Dask workers (single-threaded processes; 0 = serial in this process; default: "
                            "the spec's [execution], else one per core)")
    where.add_argument("--scheduler", metavar="ADDR", help="use a running dask scheduler, tcp://HOST:PORT")
    where.add_argument("--cluster", choices=("slurm", "pbs"),
                       help="submit workers as batch jobs (settings from [execution.cluster])")
    parser.add_argument("--no-dashboard", dest="dashboard", action="store_false", default=None,
                        help="local and batch clusters serve no Dask dashboard")
    parser.add_argument("--no-worker-warning", type=float, metavar="S",
                        help="warn (and keep waiting) after S seconds without any Dask worker "
                             "(default: [execution] no_worker_warning_s, 60)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no dashboard line")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", help="job spec, e.g. pipelines/demo.toml")
    parser.add_argument("--name", help="run name (default: the spec's name or file name)")
    parser.add_argument("--results", default="results", help="folder holding the run folders (default %(default)s)")
    add_execution_arguments(parser)


def spec_and_execution(args: argparse.Namespace, what: str = "run folders"):
    """(the spec, where it runs) of `optimize` / `study`: ``args.spec`` loaded and its
    ``[execution]`` with the command line's options over it (:func:`add_execution_arguments`);
    an empty ``--results`` is one line."""
    if not args.results.strip():
        raise UserError(f"--results: got ''; expected the folder to hold the {what} (e.g. results)")
    spec = load_spec(args.spec)
    return spec, execution_of(args, spec)


def execution_of(args: argparse.Namespace, spec):
    """The spec's ``[execution]`` with :func:`add_execution_arguments`' options over it."""
    return execution_with(spec, args.workers, args.scheduler, args.cluster, dashboard=args.dashboard,
                          no_worker_warning_s=args.no_worker_warning)


def run(args: argparse.Namespace) -> int:
    spec, execution = spec_and_execution(args)
    path = start_run(spec, args.results, args.name, execution, progress=not args.quiet)
    print(path)
    return 0
