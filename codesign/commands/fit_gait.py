"""`codesign fit-gait`: a human-gait design whose reference angles are the nominal
(Winter's) gait fitted, its impedances kept: a start point for a human-like search
(:func:`codesign.walking.transfer.fit_ppoly`, issue 31).

    codesign fit-gait human.json --out start.json [--force]

Prints each joint's fit (RMS in deg and r against the nominal gait). Replay the result
with `codesign simulate`, or name it as a spec's ``[space] start_design``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from codesign.errors import UserError

HELP = "write a human-gait design whose references are the nominal gait fitted (a search's start)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("human", help="human-gait design JSON (topology null): its impedances are kept")
    parser.add_argument("--out", required=True, help="design JSON to write (a new file, or --force)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing --out file")


def run(args: argparse.Namespace) -> int:
    import math

    import numpy as np

    from codesign.control import signals as sg
    from codesign.control.bounds import human_reference_angle
    from codesign.io import writable_folder, write_text_atomic
    from codesign.model.gait import GAIT_JOINTS, nominal_gait
    from codesign.problems.identity import human_law_problem, key_document
    from codesign.problems.options import problem_key
    from codesign.walking import Design, load_design
    from codesign.walking.transfer import fit_ppoly

    out = Path(args.out)
    if out.is_dir():
        raise UserError(f"--out {out}: is a folder; expected a JSON file path")
    if out.exists() and not args.force:
        raise UserError(f"--out {out}: already exists; expected a new file path (or --force)")
    writable_folder(out.parent, "--out", create=False, given=out)
    human = load_design(args.human)
    if human.topology is not None:
        raise UserError(f"{args.human}: a co-design (topology {human.topology}); expected a "
                        "human-gait design (topology null)")
    gait = nominal_gait()
    phases = np.arange(200) / 200
    params = dict(human.params)
    for j, joint in enumerate(GAIT_JOINTS):
        points = sum(1 for name in params if name.startswith(f"{joint}.ref.y"))
        if points == 0:
            raise UserError(f"{args.human}: no {joint}.ref.y* parameters; expected a human-gait design")
        target = gait.angles(phases)[:, j]
        dx, y, rms = fit_ppoly(phases, target, points, human_reference_angle(joint))
        params.update({f"{joint}.ref.dx{i}": float(v) for i, v in enumerate(dx)})
        params.update({f"{joint}.ref.y{i}": float(v) for i, v in enumerate(y)})
        r = np.corrcoef(sg.ppoly(dx, y)(phases), target)[0, 1]
        print(f"{joint}: {points}-point reference fit RMS {math.degrees(rms):.2f} deg, r {r:.4f}")
    law = human_law_problem(human.problem, human.params)       # the same law, refitted
    design = Design(params, human.topology, human.actuators, problem=key_document(problem_key(law)))
    write_text_atomic(out, json.dumps(design.to_json(), indent=1) + "\n")
    print(f"wrote {out}")
    return 0
