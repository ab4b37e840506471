"""`codesign analyze walker rimless|simplest|slip`: gaits, exact return-map Jacobians, stability.

Prints, per period-one gait, the fixed point on the model's Poincaré section, the stride
period, the exact Jacobian (variational equation + saltation matrices) next to the
central finite-difference one, both sets of eigenvalues (Floquet multipliers) and the
stable / unstable verdict. ``--json`` prints the object documented in
:func:`codesign.analysis.returnmap.gaits_to_json` instead (keys ``fixed_points``,
``eigenvalues``, ``eigenvalues_fd``, ``gaits`` ...).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from codesign.errors import UserError
from codesign.io import save_figure_atomic

HELP = "limit-cycle analysis of classic walkers: fixed points, exact return-map Jacobians, Floquet multipliers"

MODELS = ("rimless", "simplest", "slip")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=["walker"], help="what to analyse")
    parser.add_argument("model", choices=MODELS, help="rimless wheel, simplest walker (Garcia 1998) or SLIP runner")
    parser.add_argument("--slope", type=float, default=None,
                        help="ramp slope in rad (rimless: 0.2, simplest: 0.009; not for slip)")
    parser.add_argument("--guess", action="append", default=None, metavar="Z1,Z2,...",
                        help="a starting point on the section (comma-separated, repeatable); default: the model's")
    parser.add_argument("--warmup", type=int, default=0, help="forward strides from each guess before Newton")
    parser.add_argument("--rtol", type=float, default=1e-14, help="integration tolerance (rtol = atol)")
    parser.add_argument("--json", action="store_true", help="print the JSON object instead of the report")
    parser.add_argument("--figure", default=None, metavar="PATH",
                        help="also write the limit-cycle figure (phase plane + multipliers), e.g. "
                             "results/analysis/limit_cycle.png")


def _parse_guess(text: str, n: int, names) -> np.ndarray:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise UserError(f"--guess: {text!r} is not a list of numbers; expected {n} comma-separated values "
                        f"({', '.join(names)})") from None
    if len(values) != n or not all(math.isfinite(v) for v in values):
        raise UserError(f"--guess: {text!r} has {len(values)} values; expected {n} finite values ({', '.join(names)})")
    return np.array(values)


def _setup(name: str, slope: float | None, guesses, warmup: int, rtol: float):
    """Model, section, starting points and tolerances from the command-line values."""
    from codesign.analysis import returnmap, walkers

    make_model, make_section, default_guesses = walkers.WALKERS[name]
    if slope is not None:
        if name == "slip":
            raise UserError("--slope: the SLIP runner runs on level ground; expected no --slope for slip")
        if not (math.isfinite(slope) and 0.0 < slope < 0.5):
            raise UserError(f"--slope: {slope} rad; expected a downhill slope in (0, 0.5) rad")
        model = make_model(slope=slope)
    else:
        model = make_model()
    if not (math.isfinite(rtol) and 1e-15 <= rtol <= 1e-4):
        raise UserError(f"--rtol: {rtol}; expected a tolerance in [1e-15, 1e-4]")
    if warmup < 0:
        raise UserError(f"--warmup: {warmup}; expected a number of strides >= 0")
    section = make_section(model)
    starts = [_parse_guess(g, len(section.names), section.names) for g in guesses] if guesses else default_guesses(model)
    return model, section, starts, returnmap.Tolerances(rtol=rtol, atol=rtol, event_tol=rtol / 10)


def _gaits(name, model, section, starts, tol, warmup):
    from codesign.analysis import returnmap

    try:
        return [returnmap.analyze_gait(model, section, z, tol, warmup) for z in starts]
    except returnmap.StrideError as exc:
        raise UserError(f"{name}: {exc}; expected a slope/guess with a period-one gait") from None


def analyze_walker(name: str, slope: float | None = None, guesses=None, warmup: int = 0, rtol: float = 1e-14) -> dict:
    """Analyse one of the shipped walkers; returns the JSON-ready dictionary
    (:func:`codesign.analysis.returnmap.gaits_to_json`)."""
    from codesign.analysis import returnmap

    model, section, starts, tol = _setup(name, slope, guesses, warmup, rtol)
    return returnmap.gaits_to_json(model, section, _gaits(name, model, section, starts, tol, warmup), tol)


def _matrix(m) -> str:
    return "\n".join("    [" + "  ".join(f"{v: .15e}" for v in row) + "]" for row in np.asarray(m))


def _eig(pairs) -> str:
    return "\n".join(f"    {re: .15f} {im:+.15f}i   |lambda| = {math.hypot(re, im):.15f}" for re, im in pairs)


def format_report(out: dict) -> str:
    """The human-readable report of :func:`analyze_walker`'s dictionary."""
    lines = [f"model: {out['model']}  parameters: {out['parameters']}",
             f"section: post-jump states of guard {out['section_guard']}, coordinates {out['state_names']}",
             f"tolerances: {out['tolerances']}"]
    for i, g in enumerate(out["gaits"], 1):
        lines.append(f"\ngait {i}: {g['verdict'].upper()} (max |lambda| = {g['max_abs_eigenvalue']:.15f}),"
                     f" stride period {g['period_s']:.15g}")
        lines.append("  fixed point: " + ", ".join(f"{n} = {v:.15f}" for n, v in zip(out["state_names"], g["fixed_point"])))
        lines.append("  Jacobian (variational equation + saltation):")
        lines.append(_matrix(g["jacobian"]))
        lines.append(f"  Jacobian (central differences, steps {['%.2g' % s for s in g['fd_steps']]}),"
                     f" max |J_fd - J| = {g['jacobian_fd_max_difference']:.2e}:")
        lines.append(_matrix(g["jacobian_fd"]))
        lines.append("  eigenvalues (exact):")
        lines.append(_eig(g["eigenvalues"]))
        lines.append("  eigenvalues (finite differences):")
        lines.append(_eig(g["eigenvalues_fd"]))
        lines.append(f"  convergence (all tolerances 4x tighter): fixed point changes by "
                     f"{g['fixed_point_tightening_change']:.1e}, eigenvalues by {g['eigenvalue_tightening_change']:.1e}")
    return "\n".join(lines)


def _figure_path(path: str) -> Path:
    """The --figure path checked (suffix, folder created) before any computation."""
    target = Path(path)
    if target.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise UserError(f"--figure: {path}; expected a .png, .pdf or .svg path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--figure: {path}: cannot create its folder ({exc.strerror}); "
                        "expected a writable path") from None
    return target


def run(args: argparse.Namespace) -> int:
    from codesign.analysis import returnmap

    figure_path = _figure_path(args.figure) if args.figure else None
    model, section, starts, tol = _setup(args.model, args.slope, args.guess, args.warmup, args.rtol)
    gaits = _gaits(args.model, model, section, starts, tol, args.warmup)
    out = returnmap.gaits_to_json(model, section, gaits, tol)
    if args.figure:
        from codesign.analysis.figure import limit_cycle_figure

        save_figure_atomic(limit_cycle_figure(model, section, gaits, tol), figure_path, dpi=130)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(format_report(out))
        if args.figure:
            print(f"\nfigure: {args.figure}")
    return 0
