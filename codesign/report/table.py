"""Top solutions table (thesis Table 5.4).

One row per subspace (its best evaluation), the best subspaces first, so the table shows
different designs rather than the same design found twice. Columns: the evaluation id
(``ITERATION:PARTICLE``, what ``codesign freeze --solution`` takes), topology, actuator
pair, stage and stage value, then the physical quantities of Table 5.4 from the evaluation
metrics, each taken from the first metric name present among its candidates (a quantity no
evaluation reports is left out).
"""

from __future__ import annotations

import fnmatch
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from codesign.objectives import Objective, ranked, unmet_conditions

# (column heading, candidate metric names, scale, format); metrics are SI (codesign.types).
# Names of MODEL (codesign.model.morphology.mass_report) and WALK (codesign.walking.metrics);
# a candidate with "*" is a pattern whose largest value is shown (e.g. the peak interaction
# force over the human hip and knee sites).
TABLE54_COLUMNS: tuple[tuple[str, tuple[str, ...], float, str], ...] = (
    ("mass [kg]", ("total_mass_kg", "mass_kg"), 1.0, "{:.1f}"),
    ("added mass [kg]", ("added_mass_kg", "added_mass"), 1.0, "{:+.1f}"),
    ("CoM height [m]", ("com_z_m",), 1.0, "{:.3f}"),
    ("CoM shift [m]", ("com_shift_z_m", "com_shift"), 1.0, "{:+.3f}"),
    ("WR link min [m]", ("shortest_link_m", "shortest_segment"), 1.0, "{:.2f}"),
    ("WR link max [m]", ("longest_link_m", "longest_segment"), 1.0, "{:.2f}"),
    ("singular", ("singularity",), 1.0, "{:.0f}"),
    ("speed [m/s]", ("speed",), 1.0, "{:.2f}"),
    ("power [W]", ("power", "power_w"), 1.0, "{:.0f}"),
    ("electrical power [W]", ("power_electrical",), 1.0, "{:.0f}"),
    ("actuator torque / limit", ("actuator_torque_ratio_peak",), 1.0, "{:.2f}"),
    ("torque asked / delivered", ("actuator_demand_ratio",), 1.0, "{:.2f}"),
    ("transmission peak", ("transmission_peak",), 1.0, "{:.2f}"),
    ("torque [N m]", ("torque_rms", "torque_nm"), 1.0, "{:.0f}"),
    ("assist time [%]", ("assist_fraction",), 100.0, "{:.1f}"),
    ("interaction force [N]", ("*_force_peak",), 1.0, "{:.0f}"),
    ("interaction force [BW]", ("interaction_force_peak_bw",), 1.0, "{:.2f}"),
    ("ground reaction [BW]", ("grf_peak_bw",), 1.0, "{:.2f}"),
    ("foot slip [% stance]", ("foot_slip_fraction",), 100.0, "{:.1f}"),
)


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
                  per_subspace: bool = True,
                  per_topology: bool = False,
                  walks: Callable[[Mapping[str, float]], str] | None = None,
                  objectives: Sequence[Objective] = ()) -> pd.DataFrame:
    """The ``n`` best evaluations (one per subspace when ``per_subspace``; one per
    topology, ``describe``'s "topology", when ``per_topology``), best first.

    evaluations: DESIGN §5 columns; metrics_of(keys): wide frame of the metrics of the
    evaluations keys [(iteration, particle), ...], one column per metric name
    (:meth:`codesign.report.rundata.RunData.metrics_of`). describe(subspace id) gives
    descriptive columns (e.g. {"topology": "2", "actuators": "1-4"}); walks(metrics) the
    "walks" column (a walking problem's verdict in a few words); ``objectives`` the run's,
    whose conditions an evaluation does not meet fill "conditions not met" (all of them,
    not only the first: a wearer force of 146 BW shows even when the design stops at an
    earlier stage). Returns a frame with the raw numbers (SI).
    """
    best = ranked(evaluations)
    if per_topology and describe is not None:
        topology = best["subspace_id"].map(lambda sid: describe(int(sid)).get("topology"))
        best = best[~topology.duplicated(keep="first")]
    elif per_subspace:
        best = best.drop_duplicates("subspace_id", keep="first")
    best = best.head(n)
    metrics = metrics_of(list(zip(best["iteration"], best["particle"])))
    rows = []
    for rank, (_, ev) in enumerate(best.iterrows(), start=1):
        row = {"rank": rank, "eval": eval_id(ev["iteration"], ev["particle"]),
               "subspace": int(ev["subspace_id"])}
        if describe is not None:
            row.update(describe(int(ev["subspace_id"])))
        row.update({"status": ev["status"], "stage": int(ev["stage"]),
                    "stage value": float(ev["stage_value"])})
        key = (int(ev["iteration"]), int(ev["particle"]))
        have = metrics.loc[key] if key in metrics.index else pd.Series(dtype=float)
        if walks is not None:
            row["walks"] = walks(have.dropna().to_dict()) if ev["status"] == "ok" else "-"
        if objectives and ev["status"] == "ok":
            row["conditions not met"] = "; ".join(unmet_conditions(have.dropna().to_dict(), objectives)) or "none"
        for heading, names, scale, _ in TABLE54_COLUMNS:
            row[heading] = _metric(have, names) * scale
        rows.append(row)
    table = pd.DataFrame(rows)
    present = [h for h, *_ in TABLE54_COLUMNS if h in table and table[h].notna().any()]
    absent = [h for h, *_ in TABLE54_COLUMNS if h not in present]
    return table.drop(columns=[h for h in absent if h in table])


def format_table(table: pd.DataFrame) -> pd.DataFrame:
    """The same table as strings for display (units in the headings)."""
    formats = {h: f for h, _, _, f in TABLE54_COLUMNS}
    out = table.copy()
    for col in out.columns:
        if col in formats:
            out[col] = [formats[col].format(v) if pd.notna(v) else "" for v in out[col]]
        elif col.endswith(("speed [m/s]", "slip [% stance]", "walked [s]")):    # robustness
            out[col] = [f"{v:.2f}" if np.isfinite(v) else "" for v in out[col]]
        elif col == "stage value":
            out[col] = [f"{v:.4g}" if np.isfinite(v) else "" for v in out[col]]
    return out.astype(str)


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no tabulate dependency)."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(False)]
    return "\n".join(lines)
