"""The contract of an optimization problem.

A problem is a pure function ``evaluate(params, context) -> EvalRecord`` plus its default
search space (parameters and pools), its default lexicographic objectives (a spec's
``[[objectives]]`` replaces them), and

* ``parse_settings(table) -> Settings``: the spec's ``[evaluation]`` table read once, on
  the driver before any worker starts, into the problem's own frozen settings record
  (every unknown key, wrong type or bad value is one :class:`~codesign.errors.UserError`
  line naming the key); that record -- never the table -- travels to the workers in
  ``EvalContext.settings`` and to ``warmup``. Each default lives in the settings record.
  A problem that takes no settings keeps :func:`no_settings`.
* optionally ``warmup(settings)`` run once per worker (compile numba kernels there),
  ``notes(settings)``: lines the driver prints before a run (what a setting resolved to),
  the names of its ``metrics`` (a spec's objectives are checked against them), and, for
  the problems whose candidates are walking designs, ``walking``
  (:class:`WalkingHooks`: how ``codesign simulate``, ``analyze`` and the report decode,
  check and replay one design, instead of guessing from keys).

``evaluate`` returns metrics and a status; the fitness (stage, stage value) is computed
from them once, by the run layer (:func:`codesign.objectives.score`), never by the problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from codesign.errors import UserError
from codesign.objectives import Objective
from codesign.types import EvalContext, EvalRecord, Parameter, Pool


@dataclass(frozen=True)
class NoSettings:
    """The settings of a problem that takes none."""


def no_unit(name: str) -> None:
    """The ``metric_unit`` of a problem that declares no units."""
    return None


def no_settings(table: Mapping[str, Any]) -> NoSettings:
    """The ``parse_settings`` of a problem without settings: any key is one UserError line."""
    for key in table:
        raise UserError(f"evaluation.{key}: unknown key; expected no keys (this problem takes no settings)")
    return NoSettings()


@dataclass(frozen=True)
class WalkingHooks:
    """What a walking problem offers besides ``evaluate`` (types from
    :mod:`codesign.problems.walking`; ``settings`` is the problem's parsed record, which
    carries WALK's :class:`~codesign.walking.WalkSettings` as its field ``walk``):

    decode(groups, params, settings) -> Design: a candidate (active group per pool,
        parameter name -> value) as a walking design; ValueError/UserError naming the
        parameter when it is not one of this problem's.
    check_design(design, settings, where): UserError (one line, prefixed ``where``) unless
        the design is one this problem evaluates, with exactly the parameters it reads.
    replay(design, settings, record_times) -> Replay: the evaluation of one design with
        its recorded trajectory at ``record_times`` (s) and the problem's metrics.
    own_model: the designs walk on WALK's own model of the design (False: on one of the
        problem's, as the baseline's lumped human), so analyses that build WALK's setup
        themselves (``codesign analyze gait``) apply.
    encode(design) -> (groups, params): the inverse of decode, for the parameters a
        design has (a morphology alone is fine): the groups whose subspaces it belongs to
        and its parameters under the search's names (``space.start_designs``); None: the
        problem's names are the design's.
    """

    decode: Callable[..., Any]
    check_design: Callable[..., None]
    replay: Callable[..., Any]
    own_model: bool = True
    encode: Callable[..., Any] | None = None


@dataclass(frozen=True)
class Problem:
    name: str
    evaluate: Callable[[dict, EvalContext], EvalRecord]
    description: str = ""
    parameters: tuple[Parameter, ...] = ()
    pools: tuple[Pool, ...] = ()
    objectives: tuple[Objective, ...] = ()
    # the [evaluation] table -> the problem's frozen settings record (UserError, one line)
    parse_settings: Callable[[Mapping[str, Any]], Any] = no_settings
    warmup: Callable[[Any], None] | None = None
    valid: Callable[[tuple[str, ...]], bool] | None = None   # optional subspace rule
    # lines the driver prints (stderr) before a run: what the settings resolved to
    notes: Callable[[Any], tuple[str, ...]] | None = None
    # (setting naming a design by its run, setting naming one evaluation of that run): the
    # run layer reads that run's design into the table before parse_settings sees it
    # (:func:`codesign.run.stored.inline_run_reference`); problems never open a run store
    run_reference: tuple[str, str] | None = None
    # the names of the metrics evaluate can report: when given, a spec's objectives are
    # checked against them before a run starts (empty: anything goes)
    metrics: tuple[str, ...] = ()
    walking: WalkingHooks | None = None
    # a metric's unit ("-": a ratio; None: not declared), for what a person reads
    metric_unit: Callable[[str], str | None] = no_unit
    # a walking problem built from options (:mod:`codesign.problems.options`): what it is
    # (None: a problem of its own, as the test functions and the anthropomorphic baseline)
    options: Any = None
