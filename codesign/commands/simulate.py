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
fitness, metrics; for the stepping rollout the contact solver's counters and the feet's slip path
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

from codesign import walking
from codesign.commands.options import settings_overrides
from codesign.errors import UserError
from codesign.interrupts import deferred_signals
from codesign.io import creatable_folder, json_text, made_folder
from codesign.objectives import describe_fitness, score
from codesign.problems import baseline as bl
from codesign.problems import get_problem
from codesign.problems.walking import with_problem_metrics
from codesign.run.stored import inline_run_reference, stored_candidate
from codesign.report import gait as figures
from codesign.walking.examples import HUMAN_DAMPING, HUMAN_STIFFNESS   # --human's defaults
from codesign.walking.stepping import StepParams, step_statistics
from codesign.walking.trajectory import gait_agreement, trajectory_table

# the recorded trajectory's rows at most (10 s at 10 us; each row holds every coordinate)
MAX_SAMPLES = 1_000_000


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
    parser.add_argument("--stiffness", type=float, default=None,
                        help=f"--human: joint stiffness, N m/rad (default {HUMAN_STIFFNESS:g})")
    parser.add_argument("--damping", type=float, default=None,
                        help=f"--human: joint damping, N m s/rad (default {HUMAN_DAMPING:g})")
    parser.add_argument("--out", default="results/simulate",
                        help="output folder (default %(default)s; its earlier files are replaced)")
    parser.add_argument("--max-time", type=float, default=None, help="seconds (default 10)")
    parser.add_argument("--settings", default="{}",
                        help="JSON object of evaluation settings (e.g. '{\"phase0\": 0.2}')")
    parser.add_argument("--sample", type=float, default=0.01, help="recording step, s (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    if args.human + bool(args.design) + (args.run is not None) != 1:
        raise UserError("design: give a design JSON file, --human or --run (exactly one)")
    for given, option, needs in ((args.stiffness is not None, "--stiffness", "--human"),
                                 (args.damping is not None, "--damping", "--human"),
                                 (args.best, "--best", "--run"), (args.eval is not None, "--eval", "--run")):
        if given and not (args.human if needs == "--human" else args.run is not None):
            raise UserError(f"{option}: applies to {needs} only; expected it with {needs}")
    stored = stored_candidate(args.run, args.best, args.eval) if args.run is not None else None
    design, settings_doc = (stored.design, stored.settings) if stored else (None, {})
    overrides = settings_overrides(args.settings)
    settings_doc.update(overrides)
    if args.max_time is not None:
        settings_doc["max_time"] = args.max_time
    if not (math.isfinite(args.sample) and args.sample > 0):
        raise UserError(f"--sample: {args.sample}; expected a step > 0 s")
    baseline = None
    if any(key.startswith("baseline_") for key in settings_doc):   # anthropomorphic_baseline
        settings_doc = inline_run_reference(settings_doc, get_problem("anthropomorphic_baseline").run_reference)
        baseline = bl.resolve_baseline(settings_doc)
    settings = walking.WalkSettings.from_dict(bl.walk_settings_dict(settings_doc))
    if args.human:
        stiffness = HUMAN_STIFFNESS if args.stiffness is None else args.stiffness
        damping = HUMAN_DAMPING if args.damping is None else args.damping
        if not (math.isfinite(stiffness) and stiffness > 0):
            raise UserError(f"--stiffness: {stiffness:g}; expected a joint stiffness > 0 N m/rad")
        if not (math.isfinite(damping) and damping >= 0):
            raise UserError(f"--damping: {damping:g}; expected a joint damping >= 0 N m s/rad")
        design = walking.typical_human_design(settings, stiffness, damping)
    elif design is None:
        design = walking.load_design(args.design)
        walking.check_design(design, settings, str(args.design))   # a run's own designs are checked already
    t_end = settings.rollout.max_time
    if args.sample > t_end:
        raise UserError(f"--sample: {args.sample:g} s is longer than the simulation ({t_end:g} s); expected a "
                        f"recording step <= the simulated time")
    samples = t_end / args.sample + 1
    if samples > MAX_SAMPLES:
        raise UserError(f"--sample: {args.sample:g} s over {t_end:g} s is {samples:.3g} samples; expected "
                        f"at most {MAX_SAMPLES:,} (a larger --sample or a shorter --max-time)")
    out = creatable_folder(args.out, "--out")         # before the simulation; made when written
    times = np.arange(0.0, t_end + 0.5 * args.sample, args.sample)
    times = times[times <= t_end]
    record, timings, rollout, setup = walking.evaluate_detailed(
        design, settings, times, human_model=None if baseline is None else baseline.model)
    if baseline is not None:
        record = bl.with_baseline_metrics(record, baseline)
    objectives = _objectives(stored, design, baseline)
    record = score(with_problem_metrics(record, settings_doc), objectives)
    summary = {"status": record.status, "message": record.message, "stage": record.stage,
               "stage_value": record.stage_value, "metrics": record.metrics,
               "timings_s": timings, "design": design.to_json()}
    if setup is not None and isinstance(setup.p, StepParams):   # the contact solver's counters
        summary["time_step"] = step_statistics(setup.p)
    speed = record.metrics.get("speed", math.nan)
    print(f"{record.status}: {describe_fitness(record.stage, record.stage_value, objectives)}"
          + (f"; speed {speed:.2f} m/s" if math.isfinite(speed) else "")
          + (f" ({record.message})" if record.message else ""))
    with staged_files(out) as staging:
        if rollout is not None:
            table = trajectory_table(rollout, setup)
            summary["nominal_gait"] = agreement = gait_agreement(table, setup, t_end)
            for key, label in (("controller_phase", "at the controller's phase"),
                               ("strides", "heel strike to heel strike")):
                part = agreement[key]
                said = ", ".join(f"{j} r = {part[f'{j}_corr']:.3f} (RMS {math.degrees(part[f'{j}_rms_rad']):.1f} deg)"
                                 for j in ("hip", "knee", "ankle") if math.isfinite(part[f"{j}_corr"]))
                print(f"against the nominal gait ({label}; second half, both legs): "
                      + (said or ("no complete stride in the second half" if key == "strides" else
                                  "no samples in the second half") + " to compare (a longer --max-time)"))
            table.to_csv(staging / "trajectory.csv", index=False, float_format="%.9g")
            fig = figures.gait_figure(table, setup.model, float(setup.ctrl.timing[0]), float(setup.ctrl.timing[1]))
            fig.savefig(staging / "gait.png", dpi=110)
            figures.plt.close(fig)
            figures.stick_gif(table, setup.model, staging / "stick.gif")
        (staging / "record.json").write_text(json_text(summary) + "\n")
    if rollout is None:
        print(f"not simulated; wrote {out / 'record.json'}")
    else:
        print(f"wrote {out}/trajectory.csv, gait.png, stick.gif, record.json "
              f"(time {record.metrics.get('time', 0):.2f} s)")
    return 0


@contextlib.contextmanager
def staged_files(out: Path) -> Iterator[Path]:
    """A hidden folder in ``out`` to write the files into; when the block ends normally
    they replace those of ``out`` together (signals held back meanwhile), so that an
    interrupted or failed simulation leaves ``out`` as it was -- never a new record.json
    beside an older gait.png, nor a new empty ``out``. The hidden folder is removed in any
    case."""
    with made_folder(out):
        staging = Path(tempfile.mkdtemp(prefix=".simulate-", dir=out))
        try:
            yield staging
            with deferred_signals():
                for path in sorted(staging.iterdir()):
                    os.replace(path, out / path.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _objectives(stored, design, baseline) -> tuple:
    """The objectives a replay is ranked by: its run's, else its problem's (the human's
    Table 4.2, a co-design design's or a baseline's Table 5.3)."""
    if stored is not None:
        return stored.objectives
    if baseline is not None:
        return get_problem("anthropomorphic_baseline").objectives
    return get_problem("human_gait" if design.topology is None else "exo_codesign").objectives
