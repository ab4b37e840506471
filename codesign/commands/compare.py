"""`codesign compare`: walking designs side by side -- does each walk, every metric with its
unit, and one figure of their hip, knee and ankle angles over the same time.

    codesign compare A.json B.json ... [--run RUN@best] [--run RUN@ITERATION:PARTICLE]
                     [--max-time S] [--settings JSON] [--out DIR]

Each design is evaluated by its problem under the same ``--settings``/``--max-time`` (a
design file: ``human_gait`` when its topology is null, else ``exo_codesign``; a run's
candidate: its run's problem and settings, then the options over them), the loader of
``codesign simulate`` (:func:`codesign.commands.options.chosen_design`). Writes into DIR
(default ``results/compare``): ``compare.csv`` (a row per metric: its unit, then one
column per design), ``angles.png`` (right-leg angles, anatomical degrees, flexion +),
and prints the verdicts and the metrics a reader compares first (:func:`shown_lines`: a
value beyond its physical bound flagged ⚠, the actuators' torque, speed and thermal
ratios, an assisting design's effort reduction in words, "69.8 % less").
"""

from __future__ import annotations

import argparse
import math

from codesign.errors import UserError

HELP = "compare walking designs: verdicts, metrics with units side by side, one angle figure"
# the metrics printed (all are in compare.csv), in reading order
SHOWN = ("time", "speed", "assist_fraction", "power", "power_electrical", "torque_rms",
         "actuator_torque_ratio_peak", "actuator_speed_ratio_peak", "actuator_thermal_ratio",
         "interaction_force_peak_bw", "cuff_force_peak", "grf_peak_bw", "foot_slip_fraction",
         "knee_hyperextension_peak_deg", "added_mass",
         "effort_reduction", "effort_reduction_hip", "effort_reduction_knee", "effort_reduction_ankle",
         "speed_change")
# printed in words ("69.8 % less", codesign.problems.effort.reduction_text), simulate's and the report's convention
REDUCTIONS = ("effort_reduction", "effort_reduction_hip", "effort_reduction_knee", "effort_reduction_ankle")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("designs", nargs="*", help="design JSON files: {topology, actuators, params}")
    parser.add_argument("--run", action="append", default=[], metavar="RUN@best|RUN@ITERATION:PARTICLE",
                        help="a stored evaluation of a run folder (repeatable)")
    parser.add_argument("--max-time", type=float, default=None, help="seconds (default: the run's, else 10)")
    parser.add_argument("--settings", default="{}",
                        help="JSON object of evaluation settings for every design (default %(default)s)")
    parser.add_argument("--sample", type=float, default=0.01, help="recording step, s (default %(default)s)")
    parser.add_argument("--out", default="results/compare", help="output folder (default %(default)s)")


def picks(args: argparse.Namespace) -> list[argparse.Namespace]:
    """One set of :func:`chosen_design` options per design named (UserError, one line,
    for a ``--run`` without ``@``, or fewer than two designs)."""
    common = dict(human=False, stiffness=None, damping=None, problem=None, settings=args.settings,
                  max_time=args.max_time)
    out = [argparse.Namespace(design=path, run=None, best=False, eval=None, **common) for path in args.designs]
    for item in args.run:
        run, at, which = item.rpartition("@")[0], "@" in item, item.rpartition("@")[2]
        if not at or not run:
            raise UserError(f"--run: {item!r}; expected RUN@best or RUN@ITERATION:PARTICLE")
        out.append(argparse.Namespace(design=None, run=run, best=which == "best",
                                      eval=None if which == "best" else which, **common))
    if len(out) < 2:
        raise UserError(f"designs: {len(out)} given; expected at least two to compare (files or --run)")
    return out


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from codesign.commands.options import chosen_design
    from codesign.io import creatable_folder, made_folder, save_figure_atomic, write_text_atomic
    from codesign.objectives import score
    from codesign.problems.verdict import assists, walking_verdict
    from codesign.problems.walking import metric_units
    from codesign.walking.trajectory import trajectory_table

    if not (math.isfinite(args.sample) and args.sample > 0):
        raise UserError(f"--sample: {args.sample}; expected a step > 0 s")
    chosen = [chosen_design(p) for p in picks(args)]         # every design checked before any work
    out = creatable_folder(args.out, "--out")
    names, records, tables = [], [], []
    for pick in chosen:
        t_end = pick.settings.walk.rollout.max_time
        times = np.arange(0.0, t_end + 0.5 * args.sample, args.sample)
        replay = pick.problem.walking.replay(pick.design, pick.settings, times[times <= t_end])
        record = score(replay.record, pick.objectives)
        verdict = (walking_verdict(record.metrics, t_end, record.message, assists(pick.problem)).text if record.ok
                   else f"failed: {record.message}")
        names.append(_unique(pick.source, names))
        records.append(record)
        tables.append(None if replay.rollout is None else trajectory_table(replay.rollout, replay.setup))
        print(f"{names[-1]}: {verdict}")
    metrics = sorted({m for r in records for m in r.metrics})
    frame = pd.DataFrame({"metric": metrics, "unit": [metric_units(metrics)[m] for m in metrics],
                          **{n: [r.metrics.get(m, math.nan) for m in metrics] for n, r in zip(names, records)}})
    for line in shown_lines(names, [r.metrics for r in records], metric_units(metrics)):
        print(line)
    with made_folder(out):
        write_text_atomic(out / "compare.csv", frame.to_csv(index=False))   # floats round-trip
        save_figure_atomic(angles_figure(names, tables), out / "angles.png", dpi=110)
    print(f"wrote {out}/compare.csv, angles.png")
    return 0


