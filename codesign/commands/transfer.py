"""`codesign transfer`: a co-design whose device does what a human-gait design's hip and
knee did (:mod:`codesign.walking.transfer`).

    codesign transfer human.json --out codesign.json [--like design.json] [--catalog PATH] [--force]

``human.json``: a human-gait design (``topology`` null, the chapter-4 hip/knee/ankle
parameters). ``--like``: a co-design whose topology, actuated pair and morphology are kept
(default: the anthropomorphic device, catalog topology 1 with parallelogram four-bars at
hip and knee, actuators 1 and 3). Writes the co-design's JSON and prints how well its
signals fit; it is a start point (``[space.start]``), replay it with `codesign simulate`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from codesign.errors import UserError

HELP = "write a co-design whose device takes over a human-gait design's hip and knee law"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("human", help="human-gait design JSON (topology null)")
    parser.add_argument("--out", required=True, help="co-design JSON to write (a new file, or --force)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    parser.add_argument("--like", default=None,
                        help="co-design JSON whose topology, actuators and morphology to keep "
                             "(default: topology 1, parallelogram four-bars, actuators 1 and 3)")
    parser.add_argument("--catalog", default=None,
                        help="topology catalog (default: topologies/catalog.json, else the "
                             "repository's copy)")


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from codesign.io import writable_folder, write_text_atomic
    from codesign.model.anthropometry import human_geometry
    from codesign.model.morphology import parameter_space
    from codesign.screening.examples import params_from_positions, parallelogram_positions
    from codesign.walking import WalkSettings, load_design
    from codesign.topology.catalog import cached_catalog, catalog_path
    from codesign.walking.transfer import transfer_human_control
    from codesign.problems.identity import human_law_problem, key_document
    from codesign.problems.options import ProblemOptions, problem_key

    out = Path(args.out)   # checked before any work, as `codesign freeze` does
    if out.is_dir():
        raise UserError(f"--out {out}: is a folder; expected a JSON file path")
    if out.exists() and not args.force:
        raise UserError(f"--out {out}: already exists; expected a new file path (or --force)")
    writable_folder(out.parent, "--out", create=False, given=out)
    settings = WalkSettings(catalog=str(catalog_path(args.catalog)))
    catalog = cached_catalog(settings.catalog)   # an unreadable catalog is one line naming it, before the designs
    human = load_design(args.human)
    if human.topology is not None:
        raise UserError(f"{args.human}: a co-design (topology {human.topology}); expected a "
                        "human-gait design (topology null)")
    if args.like:
        like = load_design(args.like)
        if like.topology is None:
            raise UserError(f"--like {args.like}: a human design; expected a co-design (topology, actuators)")
        topology, actuators = like.topology, like.actuators
        names = {p.name for p in parameter_space(catalog.topology(topology))}
        morphology = {k: v for k, v in like.params.items() if k in names}
    else:
        topology, actuators = 1, (1, 3)
        geometry = human_geometry()
        morphology = params_from_positions(catalog.topology(1), geometry,
                                           parallelogram_positions(geometry))
    try:
        result = transfer_human_control(human, topology, actuators, morphology, settings)
    except (ValueError, KeyError) as exc:
        raise UserError(f"transfer to topology {topology}, actuators {actuators}: {exc}") from None
    # the human's law in the wearer's joint space, the spec's rating: the wearer-space co-design
    law = ProblemOptions(control="wearer", torso_feedback=human_law_problem(human.problem, human.params).torso_feedback)
    design = dataclasses.replace(result.design, problem=key_document(problem_key(law)))
    write_text_atomic(out, json.dumps(design.to_json(), indent=1) + "\n")
    for name, rms in result.reference_rms_deg.items():
        extra = ""
        if name in result.gain_rms:
            k_rms, d_rms = result.gain_rms[name]
            extra = (f", transmission {result.transmission[name]:.3f}, stiffness fit RMS "
                     f"{k_rms:.3g} N m/rad, damping {d_rms:.3g} N m s/rad")
        print(f"{name}: reference fit RMS {rms:.3g} deg{extra}")
    print(f"wrote {args.out} (topology {topology}, actuators {actuators[0]}-{actuators[1]})")
    return 0
