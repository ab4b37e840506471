"""Build ``results/<run>/report/``: figures (PNG), ``index.html``, ``summary.md``,
``top_solutions.csv`` — from the run database alone (plus the topology catalog for the
co-design heatmap layout), so it also works on a run still in progress.

The folder is written under a temporary name and renamed into place at the end: a reader
never sees a half-written report, and a failed build leaves the previous one untouched.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import pandas as pd
from matplotlib.figure import Figure

from codesign.errors import UserError
from codesign.io import writable_folder
from codesign.report import designs, mass_buys
from codesign.report.flow import flow_figure, particle_flow
from codesign.report.grid import SubspaceGrid, grid_from_catalog, grid_from_groups
from codesign.report.heatmap import (pass_rate_heatmap, phase_heatmaps, visit_counts,
                                     visit_heatmap)
from codesign.report.html import Section, render_page
from codesign.report.migration import migration_figure, observed_migration_rate
from codesign.objectives import describe_fitness, ranked, stage_label, stage_objective
from codesign.report.progress import first_satisfied, progress_figure, progress_table
from codesign.report.rundata import (RunData, load_run, load_run_catalog, searches_catalog,
                                     run_catalog_path)
from codesign.report.robustness import DEFAULT_CHECKS, with_robustness
from codesign.report.table import (PARTS, eval_id, flag_legend, format_table, page_tables, to_markdown,
                                   top_solutions)

DPI = 110


@dataclass
class Layout:
    """How subspaces are shown: the heatmap grid, the unit of the flow figure (subspace
    or topology), a description of a subspace for tables, and the topology catalog of a
    co-design run (None otherwise)."""

    grid: SubspaceGrid
    flow_key: Callable[[int], object]
    flow_label: Callable[[object], str]
    describe: Callable[[int], dict[str, str]]
    catalog: object | None = None
    catalog_path: Path | None = None
    notes: list[str] = field(default_factory=list)


def layout_for(data: RunData, catalog_path: Path | None = None) -> Layout:
    """Co-design runs: topology x actuator-pair grid from the catalog, flow per
    topology. Other problems (or no catalog): the generic pool/group grid, flow per
    subspace (per grid column when there are more than 12 subspaces)."""
    notes = []
    if searches_catalog(data.spec):
        try:
            path = run_catalog_path(data, catalog_path)
            return _catalog_layout(load_run_catalog(data, path), path)
        except UserError as exc:
            notes.append(f"Topology catalog unavailable ({exc}); generic layout used.")
    groups = data.subspace_groups
    grid = grid_from_groups(groups)

    def describe(s: int) -> dict[str, str]:
        return {"groups": ", ".join(f"{p}={g}" for p, g in groups.get(s, {}).items())}

    if len(groups) <= 12:
        return Layout(grid, flow_key=lambda s: s, describe=describe, notes=notes,
                      flow_label=lambda s: f"subspace {s}: {describe(s)['groups']}")
    return Layout(grid, flow_key=grid.column_of, describe=describe, notes=notes,
                  flow_label=lambda c: f"{grid.column_title} = {grid.column_labels[c]}")


def _catalog_layout(catalog, path: Path) -> Layout:
    subspaces = {sid: (tid, pair) for sid, tid, pair in catalog.subspaces()}
    return Layout(grid_from_catalog(catalog), flow_key=lambda s: subspaces[s][0],
                  flow_label=lambda t: f"topology {t}",
                  describe=lambda s: {"topology": str(subspaces[s][0]),
                                      "actuators": "-".join(map(str, subspaces[s][1]))},
                  catalog=catalog, catalog_path=path)


def _save(fig: Figure, folder: Path, name: str) -> str:
    fig.savefig(folder / name, dpi=DPI)
    return name


def _objectives(data: RunData) -> tuple:
    """The run's objectives: its spec's, else its problem's (none if the problem is unknown)."""
    objectives = data.spec.objectives
    if not objectives:
        try:
            from codesign.run.driver import resolve_problem
            objectives = resolve_problem(data.spec).objectives
        except UserError:
            objectives = ()
    return tuple(objectives)


