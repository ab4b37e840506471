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

Load screening (issue 44, :mod:`codesign.screening.loads`): every passing morphology's
actuator loads along the reference gait (``--reference-gait``, default
``human/reference_gait.csv``), the lightest catalog drivetrain of each actuator and the
device's mass. Writes ``<out>/loads.csv`` (one row per passing morphology: its subspace,
sample index, loads, drivetrains or the reason none fits), ``<out>/loads_subspaces.csv``
(one row per subspace: how many passed, how many a catalog drivetrain serves, the lightest
device mass) and ``<out>/loads.png`` (heatmap: the fraction served and the lightest device
mass per subspace) and ``<out>/load_designs.json`` (per subspace a drivetrain serves, its
served pass nearest a parallelogram -- the smallest ``amplification``, as for
``best_designs.json``, among the morphologies a catalog drivetrain serves: the morphology
with each actuated joint's drivetrain, ``j<id>.motor``
as the unit's catalog index + 0.5 and ``j<id>.stage_ratio``, and ``device_mass_kg``; the
search starts each subspace there, ``space.start_designs``, and leaves out the others,
``space.drop_unserved = "<out>/loads_subspaces.csv"``). ``codesign screen --record-gait DESIGN.json`` replays a walking design
(default ``docs/designs/human-walking.json``) and writes its mean right-leg stride of the
second half to ``--reference-gait`` (nothing else).

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
    from codesign.screening.loads import ReferenceGait
    from codesign.screening.screen import ScreenSettings
    from codesign.topology.catalog import Catalog, Topology

HELP = "screen morphologies for singularities along the nominal gait (stage 3)"
DEFAULT_OUT = Path("results/screen")
DEFAULT_GAIT_DESIGN = Path("docs/designs/human-walking.json")
GAIT_SAMPLE_S = 0.005        # s, the recording step of --record-gait
GAIT_PHASES = 100            # samples of the recorded mean stride
CSV_FIELDS = ["subspace", "topology", "actuator_1", "actuator_2", "samples", "passed", "pass_rate",
              "unreachable", "constraint_singular", "human_locked", "actuator_singular", "invalid",
              "median_margin_passed", "best_amplification"]
LOAD_FIELDS = ["subspace", "topology", "actuator_1", "actuator_2", "sample", "served", "reason",
               *(f"{name}_{i}{unit}" for i in (1, 2) for name, unit in
                 (("rms_torque", "_Nm"), ("peak_torque", "_Nm"), ("peak_speed", "_rad_s"), ("peak_power", "_W"),
                  ("motor", ""), ("stage_ratio", ""))),
               "device_mass_kg", "cuff_force_peak_N", "transmission_peak"]
SUBSPACE_LOAD_FIELDS = ["subspace", "topology", "actuator_1", "actuator_2", "samples", "passed", "served",
                        "served_fraction", "lightest_device_mass_kg", "common_reason"]


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
    parser.add_argument("--reference-gait", type=Path, default=None,
                        help="the stride the loads are screened along (default human/reference_gait.csv; "
                             "docs/screening.md)")
    parser.add_argument("--record-gait", type=Path, nargs="?", const=DEFAULT_GAIT_DESIGN, default=None,
                        metavar="DESIGN",
                        help=f"replay a walking design (default {DEFAULT_GAIT_DESIGN}) and write its mean stride "
                             "to --reference-gait; nothing else")


def _settings(args):
    from codesign.screening.screen import ScreenSettings

    if args.points < 1:
        raise UserError(f"--points: {args.points}; expected a positive integer")
    if not (0.0 <= args.offset_deg <= 45.0):
        raise UserError(f"--offset-deg: {args.offset_deg}; expected 0..45 degrees")
    return ScreenSettings(n_points=args.points, offset_deg=args.offset_deg)


