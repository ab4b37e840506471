"""Top solutions table (thesis Table 5.4).

One row per subspace (its best evaluation), the best subspaces first, so the table shows
different designs rather than the same design found twice; a run of one subspace shows the
best of each particle instead. Columns: the evaluation id (``ITERATION:PARTICLE``, what
``codesign freeze --solution`` takes), topology, actuator pair, the stage ("k of n:
metric", :func:`codesign.objectives.stage_label`) and its metric's value with its unit,
then the physical quantities of Table 5.4 from the evaluation metrics, each taken from the
first metric name present among its candidates (a quantity no evaluation reports is left
out). For display (:func:`format_table`) a value beyond a physical bound is flagged "⚠"
(:data:`TABLE54_COLUMNS`' bounds: the credibility limits of
:data:`codesign.problems.objectives.LIMITS`, and a motor at its torque limit), and
:func:`page_tables` cuts the table into parts that fit a page.
"""

from __future__ import annotations

import fnmatch
from typing import Callable, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from codesign.objectives import Objective, ranked, stage_label, stage_objective, unmet_conditions, with_unit
from codesign.problems.objectives import LIMITS

FLAG = "\u26a0"     # ⚠: a value beyond its column's physical bound


class Column(NamedTuple):
    """One physical quantity of the table: ``heading`` (with its unit), the candidate
    metric names (SI; a candidate with "*" is a pattern whose largest value is shown),
    ``scale`` (SI -> the heading's unit), ``fmt``, ``part`` (which of :func:`page_tables`'
    parts shows it) and ``bound`` (in the heading's unit: a larger value is flagged; None:
    no bound) with ``why`` (what the bound is)."""

    heading: str
    names: tuple[str, ...]
    scale: float
    fmt: str
    part: str
    bound: float | None = None
    why: str = ""


# metrics of MODEL (codesign.model.morphology.mass_report) and WALK (codesign.walking.metrics)
TABLE54_COLUMNS: tuple[Column, ...] = (
    Column("mass [kg]", ("total_mass_kg", "mass_kg"), 1.0, "{:.1f}", "morphology"),
    Column("added mass [kg]", ("added_mass_kg", "added_mass"), 1.0, "{:+.1f}", "morphology"),
    Column("CoM height [m]", ("com_z_m",), 1.0, "{:.3f}", "morphology"),
    Column("CoM shift [m]", ("com_shift_z_m", "com_shift"), 1.0, "{:+.3f}", "morphology"),
    Column("WR link min [m]", ("shortest_link_m", "shortest_segment"), 1.0, "{:.2f}", "morphology"),
    Column("WR link max [m]", ("longest_link_m", "longest_segment"), 1.0, "{:.2f}", "morphology"),
    Column("singular", ("singularity",), 1.0, "{:.0f}", "morphology"),
    Column("speed [m/s]", ("speed",), 1.0, "{:.2f}", "gait"),
    Column("assist time [%]", ("assist_fraction",), 100.0, "{:.1f}", "gait"),
    Column("foot slip [% stance]", ("foot_slip_fraction",), 100.0, "{:.1f}", "gait",
           100.0 * LIMITS["foot_slip_fraction"], "a loaded foot that slides"),
    Column("ground reaction [BW]", ("grf_peak_bw",), 1.0, "{:.2f}", "gait",
           LIMITS["grf_peak_bw"], "a heel strike no person walks with"),
    Column("knee hyperextension [deg]", ("knee_hyperextension_peak_deg",), 1.0, "{:.1f}", "gait",
           LIMITS["knee_hyperextension_peak_deg"], "beyond the knee's passive range"),
    Column("power [W]", ("power", "power_w"), 1.0, "{:.0f}", "gait"),
    Column("electrical power [W]", ("power_electrical",), 1.0, "{:.0f}", "loads"),
    Column("actuator torque / limit", ("actuator_torque_ratio_peak",), 1.0, "{:.2f}", "loads",
           0.995, "a motor at its torque limit (saturated)"),
    Column("actuator speed / limit", ("actuator_speed_ratio_peak",), 1.0, "{:.2f}", "loads",
           LIMITS["actuator_speed_ratio_peak"], "a motor beyond its maximum speed"),
    Column("thermal ratio", ("actuator_thermal_ratio",), 1.0, "{:.2f}", "loads",
           LIMITS["actuator_thermal_ratio"], "a motor's RMS torque beyond its continuous rating: it overheats"),
    Column("torque asked / delivered", ("actuator_demand_ratio",), 1.0, "{:.2f}", "loads"),
    Column("transmission peak", ("transmission_peak",), 1.0, "{:.2f}", "loads"),
    Column("torque [N m]", ("torque_rms", "torque_nm"), 1.0, "{:.0f}", "loads"),
    Column("cuff force [N]", ("cuff_force_peak",), 1.0, "{:.0f}", "loads",
           LIMITS["cuff_force_peak"], "beyond what a person tolerates at a cuff"),
    Column("interaction force [BW]", ("interaction_force_peak_bw",), 1.0, "{:.2f}", "loads",
           LIMITS["interaction_force_peak_bw"], "beyond the in-vivo hip and knee joint forces"),
    # --- an active wearer's effort (issue 32; problem exo_assist): the reduction of its
    # metabolic proxy against the same wearer unassisted, in all and per joint
    Column("effort reduction [%]", ("effort_reduction",), 100.0, "{:+.1f}", "effort"),
    *(Column(f"{joint} effort reduction [%]", (f"effort_reduction_{joint}",), 100.0, "{:+.1f}", "effort")
      for joint in ("hip", "knee", "ankle")),
    Column("speed change [%]", ("speed_change",), 100.0, "{:+.1f}", "effort"),
    Column("wearer proxy [J/(kg m)]", ("wearer_metabolic",), 1.0, "{:.2f}", "effort"),
    # a wearer that adapted to the device (problem exo_assist_wearer): against its own law alone
    Column("against the adapted law alone [%]", ("effort_reduction_own",), 100.0, "{:+.1f}", "effort"),
    Column("the device's share [%]", ("effort_reduction_device",), 100.0, "{:+.1f}", "effort"),
)
PARTS = {"design": "Which design, and how far it got",
         "morphology": "Morphology and mass",
         "gait": "Gait (second half of the walk)",
         "loads": "Actuators and the wearer's loads",
         "effort": "The active wearer's effort with the device against without (metabolic proxy)",
         "robustness": "The same design re-evaluated (robustness)"}
