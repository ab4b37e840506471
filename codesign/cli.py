"""The `codesign` command: one subcommand per pipeline stage.

Each subcommand lives in its own module exposing::

    HELP: str                                   # one line for `codesign --help`
    def add_arguments(parser) -> None           # argparse options
    def run(args) -> int                        # exit status

Modules are imported only when their subcommand runs, so `codesign --help` stays fast
and a stage's heavy imports (numba, dask) are paid only by the stage that needs them.
A :class:`codesign.errors.UserError` becomes one line on stderr and exit status 2; a
:class:`codesign.errors.Stopped` run one line and exit status 130 (interrupted) or 75 (its
Dask scheduler was lost, :class:`codesign.errors.ClusterLost`).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

from codesign.errors import Stopped, UserError
from codesign.interrupts import sigint_blocked

# subcommand -> module implementing it (see the module docstring for the contract)
COMMANDS: dict[str, str] = {
    "topologies": "codesign.commands.topologies",
    "screen": "codesign.commands.screen",
    "simulate": "codesign.commands.simulate",
    "carry": "codesign.commands.carry",
    "compare": "codesign.commands.compare",
    "check": "codesign.commands.check",
    "optimize": "codesign.commands.optimize",
    "resume": "codesign.commands.resume",
    "runs": "codesign.commands.runs",
    "migrate": "codesign.commands.migrate",
    "report": "codesign.commands.report",
    "freeze": "codesign.commands.freeze",
    "study": "codesign.commands.study",
    "transfer": "codesign.commands.transfer",
    "fit-gait": "codesign.commands.fit_gait",
    "analyze": "codesign.commands.analyze",
    "bench": "codesign.commands.bench",
    "warmup": "codesign.commands.warmup",
    "export": "codesign.commands.export",
    "crosscheck": "codesign.commands.crosscheck",
    "designs": "codesign.commands.designs",
}


def available_commands() -> dict[str, str]:
    """The subcommands whose module exists in this installation."""
    found = {}
    for name, module in COMMANDS.items():
        try:
            if importlib.util.find_spec(module) is not None:
                found[name] = module
        except ModuleNotFoundError:  # parent package not there yet
            continue
    return found


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(commands: dict[str, str]) -> argparse.ArgumentParser:
    parser = _Parser(prog="codesign", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, module_name in commands.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = available_commands()
    # import only the module of the requested command (fast --help for the others)
    wanted = next((a for a in argv if not a.startswith("-")), None)
    if wanted in commands:
        commands = {wanted: commands[wanted]}
    try:
        # the command's module imports numpy, numba, dask: their native threads start here
        # and keep SIGINT blocked, so that a Ctrl-C always reaches this (main) thread (see
        # codesign.run.executors.local_executor); one pressed meanwhile acts right after
        with sigint_blocked():
            parser = build_parser(commands)
    except KeyboardInterrupt:
        print(f"codesign{' ' + wanted if wanted in commands else ''}: interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    try:
        return int(args._module.run(args) or 0)
    except UserError as exc:
        print(f"codesign {args.command}: error: {exc}", file=sys.stderr)
        return UserError.exit_status
    except Stopped as exc:        # an interrupt (130) or a lost cluster (75)
        print(f"codesign {args.command}: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"codesign {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:   # output piped into a reader that stopped (`| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        if exc.filename is None:
            raise
        # a path the commands did not check up front (they check where they write): still
        # one line naming the file, not a traceback
        print(f"codesign {args.command}: error: {exc.filename}: {exc.strerror or type(exc).__name__}; "
              f"expected a path that can be read or written", file=sys.stderr)
        return UserError.exit_status


if __name__ == "__main__":
    sys.exit(main())
