"""`codesign export`: a walking design as a MuJoCo model (MJCF).

    codesign export design.json --mjcf OUT.xml      (the augmented human, or a human design)
    codesign export --human --mjcf OUT.xml          (the unaugmented human tracking the gait)
    codesign export --run RUN --best --mjcf OUT.xml (a run's candidate)

The model the evaluation builds (:mod:`codesign.walking.mujoco_model`): segments and
device bodies with their inertias, the loop closures as connect equalities, the foot
contact points, the effort joints as motors with their actuators' torque limits, the
human's joint ranges, and the evaluation's initial state as the keyframe ``initial``.
Open it with ``python -m mujoco.viewer --mjcf=OUT.xml``; ``--png STILL.png`` also renders
the keyframe offscreen (:mod:`codesign.report.mujoco_still`). Bad input: one line, exit 2,
nothing written; the files are replaced atomically, once both are made.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from codesign.commands.options import add_design_arguments, chosen_design
from codesign.errors import UserError

HELP = "write a walking design as a MuJoCo model (MJCF): bodies, loop equalities, contacts, motors, keyframe"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_design_arguments(parser, max_time_help=None)
    parser.add_argument("--mjcf", required=True, metavar="OUT.xml",
                        help="the MJCF file to write (replaced if it exists)")
    parser.add_argument("--png", default=None, metavar="STILL.png",
                        help="also a still of the keyframe rendered by MuJoCo offscreen (needs OpenGL: "
                             "MUJOCO_GL=egl or osmesa without a display)")


def output_path(text: str, option: str, suffix: str) -> Path:
    """An output file path, checked before any work (UserError, one line): a ``suffix``
    file in a writable folder, not a folder."""
    from codesign.io import writable_folder

    out = Path(text)
    if out.is_dir():
        raise UserError(f"{option} {text}: is a folder; expected a {suffix} file path")
    if out.suffix.lower() != suffix:
        raise UserError(f"{option} {text}: not a {suffix} file; expected a path ending in {suffix}")
    writable_folder(out.parent, option, create=False, given=out)
    return out


def run(args: argparse.Namespace) -> int:
    from codesign.io import write_text_atomic
    from codesign.walking.mujoco_model import export_design

    out = output_path(args.mjcf, "--mjcf", ".xml")
    png = output_path(args.png, "--png", ".png") if args.png else None
    chosen = chosen_design(args)
    export = export_design(chosen.design, chosen.settings.walk, name=out.stem)
    still = None
    if png is not None:
        from codesign.report.mujoco_still import png_bytes, render_keyframe

        try:
            still = png_bytes(render_keyframe(export.xml))
        except Exception as exc:     # MuJoCo's renderer: no OpenGL context on this machine
            raise UserError(f"--png {args.png}: MuJoCo cannot render here ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}); expected OpenGL, "
                            "e.g. MUJOCO_GL=egl or osmesa") from None
    write_text_atomic(out, export.xml)
    if still is not None:
        write_text_atomic(png, still)
    model = export.model
    print(f"wrote {out}: {model.n} coordinates, {model.n_loops} loop closures (connect equalities), "
          f"{model.n_contacts} contact points, {len(export.motors)} motors, keyframe 'initial' "
          f"({model.total_mass():.2f} kg); view it: python -m mujoco.viewer --mjcf={out}"
          + (f"; and {png}" if png is not None else ""))
    return 0
