"""`codesign simulate`: replay one design and write its trajectory, animation and figures.

    codesign simulate design.json [--out DIR] [--max-time S] [--settings JSON]
    codesign simulate --human [--stiffness K] [--damping D]   (the unaugmented human
                                                              tracking the nominal gait)

Writes into DIR (default ``results/simulate``): ``trajectory.csv`` (named columns, SI
units with the unit in the name), ``stick.gif`` (stick figure), ``gait.png`` (hip, knee and
ankle against the nominal gait; ground reaction forces), ``record.json`` (status, message,
fitness, metrics). Each file is written to a temporary name and renamed.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

from codesign.errors import UserError

HELP = "replay one design (JSON, or --human): trajectory CSV, stick-figure GIF, gait figure"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("design", nargs="?", help="design JSON: {topology, actuators, params}")
    parser.add_argument("--human", action="store_true",
                        help="the unaugmented human tracking the nominal gait (no design file)")
    parser.add_argument("--stiffness", type=float, default=2000.0, help="--human: N m/rad")
    parser.add_argument("--damping", type=float, default=30.0, help="--human: N m s/rad")
    parser.add_argument("--out", default="results/simulate", help="output folder")
    parser.add_argument("--max-time", type=float, default=None, help="seconds (default 10)")
    parser.add_argument("--settings", default="{}",
                        help="JSON object of evaluation settings (e.g. '{\"phase0\": 0.2}')")
    parser.add_argument("--sample", type=float, default=0.01, help="recording step, s")


def run(args: argparse.Namespace) -> int:
    from codesign.walking import evaluate as ev

    try:
        settings_doc = json.loads(args.settings)
    except json.JSONDecodeError:
        raise UserError(f"--settings: {args.settings!r}; expected a JSON object") from None
    if not isinstance(settings_doc, dict):
        raise UserError("--settings: expected a JSON object")
    if args.max_time is not None:
        settings_doc["max_time"] = args.max_time
    if not args.sample > 0:
        raise UserError(f"--sample: {args.sample}; expected a step > 0 s")
    if args.human == bool(args.design):
        raise UserError("design: give a design JSON file or --human (exactly one)")
    if args.human:
        settings_doc.setdefault("objectives", "table_4_2")
    settings = ev.WalkSettings.from_dict(settings_doc)
    design = (ev.typical_human_design(settings, args.stiffness, args.damping) if args.human
              else ev.load_design(args.design))
    t_end = settings.rollout.max_time
    times = np.arange(0.0, t_end + 0.5 * args.sample, args.sample)
    times = times[times <= t_end]
    record, timings, rollout, setup = ev.evaluate_detailed(design, settings, times)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {"status": record.status, "message": record.message, "stage": record.stage,
               "stage_value": record.stage_value, "metrics": record.metrics,
               "timings_s": timings, "design": design.to_json()}
    _write_text(out / "record.json", json.dumps(summary, indent=1, sort_keys=True, default=float))
    print(f"{record.status}: stage {record.stage}, value {record.stage_value:.6g}"
          + (f" ({record.message})" if record.message else ""))
    if rollout is None:
        print(f"not simulated; wrote {out / 'record.json'}")
        return 0
    table = trajectory_table(rollout, setup)
    tmp = out / ".trajectory.csv.tmp"
    table.to_csv(tmp, index=False, float_format="%.9g")
    os.replace(tmp, out / "trajectory.csv")
    from codesign.walking import figures

    fig = figures.gait_figure(table, setup.model, float(setup.ctrl.timing[0]), float(setup.ctrl.timing[1]))
    _save_figure(fig, out / "gait.png")
    figures.stick_gif(table, setup.model, out / "stick.gif")
    print(f"wrote {out}/trajectory.csv, gait.png, stick.gif, record.json "
          f"(time {record.metrics.get('time', 0):.2f} s)")
    return 0


def trajectory_table(rollout, setup):
    """pandas DataFrame of the recorded samples (rows until the run ended): t_s, per
    coordinate q_<body>_<rad|m> and qd_..., per contact mode_<c>, fn_<c>_N, ft_<c>_N."""
    import pandas as pd

    from codesign.dynamics.model import REVOLUTE
    from codesign.walking import rollout as ro

    model = setup.model
    n = model.n
    ok = ~np.isnan(rollout.records[:, 0])
    t = rollout.record_times[ok]
    X = rollout.records[ok]
    M = rollout.record_modes[ok]
    cols = {"t_s": t}
    for i, name in enumerate(model.body_names):
        unit = "rad" if model.joint_type[i] == REVOLUTE else "m"
        cols[f"q_{name}_{unit}"] = X[:, i]
        cols[f"qd_{name}_{unit}_s"] = X[:, n + i]
    forces = np.zeros((len(t), model.n_contacts, 2))
    buf = np.zeros((model.n_contacts, 2))
    for k in range(len(t)):
        ro.contact_forces(t[k], X[k].copy(), M[k].copy(), setup.p, buf)
        forces[k] = buf
    for c, name in enumerate(model.contact_names):
        cols[f"mode_{name}"] = M[:, c]
        cols[f"fn_{name}_N"] = forces[:, c, 0]
        cols[f"ft_{name}_N"] = forces[:, c, 1]
    return pd.DataFrame(cols)


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _save_figure(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    tmp = path.with_name("." + path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