DESIGN_COLUMNS = ("rank", "eval", "subspace", "topology", "actuators", "status", "walks", "stage",
                  "stage value", "conditions not met")


def _metric(have: pd.Series, names: tuple[str, ...]) -> float:
    """The first candidate present (a pattern: the largest matching value), else NaN."""
    for name in names:
        if "*" in name:
            hits = [have[k] for k in have.index if fnmatch.fnmatchcase(k, name) and pd.notna(have[k])]
            if hits:
                return float(max(hits))
        elif name in have.index and pd.notna(have[name]):
            return float(have[name])
    return np.nan


def eval_id(iteration: int, particle: int) -> str:
    """The id of one evaluation within a run: ``"ITERATION:PARTICLE"``."""
    return f"{int(iteration)}:{int(particle)}"


def top_solutions(evaluations: pd.DataFrame, metrics_of: Callable[[list], pd.DataFrame], *,
                  n: int = 5,
                  describe: Callable[[int], Mapping[str, str]] | None = None,
                  one_per: str | None = "subspace_id",
                  per_topology: bool = False,
                  walks: Callable[[Mapping[str, float], str], str] | None = None,
                  objectives: Sequence[Objective] = (),
                  unit: Callable[[str], str | None] | None = None) -> pd.DataFrame:
    """The ``n`` best evaluations (one per distinct value of the column ``one_per`` of
    ``evaluations`` -- "subspace_id" by default, "particle" for a run of one subspace --
    or, when ``per_topology``, one per topology, ``describe``'s "topology"), best first.

    evaluations: DESIGN §5 columns; metrics_of(keys): wide frame of the metrics of the
    evaluations keys [(iteration, particle), ...], one column per metric name
    (:meth:`codesign.report.rundata.RunData.metrics_of`). describe(subspace id) gives
    descriptive columns (e.g. {"topology": "2", "actuators": "1-4"}); walks(metrics, message) the
    "walks" column (a walking problem's verdict in a few words; the stored message tells a
    fall from another early stop); ``objectives`` the run's:
    "stage" reads "k of n: metric", "stage value" that metric's own value with its unit
    (``unit(metric)``), and the conditions an evaluation does not meet fill "conditions
    not met" (all of them, not only the first: a wearer force of 146 BW shows even when
    the design stops at an earlier stage). Returns a frame with the physical quantities as
    raw numbers (SI, scaled to their headings' units).
    """
    best = ranked(evaluations)
    if per_topology and describe is not None:
        topology = best["subspace_id"].map(lambda sid: describe(int(sid)).get("topology"))
        best = best[~topology.duplicated(keep="first")]
    elif one_per is not None:
        best = best.drop_duplicates(one_per, keep="first")
    best = best.head(n)
    metrics = metrics_of(list(zip(best["iteration"], best["particle"])))
    rows = []
    for rank, (_, ev) in enumerate(best.iterrows(), start=1):
        row = {"rank": rank, "eval": eval_id(ev["iteration"], ev["particle"]),
               "subspace": int(ev["subspace_id"])}
        if describe is not None:
            row.update(describe(int(ev["subspace_id"])))
        row["status"] = ev["status"]
        row.update(_stage_cells(ev, objectives, unit))
        key = (int(ev["iteration"]), int(ev["particle"]))
        have = metrics.loc[key] if key in metrics.index else pd.Series(dtype=float)
        if walks is not None:
            stop = "" if pd.isna(ev.get("message", "")) else str(ev.get("message", ""))   # what ended a walk
            row["walks"] = walks(have.dropna().to_dict(), stop) if ev["status"] == "ok" else "-"
        if objectives and ev["status"] == "ok":
            row["conditions not met"] = "; ".join(
                unmet_conditions(have.dropna().to_dict(), objectives, unit)) or "none"
        for column in TABLE54_COLUMNS:
            row[column.heading] = _metric(have, column.names) * column.scale
        rows.append(row)
    table = pd.DataFrame(rows)
    absent = [c.heading for c in TABLE54_COLUMNS if c.heading in table and not table[c.heading].notna().any()]
    return table.drop(columns=absent)


