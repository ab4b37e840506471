"""`codesign screen`: singularity screening of random morphologies in every subspace, or of
one design.

Sweep (default): K random morphologies (uniform in the Table 5.2 bounds) per subspace
(topology x actuator pair) of the catalog, screened in parallel worker processes. The
random numbers of subspace s come from ``numpy.random.default_rng([seed, s])``, so results
do not depend on the worker count or finish order. Writes, each through a temporary file
and a rename: ``<out>/pass_rates.csv`` (one row per subspace), ``<out>/pass_rates.png``
(heatmap topology x actuator pair, like the thesis's Fig. 5.10), ``<out>/best_designs.json``
(per subspace the passing design whose transmission is nearest a parallelogram's: the
smallest ``amplification`` = max(largest |G| entry, largest |G^-1| entry) along the gait,
G = d(hip, knee) / d(actuated angles) -- the factor by which the actuators see the gait's
torques or speeds, 1 for a parallelogram; in the design format below, plus its
``margin``, ``transmission_peak``, ``inverse_transmission_peak`` and ``amplification``;
the wearer-space search starts its subspaces there, ``space.start_designs``) and
``<out>/sample_morphology.png`` (the overall largest-margin design drawn
on the human, like Fig. 5.5 / 5.9). ``pass_rates.csv`` is removed at the start and written
last, so its presence means the sweep finished.

One design: ``codesign screen --design FILE.json`` prints the verdict and reason. Design
JSON format (SI units; parameter names from ``codesign.model.morphology.parameter_space``)::

    {"topology": 1,                      # topology id in the catalog
     "actuators": [1, 3],                # a valid actuator pair of that topology
     "params": {"j1_s": 0.1, "j1_dx": -0.12, ...},   # every morphological parameter
     "height_m": 1.80, "mass_kg": 70.0}  # optional subject (defaults: human/subject.toml)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from codesign.errors import UserError
from codesign.io import creatable_folder
from codesign.topology.catalog import DEFAULT_CATALOG   # light: json and dataclasses

if TYPE_CHECKING:  # heavy imports only when a command runs
    from codesign.model.gait import NominalGait
    from codesign.model.morphology import Morphology
    from codesign.screening.screen import ScreenSettings
    from codesign.topology.catalog import Catalog, Topology

HELP = "screen morphologies for singularities along the nominal gait (stage 3)"
DEFAULT_OUT = Path("results/screen")
CSV_FIELDS = ["subspace", "topology", "actuator_1", "actuator_2", "samples", "passed", "pass_rate",
              "unreachable", "constraint_singular", "human_locked", "actuator_singular", "invalid",
              "median_margin_passed", "best_amplification"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG, help="topology catalog (default %(default)s)")
    parser.add_argument("--design", type=Path,
                        help='screen one design instead of sampling: a JSON file {"topology": ID, "actuators": [I, J], '
                             '"params": {NAME: VALUE, ...}} (docs/human-model.md, "codesign screen")')
    parser.add_argument("--samples", type=int, default=200, help="random morphologies per subspace (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    parser.add_argument("--points", type=int, default=50, help="gait points N (default %(default)s)")
    parser.add_argument("--offset-deg", type=float, default=5.0, help="hip/knee offset D in degrees (default %(default)s)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder of a sweep (default {DEFAULT_OUT}; --design writes nothing)")


def _settings(args):
    from codesign.screening.screen import ScreenSettings

    if args.points < 1:
        raise UserError(f"--points: {args.points}; expected a positive integer")
    if not (0.0 <= args.offset_deg <= 45.0):
        raise UserError(f"--offset-deg: {args.offset_deg}; expected 0..45 degrees")
    return ScreenSettings(n_points=args.points, offset_deg=args.offset_deg)


def run(args: argparse.Namespace) -> int:
    from codesign.topology.catalog import load_catalog

    settings = _settings(args)
    if not args.catalog.exists():
        raise UserError(f"{args.catalog}: no such catalog; expected the output of `codesign topologies` (or --catalog PATH)")
    catalog = load_catalog(args.catalog)
    if catalog.settings.mobility != 2 or not catalog.topologies:
        raise UserError(f"{args.catalog}: mobility {catalog.settings.mobility}, {len(catalog.topologies)} topologies; "
                        "expected a mobility-2 catalog with topologies (screening drives hip and knee with an actuator pair)")
    if args.design is not None:
        if args.out is not None:
            raise UserError(f"--out {args.out}: --design prints its verdict and writes no file; expected "
                            f"--out only with a sweep (no --design)")
        return _run_design(catalog, args.design, settings)
    args.out = DEFAULT_OUT if args.out is None else args.out
    if args.samples < 1:
        raise UserError(f"--samples: {args.samples}; expected a positive integer")
    if args.workers < 1:
        raise UserError(f"--workers: {args.workers}; expected a positive integer")
    if args.seed < 0:
        raise UserError(f"--seed: {args.seed}; expected a non-negative integer")
    creatable_folder(args.out, "--out")     # before the sweep, so a bad --out does not waste it
    (args.out / "pass_rates.csv").unlink(missing_ok=True)  # written last, once the sweep is complete
    rows = screen_catalog(catalog, args.samples, args.seed, settings, args.workers, progress=True)
    from codesign.screening.figures import morphology_figure, pass_rate_heatmap, save_figure
    from codesign.io import write_text_atomic

    args.out.mkdir(parents=True, exist_ok=True)     # made once there is something to write

    save_figure(pass_rate_heatmap(rows, catalog), args.out / "pass_rates.png")
    best = [r["best"] for r in rows if r["best"] is not None]
    write_text_atomic(args.out / "best_designs.json", json.dumps(best, indent=1) + "\n")
    if best:
        top = max(best, key=lambda d: d["margin"])
        morphology = load_design_dict(top, catalog, "best design")
        save_figure(morphology_figure(morphology, title=f"largest-margin design: topology {top['topology']}, "
                                      f"actuators {top['actuators']}, margin {top['margin']:.3f}"),
                    args.out / "sample_morphology.png")
    else:  # no pass: no drawing (and none left from an earlier run)
        (args.out / "sample_morphology.png").unlink(missing_ok=True)
    write_rows_csv(rows, args.out / "pass_rates.csv")
    total = sum(r["samples"] for r in rows)
    passed = sum(r["passed"] for r in rows)
    print(f"screened {total} morphologies in {len(rows)} subspaces: {passed} passed ({100.0 * passed / total:.1f} %)")
    print(f"wrote {args.out}/pass_rates.csv, pass_rates.png, best_designs.json (per subspace the pass whose "
          "transmission is nearest a parallelogram's, in the --design format) and sample_morphology.png")
    return 0


# --------------------------------------------------------------------------- one design


def load_design(path: Path, catalog: Catalog) -> Morphology:
    """Read a design JSON (format in the module docstring) -> Morphology (UserError if bad)."""
    from codesign.io import read_user_file

    return load_design_dict(read_user_file(path, "a design JSON file", "json"), catalog, str(path))


def load_design_dict(doc: Any, catalog: Catalog, path: str) -> Morphology:
    """A design document (dict, format in the module docstring) -> Morphology."""
    from codesign.model.anthropometry import human_geometry
    from codesign.model.morphology import build_morphology

    if not isinstance(doc, dict):
        raise UserError(f"{path}: expected a JSON object with topology, actuators, params")
    tid = doc.get("topology")
    if not isinstance(tid, int) or isinstance(tid, bool) or not (1 <= tid <= len(catalog.topologies)):
        raise UserError(f"{path}: topology: {tid!r}; expected an integer id 1..{len(catalog.topologies)}")
    pair = doc.get("actuators")
    if not isinstance(pair, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in pair):
        raise UserError(f"{path}: actuators: {pair!r}; expected a list of joint ids like [1, 3]")
    params = doc.get("params")
    if isinstance(params, dict):      # a whole design's drivetrains (motors by name) do not screen
        params = {k: v for k, v in params.items() if not str(k).endswith(".motor")}
    if not isinstance(params, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in params.values()):
        raise UserError(f"{path}: params: expected an object of parameter name -> number")
    try:
        human = human_geometry(doc.get("height_m"), doc.get("mass_kg"))
        return build_morphology(catalog.topology(tid), pair, {k: float(v) for k, v in params.items()}, human)
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None


def _run_design(catalog, path: Path, settings) -> int:
    from codesign.model.morphology import mass_report
    from codesign.screening.screen import screen

    morphology = load_design(path, catalog)
    result = screen(morphology, settings=settings)
    print(f"topology {morphology.topology.id}, actuators {list(morphology.actuators)}: "
          + ("PASS" if result.ok else f"FAIL - {result.reason}"))
    print(f"smallest margin {result.margin:.4g}, smallest singular-value ratio of J {result.min_sigma_ratio:.4g}")
    rep = mass_report(morphology)
    print(f"added mass {rep['added_mass_kg']:.2f} kg, CoM shift ({rep['com_shift_x_m']:+.3f}, {rep['com_shift_z_m']:+.3f}) m, "
          f"longest link {rep['longest_link_m']:.3f} m")
    return 0


# --------------------------------------------------------------------------- sweep


@dataclass(frozen=True)
class _Task:
    """One subspace's share of the sweep, sent to a worker process (picklable)."""

    subspace: int
    topology: Topology
    pair: tuple[int, int]
    samples: int
    seed: int
    settings: ScreenSettings
    gait: NominalGait