def _stage_names(data: RunData) -> list[str]:
    return [o.metric for o in _objectives(data)]


def _unit(data: RunData):
    """The run's problem's ``metric_unit`` (None for a problem this version does not know)."""
    from codesign.problems import get_problem

    try:
        return get_problem(data.spec.problem).metric_unit
    except KeyError:
        return None


class Best(NamedTuple):
    """What the report says of the run's best, for the command's last lines: ``line`` (its
    evaluation id and verdict, or its stage in words for a problem that does not walk;
    "no successful evaluation yet" without one) and ``design`` (the design file written in
    the report folder; None for a problem without walking designs)."""

    line: str
    design: Path | None


def render(data: RunData, folder: Path, *, top: int = 5, catalog_path: Path | None = None,
           gait: bool = True, robustness: int = 1, checks: tuple[str, ...] = DEFAULT_CHECKS) -> list[Section]:
    """Write every figure and table of the report into ``folder``; returns the sections
    of the page (``index.html`` and ``summary.md`` are written by :func:`build_report`):
    first the best design (its verdict, design file, figures and loads), then the top
    solutions, the progress and the search's figures (visits, flow, migration)."""
    layout = layout_for(data, catalog_path)
    lead = _lead(data, layout, folder)
    if data.evaluations.empty:
        lead.notes.append("No iteration is complete yet: nothing to show.")
        return [lead]
    best_subspace = int(ranked(data.evaluations).iloc[0]["subspace_id"])
    one_per = "subspace_id" if len(data.subspace_groups) > 1 else "particle"
    best_table = top_solutions(data.evaluations, data.metrics_of, n=top, describe=layout.describe,
                               one_per=one_per, walks=walks_column(data), objectives=_objectives(data),
                               unit=_unit(data))
    best_table = with_robustness(best_table, str(data.database), data.spec.problem, robustness, checks)
    by_topology = top_solutions(data.evaluations, data.metrics_of, n=len(data.evaluations),
                                describe=layout.describe, per_topology=True,
                                walks=walks_column(data), objectives=_objectives(data),
                                unit=_unit(data))
    figures, notes = designs.best_design_figures(data, best_table, folder, layout.catalog,
                                                 layout.catalog_path, gait=gait)
    ranking = [f for f in figures if f[0] in TOP_FIGURES]
    lead.figures += sorted((f for f in figures if f[0] not in TOP_FIGURES),
                           key=lambda f: LEAD_FIGURES.index(f[0]) if f[0] in LEAD_FIGURES else len(LEAD_FIGURES))
    lead.notes += notes
    lead.tables += _best_loads(best_table)
    mass = _mass_buys(data, folder)
    return [lead, _solutions(best_table, by_topology, one_per, folder, ranking), *([mass] if mass else []),
            _progress(data, folder), _visits(data, layout, best_subspace, folder), _flow(data, layout, folder),
            _migration(data, folder)]


def _reports(data: RunData, *metrics: str) -> bool:
    """Whether the run's problem reports every one of ``metrics``."""
    from codesign.problems import get_problem

    try:
        reported = get_problem(data.spec.problem).metrics
    except (UserError, KeyError):
        return False
    return all(metric in reported for metric in metrics)


