"""`codesign runs`: the runs under results/ with status, progress, best and lineage."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from codesign.errors import UserError
from codesign.run.lock import driver_alive
from codesign.run.store import open_run

HELP = "list optimization runs (status, iterations, best stage/value, parent run)"


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
            rows.append({"run": run["name"], "status": status,
                         "iterations": f"{len(mine)}/{run['iterations_total']}",
                         "best_stage": int(last["best_stage"]) if has_best else "-",
                         "best_value": f"{last['best_value']:.6g}" if has_best else "-",
                         "subspace": int(last["best_subspace_id"])
                         if has_best and pd.notna(last["best_subspace_id"]) else "-",
                         "parent": run["parent_run_id"] or "-", "created": run["created"]})
    return rows


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
    columns = ["run", "status", "iterations", "best_stage", "best_value", "subspace", "parent", "created"]
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
