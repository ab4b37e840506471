"""What a design is: the problem that made it, read from its file, or -- for a file written
before designs said so -- guessed once, here, and said so.

A design file carries ``"problem"``: the problem's name and every option
(:mod:`codesign.problems.options`), e.g. ``{"name": "exo_codesign_wearer_drive", "device":
"linkage", "control": "wearer", "torso_feedback": false, "drivetrains": "searched",
"wearer": "passive", "search": "device"}``; a problem without options (the anthropomorphic
baseline) only its name. :func:`design_problem` reads it with the spec's parser (an unknown
problem or option, a bad combination: one UserError line naming the file).

:func:`legacy_problem` is the one place that guesses, for files written before: from the
design's parameter names (the wearer's hip ``hip.*``: the wearer-space law; a torso term
``.torso.``; drivetrains ``j<id>.motor``; an assistance profile ``assist.*``: an active
wearer's device; topology null: the human), and its caller prints the line it returns.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, NamedTuple

from codesign.errors import UserError, shown
from codesign.problems.options import (COMPOSED, FILE_OPTIONS, PRESETS, ProblemOptions, parse_options,
                                       problem_key, settings_table)


class DesignProblem(NamedTuple):
    """The problem key a design is evaluated by, the ``[evaluation]`` table its settings
    parser reads (the design's own with the frozen designs its options name), and the
    line to print when the problem was guessed (None when the design said it)."""

    key: str
    table: dict
    guessed: str | None


def problem_document(key: str, options: ProblemOptions | None, table: Mapping[str, Any]) -> dict:
    """A design file's ``"problem"``: the problem's name (a preset's, or ``walking``) and
    every option, with the frozen designs ``table`` names (``device_design``,
    ``wearer_design``); a problem without options, its name alone."""
    if options is None:
        return {"name": key}
    files = {k: table[k] for k in FILE_OPTIONS if isinstance(table.get(k), str)}
    doc = dataclasses.replace(options.space(), **files).to_json()
    return {"name": key if key in PRESETS else COMPOSED, **doc}


def read_problem(doc: Mapping[str, Any], where: str, evaluation: Mapping[str, Any],
                 registered: Callable[[], list[str]]) -> tuple[str, dict]:
    """(problem key, settings table) of a design's ``"problem"`` (UserError, one line
    prefixed ``where``): a walking preset or ``walking`` with options, or a registered
    problem's name alone (``registered()``: the names of the problems without options that
    evaluate walking designs; called only for a name that is not a preset)."""
    if not isinstance(doc, Mapping):
        raise UserError(f"{where}.problem: got {shown(doc)}; expected an object with the problem's name and options")
    name = doc.get("name")
    if name not in PRESETS and name != COMPOSED:
        others = registered()
        if name not in others:
            raise UserError(f"{where}.problem.name: {shown(name)}; expected a walking problem: "
                            f"{', '.join(PRESETS)} or {COMPOSED} (with options), or {', '.join(sorted(others))}")
        if len(doc) > 1:
            extra = next(k for k in doc if k != "name")
            raise UserError(f"{where}.problem.{extra}: unknown option of problem {shown(name)} (it takes none); "
                            "expected only its name")
        return name, dict(evaluation)
    _name, options = parse_options(doc, f"{where}.problem", evaluation)
    return problem_key(options), settings_table(options, evaluation)


def legacy_problem(params: Mapping[str, float], topology: int | None) -> str:
    """The problem a design file written before designs named theirs was most likely made
    by, from its parameter names (module docstring): the preset's name."""
    torso = any(".torso." in name for name in params)
    if topology is None:
        return "human_gait_balance" if torso else "human_gait"
    if any(name.startswith("assist.") for name in params):
        return "exo_assist"
    wearer = any(name.startswith("hip.") for name in params)
    drive = any(name.endswith(".motor") for name in params)
    options = ProblemOptions(control="wearer" if wearer else "actuator", torso_feedback=torso,
                             drivetrains="searched" if drive else "rating")
    return problem_key(options)


def design_problem(problem_doc: Mapping[str, Any] | None, params: Mapping[str, float], topology: int | None,
                   evaluation: Mapping[str, Any], where: str, registered) -> DesignProblem:
    """The problem of a design file (its ``"problem"``; UserError, one line, for one that
    does not read) or, without one, :func:`legacy_problem`'s guess and the line saying so."""
    if problem_doc:
        key, table = read_problem(problem_doc, where, evaluation, registered)
        return DesignProblem(key, table, None)
    key = legacy_problem(params, topology)
    return DesignProblem(key, dict(evaluation),
                         f"{where}: written before designs named their problem; read as {key} "
                         "(guessed from its parameter names; re-save it to say so)")


def key_document(key: str, table: Mapping[str, Any] | None = None) -> dict:
    """A design file's ``"problem"`` for the problem registered under ``key`` (a preset,
    a ``walking(...)`` key or a problem without options)."""
    from codesign.problems.options import options_of_key

    return problem_document(key, options_of_key(key), table or {})


def human_law_problem(design_problem_doc: Mapping[str, Any], params: Mapping[str, float]) -> ProblemOptions:
    """The options of a human-gait design (its ``"problem"``, else the legacy guess): which
    law, with or without the hip's torso term."""
    key = design_problem_doc.get("name") if design_problem_doc else None
    if key not in PRESETS:
        key = legacy_problem(params, None)
    return PRESETS[key]
