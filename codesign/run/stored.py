"""Designs stored in a run: read one evaluation's candidate back as a walking design.

``stored_candidate(run, best, which)`` is how ``codesign simulate --run`` and ``codesign
analyze gait --run`` find a design in a run database; :func:`inline_run_reference` reads
the design that a problem's setting names by its run (the anthropomorphic baseline's
``baseline_of = "results/RUN"``) into the settings, so that problems and workers never
open a run store.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from codesign.errors import UserError
from codesign.objectives import Objective, describe_fitness, ranked
from codesign.problems import get_problem, problem_names
from codesign.run.spec import Spec, parse_spec
from codesign.run.store import find_run_database, open_run
from codesign.walking.design import Design

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class StoredDesign:
    """One stored evaluation as a walking design: the design (decoded by its problem), the
    run's ``[evaluation]`` table (a caller adds its overrides and has the problem parse
    it), its problem's name, the objectives the run ranked it by, and its stored fitness:
    ``stage`` (the objectives met before the one it was ranked on, -1 for a failed
    evaluation) and ``stage_value`` (that objective's value, in its unit)."""

    design: Design
    table: dict
    problem: str
    objectives: tuple[Objective, ...]
    stage: int = -1
    stage_value: float = float("nan")


@dataclass(frozen=True)
class _StoredRun:
    """A run store's last run as read: its spec, evaluations, parameters and subspaces."""

    name: str
    spec: Spec
    evaluations: "pd.DataFrame"
    params: "pd.DataFrame"
    subspaces: "pd.DataFrame"


def _read_run(run: str) -> _StoredRun:
    """The last run of the store at ``run``; UserError for a store without a run or without
    evaluations."""
    with open_run(find_run_database(run), readonly=True) as store:
        runs = store.runs()
        if runs.empty:
            raise UserError(f"--run {run}: the database holds no run; expected a started run")
        row = runs.sort_values("run_id").iloc[-1]
        run_id = int(row["run_id"])
        stored = _StoredRun(run, parse_spec(str(row["spec_toml"]), f"{run} (stored spec)"),
                            store.evaluations(run_id), store.params(run_id), store.subspaces(run_id))
    if stored.evaluations.empty:
        raise UserError(f"--run {run}: no evaluations stored yet; expected a run with evaluations")
    return stored


def _decoded(stored: _StoredRun, chosen: "pd.Series") -> StoredDesign:
    """Evaluation ``chosen`` (a row of the run's evaluations) of ``stored`` as a
    :class:`StoredDesign`; UserError for a problem that is not a walking one or a row its
    problem cannot decode."""
    run, spec, params, subspaces = stored.name, stored.spec, stored.params, stored.subspaces
    key = (params["iteration"] == chosen["iteration"]) & (params["particle"] == chosen["particle"])
    values = {str(n): float(v) for n, v in zip(params.loc[key, "name"], params.loc[key, "value"])}
    problem = get_problem(spec.problem)
    if problem.walking is None:
        walking = [name for name in problem_names() if get_problem(name).walking is not None]
        raise UserError(f"--run {run}: problem {spec.problem!r}; expected a walking problem "
                        f"({', '.join(walking)})")
    groups = subspaces.loc[subspaces["subspace_id"] == chosen["subspace_id"], "groups_json"]
    if groups.empty:
        raise UserError(f"--run {run}: subspace {chosen['subspace_id']} not in the run's subspaces")
    pools = json.loads(groups.iloc[0])      # {pool: group} (the run's space.describe())
    try:
        settings = problem.parse_settings(inline_run_reference(spec.evaluation, problem.run_reference))
        design = problem.walking.decode(tuple(pools.values() if isinstance(pools, dict) else pools),
                                        values, settings)
    except ValueError as exc:
        raise UserError(f"--run {run}: evaluation {chosen['iteration']}:{chosen['particle']}: {exc}") from None
    except UserError as exc:
        raise UserError(f"--run {run}: its stored [evaluation] table: {exc}") from None
    objectives = spec.objectives or problem.objectives
    ok = chosen["status"] == "ok"
    return StoredDesign(design, dict(spec.evaluation), spec.problem, tuple(objectives),
                        int(chosen["stage"]) if ok else -1, float(chosen["stage_value"]) if ok else float("nan"))


def stored_candidate(run: str, best: bool, which: str | None) -> StoredDesign:
    """One evaluation of a stored run as a :class:`StoredDesign`: ``best`` (the
    report's ranking: ok first, most stages, smallest stage value, then earliest) or
    ``which`` = "ITERATION:PARTICLE". The run's spec gives the problem and its
    ``[evaluation]`` table. UserError on a bad run, a bad or unknown evaluation, or a
    problem that is not a walking one."""
    if best == (which is not None):
        raise UserError("--run: give --best or --eval ITERATION:PARTICLE (exactly one)")
    stored = _read_run(run)
    evaluations = stored.evaluations
    if best:
        chosen = ranked(evaluations).iloc[0]
    else:
        try:
            iteration, particle = (int(v) for v in which.split(":"))
        except ValueError:
            raise UserError(f"--eval: {which!r}; expected ITERATION:PARTICLE (two integers)") from None
        hit = evaluations[(evaluations["iteration"] == iteration) & (evaluations["particle"] == particle)]
        if hit.empty:
            raise UserError(f"--eval: {which}: no such evaluation in {run}; expected iteration in "
                            f"[{evaluations['iteration'].min()}, {evaluations['iteration'].max()}] "
                            f"and particle in [0, {evaluations['particle'].max()}]")
        chosen = hit.iloc[0]
    found = _decoded(stored, chosen)
    fitness = (describe_fitness(found.stage, found.stage_value, found.objectives,
                                get_problem(found.problem).metric_unit)
               if chosen["status"] == "ok" else chosen["status"])
    print(f"replaying {run} evaluation {int(chosen['iteration'])}:{int(chosen['particle'])} (stored: {fitness})")
    return found


def stored_candidates(run: str, count: int) -> list[StoredDesign]:
    """The ``count`` best evaluations of a stored run (fewer when it has fewer), best first
    in the report's ranking, each as a :class:`StoredDesign`; evaluations with the same
    parameters (a swarm's revisits) once. UserError as :func:`stored_candidate`."""
    stored = _read_run(run)
    params = stored.params.sort_values(["iteration", "particle", "name"])
    vectors = params.groupby(["iteration", "particle"])["value"].apply(tuple)
    found, seen = [], set()
    for _, chosen in ranked(stored.evaluations).iterrows():
        vector = vectors.get((chosen["iteration"], chosen["particle"]))
        if vector in seen:
            continue
        seen.add(vector)
        found.append(_decoded(stored, chosen))
        if len(found) == count:
            break
    return found


def inline_run_reference(table: Mapping[str, Any], reference: tuple[str, str] | None) -> dict:
    """The ``[evaluation]`` table with the run its key ``reference[0]`` names replaced by that run's
    design, as a table {design, source, evaluation} (the run's best, or evaluation
    ``table[reference[1]]`` = "ITERATION:PARTICLE"); unchanged when the key is absent or
    names a design .json file. A run still being written is refused unless the evaluation
    is pinned (its best may change, and every worker must use the same design). UserError
    (one line, naming the spec's keys) for a run that cannot be read."""
    out = dict(table)
    if reference is None:
        return out
    key, eval_key = reference
    of, which = out.get(key), out.get(eval_key)
    if not isinstance(of, str) or not of.strip() or of.endswith(".json"):
        return out
    if which is not None and (not isinstance(which, str) or not which.strip()):
        raise UserError(f"evaluation.{eval_key}: {which!r}; expected a non-empty string")
    try:
        database = find_run_database(of)
    except UserError as exc:
        raise UserError(f"evaluation.{key}: {exc} (or a design .json file)") from None
    if which is None:
        with open_run(database, readonly=True) as store:
            runs = store.runs()
        if not runs.empty and runs.sort_values("run_id").iloc[-1]["status"] == "running":
            raise UserError(f"evaluation.{key}: {of} is still running (its best may change); "
                            f"expected a finished run, or {eval_key} = \"ITERATION:PARTICLE\"")
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):       # its "replaying ..." line
            stored = stored_candidate(str(database), which is None, which)
    except UserError as exc:                          # name the spec's keys, not the CLI's
        text = str(exc)
        if text.startswith("--eval"):
            raise UserError(f"evaluation.{eval_key}" + text.removeprefix("--eval")) from None
        raise UserError(f"evaluation.{key}: {text.removeprefix('--run ')}") from None
    out.pop(eval_key, None)
    out[key] = {"design": stored.design.to_json(), "evaluation": stored.table,
                "source": said.getvalue().strip().removeprefix("replaying ") or of}
    return out
