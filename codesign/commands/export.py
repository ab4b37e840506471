"""`codesign export`: a walking design as a MuJoCo model (MJCF).

    codesign export design.json --mjcf OUT.xml      (the augmented human, or a human design)
    codesign export --human --mjcf OUT.xml          (the unaugmented human tracking the gait)
    codesign export --run RUN --best --mjcf OUT.xml (a run's candidate)

The model the evaluation builds (:mod:`codesign.walking.mujoco_model`): segments and
device bodies with their inertias, the loop closures as connect equalities, the foot
contact points, the effort joints as motors with their actuators' torque limits, the
human's joint ranges, and the evaluation's initial state as the keyframe ``initial``.
Open it with ``python -m mujoco.viewer --mjcf=OUT.xml``. Bad input: one line, exit 2,
nothing written; OUT.xml is replaced atomically.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from codesign.commands.options import add_design_arguments, chosen_design
from codesign.errors import UserError

HELP = "write a walking design as a MuJoCo model (MJCF): bodies, loop equalities, contacts, motors, keyframe"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_design_arguments(parser, max_time_help=None)
    parser.add_argument("--mjcf", required=True, metavar="OUT.xml", help="the MJCF file to write (replaced if it exists)")


def mjcf_path(text: str) -> Path:
    """The ``--mjcf`` path, checked before any work (UserError, one line): an ``.xml`` file
    in a writable folder, not a folder."""
    from codesign.io import writable_folder

    out = Path(text)
    if out.is_dir():
        raise UserError(f"--mjcf {text}: is a folder; expected an .xml file path")
    if out.suffix.lower() != ".xml":
        raise UserError(f"--mjcf {text}: not an .xml file; expected a path ending in .xml")
    writable_folder(out.parent, "--mjcf", create=False, given=out)
    return out


def run(args: argparse.Namespace) -> int:
    from codesign.io import write_text_atomic
    from codesign.walking.mujoco_model import export_design

    out = mjcf_path(args.mjcf)
    chosen = chosen_design(args)
    export = export_design(chosen.design, chosen.settings.walk, name=out.stem)
    write_text_atomic(out, export.xml)
    model = export.model
    print(f"wrote {out}: {model.n} coordinates, {model.n_loops} loop closures (connect equalities), "
          f"{model.n_contacts} contact points, {len(export.motors)} motors, keyframe 'initial' "
          f"({model.total_mass():.2f} kg); view it: python -m mujoco.viewer --mjcf={out}")
    return 0