def run(args: argparse.Namespace) -> int:
    from codesign.screening.loads import REFERENCE_GAIT_CSV, read_reference_gait
    from codesign.topology.catalog import load_catalog

    gait_path = REFERENCE_GAIT_CSV if args.reference_gait is None else args.reference_gait
    if args.record_gait is not None:
        for given, option in ((args.design, "--design"), (args.out, "--out")):
            if given is not None:
                raise UserError(f"{option}: --record-gait writes only the reference gait (--reference-gait); "
                                f"expected {option} without --record-gait")
        return _record_gait(args.record_gait, gait_path)
    settings = _settings(args)
    reference = read_reference_gait(gait_path)     # before anything runs or is written
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
        return _run_design(catalog, args.design, settings, reference)
    args.out = DEFAULT_OUT if args.out is None else args.out
    if args.samples < 1:
        raise UserError(f"--samples: {args.samples}; expected a positive integer")
    if args.workers < 1:
        raise UserError(f"--workers: {args.workers}; expected a positive integer")
    if args.seed < 0:
        raise UserError(f"--seed: {args.seed}; expected a non-negative integer")
    creatable_folder(args.out, "--out")     # before the sweep, so a bad --out does not waste it
    (args.out / "pass_rates.csv").unlink(missing_ok=True)  # written last, once the sweep is complete
    rows = screen_catalog(catalog, args.samples, args.seed, settings, args.workers, progress=True,
                          reference=reference)
    from codesign.screening.figures import load_heatmap, morphology_figure, pass_rate_heatmap, save_figure
    from codesign.io import write_text_atomic

    args.out.mkdir(parents=True, exist_ok=True)     # made once there is something to write

    save_figure(pass_rate_heatmap(rows, catalog), args.out / "pass_rates.png")
    save_figure(load_heatmap(rows, catalog), args.out / "loads.png")
    write_dict_rows([m for r in rows for m in r["loads"]], LOAD_FIELDS, args.out / "loads.csv")
    write_dict_rows(rows, SUBSPACE_LOAD_FIELDS, args.out / "loads_subspaces.csv")
    best = [r["best"] for r in rows if r["best"] is not None]
    write_text_atomic(args.out / "best_designs.json", json.dumps(best, indent=1) + "\n")
    sized = [r["sized"] for r in rows if r["sized"] is not None]
    write_text_atomic(args.out / "load_designs.json", json.dumps(sized, indent=1) + "\n")
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
    served = sum(r["served"] for r in rows)
    print(f"loads along {reference.source}: a catalog drivetrain serves {served} of the {passed} passes "
          f"({100.0 * served / max(passed, 1):.1f} %)")
    print(f"wrote {args.out}/pass_rates.csv, pass_rates.png, best_designs.json (per subspace the pass whose "
          "transmission is nearest a parallelogram's, in the --design format), sample_morphology.png, "
          "loads.csv, loads_subspaces.csv, loads.png and load_designs.json (per served subspace the served pass "
          "nearest a parallelogram, with its drivetrains: the search's starts)")
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


def _run_design(catalog, path: Path, settings, reference) -> int:
    from codesign.model.drivetrain import motor_catalog, stage_law
    from codesign.model.morphology import mass_report
    from codesign.screening.loads import screen_loads
    from codesign.screening.screen import screen

    morphology = load_design(path, catalog)
    result = screen(morphology, settings=settings)
    print(f"topology {morphology.topology.id}, actuators {list(morphology.actuators)}: "
          + ("PASS" if result.ok else f"FAIL - {result.reason}"))
    print(f"smallest margin {result.margin:.4g}, smallest singular-value ratio of J {result.min_sigma_ratio:.4g}")
    rep = mass_report(morphology)
    print(f"added mass {rep['added_mass_kg']:.2f} kg, CoM shift ({rep['com_shift_x_m']:+.3f}, {rep['com_shift_z_m']:+.3f}) m, "
          f"longest link {rep['longest_link_m']:.3f} m")
    if result.ok:
        print(load_text(screen_loads(morphology, reference, list(motor_catalog().values()), stage_law(), settings),
                        morphology, reference.source))
    return 0


def load_text(screened, morphology, source: str) -> str:
    """The load screening of one design in words (several lines)."""
    loads = screened.loads
    lines = [f"loads along {source}:"]
    if not loads.ok:
        return "\n".join(lines + [f"  none: {loads.reason}"])
    for i, a in enumerate(morphology.actuators):
        choice = screened.drivetrains[i]
        drive = (f"{choice.drivetrain.motor.name} x {choice.drivetrain.stage_ratio:g} "
                 f"({choice.drivetrain.mass:.2f} kg)" if choice.drivetrain else f"none: {choice.reason}")
        lines.append(f"  j{a}: RMS {loads.rms_torque[i]:.1f} N m, peak {loads.peak_torque[i]:.1f} N m, "
                     f"{loads.peak_speed[i]:.2f} rad/s, {loads.peak_power[i]:.0f} W -> {drive}")
    lines.append(f"  device {screened.device_mass:.2f} kg (both legs)" if screened.served
                 else f"  no catalog drivetrain serves it: {screened.reason}")
    lines.append(f"  quasi-static cuff force peak {loads.cuff_force_peak:.0f} N; transmission peak "
                 f"{loads.transmission_peak:.2f}")
    return "\n".join(lines)


def _record_gait(design: Path, out: Path) -> int:
    from codesign.io import write_text_atomic
    from codesign.screening.loads import reference_gait_text

    gait = record_reference_gait(design)
    write_text_atomic(out, reference_gait_text(gait))
    print(f"wrote {out}: {len(gait.time)} samples of a {gait.period:.3f} s stride ({gait.source})")
    return 0


