"""Freezing parts of a solution into a new job spec (thesis §5.6, iterative co-design).

``freeze_spec(run, keep, ...)`` takes the parent run's spec and one of its solutions and
returns the TOML of a child spec in which the kept parts are fixed to the solution's values
(the spec's ``[freeze]`` table, honoured by OPT's optimizer: a frozen pool has a single
group and never migrates; a frozen parameter is never sampled nor moved) and everything
else is open. Parts:

- ``topology``   (co-design) only the (topology, pair) groups of the solution's topology;
- ``actuators``  (co-design) only groups with the solution's actuator pair; with
                 ``topology`` this is the solution's single group, frozen;
- ``pool:NAME``  any problem: pool NAME frozen to the solution's group;
- ``morphology`` the solution's morphological parameters (MODEL's ``j<id>_s|dx|x|z``);
- ``control``    the solution's other parameters (WALK's control layout: reference angles,
                 impedance steps, passive elements, gait frequency);
- ``param:GLOB`` the solution's parameters whose name matches GLOB (fnmatch), with or
                 without the co-design topology prefix (``t03.j5_s`` matches ``j5_*``).

``open`` (same syntax, parameters only) re-opens parameters a kept part froze, e.g. keep
the morphology but leave the joints of one sub-chain open (§5.6 scenario 3).

Warm start (``warm_start=N``): the parent's N best successful evaluations in subspaces the
child allows set the initialisation range (``space.parameters.X.init``) of each open
parameter to the range they span (widened by 10 % of the bounds on each side), and the
solution's open parameters become the child's start point (``[space.start]``: particle 0
starts at the solution, so the continuation's best is never worse than it -- evaluations
are deterministic). Particles start near what worked, within the unchanged bounds.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import tomli_w

from codesign.errors import UserError
from codesign.report.designs import morphology_parameters
from codesign.objectives import ranked
from codesign.report.rundata import RunData, load_run, load_run_catalog, searches_catalog
from codesign.report.table import eval_id

PART_NAMES = ("topology", "actuators", "morphology", "control")
PREFIXED = ("param:", "pool:")
WARM_MARGIN = 0.1
# the co-design space prefixes a topology's parameters with "t<NN>." (codesign.problems.walking);
# param:GLOB also matches the name without it, so "param:j5_*" means joint 5 of the solution
_TOPOLOGY_PREFIX = re.compile(r"^t\d+\.")  # fraction of the bounds added on each side of a warm-start range


@dataclass(frozen=True)
class Solution:
    """One evaluation of the parent: id, subspace, its group per pool, its parameters."""

    eval: str
    subspace_id: int
    groups: dict[str, str]
    params: dict[str, float]


def parse_parts(text: str, option: str, *, allowed: tuple[str, ...] = PART_NAMES) -> list[str]:
    """``"topology,param:j1_*"`` -> ["topology", "param:j1_*"] (UserError if unknown)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UserError(f"{option}: empty; expected a comma-separated list of "
                        f"{', '.join(allowed)}, pool:NAME, param:NAME")
    for p in parts:
        if p in allowed or (p.startswith(PREFIXED) and p.split(":", 1)[1]):
            continue
        raise UserError(f"{option}: unknown part {p!r}; expected {', '.join(allowed)}, "
                        "pool:NAME or param:NAME")
    return parts


def choose_solution(data: RunData, solution: str) -> Solution:
    """``best`` (best successful evaluation) or ``ITERATION:PARTICLE``."""
    ev = data.evaluations
    if solution == "best":
        ok = ev[ev["status"] == "ok"]
        if ok.empty:
            raise UserError(f"--solution best: run {data.name} has no successful evaluation "
                            "yet; expected a run with at least one")
        row = ranked(ok).iloc[0]
    else:
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", solution)
        if not m:
            raise UserError(f"--solution: got {solution!r}; expected best or ITERATION:PARTICLE "
                            "(the eval column of the report's top-solutions table)")
        it, particle = int(m.group(1)), int(m.group(2))
        hit = ev[(ev["iteration"] == it) & (ev["particle"] == particle)]
        if hit.empty:
            raise UserError(f"--solution: no evaluation {it}:{particle} in run {data.name}; "
                            f"expected one of its {len(ev)} evaluations")
        row = hit.iloc[0]
    key = (int(row["iteration"]), int(row["particle"]))
    params = data.params_of([key]).iloc[0]
    sid = int(row["subspace_id"])
    return Solution(eval_id(*key), sid, dict(data.subspace_groups[sid]),
                    {k: float(v) for k, v in params.items() if pd.notna(v)})


def is_morphology(name: str) -> bool:
    return bool(morphology_parameters({name: 0.0}))