def _mass_buys(data: RunData, folder: Path, reduction: str = mass_buys.REDUCTION) -> Section | None:
    """What mass buys (:mod:`codesign.report.mass_buys`): ``reduction`` against the device
    mass over the run's evaluations that walk, the front and the break-even mass;
    ``mass_buys.png`` and ``mass_buys.csv``. None where the run's problem does not report
    ``reduction`` and ``added_mass``."""
    verdict = _run_verdict(data)
    if verdict is None or not _reports(data, reduction, mass_buys.MASS):
        return None
    section = Section("mass", "What mass buys: effort reduction against device mass")
    ok = data.evaluations[data.evaluations["status"] == "ok"]
    metrics = data.metrics_of(list(zip(ok["iteration"], ok["particle"])))
    walks = [verdict(row.dropna().to_dict(), _message(ev)).walks
             for (_, row), (_, ev) in zip(metrics.iterrows(), ok.iterrows())]
    metrics = metrics.assign(eval=[eval_id(i, p) for i, p in metrics.index])
    points = mass_buys.mass_points(metrics, walks, reduction)
    fit = mass_buys.front_break_even(points)
    section.paragraphs.append(
        f"Each design that walks (the walking verdict of its stored metrics; {len(points)} of "
        f"{len(data.evaluations)} evaluations), its `{reduction}` (in %, positive = less effort) against "
        f"its device mass `{mass_buys.MASS}` (kg); the front: the designs no lighter design beats on the "
        f"reduction ({int(points['front'].sum())}). {fit.text(reduction)[0].upper()}{fit.text(reduction)[1:]}. "
        "The front is this search's, only as good as what it explored; the line assumes the reduction "
        "varies linearly with mass along it (docs/reports.md).")
    if len(points) == 0:
        section.notes.append("No evaluated design walks with both metrics: nothing to draw.")
        return section
    points.to_csv(folder / "mass_buys.csv", index=False)
    section.figures.append((_save(mass_buys.mass_figure(points, fit, reduction), folder, "mass_buys.png"),
                            "Reduction against device mass: every design that walks (grey), the "
                            "non-dominated front (black), its linear fit (dashed) and the break-even "
                            "mass where the fit reaches zero (red, +- one standard error shaded)."))
    front = points[points["front"]]
    section.tables.append(pd.DataFrame({"eval": front["eval"], "device mass [kg]": front["mass [kg]"].map("{:.2f}".format),
                                        f"{reduction} [%]": front["reduction [%]"].map("{:+.1f}".format)}
                                       ).astype(str).reset_index(drop=True))
    section.tables[-1].attrs["caption"] = "The front: less mass, more reduction"
    section.links.append(("mass_buys.csv", "every design that walks: mass, reduction, on the front (CSV)"))
    return section


# figures of the best designs shown with the top table (the others are of the best design itself)
TOP_FIGURES = ("morphologies.png",)
# the best design's figures in reading order: its walk first, then its loads, then the rest
LEAD_FIGURES = ("gait_snapshots.png", "gait.gif", "actuators.png", "gait_angles.png", "best_poses.png")
# the parts of the top table's first row shown with the best design: its gait and its loads
LEAD_PARTS = ("gait", "loads", "effort")


def _best_loads(best_table: pd.DataFrame) -> list[pd.DataFrame]:
    """The best design's row of the top table, its gait, loads and effort parts, each
    captioned "The best design: ..." (a caption of its own, not the top table's)."""
    wanted = {PARTS[name] for name in LEAD_PARTS}
    parts = [part for part in page_tables(format_table(best_table.head(1))) if part.attrs["caption"] in wanted]
    for part in parts:
        part.attrs["caption"] = "The best design: " + part.attrs["caption"][0].lower() + part.attrs["caption"][1:]
    return parts