def record_reference_gait(design: Path):
    """The mean right-leg stride (:class:`~codesign.screening.loads.ReferenceGait`) of a
    walking design replayed for its settings' time: the strides between right heel strikes
    (the right foot's normal force rising from zero) in the second half, each resampled at
    GAIT_PHASES phases and averaged; hip and knee angles and rates from the trajectory, the
    torques the law applies on them (:func:`~codesign.walking.trajectory.actuator_table`'s
    delivered ``tau_hip_r_Nm``, ``tau_knee_r_Nm``). UserError (one line) for a design that
    does not walk or whose law does not drive the hip and knee."""
    from codesign.commands.options import add_design_arguments, chosen_design
    from codesign.problems.verdict import assists, walking_verdict
    from codesign.screening.loads import ReferenceGait, mean_stride
    from codesign.walking.trajectory import actuator_table, trajectory_table

    parser = argparse.ArgumentParser()
    add_design_arguments(parser)
    chosen = chosen_design(parser.parse_args([str(design)]))
    t_end = chosen.settings.walk.rollout.max_time
    times = np.arange(0.0, t_end + 0.5 * GAIT_SAMPLE_S, GAIT_SAMPLE_S)
    replay = chosen.problem.walking.replay(chosen.design, chosen.settings, times[times <= t_end])
    record = replay.record
    verdict = walking_verdict(record.metrics, t_end, record.message, assists(chosen.problem)) if record.ok else None
    if verdict is None or not verdict.walks:
        said = verdict.text if verdict is not None else record.message
        raise UserError(f"--record-gait {design}: {said}; expected a design that walks (a reference gait)")
    table = trajectory_table(replay.rollout, replay.setup)
    loads = actuator_table(replay.rollout, replay.setup)
    if not {"tau_hip_r_Nm", "tau_knee_r_Nm"} <= set(loads.columns):
        raise UserError(f"--record-gait {design}: its law drives {', '.join(replay.setup.effort_names)}; expected a "
                        f"design whose law drives the hip and knee (a human gait, e.g. {DEFAULT_GAIT_DESIGN})")
    t = table["t_s"].to_numpy()
    force = sum(table[c].to_numpy() for c in table.columns if c.startswith("fn_") and c.endswith("_r_N"))
    down = force > 1.0
    strikes = t[1:][down[1:] & ~down[:-1]]
    strikes = strikes[strikes >= 0.5 * t_end]
    if len(strikes) < 2:
        raise UserError(f"--record-gait {design}: {len(strikes)} right heel strikes in the second half; expected a "
                        f"design that walks (at least one whole stride)")
    columns = np.column_stack([table["q_thigh_r_rad"], table["q_shank_r_rad"], table["qd_thigh_r_rad_s"],
                               table["qd_shank_r_rad_s"], loads["tau_hip_r_Nm"], loads["tau_knee_r_Nm"]])
    time, mean, period = mean_stride(t, strikes, columns, GAIT_PHASES)
    source = (f"{design} replayed {t_end:g} s, the mean of its {len(strikes) - 1} right strides in the second half "
              f"(codesign screen --record-gait)")
    return ReferenceGait(time, mean[:, 0:2], mean[:, 2:4], mean[:, 4:6], period, source)


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
    reference: ReferenceGait | None = None     # None: no load screening


def screen_subspace(task: _Task) -> dict:
    """Screen ``task.samples`` random morphologies of one subspace; counts per outcome."""
    from codesign.model.drivetrain import motor_catalog, stage_law
    from codesign.model.morphology import build_morphology, sample_parameters
    from codesign.screening.loads import screen_loads
    from codesign.screening.screen import (ACTUATOR_SINGULAR, CONSTRAINT_SINGULAR, HUMAN_LOCKED, PASS,
                                           UNREACHABLE, screen)

    rng = np.random.default_rng([task.seed, task.subspace])
    names = {PASS: "passed", UNREACHABLE: "unreachable", CONSTRAINT_SINGULAR: "constraint_singular",
             HUMAN_LOCKED: "human_locked", ACTUATOR_SINGULAR: "actuator_singular"}
    counts = dict.fromkeys(list(names.values()) + ["invalid"], 0)
    margins, amplifications = [], []
    best = None
    loads, served_masses = [], []
    sized = None            # the served pass nearest a parallelogram: the search's start here
    motors, law = list(motor_catalog().values()), stage_law()
    for sample in range(task.samples):
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
            if task.reference is not None:
                screened = screen_loads(morphology, task.reference, motors, law, task.settings)
                row = load_row(task, sample, screened)
                loads.append(row)
                if row["served"]:
                    served_masses.append(row["device_mass_kg"])
                    if sized is None or amplification < sized["amplification"]:
                        sized = sized_design(task, params, screened, motors, amplification)
    reasons = [reason_kind(r["reason"]) for r in loads if not r["served"]]
    return {"best": best, "sized": sized, "loads": loads, "served": len(served_masses),
            "served_fraction": len(served_masses) / task.samples,
            "lightest_device_mass_kg": min(served_masses) if served_masses else float("nan"),
            "common_reason": max(sorted(set(reasons)), key=reasons.count) if reasons else "", "subspace": task.subspace, "topology": task.topology.id, "actuator_1": task.pair[0],
            "actuator_2": task.pair[1], "samples": task.samples, **counts,
            "pass_rate": counts["passed"] / task.samples,
            "median_margin_passed": float(np.median(margins)) if margins else float("nan"),
            "best_amplification": min(amplifications) if amplifications else float("nan")}