def _select_params(part: str, solution: Solution) -> dict[str, float]:
    if part == "morphology":
        chosen = {k: v for k, v in solution.params.items() if is_morphology(k)}
    elif part == "control":
        chosen = {k: v for k, v in solution.params.items() if not is_morphology(k)}
    else:
        pattern = part.split(":", 1)[1]
        chosen = {k: v for k, v in solution.params.items()
                  if fnmatch.fnmatchcase(k, pattern)
                  or fnmatch.fnmatchcase(_TOPOLOGY_PREFIX.sub("", k), pattern)}
    return chosen


def _all_pools(data: RunData):
    """The spec's pools, else the problem's (the run's subspaces may show only some)."""
    if data.spec.pools:
        return data.spec.pools
    from codesign.run.driver import resolve_problem
    return resolve_problem(data.spec).pools


def _design_pool_groups(data: RunData, catalog_path: Path | None):
    """Co-design: (pool name, [(group name, topology id, actuator pair)]) in catalog order."""
    catalog = load_run_catalog(data, catalog_path)
    subspaces = catalog.subspaces()
    for pool in _all_pools(data):
        if len(pool.groups) == len(subspaces):
            return pool.name, [(g.name, tid, tuple(pair))
                               for g, (_, tid, pair) in zip(pool.groups, subspaces)]
    raise UserError(f"--keep: no pool of problem {data.spec.problem!r} has one group per catalog "
                    f"subspace ({len(subspaces)}); expected the co-design space")


def _pool_constraints(parts: list[str], data: RunData, solution: Solution,
                      catalog_path: Path | None) -> tuple[dict[str, str], list[list[str]]]:
    """(frozen pools, extra exclusions) for the pool-level parts."""
    frozen: dict[str, str] = {}
    exclude: list[list[str]] = []
    for part in parts:
        if part.startswith("pool:"):
            pool = part.split(":", 1)[1]
            if pool not in solution.groups:
                raise UserError(f"--keep {part}: run {data.name} has no pool {pool!r}; expected "
                                f"one of {', '.join(solution.groups)}")
            frozen[pool] = solution.groups[pool]
    wanted = [p for p in parts if p in ("topology", "actuators")]
    if wanted:
        if not searches_catalog(data.spec):
            raise UserError(f"--keep {wanted[0]}: run {data.name} is not a co-design run "
                            f"(problem {data.spec.problem!r}); expected pool:NAME or param:NAME")
        pool, groups = _design_pool_groups(data, catalog_path)
        mine = next(g for g in groups if g[0] == solution.groups[pool])
        allowed = [g for g in groups
                   if ("topology" not in wanted or g[1] == mine[1])
                   and ("actuators" not in wanted or g[2] == mine[2])]
        if len(allowed) == 1:
            frozen[pool] = mine[0]
        else:
            names = {g[0] for g in allowed}
            exclude += [[f"{pool}.{g[0]}"] for g in groups if g[0] not in names]
    return frozen, exclude


def _warm_init(data: RunData, child_space, n_best: int) -> tuple[dict[str, list], int]:
    """Init ranges of the open parameters from the parent's ``n_best`` best matching
    evaluations, and how many there were (fewer than ``n_best`` when the run has fewer)."""
    allowed = {int(s) for s in child_space.subspace_ids}
    ok = data.evaluations[(data.evaluations["status"] == "ok")
                          & data.evaluations["subspace_id"].isin(allowed)]
    if ok.empty:
        raise UserError(f"--warm-start: run {data.name} has no successful evaluation in the "
                        "subspaces the new spec allows; expected at least one (or no warm start)")
    best = ranked(ok).head(n_best)
    keys = list(zip(best["iteration"], best["particle"]))
    rows = data.params_of(keys)
    out = {}
    for name, low, high in zip(child_space.names, child_space.low, child_space.high):
        if name in child_space.frozen_parameters or name not in rows:
            continue
        values = rows[name].dropna().to_numpy()
        if values.size == 0:
            continue
        margin = WARM_MARGIN * (high - low)
        lo, hi = max(low, values.min() - margin), min(high, values.max() + margin)
        if hi > lo:
            out[name] = [float(lo), float(hi)]
    return out, len(best)