def _lead(data: RunData, layout: Layout, folder: Path) -> Section:
    """The first section: whether the best design walks (its verdict), the run in one
    line, the best in words, its design file; the best's figures and loads join it in
    :func:`render`."""
    ev = data.evaluations
    done, total = len(data.iterations), int(data.run.get("iterations_total", 0) or 0)
    section = Section("best", "Best design", notes=list(layout.notes))
    section.paragraphs.append(
        f"Run {data.name} (problem {data.spec.problem}, status {data.run['status']}): "
        f"{done} of {total} iterations, {len(ev)} evaluations, "
        f"{int((ev['status'] != 'ok').sum()) if len(ev) else 0} failed.")
    parent = data.run.get("parent_run_id")
    if pd.notna(parent) and parent:
        section.paragraphs.append(f"Parent run: {parent} (this run's spec was made by "
                                  "`codesign freeze`).")
    if done < total:
        section.notes.append(f"The run is not finished ({data.run['status']}): this report "
                             f"shows the {done} iterations committed so far.")
    if ev.empty:
        return section
    best = ranked(ev).iloc[0]
    verdict = best_verdict(data, best)
    if verdict is not None:                 # the first thing a reader sees
        section.paragraphs.insert(0, f"Best design: {verdict.text}.")
    if best["status"] == "ok":
        sid = int(best["subspace_id"])
        where = ", ".join(f"{k} {v}" for k, v in layout.describe(sid).items())
        objectives = _objectives(data)
        section.paragraphs.append(
            f"Best so far: evaluation {eval_id(best['iteration'], best['particle'])} in "
            f"subspace {sid} ({where}): "
            f"{describe_fitness(int(best['stage']), float(best['stage_value']), objectives, _unit(data))}.")
        if objectives:
            metric = stage_objective(int(best["stage"]), float(best["stage_value"]), objectives)[0].metric
            defined = _definition(metric)
            if defined:
                section.paragraphs.append(f"`{metric}`: {defined}.")
        design, note = designs.write_best_design(data, best, folder)
        if design is not None:
            section.paragraphs.append(f"Design file: `{design}`, beside this page (the run's settings "
                                      f"included; replay it with `codesign simulate REPORT/{design}`).")
            section.links.append((design, "the best design (JSON)"))
        if note:
            section.notes.append(note)
    else:
        section.notes.append("No successful evaluation yet.")
    return section


def _definition(metric: str) -> str | None:
    """A metric's one-line definition (the walking problems' and WALK's registries)."""
    from codesign.problems.walking import metric_definition

    return metric_definition(metric)


def best_of(data: RunData, folder: Path) -> Best:
    """:class:`Best` of a rendered report in ``folder``."""
    ev = data.evaluations
    if ev.empty or ranked(ev).iloc[0]["status"] != "ok":
        return Best("best: no successful evaluation yet", None)
    best = ranked(ev).iloc[0]
    verdict = best_verdict(data, best)
    said = verdict.text if verdict is not None else describe_fitness(
        int(best["stage"]), float(best["stage_value"]), _objectives(data), _unit(data))
    design = folder / designs.BEST_DESIGN
    return Best(f"best (evaluation {eval_id(best['iteration'], best['particle'])}): {said}",
                design if design.is_file() else None)


def walks_column(data: RunData) -> Callable[[dict], str] | None:
    """The top table's "walks" cell of a walking run ("yes", or "no:" and what fails: the
    walking verdict of a stored evaluation's metrics); None for other problems."""
    verdict = _run_verdict(data)
    return None if verdict is None else (lambda metrics, stop="": verdict(metrics, stop).short)


def best_verdict(data: RunData, best: pd.Series):
    """The walking verdict of the run's best evaluation from its stored metrics, for a
    walking problem whose settings still parse; else None."""
    verdict = _run_verdict(data)
    if best["status"] != "ok" or verdict is None:
        return None
    return verdict(data.metrics_of([(best["iteration"], best["particle"])]).iloc[0].to_dict(), _message(best))


def _message(row: pd.Series) -> str:
    """A stored evaluation's message ("" for none): what ended its walk early."""
    message = row.get("message", "")
    return "" if pd.isna(message) else str(message)


def _run_verdict(data: RunData):
    """:func:`codesign.problems.verdict.run_verdict` of the run's problem and settings."""
    from codesign.problems import get_problem
    from codesign.problems.verdict import run_verdict

    return run_verdict(get_problem(data.spec.problem), data.spec.evaluation)