def screen_subspace(task: _Task) -> dict:
    """Screen ``task.samples`` random morphologies of one subspace; counts per outcome."""
    from codesign.model.morphology import build_morphology, sample_parameters
    from codesign.screening.screen import (ACTUATOR_SINGULAR, CONSTRAINT_SINGULAR, HUMAN_LOCKED, PASS,
                                           UNREACHABLE, screen)

    rng = np.random.default_rng([task.seed, task.subspace])
    names = {PASS: "passed", UNREACHABLE: "unreachable", CONSTRAINT_SINGULAR: "constraint_singular",
             HUMAN_LOCKED: "human_locked", ACTUATOR_SINGULAR: "actuator_singular"}
    counts = dict.fromkeys(list(names.values()) + ["invalid"], 0)
    margins, amplifications = [], []
    best = None
    for _ in range(task.samples):
        params = sample_parameters(task.topology, rng)
        try:
            morphology = build_morphology(task.topology, task.pair, params)
        except UserError:
            counts["invalid"] += 1
            continue
        result = screen(morphology, task.gait, task.settings)
        counts[names[result.code]] += 1
        if result.ok:
            margins.append(result.margin)
            amplification = max(result.transmission_peak, result.inverse_transmission_peak)
            if best is None or amplification < best["amplification"]:
                best = {"topology": task.topology.id, "actuators": list(task.pair), "params": params,
                        "margin": result.margin, "transmission_peak": result.transmission_peak,
                        "inverse_transmission_peak": result.inverse_transmission_peak,
                        "amplification": amplification}
            amplifications.append(amplification)
    return {"best": best, "subspace": task.subspace, "topology": task.topology.id, "actuator_1": task.pair[0],
            "actuator_2": task.pair[1], "samples": task.samples, **counts,
            "pass_rate": counts["passed"] / task.samples,
            "median_margin_passed": float(np.median(margins)) if margins else float("nan"),
            "best_amplification": min(amplifications) if amplifications else float("nan")}