def freeze_spec(run: str | Path, keep: list[str], *, open_parts: list[str] = (),
                solution: str = "best", name: str | None = None, warm_start: int = 0,
                catalog_path: Path | None = None) -> tuple[str, dict]:
    """(TOML text, summary) of the child spec. Nothing is written here."""
    data = load_run(run)
    chosen = choose_solution(data, solution)
    frozen_pools, exclude = _pool_constraints(keep, data, chosen, catalog_path)
    frozen_params: dict[str, float] = {}
    for part in keep:
        if part in ("morphology", "control") or part.startswith("param:"):
            picked = _select_params(part, chosen)
            if not picked:
                raise UserError(f"--keep {part}: matches no parameter of solution {chosen.eval} "
                                f"(parameters: {', '.join(sorted(chosen.params)[:8])}...); "
                                "expected a part the solution has")
            frozen_params.update(picked)
    for part in open_parts:
        if not (part in ("morphology", "control") or part.startswith("param:")):
            raise UserError(f"--open {part}: only parameter parts can be re-opened; expected "
                            "morphology, control or param:NAME")
        reopened = _select_params(part, chosen)
        if not reopened:
            raise UserError(f"--open {part}: matches no parameter of solution {chosen.eval}")
        for k in reopened:
            frozen_params.pop(k, None)

    document = tomllib.loads(data.run["spec_toml"])
    parent_freeze = document.get("freeze", {})
    pools = {**parent_freeze.get("pools", {}), **frozen_pools}
    params = {**parent_freeze.get("parameters", {}), **frozen_params}
    child_name = name or f"{data.name}-frozen"
    document["name"] = child_name
    document["freeze"] = {"parent": data.name, "pools": pools, "parameters": params}
    if exclude:
        space = document.setdefault("space", {})
        space["exclude"] = list(space.get("exclude", [])) + [e for e in exclude if e not in
                                                            space.get("exclude", [])]
    text = _with_header(document, data, chosen, keep, open_parts)
    child_space = _validate(text, child_name)
    if warm_start > 0:
        inits, used = _warm_init(data, child_space, warm_start)
        table = document.setdefault("space", {}).setdefault("parameters", {})
        for pname, rng in inits.items():
            table.setdefault(pname, {})["init"] = rng
        document["space"]["start"] = {k: v for k, v in chosen.params.items()
                                      if k in child_space.index and k not in params}
        text = _with_header(document, data, chosen, keep, open_parts, used)
        child_space = _validate(text, child_name)
    summary = {"parent": data.name, "solution": chosen.eval, "subspace": chosen.subspace_id,
               "frozen_pools": pools, "frozen_parameters": len(params),
               "open_parameters": int((child_space.active.any(axis=0)).sum()),
               "subspaces": child_space.n_subspaces}
    return text, summary


def _with_header(document: dict, data: RunData, chosen: Solution, keep, open_parts,
                 warm_start: int = 0) -> str:
    lines = [f"# Written by `codesign freeze` from run {data.name} ({data.folder}),",
             f"# solution {chosen.eval} (subspace {chosen.subspace_id}); kept: {', '.join(keep)}"
             + (f"; re-opened: {', '.join(open_parts)}" if open_parts else "")
             + (f"; warm start from the {warm_start} best matching evaluations" if warm_start
                else "") + "."]
    return "\n".join(lines) + "\n" + compact_toml(document)


# a multi-line array whose element lines hold scalars or flat one-line arrays
_ARRAY_BLOCK = re.compile(r"\[\n((?:[ \t]*[^\n\[\]]*(?:\[[^\n\[\]]*\])?[^\n\[\]]*,\n)+)[ \t]*\]")


def _one_line_array(match: re.Match) -> str:
    """An array block on one line, or one element per line when that exceeds 96 chars."""
    items = [line.strip().rstrip(",") for line in match.group(1).splitlines()]
    line = "[" + ", ".join(items) + "]"
    return line if len(line) <= 96 else "[\n" + "".join(f"    {i},\n" for i in items) + "]"


def compact_toml(document: dict) -> str:
    """TOML of ``document`` (tomli-w) with short arrays on one line ([0.1, 0.5],
    [["subspace.t02_a1-2"], ...]); the compact text is used only if it parses back to
    the same document, else tomli-w's own layout."""
    text = tomli_w.dumps(document)
    compact = text
    while True:
        joined = _ARRAY_BLOCK.sub(_one_line_array, compact)
        if joined == compact:
            break
        compact = joined
    return compact if tomllib.loads(compact) == document else text


def _validate(text: str, name: str):
    """The child spec must load and give a valid space with OPT's own code."""
    from codesign.run.driver import resolve_problem
    from codesign.run.spec import build_space, parse_spec

    spec = parse_spec(text, source=f"frozen spec {name}")
    return build_space(spec, resolve_problem(spec))


def write_spec_atomic(text: str, path: Path, *, force: bool = False) -> None:
    """Write through a temporary file and a rename; refuse to overwrite unless ``force``."""
    from codesign.io import write_text_atomic

    if path.exists() and not force:
        raise UserError(f"{path}: already exists; expected a new spec path (or --force)")
    if not path.parent.is_dir():
        raise UserError(f"{path.parent}: no such folder; expected an existing folder for -o")
    write_text_atomic(path, text)

