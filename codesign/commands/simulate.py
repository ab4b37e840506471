"""`codesign simulate`: replay one design and write its trajectory, animation and figures.

    codesign simulate design.json [--out DIR] [--max-time S] [--settings JSON]
    codesign simulate --human [--stiffness K] [--damping D]   (the unaugmented human
                                                              tracking the nominal gait)
    codesign simulate --run RUN --best | --eval ITERATION:PARTICLE
                                  (replay a candidate of a run: its spec's problem and
                                  [evaluation] settings; --settings/--max-time override;
                                  an anthropomorphic_baseline run on its lumped model)
    codesign simulate design.json --problem NAME   (the walking problem that evaluates it
                                  and reads --settings; default human_gait for a human
                                  design, exo_codesign for a co-design design,
                                  exo_assist for one with an assistance profile)

The design, its problem and settings come from :func:`codesign.commands.options.chosen_design`
(shared with ``codesign analyze gait``); the problem replays it (``Problem.walking``).

Writes into DIR (default ``results/simulate/NAME``, one folder per design, :func:`default_out`): ``trajectory.csv`` (named columns, SI
units with the unit in the name; the actuators' loads, commanded and delivered, and the
linkage's transmission: :func:`~codesign.walking.trajectory.actuator_table`), ``stick.gif``
(stick figure), ``gait.png`` (hip, knee and ankle against the nominal gait; ground reaction
forces), ``assist.png`` (a device assisting an active wearer: the wearer's joint torque and
power over the gait cycle with and without it, and its torque), ``actuators.png`` (each actuator's commanded and delivered torque, its samples
against the torque-speed envelope, the transmission G; second half), ``record.json`` (status, message,
fitness -- ``stage`` counted as every output counts it, "stage k of n", k from 1
(:func:`stage_fields`) --, metrics; for the stepping rollout the contact solver's counters and the feet's slip path
and friction work under ``time_step``). The files are written into a hidden folder in DIR
and replace the old ones together once all are written (:func:`staged_files`).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from codesign.commands.options import add_design_arguments, chosen_design
from codesign.errors import UserError
from codesign.interrupts import deferred_signals
from codesign.io import creatable_folder, json_text, made_folder
from codesign.objectives import describe_fitness, score, stage_objective
from codesign.problems.effort import reduction_text
from codesign.problems.exo_assist import unassisted_replay
from codesign.problems.objectives import TABLE_4_4_STEP
from codesign.problems.verdict import assists, walking_verdict
from codesign.problems.walking import metric_definition, metric_units
from codesign.report import gait as figures
from codesign.walking.metrics import WEARER_JOINTS
from codesign.walking.stepping import StepParams, step_statistics
from codesign.walking.trajectory import actuator_table, gait_agreement, muscle_rates, trajectory_table

DEFAULT_OUT = Path("results/simulate")   # the parent of each design's default --out
# the files a simulation writes into --out
OUTPUTS = ("trajectory.csv", "gait.png", "actuators.png", "stick.gif", "record.json", "assist.png")
# the recorded trajectory's rows at most (10 s at 10 us; each row holds every coordinate)
MAX_SAMPLES = 1_000_000


HELP = "replay one design (JSON, or --human): trajectory CSV, stick-figure GIF, gait figure"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_design_arguments(parser)
    parser.add_argument("--out", default=None,
                        help="output folder (default results/simulate/NAME, NAME the design file's stem, "
                             "'human', or RUN-best / RUN-ITERATION-PARTICLE; its earlier files are replaced)")
    parser.add_argument("--sample", type=float, default=0.01, help="recording step, s (default %(default)s)")
    parser.add_argument("--no-animation", dest="animation", action="store_false",
                        help="skip stick.gif (its drawing takes most of a short simulation's time)")


def contact_solver_line(stats: dict) -> str:
    """One line of the time step's contact-solver account (record.json's ``time_step``,
    :func:`codesign.walking.stepping.step_statistics`; docs/contacts.md): how many steps
    Lemke's method finished or kept approximate, how many missed the tolerances, and the
    largest residuals with their units."""
    tol, worst = stats["tolerance"], stats["residual_max"]
    if stats["solver"] == "soft_law":
        return (f"contact solver (the soft law, stepped): {stats['steps']} steps, {stats['approximate']} at the "
                f"sweep limit; {stats['above_tolerance']} beyond the tolerance ({tol['impulse_N_s']:g} N s); "
                f"largest residual {worst['soft_law_impulse_N_s']:.1e} N s")
    velocity = max(worst["gap_velocity_m_s"], worst["slip_velocity_m_s"])
    impulse = max(worst["negative_impulse_N_s"], worst["cone_violation_N_s"])
    return (f"contact solver ({stats['solver']}): {stats['steps']} steps, {stats['pivoted']} finished by "
            f"Lemke's method, {stats['approximate']} kept approximate impulses; {stats['above_tolerance']} beyond "
            f"the tolerance ({tol['velocity_m_s']:g} m/s, {tol['impulse_N_s']:g} N s), "
            f"{stats['energy_above_bound']} beyond the energy bound ({tol['energy_J']:g} J); largest residuals "
            f"{velocity:.1e} m/s, {impulse:.1e} N s, {worst['energy_error_J']:.1e} J")


def run(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.sample) and args.sample > 0):
        raise UserError(f"--sample: {args.sample}; expected a step > 0 s")
    chosen = chosen_design(args)
    t_end = chosen.settings.walk.rollout.max_time
    if args.sample > t_end:
        raise UserError(f"--sample: {args.sample:g} s is longer than the simulation ({t_end:g} s); expected a "
                        f"recording step <= the simulated time")
    samples = t_end / args.sample + 1
    if samples > MAX_SAMPLES:
        raise UserError(f"--sample: {args.sample:g} s over {t_end:g} s is {samples:.3g} samples; expected "
                        f"at most {MAX_SAMPLES:,} (a larger --sample or a shorter --max-time)")
    out = creatable_folder(args.out or default_out(args), "--out")   # before the simulation; made when written
    times = np.arange(0.0, t_end + 0.5 * args.sample, args.sample)
    times = times[times <= t_end]
    replay = chosen.problem.walking.replay(chosen.design, chosen.settings, times)
    record, rollout, setup = score(replay.record, chosen.objectives), replay.rollout, replay.setup
    verdict = walking_verdict(record.metrics, t_end, record.message, assists(chosen.problem)) if record.ok else None
    summary = {"verdict": verdict._asdict() if verdict else None,
               "status": record.status, "message": record.message, **stage_fields(record, chosen.objectives,
                                                                                     chosen.problem.metric_unit),
               "metrics": record.metrics,
               "units": metric_units(record.metrics),
               "timings_s": replay.timings, "design": chosen.design.to_json()}
    motors = setup.actuators if setup is not None else ()
    if motors:
        summary["actuators"] = {name: a.rating() for name, a in motors}
    if setup is not None and isinstance(setup.p, StepParams):   # the contact solver's counters
        summary["time_step"] = step_statistics(setup.p)
    speed = record.metrics.get("speed", math.nan)
    if verdict is not None:
        print(verdict.text)
    if "time_step" in summary:
        print(contact_solver_line(summary["time_step"]))
    if motors and "actuator_torque_ratio_peak" in record.metrics:
        m = record.metrics
        for name, a in motors:
            print(f"actuator {name}: {a.rating_text()}")
        print(f"actuators: torque ratio {m['actuator_torque_ratio_peak']:.2f}, speed ratio "
              f"{m['actuator_speed_ratio_peak']:.2f}, thermal ratio {m.get('actuator_thermal_ratio', math.nan):.2f} "
              "(the largest over the motors; each <= 1 within its rating)")
    for line in effort_lines(record.metrics):
        print(line)
    print(f"{record.status}: {summary['stage_text']}"
          + (f"; speed {speed:.2f} m/s" if math.isfinite(speed) else "")
          + (f" ({record.message})" if record.message else ""))
    if record.ok and chosen.objectives and metric_definition(summary["stage_metric"]):
        print(f"{summary['stage_metric']}: {metric_definition(summary['stage_metric'])}")
    with staged_files(out) as staging:
        if rollout is not None:
            table = trajectory_table(rollout, setup)
            summary["nominal_gait"] = agreement = gait_agreement(table, setup, t_end, rollout.acc)
            for key, label in (("controller_phase", "at the controller's phase"),
                               ("strides", "heel strike to heel strike")):
                part = agreement[key]
                said = ", ".join(f"{j} r = {part[f'{j}_corr']:.3f} (RMS {math.degrees(part[f'{j}_rms_rad']):.1f} deg)"
                                 for j in ("hip", "knee", "ankle") if math.isfinite(part[f"{j}_corr"]))
                print(f"against the nominal gait ({label}; second half, both legs): "
                      + (said or ("no complete stride in the second half" if key == "strides" else
                                  "no samples in the second half") + " to compare (a longer --max-time)"))
            if chosen.design.topology is None:
                line = thesis_comparison(record.metrics)
                if line:
                    print(line)
            rates = muscle_rates(table, 0.5 * t_end)
            loads = actuator_table(rollout, setup)
            pd.concat([table, loads], axis=1).to_csv(staging / "trajectory.csv", index=False,
                                                     float_format="%.9g")
            fig = figures.gait_figure(table, setup.model, float(setup.ctrl.timing[0]), float(setup.ctrl.timing[1]))
            fig.savefig(staging / "gait.png", dpi=110)
            figures.plt.close(fig)
            fig = figures.actuator_figure(pd.concat([table["t_s"], loads], axis=1), setup.effort_names,
                                          0.5 * t_end)
            fig.savefig(staging / "actuators.png", dpi=110)
            figures.plt.close(fig)
            muscles = any(c.startswith("act_") for c in table.columns)
            if muscles:                                    # the muscle wearer (issue 45)
                fig = figures.muscle_figure(table, 0.5 * t_end)
                fig.savefig(staging / "muscles.png", dpi=110)
                figures.plt.close(fig)
            if args.animation:
                figures.stick_gif(table, setup.model, staging / "stick.gif")
            rates_alone = {}
            if "effort_reduction" in record.metrics:       # an active wearer's device (exo_assist)
                # the wearer its effort_reduction is measured against (before it adapted, if it did)
                alone = unassisted_replay(replay.reference or chosen.design, chosen.settings.walk, times)
                alone_table = trajectory_table(alone.rollout, alone.setup)
                rates_alone = muscle_rates(alone_table, 0.5 * t_end)
                fig = figures.assist_figure(pd.concat([table, loads], axis=1),
                                            pd.concat([alone_table, actuator_table(alone.rollout, alone.setup)],
                                                      axis=1), 0.5 * t_end)
                fig.savefig(staging / "assist.png", dpi=110)
                figures.plt.close(fig)
            if rates:
                summary["muscle_metabolic_rate_W"] = rates
                print(muscle_rate_line(rates, rates_alone))
        (staging / "record.json").write_text(json_text(summary) + "\n")
    if rollout is None:
        print(f"not simulated; wrote {out / 'record.json'}")
    else:
        print(f"wrote {out}/trajectory.csv, gait.png, actuators.png, {'muscles.png, ' if muscles else ''}"
              f"{'stick.gif, ' if args.animation else ''}"
              f"{'assist.png, ' if 'effort_reduction' in record.metrics else ''}record.json "
              f"(time {record.metrics.get('time', 0):.2f} s)")
    return 0


def stage_fields(record, objectives, unit) -> dict:
    """record.json's fitness, in the numbering of every output (docs/reports.md): ``stage``
    = k of "stage k of n" (1-based: the objective it optimizes; 0 for a failed record),
    ``stages`` = n, ``stage_metric`` and ``stage_metric_value`` (the metric's own value, a
    maximized one's sign restored), ``conditions_met`` (the run store's ``stage``: k - 1),
    ``stage_value`` (the stored, minimized value) and ``stage_text`` (the words simulate
    prints)."""
    if not record.ok:
        return {"stage": 0, "stages": len(objectives), "conditions_met": 0, "stage_value": record.stage_value,
                "stage_text": "no stage: the evaluation failed"}
    fields = {"stage": record.stage + 1, "stages": len(objectives), "conditions_met": record.stage,
              "stage_value": record.stage_value}
    if objectives:
        objective, value = stage_objective(record.stage, record.stage_value, objectives)
        fields.update(stage=min(record.stage, len(objectives) - 1) + 1, stage_metric=objective.metric,
                      stage_metric_value=value)
    fields["stage_text"] = describe_fitness(record.stage, record.stage_value, objectives, unit)
    return fields


def thesis_comparison(metrics) -> str:
    """A human gait's per-stride correlations and torque RMS next to the thesis's best
    (Table 4.4, step mode); "" where a metric is missing."""
    names = ("stride_r_hip", "stride_r_knee", "stride_r_ankle", "torque_rms")
    if not all(math.isfinite(metrics.get(n, math.nan)) for n in names):
        return ""
    t = TABLE_4_4_STEP
    return ("per stride r hip / knee / ankle {:.3f} / {:.3f} / {:.3f} at {:.1f} N m torque RMS; "
            "thesis Table 4.4 (step mode, best): {:.2f} / {:.2f} / {:.2f} at {:.1f} N m").format(
        *(metrics[n] for n in names), t.hip_r, t.knee_r, t.ankle_r, t.torque_rms)


def effort_lines(metrics: dict[str, float]) -> list[str]:
    """What an active wearer's device does to its effort (issue 32): per joint the
    metabolic proxy without and with the device, then the effort its wearer model prices
    (the proxy, or the muscle-driven wearer's net metabolic cost,
    :data:`codesign.problems.effort.EFFORT_METRIC`) and its reduction in words ("69.8 %
    less", :func:`codesign.problems.effort.reduction_text`, the convention of compare and
    the report), and the speed's change; for a wearer that adapted to the device
    (``exo_assist_wearer``) the reduction against its adapted law walking alone too; the
    worst over its robust checks (``effort_reduction_robust``); nothing for other designs."""
    if "effort_reduction" not in metrics:
        return []
    muscles = "metabolic_cost_unassisted" in metrics
    effort, what = ("metabolic_cost", "net metabolic cost") if muscles else ("wearer_metabolic", "metabolic proxy")
    joints = [f"{j} {metrics[f'wearer_{j}_metabolic_unassisted']:.3f} -> {metrics[f'wearer_{j}_metabolic']:.3f} "
              f"({reduction_text(metrics[f'effort_reduction_{j}'])})"
              for j in WEARER_JOINTS if f"effort_reduction_{j}" in metrics]
    return ["wearer's metabolic proxy without -> with the device (J/(kg m)): " + ", ".join(joints),
            f"effort: {reduction_text(metrics['effort_reduction'])} with the device ({what} "
            f"{metrics[effort + '_unassisted']:.3f} -> {metrics[effort]:.3f} J/(kg m), the device's "
            f"mass included); speed change {100 * metrics.get('speed_change', math.nan):+.1f} %"] + (
        [f"against its adapted law without the device: {reduction_text(metrics['effort_reduction_own'])} "
         f"({metrics[effort + '_own']:.3f} -> {metrics[effort]:.3f} J/(kg m)); the law alone walks "
         f"{metrics.get('speed_own', math.nan):.2f} m/s"
         + (f"; the device's share (the smaller): {reduction_text(metrics['effort_reduction_device'])}"
            if "effort_reduction_device" in metrics else "")] if "effort_reduction_own" in metrics else []) + (
        [f"under its robust checks (each against the wearer alone under the same check): at worst "
         f"{reduction_text(metrics['effort_reduction_robust'])}"
         + (f" (the device's share {reduction_text(metrics['effort_reduction_device_robust'])})"
            if "effort_reduction_device_robust" in metrics else "") + ", speed change at most "
         f"{100 * metrics.get('speed_change_abs_robust', math.nan):.1f} %, ground reaction at most "
         f"{metrics.get('grf_peak_bw_robust', math.nan):.2f} BW"] if "effort_reduction_robust" in metrics else [])


def muscle_rate_line(rates: dict[str, float], alone: dict[str, float]) -> str:
    """One line of the muscle wearer's gross metabolic rate per muscle (W, both legs,
    second half; :func:`codesign.walking.trajectory.muscle_rates`) and their sum, each
    after the unassisted walk's where ``alone`` has it (an assisting device)."""
    now = {**rates, "sum": sum(rates.values())}
    before = {**alone, "sum": sum(alone.values())} if alone else {}
    said = [f"{k} {before[k]:.0f} -> {v:.0f}" if k in before else f"{k} {v:.0f}" for k, v in now.items()]
    head = "without -> with the device, " if alone else ""
    return f"muscles' gross metabolic rate ({head}W, both legs, second half): " + ", ".join(said)