def _visits(data: RunData, layout: Layout, best_subspace: int, folder: Path) -> Section:
    ev = data.evaluations
    section = Section("visits", "Subspace visits (thesis Fig. 5.10)")
    fig = visit_heatmap(layout.grid, visit_counts(ev), best_subspace=best_subspace)
    section.figures.append((_save(fig, folder, "visits.png"),
                            "Evaluations per subspace (log colour scale); grey hatched: no "
                            "such subspace, \u00d7: never visited, outlined \u2605: subspace "
                            "of the best solution."))
    counts = visit_counts(ev)
    pd.DataFrame([{"subspace": sid, **layout.describe(sid), "evaluations": int(counts.get(sid, 0))}
                  for sid in sorted(data.subspace_groups)]).to_csv(folder / "visits.csv",
                                                                   index=False)
    section.links.append(("visits.csv", "evaluations per subspace (CSV)"))
    if data.spec.unserved:
        dropped = pd.DataFrame([{"topology": u.topology, "actuators": "-".join(map(str, u.actuators)),
                                 "reason": u.reason} for u in data.spec.unserved])
        dropped.to_csv(folder / "dropped_subspaces.csv", index=False)
        reasons = dropped["reason"].value_counts()
        section.notes.append(f"{len(dropped)} subspaces left out of the search by the load screening "
                             "(space.drop_unserved: no catalog drivetrain carries their loads along the "
                             "reference gait), marked unvisited; most often: "
                             + "; ".join(f"{reason} ({count})" for reason, count in reasons.head(3).items()))
        section.links.append(("dropped_subspaces.csv", "the subspaces the load screening dropped, with "
                                                       "their reasons (CSV)"))
    if ev["iteration"].nunique() >= 3:
        fig = phase_heatmaps(layout.grid, ev, best_subspace=best_subspace)
        section.figures.append((_save(fig, folder, "visits_phases.png"),
                                "The same per third of the iterations run so far."))
    screened = designs.screening_counts(data)
    if screened is None:
        section.notes.append("No screening results for this run (results/screen/pass_rates.csv "
                             "of `codesign screen`, co-design runs): no pass-rate heatmap.")
    else:
        passed, tested, source = screened
        fig = pass_rate_heatmap(layout.grid, passed, tested)
        section.figures.append((_save(fig, folder, "screen_pass_rate.png"),
                                f"Fraction of screened morphologies that passed ({source})."))
    return section


def _flow(data: RunData, layout: Layout, folder: Path) -> Section:
    section = Section("flow", "Particle flow (thesis Fig. 3.7)")
    ev = data.evaluations
    if ev["iteration"].nunique() < 2 or len(data.subspace_groups) < 2:
        section.notes.append("One subspace or one iteration only: no flow between subspaces.")
        return section
    fig = flow_figure(particle_flow(ev, layout.flow_key), label=layout.flow_label)
    section.figures.append((_save(fig, folder, "flow.png"),
                            "Particles in each subspace per iteration (black), with in-flow "
                            "(green, up) and out-flow (orange, down)."))
    return section


def _migration(data: RunData, folder: Path) -> Section:
    section = Section("migration", "Migration probabilities (thesis Fig. 5.8)")
    if len(data.subspace_groups) < 2 or data.spec.algorithm != "mmpso":
        section.notes.append("A single subspace: no migration.")
        return section
    m, ev = data.spec.migration, data.evaluations
    observed = observed_migration_rate(ev) if ev["iteration"].nunique() > 1 else None
    fig = migration_figure(data.spec.pso.iterations, {"P_e": m.exploration.value,
                                                      "P_l": m.local.value,
                                                      "P_g": m.global_.value}, observed)
    section.figures.append((_save(fig, folder, "migration.png"),
                            "P_e, P_l, P_g of the spec over the whole run (eq. 3.6), and the "
                            "fraction of particles that actually changed subspace."))
    return section