def _stage_cells(ev: pd.Series, objectives: Sequence[Objective],
                 unit: Callable[[str], str | None] | None) -> dict[str, str]:
    """The "stage" ("k of n: metric") and "stage value" (the metric's own value, a
    maximized one's sign restored, with its unit) of one stored evaluation; without
    objectives the stored pair; "-" for a failed one."""
    if ev["status"] != "ok" or not np.isfinite(ev["stage_value"]):
        return {"stage": "-", "stage value": "-"}
    if not objectives:
        return {"stage": str(int(ev["stage"])), "stage value": f"{float(ev['stage_value']):.4g}"}
    label = stage_label(int(ev["stage"]), objectives).removeprefix("stage ")
    objective, value = stage_objective(int(ev["stage"]), float(ev["stage_value"]), objectives)
    return {"stage": label, "stage value": with_unit(value, unit(objective.metric) if unit else None, 4)}


def format_table(table: pd.DataFrame) -> pd.DataFrame:
    """The same table as strings for display (units in the headings), a value beyond its
    column's bound flagged "⚠"."""
    columns = {c.heading: c for c in TABLE54_COLUMNS}
    out = table.copy()
    for col in out.columns:
        if col in columns:
            c = columns[col]
            out[col] = [("" if not pd.notna(v) else
                         (FLAG + " " if c.bound is not None and v > c.bound else "") + c.fmt.format(v))
                        for v in out[col]]
        elif col.endswith(("speed [m/s]", "slip [% stance]", "walked [s]")):    # robustness
            out[col] = [f"{v:.2f}" if np.isfinite(v) else "" for v in out[col]]
    return out.astype(str)


def metric_bounds() -> dict[str, tuple[float, str]]:
    """Metric name -> (its bound in the metric's own SI unit, what a larger value means):
    the bounds of :data:`TABLE54_COLUMNS` (a value above is flagged "⚠"), for outputs that
    show metrics by name (``codesign compare``)."""
    return {c.names[0]: (c.bound / c.scale, c.why) for c in TABLE54_COLUMNS if c.bound is not None}


def flag_legend(table: pd.DataFrame) -> str:
    """What a "⚠" means in the columns of ``table`` that have a bound, in words."""
    bounded = [c for c in TABLE54_COLUMNS if c.bound is not None and c.heading in table]
    return (f"{FLAG}: beyond a physical bound -- " + "; ".join(
        f"{c.heading} > {c.bound:g} ({c.why})" for c in bounded) + ".") if bounded else ""


def page_tables(table: pd.DataFrame) -> list[pd.DataFrame]:
    """``table`` (formatted) cut into parts narrow enough for a page, each led by the rank
    and the evaluation id and captioned (``attrs["caption"]``): which design and how far
    it got, morphology, gait, loads, and any other columns (the re-evaluations)."""
    part_of = {c.heading: c.part for c in TABLE54_COLUMNS}
    part_of.update({h: "design" for h in DESIGN_COLUMNS})
    parts: dict[str, list[str]] = {}
    for col in table.columns:
        parts.setdefault(part_of.get(col, "robustness"), []).append(col)
    out = []
    for name, title in PARTS.items():
        cols = [c for c in parts.get(name, []) if c not in ("rank", "eval")]
        if not cols:
            continue
        lead = [c for c in ("rank", "eval") if c in table]
        part = table[lead + cols].copy()
        part.attrs["caption"] = title
        out.append(part)
    return out


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no tabulate dependency)."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(False)]
    return "\n".join(lines)
