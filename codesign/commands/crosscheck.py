"""`codesign crosscheck`: a design's walk in this project's engine and in MuJoCo, side by side.

    codesign crosscheck design.json [--seconds 10] [--json] [--step-ms 0.1]
    codesign crosscheck --human | --run RUN --best  [--seconds S] [--json]

Both runs use the design's own controller from the evaluation's initial state; the
table (:mod:`codesign.walking.crosscheck`) gives time walked, speed, the ground-reaction
peak, the worst cuff force, mechanical power and the joint-angle correlation, each
with its unit, and what MuJoCo's soft contacts and loop equalities account for.
``--json``: the same as one JSON document on stdout. Exit 0 whether or not either
walks (that is the finding); 2 for bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

from codesign.commands.options import add_design_arguments, chosen_design
from codesign.errors import UserError

HELP = "walk a design in MuJoCo under its own controller and compare with this engine's rollout"
SAMPLE_S = 0.01     # s: the joint angles' sampling for the correlation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_design_arguments(parser, max_time_help="seconds simulated in both (default 10)",
                         max_time_flags=("--seconds", "--max-time"))
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--step-ms", type=float, default=None, metavar="MS",
                        help="MuJoCo's step in ms (default 0.1); its contacts' and loops' time constant "
                             "is two steps")


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from codesign.io import json_text
    from codesign.walking.crosscheck import crosscheck, table_lines

    from codesign.walking.mujoco_model import TIMESTEP

    step = TIMESTEP if args.step_ms is None else args.step_ms * 1e-3
    if not (math.isfinite(step) and 1e-6 <= step <= 5e-3):
        raise UserError(f"--step-ms: {args.step_ms:g}; expected a MuJoCo step from 0.001 to 5 ms")
    chosen = chosen_design(args)
    walk = chosen.settings.walk
    t_end = walk.rollout.max_time
    times = np.arange(0.0, t_end + 0.5 * SAMPLE_S, SAMPLE_S)
    replay = chosen.problem.walking.replay(chosen.design, chosen.settings, times)
    if replay.setup is None or replay.rollout is None:
        raise UserError(f"design {chosen.source}: not simulated ({replay.record.message}); expected a design "
                        "the evaluation simulates")
    result, _ = crosscheck(replay.setup, walk, replay.rollout, replay.record.metrics,
                           replay.timings.get("rollout_s", math.nan), times, step)
    if args.json:
        print(json_text({"design": chosen.source, "seconds": t_end, **dataclasses.asdict(result)}))
    else:
        print(f"crosscheck of {chosen.source} over {t_end:g} s")
        print("\n".join(table_lines(result)))
    return 0