def _progress(data: RunData, folder: Path) -> Section:
    section = Section("progress", "Progress of the search")
    table = progress_table(data.evaluations)
    first = first_satisfied(data.evaluations)
    names = _stage_names(data)
    section.figures.append((_save(progress_figure(table, first, names), folder,
                                  "progress.png"),
                            "Best-so-far and median stage k (1-based, as every table and `simulate` "
                            "count: optimizing objective k, the k - 1 conditions before it met; 0: "
                            "failed), and the value of the current stage, against the iteration."))
    objectives = _objectives(data)
    conditions = [o for o in objectives[:-1] if o.until is not None]
    if conditions:
        section.paragraphs.append(
            "Stage k of n: a design optimizes objective k once the k - 1 conditions before it hold. "
            "Each row: an objective's condition (with its unit), what its metric is, and the iteration "
            "at which some design first met it -- and so reached the next stage.")
        unit = _unit(data)
        section.tables.append(pd.DataFrame([
            {"stage": stage_label(k - 1, objectives).removeprefix("stage "),
             "condition": _condition(objectives[k - 1], unit),
             "its metric": _definition(objectives[k - 1].metric) or "",
             "first met at iteration": first.get(k, "not yet")}
            for k in range(1, len(objectives))]).astype(str))
        last = objectives[-1]
        section.paragraphs.append(
            f"Stage {len(objectives)} of {len(objectives)}, once every condition holds: "
            f"{last.sense} `{last.metric}`" + (f" ({_definition(last.metric)})" if _definition(last.metric) else "")
            + ".")
    else:
        section.paragraphs.append("A single objective: no lexicographic stages to satisfy.")
    ev = data.evaluations
    failed = ev[ev["status"] != "ok"]
    if len(failed):
        reasons = failed["message"].fillna("").str.slice(0, 120).value_counts().head(5)
        section.paragraphs.append("Most common failure messages:")
        section.tables.append(pd.DataFrame({"message": reasons.index,
                                            "evaluations": reasons.to_numpy()}).astype(str))
    table.to_csv(folder / "progress.csv")
    section.links.append(("progress.csv", "progress per iteration (CSV; stages 1-based, 0: failed)"))
    return section


def _condition(objective, unit) -> str:
    """An objective's condition with its metric's unit: "cuff_force_peak <= 700 N",
    "foot_slip_fraction <= 0.05 (dimensionless)"."""
    said = unit(objective.metric) if unit else None
    shown = {None: " (unit unknown)", "": "", "?": " (unit unknown)", "-": " (dimensionless)"}.get(said, f" {said}")
    return f"{objective.metric} {objective.condition()}{shown}"


def _solutions(best_table: pd.DataFrame, by_topology: pd.DataFrame, one_per: str, folder: Path,
               figures: list[tuple[str, str]]) -> Section:
    best_table.to_csv(folder / "top_solutions.csv", index=False)
    which = ("Best evaluation of each of the best subspaces." if one_per == "subspace_id" else
             "The run searched one subspace: the best evaluation of each of the best particles.")
    paragraphs = [which + " `eval` (ITERATION:PARTICLE) is what `codesign freeze --solution` "
                  "takes; `stage` reads \"k of n: metric\", the objective a design is optimizing "
                  "(its k - 1 conditions before it met), and `stage value` is that metric's value. "
                  "The table comes in parts, each row by its rank. The h/2 and soft columns "
                  "re-evaluate a design at half the time step and with soft contacts, the mass "
                  "x0.9 and x1.1 columns on a wearer 10 % lighter and heavier "
                  "(`--robustness N`: the best N; `--robustness-checks`): a gait that only one "
                  "contact model or one body allows falls, slows or slides there. Effort reductions: in %, positive = less effort "
                  "with the device than without."]
    formatted = format_table(best_table)
    legend = flag_legend(best_table)
    if legend:
        paragraphs.append(legend)
    tables, links = page_tables(formatted), [("top_solutions.csv", "the table as CSV (SI units)")]
    if "topology" in by_topology and len(by_topology) > 1:
        by_topology.to_csv(folder / "best_per_topology.csv", index=False)
        paragraphs.append("Below, the best evaluation of each topology the search visited: which "
                          "linkages carry the gait (the transmission peak is the largest entry of "
                          "G = d(hip, knee) / d(actuated angles) over the walk, 1 for a "
                          "parallelogram; torque asked / delivered > 1: the actuators clip the law).")
        for part in page_tables(format_table(by_topology)):
            part.attrs["caption"] = "Best of each topology: " + part.attrs["caption"][0].lower() + \
                part.attrs["caption"][1:]
            tables.append(part)
        links.append(("best_per_topology.csv", "the best of each topology as CSV (SI units)"))
    return Section("solutions", "Top solutions (thesis Table 5.4)", paragraphs=paragraphs,
                   tables=tables, links=links, figures=list(figures), tables_first=True)


