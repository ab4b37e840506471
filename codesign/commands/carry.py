"""`codesign carry DESIGN`: one assisting design walked with its device's mass at several
values -- effort reduction against mass and the break-even mass (issue 46 item 5;
:mod:`codesign.report.carry`).

    codesign carry design.json [--masses 0,1,2,4] [--placement JSON] [--out DIR]
                               [--settings JSON] [--max-time S]

The design's problem must compare an assisted wearer with the wearer alone (``exo_assist``,
``exo_assist_ideal``). Each mass replaces the design's ``evaluation.device_loads`` by that
mass placed by ``--placement`` (default a portable hip exoskeleton: 90 % at the waist belt,
10 % in the thigh wraps); the unassisted walk carries none of it. Prints one line per mass
and the break-even mass; writes ``carry.csv`` and ``carry.png`` into DIR (default
results/carry/NAME), all files or none.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from codesign.commands.options import add_design_arguments, chosen_design
from codesign.errors import UserError

HELP = "one assisting design with its device's mass varied: effort reduction against mass, break-even mass"
DEFAULT_MASSES = "0,1,2,4"      # kg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_design_arguments(parser)
    parser.add_argument("--masses", default=DEFAULT_MASSES,
                        help="device masses to walk, kg, comma-separated (default %(default)s)")
    parser.add_argument("--placement", default=None,
                        help="JSON list of {\"segment\", \"share\", \"position\"}: where the mass sits "
                             "(default a portable hip exoskeleton: 90 %% at the waist, 10 %% on the thighs)")
    parser.add_argument("--out", default=None, help="output folder (default results/carry/NAME)")


def parse_masses(text: str) -> tuple[float, ...]:
    """``--masses``: at least two distinct masses >= 0 kg (UserError, one line)."""
    try:
        masses = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise UserError(f"--masses: {text!r}; expected masses in kg separated by commas, e.g. 0,1,2,4") from None
    if len(set(masses)) < 2 or not all(m >= 0 and m < float("inf") for m in masses):
        raise UserError(f"--masses: {text!r}; expected at least two distinct finite masses >= 0 kg")
    return tuple(sorted(set(masses)))


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from tqdm import tqdm

    from codesign.io import creatable_folder, save_figure_atomic, write_text_atomic
    from codesign.problems.effort import EFFORT_METRIC
    from codesign.problems.verdict import walking_verdict
    from codesign.report import carry as cr
    from codesign.report.mass_buys import break_even

    masses = parse_masses(args.masses)
    placement = cr.HIP_EXO_PLACEMENT
    if args.placement is not None:
        try:
            placement = cr.parse_placement(json.loads(args.placement))
        except json.JSONDecodeError:
            raise UserError(f"--placement: {args.placement!r}; expected a JSON list") from None
    chosen = chosen_design(args)
    cr.with_device_loads(chosen.settings, ())           # an assisting problem, else one line
    name = Path(args.design).stem if args.design else "design"
    out = creatable_folder(Path(args.out) if args.out else Path("results/carry") / name, "--out")
    effort = EFFORT_METRIC[chosen.settings.walk.wearer_model]
    max_time = chosen.settings.walk.rollout.max_time
    points = []
    for mass in tqdm(masses, desc="carry", unit="mass"):
        settings = cr.with_device_loads(chosen.settings, cr.device_loads(mass, placement))
        record = chosen.problem.walking.replay(chosen.design, settings).record
        m = record.metrics
        verdict = walking_verdict(m, max_time, record.message, assisted=True)
        point = cr.CarryPoint(mass, verdict.walks, verdict.text, m.get("speed", float("nan")),
                              m.get(effort, float("nan")), m.get(f"{effort}_unassisted", float("nan")),
                              m.get("effort_reduction", float("nan")), m.get("speed_change", float("nan")))
        points.append(point)
        tqdm.write(f"{mass:g} kg: {100 * point.reduction:+.1f} % {effort} ({point.effort:.3f} against "
                   f"{point.effort_unassisted:.3f} J/(kg m)), speed {point.speed:.2f} m/s: {verdict.text}")
    walking = [p for p in points if p.walks]
    fit = break_even([p.mass_kg for p in walking], [p.reduction for p in walking], rising=False)
    text = fit.text("reduction", "masses that walk", rising=False)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "carry.csv", cr.carry_table(points, effort).to_csv(index=False))
    save_figure_atomic(cr.carry_figure(points, fit, effort), out / "carry.png")
    print("placement: " + ", ".join(f"{100 * s.share:g} % on the {s.segment}"
                                     + (f" at {s.position:g} of its length" if s.position is not None else "")
                                     for s in placement))
    print(text)
    print(f"wrote {out / 'carry.csv'} and carry.png")
    return 0