def reason_kind(reason: str) -> str:
    """A load screening's reason without its numbers, for counting: "cannot follow the
    reference gait", or the requirement no drivetrain meets ("peak torque", "continuous
    torque", "speed", "all three together")."""
    if not reason.startswith("actuator "):
        return "cannot follow the reference gait"
    said = reason.split(": ")[1]
    return said if said in ("peak torque", "continuous torque", "speed") else "all three together"


def sized_design(task: _Task, params: dict[str, float], screened, motors, amplification: float) -> dict:
    """A served morphology as a start design (``load_designs.json``, the --design format):
    its parameters and each actuated joint's drivetrain as the drivetrains-searched problem
    names them (``j<id>.motor``: the unit's catalog index + 0.5, the middle of the interval
    that selects it, so a start spread keeps the unit; ``j<id>.stage_ratio``), with its
    device mass (kg, both legs) and ``amplification`` (as ``best_designs.json``'s)."""
    from codesign.model.drivetrain import drive_parameter_names

    drives = {}
    for joint, choice in zip(task.pair, screened.drivetrains):
        motor, ratio = drive_parameter_names(joint)
        drives[motor] = motors.index(choice.drivetrain.motor) + 0.5
        drives[ratio] = choice.drivetrain.stage_ratio
    return {"topology": task.topology.id, "actuators": list(task.pair), "params": {**params, **drives},
            "device_mass_kg": screened.device_mass, "amplification": amplification}


def load_row(task: _Task, sample: int, screened) -> dict:
    """One passing morphology's row of ``loads.csv`` (:data:`LOAD_FIELDS`)."""
    loads = screened.loads
    row = {"subspace": task.subspace, "topology": task.topology.id, "actuator_1": task.pair[0],
           "actuator_2": task.pair[1], "sample": sample, "served": int(screened.served), "reason": screened.reason,
           "device_mass_kg": screened.device_mass, "cuff_force_peak_N": loads.cuff_force_peak,
           "transmission_peak": loads.transmission_peak}
    for i in range(2):
        choice = screened.drivetrains[i] if screened.drivetrains else None
        drive = choice.drivetrain if choice is not None else None
        row.update({f"rms_torque_{i + 1}_Nm": loads.rms_torque[i], f"peak_torque_{i + 1}_Nm": loads.peak_torque[i],
                    f"peak_speed_{i + 1}_rad_s": loads.peak_speed[i], f"peak_power_{i + 1}_W": loads.peak_power[i],
                    f"motor_{i + 1}": drive.motor.name if drive else "none",
                    f"stage_ratio_{i + 1}": drive.stage_ratio if drive else float("nan")})
    return row


def screen_catalog(catalog: Catalog, samples: int, seed: int, settings: ScreenSettings, workers: int = 1,
                   progress: bool = False, reference: ReferenceGait | None = None) -> list[dict]:
    """One row per subspace (catalog order); deterministic for a given seed. With a
    ``reference`` gait each row also holds its passing morphologies' load screening
    (``"loads"``: :func:`load_row` rows) and the subspace's counts (``"served"`` ...)."""
    from tqdm import tqdm

    from codesign.model.gait import nominal_gait

    gait = nominal_gait()
    tasks = [_Task(sid, catalog.topology(tid), tuple(pair), samples, seed, settings, gait, reference)
             for sid, tid, pair in catalog.subspaces()]
    bar = tqdm(total=len(tasks), desc="screen", unit="subspace", disable=not progress)
    # compile (or load from cache) once in the parent, so forked workers inherit it
    screen_subspace(_Task(tasks[0].subspace, tasks[0].topology, tasks[0].pair, 1, seed, settings, gait, reference))
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
    write_dict_rows(rows, CSV_FIELDS, path)


def write_dict_rows(rows: list[dict], fields: list[str], path: Path) -> None:
    """Write ``rows``' ``fields`` as CSV atomically (floats to 6 significant digits)."""
    from codesign.io import write_text_atomic

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{float(row[k]):.6g}" if isinstance(row[k], (float, np.floating)) else row[k])
                         for k in fields})
    write_text_atomic(path, buf.getvalue())
