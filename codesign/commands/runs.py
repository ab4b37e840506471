"""`codesign runs`: the runs under results/ with status, progress, best and lineage."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from codesign.errors import UserError
from codesign.run.lock import driver_alive
from codesign.run.store import open_run

HELP = "list optimization runs (status, iterations, the best in words and whether it walks, parent run)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", default="results", help="folder holding the run folders (default %(default)s)")


def run_rows(results: Path) -> list[dict]:
    rows = []
    for path in sorted(results.glob("*/run.sqlite")):
        try:
            with open_run(path, readonly=True) as store:
                runs, its = store.runs(), store.iterations()
        except UserError as exc:
            rows.append({"run": path.parent.name, "status": "unreadable", "note": str(exc)})
            continue
        for _, run in runs.iterrows():
            mine = its[its["run_id"] == run["run_id"]]
            status = run["status"]
            if status == "running" and not driver_alive(run["driver"]):
                status = "stopped"
            last = mine.iloc[-1] if len(mine) else None
            # no best yet: every evaluation so far failed (NULL, read as None or NaN)
            has_best = last is not None and bool(pd.notna(last["best_stage"]))
            best, verdict = best_described(store_path=path, run=run) if has_best else ("-", "-")
            rows.append({"run": run["name"], "status": status,
                         "iterations": f"{len(mine)}/{run['iterations_total']}",
                         "best": best, "walks": verdict,
                         "subspace": int(last["best_subspace_id"])
                         if has_best and pd.notna(last["best_subspace_id"]) else "-",
                         "parent": run["parent_run_id"] or "-", "created": run["created"]})
    return rows


def best_described(store_path: Path, run: pd.Series) -> tuple[str, str]:
    """(the run's best in words: the stage's metric and value with its unit, the conditions
    met; whether that design walks, for a walking problem: "yes", "no: <reasons>", else
    "-"), from the stored spec and the best evaluation's stored metrics."""
    from codesign.objectives import describe_fitness, ranked
    from codesign.problems import get_problem
    from codesign.problems.verdict import run_verdict
    from codesign.run.spec import parse_spec

    try:
        spec = parse_spec(str(run["spec_toml"]), f"{store_path} (stored spec)")
        problem = get_problem(spec.problem)
    except (UserError, KeyError):
        return "-", "-"
    with open_run(store_path, readonly=True) as store:
        best = ranked(store.evaluations(int(run["run_id"]))).iloc[0]
        key = [(int(best["iteration"]), int(best["particle"]))]
        metrics = store.metrics(int(run["run_id"]), wide=True, keys=key)
    text = describe_fitness(int(best["stage"]), float(best["stage_value"]), spec.objectives or problem.objectives,
                            problem.metric_unit)
    verdict = run_verdict(problem, spec.evaluation)
    stop = "" if pd.isna(best["message"]) else str(best["message"])     # "fall_height: ..." tells a fall
    return text, "-" if verdict is None or metrics.empty else verdict(metrics.iloc[0].to_dict(), stop).short


def with_lineage(rows: list[dict]) -> list[dict]:
    """parent -> the chain of ancestors known in this folder, oldest first ("a > b")."""
    parents = {r["run"]: r.get("parent", "-") for r in rows}
    for r in rows:
        chain, name = [], r.get("parent", "-")
        while name not in ("-", "", None) and name not in chain and len(chain) < 50:
            chain.append(Path(str(name)).name)
            name = parents.get(Path(str(name)).name, "-")
        r["parent"] = " > ".join(reversed(chain)) or "-"
    return rows


def run(args: argparse.Namespace) -> int:
    results = Path(args.results)
    if not results.is_dir():
        what = "a file, not a folder" if results.exists() else "no such folder"
        raise UserError(f"--results {results}: {what}; expected the results folder of `codesign optimize`")
    rows = with_lineage(run_rows(results))
    if not rows:
        print(f"no runs in {results}/")
        return 0
    columns = ["run", "status", "iterations", "best", "subspace", "parent", "created", "walks"]
    for r in rows:
        r.setdefault("parent", "-")
    table = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[k]) for row in table)) for k, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))
    for r in rows:
        if r.get("note"):
            print(f"{r['run']}: {r['note']}")
    return 0