def screen_catalog(catalog: Catalog, samples: int, seed: int, settings: ScreenSettings, workers: int = 1,
                   progress: bool = False) -> list[dict]:
    """One row per subspace (catalog order); deterministic for a given seed."""
    from tqdm import tqdm

    from codesign.model.gait import nominal_gait

    gait = nominal_gait()
    tasks = [_Task(sid, catalog.topology(tid), tuple(pair), samples, seed, settings, gait)
             for sid, tid, pair in catalog.subspaces()]
    bar = tqdm(total=len(tasks), desc="screen", unit="subspace", disable=not progress)
    # compile (or load from cache) once in the parent, so forked workers inherit it
    screen_subspace(_Task(tasks[0].subspace, tasks[0].topology, tasks[0].pair, 1, seed, settings, gait))
    rows = []
    if workers == 1:
        for task in tasks:
            rows.append(screen_subspace(task))
            bar.update()
    else:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with multiprocessing.get_context(method).Pool(workers) as pool:
            for row in pool.imap(screen_subspace, tasks):
                rows.append(row)
                bar.update()
    bar.close()
    return rows


def write_rows_csv(rows: list[dict], path: Path) -> None:
    """Write the per-subspace table atomically."""
    from codesign.io import write_text_atomic

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{row[k]:.6g}" if isinstance(row[k], float) else row[k]) for k in CSV_FIELDS})
    write_text_atomic(path, buf.getvalue())