def default_out(args: argparse.Namespace) -> Path:
    """``results/simulate/NAME``, one folder per design: the design file's stem, ``human``,
    or the run's folder name with ``best`` or ``ITERATION-PARTICLE``."""
    if args.run is not None:
        run = Path(args.run)
        run = run.parent if run.suffix == ".sqlite" else run
        which = "best" if args.best else str(args.eval).replace(":", "-")
        return DEFAULT_OUT / f"{run.name}-{which}"
    return DEFAULT_OUT / ("human" if args.human else Path(args.design).stem)


@contextlib.contextmanager
def staged_files(out: Path, outputs: tuple[str, ...] = OUTPUTS) -> Iterator[Path]:
    """A hidden folder in ``out`` to write the files into; when the block ends normally
    they replace those of ``out`` together (signals held back meanwhile), and an earlier
    simulation's ``outputs`` that this one did not write go (a ``stick.gif`` after
    ``--no-animation``), so that an interrupted or failed simulation leaves ``out`` as it
    was -- never a new record.json beside an older gait.png, nor a new empty ``out``. The
    hidden folder is removed in any case."""
    with made_folder(out):
        staging = Path(tempfile.mkdtemp(prefix=".simulate-", dir=out))
        try:
            yield staging
            with deferred_signals():
                written = sorted(staging.iterdir())
                for path in written:
                    os.replace(path, out / path.name)
                for name in set(outputs) - {path.name for path in written}:
                    (out / name).unlink(missing_ok=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