def summary_markdown(data: RunData, sections: list[Section]) -> str:
    """A short Markdown summary: the best design (verdict, the run, its loads), the top
    table and the stage milestones, each heading once."""
    lines = [f"# Report: {data.name}", ""]
    for s in sections:
        if s.anchor == "best":
            lines += [f"> {n}" for n in s.notes] + [""] if s.notes else []
            lines += s.paragraphs + [""]
            for t in s.tables:
                caption = t.attrs.get("caption")
                lines += ([f"**{caption}**", ""] if caption else []) + [to_markdown(t), ""]
        if s.anchor in ("progress", "solutions", "mass"):
            lines += [f"## {s.title}", ""] + s.paragraphs + ([""] if s.paragraphs else [])
            for t in s.tables:
                caption = t.attrs.get("caption")
                lines += ([f"**{caption}**", ""] if caption else []) + [to_markdown(t), ""]
    figures = [p for s in sections for p, _ in s.figures]
    if figures:
        lines += ["## Figures", ""] + [f"- [{p}]({p})" for p in figures] + [""]
    lines.append("Full report: [index.html](index.html)")
    return "\n".join(lines) + "\n"


REPORT_MARKERS = ("index.html", "summary.md")


def _check_replaceable(out: Path) -> None:
    """The report replaces ``out`` as a whole: refuse a file, or a non-empty folder that is
    not an earlier report (``-o results`` would otherwise delete every run in it)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise UserError(f"{out}: is a file; expected a report folder (new or an earlier report)")
    if any(out.iterdir()) and not all((out / name).is_file() for name in REPORT_MARKERS):
        raise UserError(f"{out}: a non-empty folder that is not an earlier report (no "
                        f"{' / '.join(REPORT_MARKERS)}); expected a new folder or an earlier report, since "
                        "the report replaces it whole")


def build_report(run: str | Path, out: str | Path | None = None, *, top: int = 5,
                 catalog_path: Path | None = None, gait: bool = True, robustness: int = 1,
                 checks: tuple[str, ...] = DEFAULT_CHECKS) -> Path:
    """Write the report of RUN into ``out`` (default ``results/<run>/report``); ``gait``:
    re-simulate the best co-design solution for gait snapshots and an animation;
    ``robustness``: re-evaluate the best N designs under ``checks`` (default at half the
    step and with soft contacts; :mod:`codesign.report.robustness`). Returns the report folder."""
    return build(run, out, top=top, catalog_path=catalog_path, gait=gait, robustness=robustness,
                 checks=checks)[0]


def build(run: str | Path, out: str | Path | None = None, *, top: int = 5,
          catalog_path: Path | None = None, gait: bool = True, robustness: int = 1,
          checks: tuple[str, ...] = DEFAULT_CHECKS) -> tuple[Path, Best]:
    """:func:`build_report`, and what it says of the run's best (:class:`Best`, its design
    file's path in the final folder)."""
    data = load_run(run)
    out = Path(out) if out is not None else data.folder / "report"
    _check_replaceable(out)
    writable_folder(out.parent, "-o", given=out)
    staging = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        sections = render(data, staging, top=top, catalog_path=catalog_path, gait=gait,
                          robustness=robustness, checks=checks)
        (staging / "index.html").write_text(render_page(f"Run report: {data.name}", sections),
                                            encoding="utf-8")
        (staging / "summary.md").write_text(summary_markdown(data, sections), encoding="utf-8")
        best = best_of(data, staging)
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        if out.exists():
            os.replace(out, old)
        os.replace(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out, best._replace(design=None if best.design is None else out / best.design.name)


__all__ = ["build_report", "build", "Best", "render", "layout_for", "Layout", "summary_markdown"]
