"""Command-line option parsing that several commands share."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from codesign.errors import UserError


def settings_overrides(text: str) -> dict:
    """The ``--settings`` option: a JSON object of evaluation settings (UserError, one line,
    for anything else)."""
    try:
        overrides = json.loads(text)
    except json.JSONDecodeError:
        raise UserError(f"--settings: {text!r}; expected a JSON object") from None
    if not isinstance(overrides, dict):
        raise UserError("--settings: expected a JSON object")
    return overrides


def add_design_arguments(parser, max_time_help: str | None = "seconds (default 10)",
                         max_time_flags: tuple[str, ...] = ("--max-time",)) -> None:
    """The options that pick one walking design and its settings (``codesign simulate``,
    ``codesign analyze gait``, ``codesign export``, ``codesign crosscheck``): a design
    file, ``--human`` or a run's candidate, the problem that evaluates it, ``--settings``
    and ``--max-time`` (spelled ``max_time_flags``; left out with ``max_time_help``
    None, for a command that simulates nothing)."""
    from codesign.walking.examples import HUMAN_DAMPING, HUMAN_STIFFNESS   # light: numbers only

    parser.add_argument("design", nargs="?", help="design JSON: {topology, actuators, params}")
    parser.add_argument("--human", action="store_true",
                        help="the unaugmented human tracking the nominal gait (no design file)")
    parser.add_argument("--stiffness", type=float, default=None,
                        help=f"--human: joint stiffness in N m/rad (default {HUMAN_STIFFNESS:g})")
    parser.add_argument("--damping", type=float, default=None,
                        help=f"--human: joint damping in N m s/rad (default {HUMAN_DAMPING:g})")
    parser.add_argument("--run", default=None,
                        help="run folder (results/<name>) or run.sqlite to take a candidate from")
    parser.add_argument("--best", action="store_true", help="--run: the run's best evaluation")
    parser.add_argument("--eval", default=None, metavar="ITERATION:PARTICLE",
                        help="--run: the evaluation of this particle at this iteration")
    parser.add_argument("--problem", default=None, metavar="NAME",
                        help="the walking problem that evaluates the design and reads --settings "
                             "(default: the run's, or the design file's \"problem\"; e.g. "
                             "anthropomorphic_baseline with '{\"baseline_of\": ...}')")
    parser.add_argument("--settings", default="{}",
                        help="JSON object of evaluation settings over the run's, e.g. '{\"phase0\": 0.2}' "
                             "(default %(default)s)")
    if max_time_help is None:
        parser.set_defaults(max_time=None)
    else:
        parser.add_argument(*max_time_flags, dest="max_time", type=float, default=None, help=max_time_help)


class ChosenDesign(NamedTuple):
    """A design picked by :func:`add_design_arguments`' options: the problem that
    evaluates it, the design, the problem's parsed settings, the objectives it is ranked
    by (the run's, else the problem's) and where it came from (a line of text)."""

    problem: Any
    design: Any
    settings: Any
    objectives: tuple
    source: str


def chosen_design(args) -> ChosenDesign:
    """The design and settings :func:`add_design_arguments`' options name, each option
    checked (UserError, one line naming it): exactly one of a design file, ``--human``
    and ``--run``; the objectives: the run's, a design file's own, else the problem's;
    ``--stiffness/--damping`` only with ``--human``; ``--best/--eval`` only
    with ``--run``; the run's ``[evaluation]`` table (a design file's ``evaluation``), then ``--settings``, then
    ``--max-time``, read by the problem's ``parse_settings``; a design file checked by the
    problem (its topology and exactly the parameters it reads)."""
    import contextlib
    import dataclasses
    import math
    import sys

    from codesign.problems import get_problem, problem_names
    from codesign.problems.identity import design_problem, problem_document
    from codesign.run.spec import parse_objectives
    from codesign.run.spec_values import Invalid
    from codesign.run.stored import inline_run_reference, stored_candidate
    from codesign.walking import load_design, typical_human_design
    from codesign.walking.examples import HUMAN_DAMPING, HUMAN_STIFFNESS

    if args.human + bool(args.design) + (args.run is not None) != 1:
        raise UserError("design: give a design JSON file, --human or --run (exactly one)")
    for given, option, needs in ((args.stiffness is not None, "--stiffness", "--human"),
                                 (args.damping is not None, "--damping", "--human"),
                                 (args.best, "--best", "--run"), (args.eval is not None, "--eval", "--run")):
        if given and not (args.human if needs == "--human" else args.run is not None):
            raise UserError(f"{option}: applies to {needs} only; expected it with {needs}")
    if args.max_time is not None and not (math.isfinite(args.max_time) and args.max_time > 0):
        raise UserError(f"--max-time: {args.max_time}; expected a duration > 0 s")
    overrides = settings_overrides(args.settings)
    stored, design, own, guessed = None, None, {}, None

    def walking() -> list[str]:
        return [n for n in problem_names() if get_problem(n).walking is not None]
    if args.run is not None:
        with contextlib.redirect_stdout(sys.stderr):   # its "replaying ..." line
            stored = stored_candidate(args.run, args.best, args.eval)
        design, name, own = stored.design, stored.problem, stored.table
        source = f"{args.run} " + ("best" if args.best else f"evaluation {args.eval}")
    elif args.human:
        name = "human_gait"
    else:
        design = load_design(args.design)
        said = design_problem(design.problem, design.params, design.topology, design.evaluation,
                              str(args.design), lambda: [n for n in walking() if get_problem(n).options is None])
        name, own, guessed = said.key, said.table, said.guessed
        source = str(args.design)
    if args.problem is not None:
        names = walking()
        if args.problem not in names or (stored is not None and args.problem != stored.problem):
            raise UserError(f"--problem: {args.problem!r}; expected " + (
                f"the run's, {stored.problem}" if stored is not None else f"one of {', '.join(names)}"))
        name = args.problem
    problem = get_problem(name)
    table = {**own, **overrides}
    if args.max_time is not None:
        table["max_time"] = args.max_time
    settings = problem.parse_settings(inline_run_reference(table, problem.run_reference))
    if args.human:
        stiffness = HUMAN_STIFFNESS if args.stiffness is None else args.stiffness
        damping = HUMAN_DAMPING if args.damping is None else args.damping
        if not (math.isfinite(stiffness) and stiffness > 0):
            raise UserError(f"--stiffness: {stiffness:g}; expected a joint stiffness > 0 N m/rad")
        if not (math.isfinite(damping) and damping >= 0):
            raise UserError(f"--damping: {damping:g}; expected a joint damping >= 0 N m s/rad")
        design = typical_human_design(settings.walk, stiffness, damping)
        source = f"human (stiffness {stiffness:g} N m/rad, damping {damping:g} N m s/rad)"
    elif stored is None:
        problem.walking.check_design(design, settings, str(args.design))   # a run's own are checked
    objectives = stored.objectives if stored is not None else problem.objectives
    if stored is None and design is not None and design.objectives:     # a design file's own stages
        try:
            objectives = parse_objectives(list(design.objectives))
        except Invalid as exc:
            raise UserError(f"{args.design}: {exc}") from None
    design = dataclasses.replace(design, problem=problem_document(problem.name, problem.options, table))
    if guessed is not None and args.problem is None:
        print(guessed, file=sys.stderr)         # the legacy loader says that it guessed
    return ChosenDesign(problem, design, settings, tuple(objectives), source)
