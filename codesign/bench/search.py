"""`codesign bench search`: the co-design search started where the load screening says the
loads are feasible, next to the plain search, on the same budget and seed.

Ours: ``pipelines/demo.toml`` as it is (``make run``'s search: each subspace's particles
start at its load-screened best morphology with its sized drivetrains, and the subspaces
no catalog drivetrain can serve are left out, ``space.drop_unserved``). Peer: the same
spec -- problem, objectives, swarm, seed -- as the search was before the load screening:
every subspace open and each subspace's particles started at the screening's survivor
whose transmission is nearest a parallelogram's (``results/screen/best_designs.json``).
Both run ``--iterations`` iterations (default :data:`ITERATIONS`; ``--quick``:
:data:`QUICK_ITERATIONS`) on the spec's local cluster, one after the other.

Printed per search: evaluations until the first design that walks (its walking verdict:
the whole walk at the target speed, the pitch assist under 10 %), until the first that
meets every stage of the spec's objectives, the fraction of evaluations spent in
subspaces the load screening drops, the best's stage and verdict, and wall time. Needs
``codesign screen`` run first (``make run`` does: ``results/screen/``). Writes
``<out>/search.csv``.
"""

from __future__ import annotations

import csv
import math
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

DESCRIPTION = ("the co-design search from the load screening's feasible starts vs the plain search: evaluations "
               "until the first walker, the share spent where no drivetrain fits (same spec, budget and seed)")

SPEC = Path("pipelines/demo.toml")
PLAIN_STARTS = "results/screen/best_designs.json"
ITERATIONS = 75             # x 40 particles = 3 000 evaluations: issue 44's budget for the first walker
QUICK_ITERATIONS = 3


@dataclass(frozen=True)
class SearchFigures:
    """One search's figures: ``evaluations`` run, the 1-based count at the first walker and
    at the first design meeting every stage (None: not within the budget),
    ``dropped_fraction`` of evaluations in subspaces the load screening drops, the best's
    ``stage`` ("stage k of n") and ``verdict``, ``wall_s``."""

    search: str
    evaluations: int
    first_walker: int | None
    first_all_stages: int | None
    dropped_fraction: float
    stage: str
    verdict: str
    wall_s: float


def peer_text(text: str) -> str:
    """The plain search's spec: ``text`` without ``space.drop_unserved`` and with the
    screening's nearest-parallelogram survivors as its starts (module docstring)."""
    from codesign.report.freeze import compact_toml

    document = tomllib.loads(text)
    space = document.setdefault("space", {})
    space.pop("drop_unserved", None)
    space["start_designs"] = PLAIN_STARTS
    document.pop("study", None)
    return compact_toml(document)


def figures(run: Path, search: str, dropped: set[int], wall_s: float) -> SearchFigures:
    """:class:`SearchFigures` of a finished run (evaluations in the order they were asked:
    iteration, then particle)."""
    from codesign.objectives import ranked, stage_label
    from codesign.problems.verdict import walking_verdict
    from codesign.report.rundata import load_run, run_settings
    from codesign.run.driver import resolve_problem

    data = load_run(run)
    ev = data.evaluations.sort_values(["iteration", "particle"]).reset_index(drop=True)
    objectives = data.spec.objectives or resolve_problem(data.spec).objectives
    max_time = run_settings(data).walk.rollout.max_time
    ok = ev[ev["status"] == "ok"]
    metrics = data.metrics_of(list(zip(ok["iteration"], ok["particle"])))
    first_walker = None
    for position, row in ok.iterrows():
        values = metrics.loc[(int(row["iteration"]), int(row["particle"]))].dropna().to_dict()
        if walking_verdict(values, max_time).walks:
            first_walker = int(position) + 1
            break
    complete = ok[ok["stage"] >= len(objectives) - 1]
    best = ranked(ev).iloc[0]
    best_metrics = data.metrics_of([(best["iteration"], best["particle"])]).iloc[0].dropna().to_dict()
    in_dropped = ev["subspace_id"].map(lambda sid: int(sid) in dropped)
    return SearchFigures(search, len(ev), first_walker,
                         int(complete.index[0]) + 1 if len(complete) else None,
                         float(in_dropped.mean()) if len(ev) else math.nan,
                         stage_label(int(best["stage"]), objectives).split(":")[0],
                         walking_verdict(best_metrics, max_time).text, wall_s)


def dropped_subspaces(spec) -> set[int]:
    """Subspace ids (the catalog's) of the spec's ``space.drop_unserved`` subspaces."""
    from codesign.topology.catalog import cached_catalog

    unserved = {(u.topology, tuple(u.actuators)) for u in spec.unserved}
    return {int(sid) for sid, tid, pair in cached_catalog().subspaces() if (tid, tuple(pair)) in unserved}


def run(args) -> int:
    from codesign.errors import UserError
    from codesign.run.driver import execution_with, start_run
    from codesign.run.spec import parse_spec

    iterations = QUICK_ITERATIONS if getattr(args, "quick", False) else ITERATIONS
    text = SPEC.read_text(encoding="utf-8")
    ours = parse_spec(text, str(SPEC))
    if not ours.unserved:
        raise UserError(f"{SPEC}: no space.drop_unserved; expected the load-screened demo spec "
                        "(run `codesign screen` first)")
    dropped = dropped_subspaces(ours)
    rows = []
    with tempfile.TemporaryDirectory(prefix="codesign-bench-search-") as tmp:
        for search, spec_text in (("load-screened starts", text), ("plain (peer)", peer_text(text))):
            document = tomllib.loads(spec_text)
            document.setdefault("optimizer", {})["iterations"] = iterations
            document.pop("study", None)
            from codesign.report.freeze import compact_toml

            spec = parse_spec(compact_toml(document), f"{SPEC} ({search})")
            start = time.perf_counter()
            path = start_run(spec, tmp, search.split()[0], execution_with(spec), progress=False)
            rows.append(figures(path, search, dropped, time.perf_counter() - start))
    print(f"{SPEC}: {iterations} iterations x {ours.pso.particles} particles each, seed {ours.seed}; "
          f"{len(dropped)} subspaces the load screening drops")
    print(f"{'search':<22}{'evals':>7}{'1st walker':>12}{'1st all stages':>16}{'in dropped':>12}{'wall (s)':>10}  best")
    for r in rows:
        print(f"{r.search:<22}{r.evaluations:>7}{_n(r.first_walker):>12}{_n(r.first_all_stages):>16}"
              f"{100 * r.dropped_fraction:>11.1f}%{r.wall_s:>10.0f}  {r.stage}: {r.verdict}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "search.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)
    return 0


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)
