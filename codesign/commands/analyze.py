"""`codesign analyze walker|gait`: limit cycles of classic walkers and of walking designs.

``codesign analyze walker rimless|simplest|slip`` prints, per period-one gait, the fixed
point on the model's Poincaré section, the stride period, the exact Jacobian
(variational equation + saltation matrices) next to the central finite-difference one,
both sets of eigenvalues (Floquet multipliers) and the stable / unstable verdict.
``--json`` prints the object documented in
:func:`codesign.analysis.returnmap.gaits_to_json` instead (keys ``fixed_points``,
``eigenvalues``, ``eigenvalues_fd``, ``gaits`` ...).

``codesign analyze gait design.json | --human | --run RUN --best|--eval IT:P`` settles a
design's walking rollout and prints the Floquet multipliers of its stroboscopic (gait
period) map (:mod:`codesign.analysis.gait_stability`): the periodicity residual, the
multipliers by decreasing modulus, their accuracy and the verdict. It writes the JSON of
:meth:`codesign.analysis.gait_stability.GaitStability.to_json` plus ``design`` and
``source`` to ``--out`` (default ``results/analysis/gait.json``); ``--json`` prints it
instead of the report. In it ``fixed_point`` is the full state x* (m, rad, m/s, rad/s),
one name per value in ``fixed_point_names``; ``state_names`` names the reduced
coordinates of ``jacobian`` and ``residual_vector``. Designs and a run's candidates are loaded by the loaders of
``codesign simulate`` (:mod:`codesign.commands.simulate`), with the same options.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from codesign.commands.options import add_design_arguments, chosen_design
from codesign.errors import UserError
from codesign.io import save_figure_atomic, write_text_atomic

HELP = ("limit-cycle analysis: classic walkers (exact return-map Jacobians) and walking designs "
        "(Floquet multipliers of the gait-period map)")

MODELS = ("rimless", "simplest", "slip")

# defaults of --eps and --periodic-tol: gait_stability.EPS and PERIODIC_TOL (a test checks
# they agree), written here so that building the parser does not import the analysis
EPS = 1e-6            # central-difference step, SI units (m, rad, m/s, rad/s)
PERIODIC_TOL = 1e-3   # largest periodicity residual of a periodic gait, SI units


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kind", metavar="KIND", parser_class=type(parser))
    sub.required = True
    walker = sub.add_parser("walker", help="classic walkers: fixed points, exact Jacobians, multipliers",
                            description="limit-cycle analysis of classic walkers: fixed points, exact "
                                        "return-map Jacobians, Floquet multipliers")
    _walker_arguments(walker)
    gait = sub.add_parser("gait", help="a walking design: Floquet multipliers of its gait-period map",
                          description="Floquet multipliers of a walking design's stroboscopic "
                                      "(gait-period) map, by central differences of the stepping rollout")
    _gait_arguments(gait)


def _walker_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", choices=MODELS, help="rimless wheel, simplest walker (Garcia 1998) or SLIP runner")
    parser.add_argument("--slope", type=float, default=None,
                        help="ramp slope in rad (rimless: 0.2, simplest: 0.009; not for slip)")
    parser.add_argument("--guess", action="append", default=None, metavar="Z1,Z2,...",
                        help="a starting point on the section (comma-separated, repeatable); default: the model's")
    parser.add_argument("--warmup", type=int, default=0,
                        help="forward strides from each guess before Newton (default %(default)s)")
    parser.add_argument("--rtol", type=float, default=1e-14,
                        help="integration tolerance, rtol = atol (default %(default)g)")
    parser.add_argument("--json", action="store_true", help="print the JSON object instead of the report")
    parser.add_argument("--figure", default=None, metavar="PATH",
                        help="also write the limit-cycle figure (phase plane + multipliers), e.g. "
                             "results/analysis/limit_cycle.png")


def _gait_arguments(parser: argparse.ArgumentParser) -> None:
    add_design_arguments(parser, max_time_help=(
        "seconds of the evaluation (default: max_time of --settings or of the run, else 10): the "
        "design settles for the whole gait periods that fit in it, less the period(s) the map "
        "itself runs; at least one"))
    parser.add_argument("--settle", type=int, default=None, metavar="K",
                        help="settle K >= 0 gait periods instead, x* = x(K T); 0: x* is the initial "
                             "state (default: from --max-time)")
    parser.add_argument("--section-phase", type=float, default=0.0, metavar="F",
                        help="section at F periods after x(K T), F in [0, 1) (default %(default)g)")
    parser.add_argument("--periods", type=int, default=1, metavar="M",
                        help="the map covers M gait periods, a period-M gait (default %(default)s)")
    parser.add_argument("--eps", type=float, default=EPS,
                        help="central-difference step in the reduced coordinates, SI units "
                             "(default %(default)g)")
    parser.add_argument("--periodic-tol", type=float, default=PERIODIC_TOL,
                        help="largest periodicity residual of a periodic gait, SI units "
                             "(default %(default)g)")
    parser.add_argument("--out", default="results/analysis/gait.json",
                        help="JSON output path (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the JSON object instead of the report")


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
    """One indented line per row, full precision (the report compares J with J_fd)."""
    return "\n".join("    " + "  ".join(f"{v: .15e}" for v in row) for row in np.asarray(m))


def _number(v) -> str:
    """A parameter or tolerance for the report: integers as they are, floats to 6
    significant digits (``--json`` keeps full precision)."""
    if isinstance(v, (bool, int, np.integer)):
        return str(v)
    return f"{float(v):.6g}"


def _named(values: dict) -> str:
    """``name = value, ...`` of a dictionary of numbers (no Python repr)."""
    return ", ".join(f"{k} = {_number(v)}" for k, v in values.items())


def _eig(pairs) -> str:
    return "\n".join(f"    {re: .15f} {im:+.15f}i   |lambda| = {math.hypot(re, im):.15f}" for re, im in pairs)


def format_report(out: dict) -> str:
    """The human-readable report of :func:`analyze_walker`'s dictionary."""
    lines = [f"model: {out['model']}  parameters: {_named(out['parameters'])}",
             f"section: post-jump states of guard {out['section_guard']}, coordinates "
             f"{', '.join(out['state_names'])}",
             f"tolerances: {_named(out['tolerances'])}"]
    for i, g in enumerate(out["gaits"], 1):
        lines.append(f"\ngait {i}: {g['verdict'].upper()} (max |lambda| = {g['max_abs_eigenvalue']:.15f}),"
                     f" stride period {g['period_s']:.15g}")
        lines.append("  fixed point: " + ", ".join(f"{n} = {v:.15f}" for n, v in zip(out["state_names"], g["fixed_point"])))
        lines.append("  Jacobian (variational equation + saltation):")
        lines.append(_matrix(g["jacobian"]))
        lines.append(f"  Jacobian (central differences, steps {', '.join(f'{s:.2g}' for s in g['fd_steps'])}),"
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
    if args.kind == "gait":
        return run_gait(args)
    return run_walker(args)


def run_walker(args: argparse.Namespace) -> int:
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


# ----------------------------------------------------------------------------- analyze gait
def gait_candidate(args: argparse.Namespace):
    """The design :func:`codesign.commands.options.chosen_design` picks from the gait
    command's options (the loader of ``codesign simulate``). UserError on a bad
    combination, or a problem whose designs do not walk on WALK's own model."""
    chosen = chosen_design(args)
    if not chosen.problem.walking.own_model:
        raise UserError(f"--run/--problem: problem {chosen.problem.name} evaluates its designs on a "
                        "model of its own, which this analysis does not build; expected a design that "
                        "walks on the human's own model (--human, a design file, or a run of exo_codesign or human_gait)")
    return chosen


def gait_options(args: argparse.Namespace) -> dict:
    """:func:`codesign.analysis.gait_stability.floquet`'s keyword arguments from the gait
    command's options, each checked first: UserError naming the flag (``--settle``,
    ``--periods``, ``--section-phase``, ``--eps``, ``--periodic-tol``)."""
    if args.settle is not None and args.settle < 0:
        raise UserError(f"--settle: {args.settle}; expected a number of gait periods >= 0")
    if args.periods < 1:
        raise UserError(f"--periods: {args.periods}; expected a number of gait periods >= 1")
    if not (math.isfinite(args.section_phase) and 0.0 <= args.section_phase < 1.0):
        raise UserError(f"--section-phase: {args.section_phase:g}; expected a fraction of a period in [0, 1)")
    if not (math.isfinite(args.eps) and 0.0 < args.eps <= 0.1):
        raise UserError(f"--eps: {args.eps:g}; expected a step in (0, 0.1] (SI units)")
    if not (math.isfinite(args.periodic_tol) and args.periodic_tol > 0.0):
        raise UserError(f"--periodic-tol: {args.periodic_tol:g}; expected a tolerance > 0 (SI units)")
    return {"periods_settle": args.settle, "periods": args.periods, "section_phase": args.section_phase,
            "eps": args.eps, "periodic_tol": args.periodic_tol}


def analyze_gait(args: argparse.Namespace) -> dict:
    """The JSON object of ``codesign analyze gait``: GaitStability.to_json plus ``design``,
    ``source`` and ``walking``, the walking verdict of the design's evaluation under the
    same settings (:func:`codesign.problems.verdict.walking_verdict`; null when it fails
    before a rollout): the stability is that of whatever motion the design settles into,
    walking or not."""
    from codesign.analysis import gait_stability as gs
    from codesign.problems.verdict import assists, walking_verdict

    kw = gait_options(args)
    chosen = gait_candidate(args)
    settings = chosen.settings.walk
    try:
        result = gs.floquet(chosen.design, settings, **kw)
    except gs.EvaluationTooShort as exc:
        raise UserError(f"--max-time: {exc.max_time:g} s; {exc.explanation('--settle K')}") from None
    record = chosen.problem.walking.replay(chosen.design, chosen.settings).record
    verdict = (walking_verdict(record.metrics, settings.rollout.max_time, record.message,
                               assists(chosen.problem))._asdict() if record.ok else None)
    return {"source": chosen.source, "design": chosen.design.to_json(), "walking": verdict, **result.to_json()}


def format_gait_report(out: dict) -> str:
    """The human-readable report of :func:`analyze_gait`'s dictionary."""
    lines = [f"design: {out['source']}"]
    if out.get("walking"):
        lines.append(out["walking"]["text"])
    if out["status"] == "not_simulated":
        lines.append(f"NOT SIMULATED: {out['message']}")
        return "\n".join(lines)
    if out["settle_periods"] == 0 and out["t0_s"] == 0.0:
        settled = "not settled: x* is the design's initial state (t = 0 s)"
    else:
        settled = f"settled {out['settle_periods']} period(s) (x* at t = {out['t0_s']:.4f} s)"
    lines.append(f"gait {out['frequency_hz']:.6g} Hz (T = {out['period_s']:.6g} s); map over "
                 f"{out['periods']} period(s) with step h' = {1e3 * out['h_s']:.6g} ms; {settled}")
    if out["status"] == "fell":
        lines.append(f"FELL: {out['message']}")
        return "\n".join(lines)
    loaded = ", ".join(out["loaded_contacts"]) or "none"
    lines.append(f"contacts loaded at x*: {loaded} (sticking: {', '.join(out['sticking_contacts']) or 'none'}); "
                 f"loops: {out['n_loops']}; {len(out['state_names'])} reduced coordinates "
                 f"(dependent: {', '.join(out['dependent_coordinates']) or 'none'})")
    periodic = out["residual"] <= out["periodic_tol"]
    lines.append(f"periodicity residual max |z(P(x*)) - z(x*)| = {out['residual']:.3e} "
                 f"(tolerance {out['periodic_tol']:g}: {'periodic' if periodic else 'NOT PERIODIC'})")
    if out["status"] == "perturbation_fell":
        lines.append(f"NO JACOBIAN: {out['message']}")
        return "\n".join(lines)
    nd = out["newton_distance"]
    lines.append(f"linear distance to the fixed point max |(J - I)^-1 r| = "
                 f"{nd:.3e}" if nd is not None else "linear distance to the fixed point: J - I singular")
    sc = out["step_change"]
    lines.append(f"Floquet multipliers (central differences, eps = {out['eps']:g}; change with 2 eps: "
                 f"{sc:.2e}; chart leak {out['chart_leak']:.2e}; contact steps beyond the solver's tolerance in the "
                 f"period: {out['unconverged_steps']}):" if sc is not None else
                 f"Floquet multipliers (central differences, eps = {out['eps']:g}):")
    for (re, im), mod in zip(out["eigenvalues"], out["moduli"]):
        lines.append(f"    {re: .6f} {im:+.6f}i   |lambda| = {mod:.6f}")
    leak = out.get("chart_leak")
    if sc is not None and leak is not None and leak > out["accuracy_tol"]:
        lines.append(f"warning: chart leak {leak:.2e} > {out['accuracy_tol']:g}: the map leaves the chart of "
                     "the contacts loaded at x* (a contact makes or breaks near the section, where the map is "
                     "not smooth), so these multipliers need not be the gait's; try another --section-phase "
                     "(one in single support)")
    walking = out.get("walking")
    of = ("of a design that walks" if walking and walking["walks"] else
          "of a design that does not walk: the stability of the motion it settles into, not of walking")
    lines.append(f"verdict: {out['verdict'].upper()} (max |lambda| = {out['max_modulus']:.6f}), {of}")
    return "\n".join(lines)


def run_gait(args: argparse.Namespace) -> int:
    out_path = Path(args.out)
    if out_path.suffix.lower() != ".json":
        raise UserError(f"--out: {args.out}; expected a .json path")
    out = analyze_gait(args)
    text = json.dumps(out, indent=1)
    try:
        out_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out: {args.out}: cannot create its folder ({exc.strerror}); "
                        "expected a writable path") from None
    write_text_atomic(out_path, text + "\n")
    if args.json:
        print(text)
    else:
        print(format_gait_report(out))
        print(f"wrote {out_path}")
    return 0