def shown_lines(names: list[str], metrics: list[dict], units: dict[str, str]) -> list[str]:
    """The printed table: a row per metric of :data:`SHOWN` that a design measured, its unit,
    then each design's value ("-": not measured); a value beyond its physical bound flagged
    "⚠" (the report's bounds, :func:`codesign.report.table.metric_bounds`) and the bounds
    met explained below; an effort reduction in words ("69.8 % less": positive = less effort
    with the device, the convention of simulate and the report)."""
    import pandas as pd

    from codesign.problems.effort import reduction_text
    from codesign.report.table import FLAG, metric_bounds

    bounds, flagged = metric_bounds(), []

    def cell(metric: str, value: float) -> str:
        if value is None or value != value:
            return "-"
        if metric in REDUCTIONS:
            return reduction_text(value)
        if metric in bounds and value > bounds[metric][0]:
            if metric not in flagged:
                flagged.append(metric)
            return f"{FLAG} {value:.4g}"
        return f"{value:.4g}"

    rows = [m for m in SHOWN if any(m in d for d in metrics)]
    table = pd.DataFrame({"unit": ["effort vs without" if m in REDUCTIONS else units.get(m, "?") for m in rows],
                          **{n: [cell(m, d.get(m, math.nan)) for m in rows] for n, d in zip(names, metrics)}},
                         index=pd.Index(rows, name="metric"))
    lines = table.to_string().splitlines()
    if flagged:
        lines.append(f"{FLAG}: beyond a physical bound -- " + "; ".join(
            f"{m} > {bounds[m][0]:g} ({bounds[m][1]})" for m in flagged))
    return lines


def _unique(name: str, taken: list[str]) -> str:
    """``name``, or ``name (2)`` ... when an earlier design has it."""
    k, out = 1, name
    while out in taken:
        k += 1
        out = f"{name} ({k})"
    return out


def angles_figure(names: list[str], tables: list):
    """Right-leg hip, knee and ankle (anatomical degrees, flexion +) of each design against
    time, one colour per design (a design that was not simulated has no line)."""
    import numpy as np
    from matplotlib.figure import Figure

    from codesign.model.gait import GAIT_JOINTS, SIGN

    fig = Figure(figsize=(8, 7), layout="constrained")
    axes = fig.subplots(len(GAIT_JOINTS), 1, sharex=True)
    for k, joint in enumerate(GAIT_JOINTS):
        body = {"hip": "thigh", "knee": "shank", "ankle": "foot"}[joint]
        for name, table in zip(names, tables):
            if table is not None:
                axes[k].plot(table["t_s"], np.degrees(SIGN[k] * table[f"q_{body}_r_rad"]), lw=1, label=name)
        axes[k].set_ylabel(f"{joint} r (deg)")
    axes[0].legend(loc="upper right", fontsize=7)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("Right-leg joint angles (anatomical, flexion +)")
    return fig
