"""`codesign simulate`: replay one design and write its trajectory, animation and figures.

    codesign simulate design.json [--out DIR] [--max-time S] [--settings JSON]
    codesign simulate --human [--stiffness K] [--damping D]   (the unaugmented human
                                                              tracking the nominal gait)
    codesign simulate --run RUN --best | --eval ITERATION:PARTICLE
                                  (replay a candidate of a run: its spec's problem and
                                  [evaluation] settings; --settings/--max-time override;
                                  an anthropomorphic_baseline run on its lumped model)

Writes into DIR (default ``results/simulate``): ``trajectory.csv`` (named columns, SI
units with the unit in the name), ``stick.gif`` (stick figure), ``gait.png`` (hip, knee and
ankle against the nominal gait; ground reaction forces), ``record.json`` (status, message,
fitness, metrics). Each file is written to a temporary name and renamed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path

import numpy as np

from codesign.errors import UserError

HELP = "replay one design (JSON, or --human): trajectory CSV, stick-figure GIF, gait figure"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("design", nargs="?", help="design JSON: {topology, actuators, params}")
    parser.add_argument("--human", action="store_true",
                        help="the unaugmented human tracking the nominal gait (no design file)")
    parser.add_argument("--run", default=None,
                        help="run folder (results/<name>) or run.sqlite to replay a candidate from")
    parser.add_argument("--best", action="store_true", help="--run: the run's best evaluation")
    parser.add_argument("--eval", default=None, metavar="ITERATION:PARTICLE",
                        help="--run: the evaluation of this particle at this iteration")
    parser.add_argument("--stiffness", type=float, default=2000.0, help="--human: N m/rad")
    parser.add_argument("--damping", type=float, default=30.0, help="--human: N m s/rad")
    parser.add_argument("--out", default="results/simulate", help="output folder")
    parser.add_argument("--max-time", type=float, default=None, help="seconds (default 10)")
    parser.add_argument("--settings", default="{}",
                        help="JSON object of evaluation settings (e.g. '{\"phase0\": 0.2}')")
    parser.add_argument("--sample", type=float, default=0.01, help="recording step, s")


def run(args: argparse.Namespace) -> int:
    from codesign.walking import evaluate as ev

    design, settings_doc = (stored_candidate(args.run, args.best, args.eval)
                            if args.run is not None else (None, {}))
    try:
        overrides = json.loads(args.settings)
    except json.JSONDecodeError:
        raise UserError(f"--settings: {args.settings!r}; expected a JSON object") from None
    if not isinstance(overrides, dict):
        raise UserError("--settings: expected a JSON object")
    settings_doc.update(overrides)
    if args.max_time is not None:
        settings_doc["max_time"] = args.max_time
    if not args.sample > 0:
        raise UserError(f"--sample: {args.sample}; expected a step > 0 s")
    if args.human + bool(args.design) + (args.run is not None) != 1:
        raise UserError("design: give a design JSON file, --human or --run (exactly one)")
    if args.human:
        settings_doc.setdefault("objectives", "table_4_2")
    baseline = None
    if any(key.startswith("baseline_") for key in settings_doc):   # anthropomorphic_baseline
        from codesign.walking import baseline as bl

        baseline = bl.resolve_baseline(settings_doc)
        settings_doc = bl.walk_settings_dict(settings_doc)
    settings = ev.WalkSettings.from_dict(settings_doc)
    if args.human:
        design = ev.typical_human_design(settings, args.stiffness, args.damping)
    elif design is None:
        design = ev.load_design(args.design)
    t_end = settings.rollout.max_time
    times = np.arange(0.0, t_end + 0.5 * args.sample, args.sample)
    times = times[times <= t_end]
    record, timings, rollout, setup = ev.evaluate_detailed(
        design, settings, times, human_model=None if baseline is None else baseline.model)
    if baseline is not None:
        record = bl.with_baseline_metrics(record, baseline, settings)
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
    agreement = gait_agreement(table, setup, t_end)
    summary["nominal_gait"] = agreement
    _write_text(out / "record.json", json.dumps(summary, indent=1, sort_keys=True, default=float))
    print("against the nominal gait (second half, both legs): "
          + ", ".join(f"{j} r = {agreement[f'{j}_corr']:.3f} (RMS {math.degrees(agreement[f'{j}_rms_rad']):.1f} deg)"
                      for j in ("hip", "knee", "ankle")))
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


def gait_agreement(table, setup, t_end: float) -> dict[str, float]:
    """:func:`codesign.walking.metrics.nominal_gait_agreement` of a trajectory table over
    the second half of the rollout (the metrics' window)."""
    from codesign.model.gait import nominal_gait
    from codesign.walking.metrics import nominal_gait_agreement

    bodies = {"hip": "thigh", "knee": "shank", "ankle": "foot"}
    angles = {f"{j}_{s}": table[f"q_{b}_{s}_rad"].to_numpy() for j, b in bodies.items() for s in "rl"}
    return nominal_gait_agreement(table["t_s"].to_numpy(), angles, nominal_gait(),
                                  float(setup.ctrl.timing[0]), float(setup.ctrl.timing[1]), 0.5 * t_end)


def stored_candidate(run: str, best: bool, which: str | None):
    """(Design, evaluation settings dict) of one evaluation of a stored run: ``best`` (the
    report's ranking: ok first, most stages, smallest stage value, then earliest) or
    ``which`` = "ITERATION:PARTICLE". The run's spec gives the problem and its
    ``[evaluation]`` table. UserError on a bad run, a bad or unknown evaluation, or a
    problem that is not a walking one."""
    from codesign.report.progress import ranked
    from codesign.spec import parse_spec
    from codesign.store import open_run
    from codesign.walking import evaluate as ev
    from codesign.walking import problem as pb

    if best == (which is not None):
        raise UserError("--run: give --best or --eval ITERATION:PARTICLE (exactly one)")
    with open_run(run, readonly=True) as store:
        runs = store.runs()
        if runs.empty:
            raise UserError(f"--run {run}: the database holds no run; expected a started run")
        row = runs.sort_values("run_id").iloc[-1]
        run_id = int(row["run_id"])
        evaluations = store.evaluations(run_id)
        params = store.params(run_id)
        subspaces = store.subspaces(run_id)
    spec = parse_spec(str(row["spec_toml"]), f"{run} (stored spec)")
    if evaluations.empty:
        raise UserError(f"--run {run}: no evaluations stored yet; expected a run with evaluations")
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
    key = (params["iteration"] == chosen["iteration"]) & (params["particle"] == chosen["particle"])
    values = {str(n): float(v) for n, v in zip(params.loc[key, "name"], params.loc[key, "value"])}
    settings = dict(spec.evaluation)
    if spec.problem == "exo_codesign":
        groups = subspaces.loc[subspaces["subspace_id"] == chosen["subspace_id"], "groups_json"]
        if groups.empty:
            raise UserError(f"--run {run}: subspace {chosen['subspace_id']} not in the run's subspaces")
        settings["catalog"] = str(pb.catalog_path(settings))
        pools = json.loads(groups.iloc[0])      # {pool: group} (the run's space.describe())
        group = pools.get(pb.SUBSPACE_POOL, "") if isinstance(pools, dict) else pools[0]
        try:
            design = pb.decode(group, values, pb.get_catalog(settings))
        except ValueError as exc:
            raise UserError(f"--run {run}: evaluation {chosen['iteration']}:{chosen['particle']}: {exc}") from None
    elif spec.problem == "human_gait":
        settings.setdefault("objectives", "table_4_2")
        design = ev.Design(values)
    elif spec.problem == "anthropomorphic_baseline":   # its baseline_* settings pick the model
        design = ev.Design(values)
    else:
        raise UserError(f"--run {run}: problem {spec.problem!r}; expected a walking problem "
                        f"(exo_codesign, human_gait or anthropomorphic_baseline)")
    print(f"replaying {run} evaluation {int(chosen['iteration'])}:{int(chosen['particle'])} "
          f"(stored: {chosen['status']}, stage {int(chosen['stage'])}, value {chosen['stage_value']:.6g})")
    return design, settings


def trajectory_table(rollout, setup):
    """pandas DataFrame of the recorded samples (rows until the run ended): t_s, per
    coordinate q_<body>_<rad|m> and qd_..., per contact mode_<c>, fn_<c>_N, ft_<c>_N."""
    import pandas as pd

    from codesign.dynamics.model import REVOLUTE

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
    forces = rollout.record_forces[ok]
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
