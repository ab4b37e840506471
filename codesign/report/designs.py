"""Figures of the best designs themselves (thesis Fig. 5.9 and appendix B) and the
screening pass rates — the parts of a report that need other stages (the topology
catalog, MODEL's morphology, WALK's rollout, MODEL's screening results). Each degrades to
a note in the report when its stage is not available or the run is not a co-design run.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from codesign.report.rundata import RunData, searches_catalog

# morphology parameter names of MODEL (codesign.model.morphology.parameter_space), possibly
# behind a group prefix such as "t2." in the co-design space
_MORPHOLOGY_NAME = re.compile(r"(?:^|[._:])(j\d+_(?:s|dx|x|z))$")
SCREEN_CSV = Path("results/screen/pass_rates.csv")  # written by `codesign screen`


def morphology_parameters(params: dict[str, float]) -> dict[str, float]:
    """MODEL's morphology parameters (``j<id>_s|dx|x|z``) among a solution's parameters."""
    out = {}
    for name, value in params.items():
        m = _MORPHOLOGY_NAME.search(name)
        if m and np.isfinite(value):
            out[m.group(1)] = float(value)
    return out


def draw_morphology(ax, morphology, title: str = "") -> None:
    """The WR of ``morphology`` (codesign.model.morphology.Morphology) on the upright
    human, sagittal plane, x forward, z up, metres: human segments grey, WR bars blue,
    actuated joints red squares, passive joints white circles, labelled by joint id."""
    human = morphology.human
    ax.plot([0, 0], [human.shoulder_height, human.hip_height], color="#999999", linewidth=6,
            solid_capstyle="round", label="human")
    ax.plot([0, 0, 0], [human.hip_height, human.knee_height, human.ankle_height],
            color="#bbbbbb", linewidth=4, solid_capstyle="round")
    for z, name in ((human.hip_height, "hip"), (human.knee_height, "knee"),
                    (human.ankle_height, "ankle")):
        ax.plot(0, z, "o", color="#777777", markersize=5)
        ax.annotate(name, (0, z), xytext=(-5, -3), textcoords="offset points", ha="right",
                    va="top", fontsize=7, color="#777777")
    ax.plot([-0.05, 0.18], [0.02, 0.02], color="#bbbbbb", linewidth=4)
    pos = morphology.joint_positions
    for bar in morphology.bars:
        a, b = pos[bar.joints[0]], pos[bar.joints[1]]
        ax.plot([a[0], b[0]], [a[1], b[1]], color="#2c7fb8", linewidth=2)
    for joint in morphology.topology.joints:
        p = pos[joint.id]
        if joint.kind == "attachment":
            ax.plot([0, p[0]], [p[1], p[1]], color="#2c7fb8", linewidth=0.8, linestyle=":")
        actuated = joint.id in morphology.actuators
        ax.plot(p[0], p[1], "s" if actuated else "o", markersize=9 if actuated else 7,
                markerfacecolor="#e31a1c" if actuated else "white", markeredgecolor="black",
                zorder=5)
        ax.annotate(str(joint.id), p, xytext=(6, 4), textcoords="offset points", fontsize=8)
    ax.set_aspect("equal")
    ax.set_xlim(-0.35, 0.35)
    ax.set_ylim(0.0, human.shoulder_height + 0.05)
    ax.set_xlabel("x (m)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(title, fontsize=9)


def _solution_params(data: RunData, eval_key: str) -> dict[str, float]:
    iteration, particle = (int(v) for v in eval_key.split(":"))
    row = data.params_of([(iteration, particle)]).iloc[0]
    return {k: float(v) for k, v in row.items() if pd.notna(v)}


def _subspace_pairs(catalog) -> dict[int, tuple[int, tuple[int, ...]]]:
    return {sid: (tid, pair) for sid, tid, pair in catalog.subspaces()}


def morphology_figure(data: RunData, table: pd.DataFrame, catalog) -> Figure:
    """The best designs side by side (thesis Fig. 5.9), one panel per table row (max 3)."""
    from codesign.model.morphology import build_morphology

    subspaces = _subspace_pairs(catalog)
    rows = list(table.head(3).itertuples(index=False))
    fig = Figure(figsize=(2.6 * len(rows) + 0.4, 5.2), layout="constrained")
    axes = fig.subplots(1, len(rows), sharey=True, squeeze=False)[0]
    for ax, row in zip(axes, rows):
        sid = int(row.subspace)
        tid, pair = subspaces[sid]
        params = morphology_parameters(_solution_params(data, row.eval))
        morphology = build_morphology(catalog.topology(tid), pair, params)
        draw_morphology(ax, morphology, f"#{row.rank}: topology {tid}, actuators "
                        f"{pair[0]}-{pair[1]}\n(eval {row.eval})")
    axes[0].set_ylabel("z (m)", fontsize=8)
    fig.suptitle("Best morphologies on the upright human (red squares: actuated joints)",
                 fontsize=10)
    return fig


def best_design_figures(data: RunData, table: pd.DataFrame, folder: Path, catalog,
                        catalog_path: Path | None = None, *, gait: bool = True
                        ) -> tuple[list[tuple[str, str]], list[str]]:
    """(figures as (file, caption), notes) for the best designs of a co-design run
    (``catalog`` is its topology catalog; None: not a co-design run). ``gait``:
    re-simulate the best design for gait snapshots and an animation."""
    figures, notes = [], []
    if catalog is None:
        notes.append("Not a co-design run (or no topology catalog): no morphology drawings "
                     "or gaits; the table above lists the best parameters' evaluations.")
        return figures, notes
    if table.empty:
        return figures, ["No solution yet."]
    try:
        fig = morphology_figure(data, table, catalog)
        fig.savefig(folder / "morphologies.png", dpi=110)
        figures.append(("morphologies.png", "Morphology of the best solutions (thesis Fig. "
                        "5.9): WR joints placed on the upright human; dotted: attachment "
                        "height on the human segment."))
    except Exception as exc:  # a stage not available must not break the report
        notes.append(f"Morphology drawing unavailable: {exc.__class__.__name__}: {exc}")
    try:
        from codesign.model.morphology import build_morphology
        from codesign.screening.figures import morphology_figure as poses_figure

        best = table.iloc[0]
        tid, pair = _subspace_pairs(catalog)[int(best["subspace"])]
        morphology = build_morphology(catalog.topology(tid), pair, morphology_parameters(
            _solution_params(data, best["eval"])))
        poses_figure(morphology).savefig(folder / "best_poses.png", dpi=110)
        figures.append(("best_poses.png", "The best design worn along the nominal (Winter) gait: "
                        "the human's joints at several phases of the stride, the device's linkage "
                        "posed to fit them (kinematics only, not the simulated gait)."))
    except Exception as exc:  # noqa: BLE001 — an unavailable stage must not break the report
        notes.append(f"Gait-phase drawing unavailable: {exc.__class__.__name__}: {exc}")
    if not gait:
        return figures, notes + ["Gait snapshots skipped (--no-gait)."]
    gait_figures, gait_notes = gait_figures_of_best(data, table, folder, catalog_path)
    return figures + gait_figures, notes + gait_notes


BEST_DESIGN = "best_design.json"    # the run's best as a design file, in the report folder


def write_best_design(data: RunData, best: pd.Series, folder: Path) -> tuple[str | None, str | None]:
    """The run's best evaluation ``best`` (a row of its evaluations) as a design file
    ``folder/best_design.json`` -- topology, actuators, params and, as ``evaluation``, the
    run's ``[evaluation]`` table, and its spec's own ``[[objectives]]``, so that ``codesign
    simulate`` replays it under the run's settings and stages --, decoded by the run's
    problem: (file name, None), or (None, the reason in a note) for a problem without
    walking designs or a design that no longer decodes."""
    import dataclasses
    import json

    from codesign.errors import UserError
    from codesign.problems import get_problem

    try:
        problem = get_problem(data.spec.problem)
    except KeyError:
        return None, f"Problem {data.spec.problem!r} is unknown to this version: no design file."
    if problem.walking is None:
        return None, None
    try:
        settings = problem.parse_settings(dict(data.spec.evaluation))
        groups = tuple(data.subspace_groups[int(best["subspace_id"])].values())
        design = problem.walking.decode(groups, _solution_params(data, eval_key(best)), settings)
    except (UserError, ValueError, KeyError) as exc:
        return None, f"The best design could not be decoded ({exc}): no design file."
    from codesign.problems.identity import problem_document

    table = dict(data.spec.evaluation)
    design = dataclasses.replace(design, evaluation={**table, **design.evaluation},
                                 problem=problem_document(problem.name, problem.options, table),
                                 objectives=tuple({k: v for k, v in dataclasses.asdict(o).items() if v is not None}
                                                  for o in data.spec.objectives))
    (folder / BEST_DESIGN).write_text(json.dumps(design.to_json(), indent=1) + "\n", encoding="utf-8")
    return BEST_DESIGN, None


def eval_key(row: pd.Series) -> str:
    """"ITERATION:PARTICLE" of a row of the evaluations."""
    return f"{int(row['iteration'])}:{int(row['particle'])}"


GAIT_FRAMES = 8        # snapshots over the last gait cycle (appendix B)
GAIT_SAMPLE_S = 0.01   # recording step of the re-simulation, s


def gait_figures_of_best(data: RunData, table: pd.DataFrame, folder: Path,
                         catalog_path: Path | None = None
                         ) -> tuple[list[tuple[str, str]], list[str]]:
    """The best design re-simulated with WALK's rollout under the run's evaluation
    settings (thesis appendix B), replayed by the run's problem (``catalog_path``: the
    catalog to read instead of the run's): snapshots over its last gait cycle, WALK's
    stick-figure animation and WALK's joint-angle / ground-force figure (``codesign
    simulate``'s)."""
    try:
        from codesign.problems import get_problem
        from codesign.problems.verdict import walking_verdict
        from codesign.report import gait as walk_figures
        from codesign.walking.trajectory import actuator_table, trajectory_table
    except ImportError as exc:
        return [], [f"Gait snapshots: the walking simulation is not available ({exc})."]
    try:
        best = table.iloc[0]
        problem = get_problem(data.spec.problem)
        evaluation = dict(data.spec.evaluation)
        if catalog_path is not None:
            evaluation["catalog"] = str(catalog_path)
        settings = problem.parse_settings(evaluation)
        groups = tuple(data.subspace_groups[int(best["subspace"])].values())
        design = problem.walking.decode(groups, _solution_params(data, best["eval"]), settings)
        end = settings.walk.rollout.max_time
        times = np.arange(0.0, end + 0.5 * GAIT_SAMPLE_S, GAIT_SAMPLE_S)
        replay = problem.walking.replay(design, settings, times[times <= end])
        rollout, setup = replay.rollout, replay.setup
        if rollout is None:
            return [], [f"Gait snapshots: the best design was not simulated ({replay.record.message})."]
        trajectory = trajectory_table(rollout, setup)
        period = 1.0 / float(setup.ctrl.timing[0])  # the controller's gait frequency, Hz
        verdict = (walking_verdict(replay.record.metrics, end, replay.record.message).text if replay.record.ok
                   else rollout.status)
        fig = gait_snapshots_figure(setup.model, trajectory, period, f"eval {best['eval']}: {verdict}",
                                    walk_figures.stick_segments)
        fig.savefig(folder / "gait_snapshots.png", dpi=110)
        walk_figures.stick_gif(trajectory, setup.model, folder / "gait.gif")
        fig = walk_figures.gait_figure(trajectory, setup.model, float(setup.ctrl.timing[0]),
                                       float(setup.ctrl.timing[1]))
        fig.savefig(folder / "gait_angles.png", dpi=110)
        loads = pd.concat([trajectory["t_s"], actuator_table(rollout, setup)], axis=1)
        fig = walk_figures.actuator_figure(loads, setup.effort_names, 0.5 * end)
        fig.savefig(folder / "actuators.png", dpi=110)
        walk_figures.plt.close(fig)
        # each motor named: its catalog unit and stage ratio, or the spec's rating, and its numbers
        motors = (" (" + "; ".join(f"{name}: {a.rating_text()}" for name, a in setup.actuators) + ")"
                  if setup.actuators else "")
    except Exception as exc:  # noqa: BLE001 — an unavailable stage must not break the report
        return [], [f"Gait snapshots unavailable: {exc.__class__.__name__}: {exc}"]
    return [("gait_snapshots.png", "Snapshots of the best design over its last simulated gait "
             "cycle (thesis appendix B), each at its position along the walk."),
            ("gait.gif", f"The best design re-simulated ({verdict}; stick figure, as `codesign "
             "simulate` draws it)."),
            ("gait_angles.png", "Its hip, knee and ankle angles against the nominal gait, and "
             "the ground reaction forces in body weights (30-ms means), as `codesign simulate` "
             "draws them."),
            ("actuators.png", f"Its actuators{motors} over the second half: commanded and delivered "
             "torque (N m), the samples against each motor's torque-speed envelope, and, under "
             "the wearer-space law, the linkage's transmission G.")], []


def gait_snapshots_figure(model, trajectory: pd.DataFrame, period: float, title: str,
                          segments_of) -> Figure:
    """GAIT_FRAMES stick figures over the last gait period of the trajectory (WALK's
    ``trajectory_table``: t_s and q_* columns in body order), each at its own position
    along the walk (x forward, z up, m). segments_of(model, q) -> (segments, feet) is
    WALK's stick-figure geometry."""
    t = trajectory["t_s"].to_numpy()
    q = trajectory[[c for c in trajectory.columns if c.startswith("q_")]].to_numpy()
    pick = np.searchsorted(t, np.linspace(max(t[0], t[-1] - period), t[-1], GAIT_FRAMES))
    frames = [segments_of(model, q[min(i, len(t) - 1)])[0] for i in pick]
    points = np.array([p for f in frames for seg in f for p in seg])
    aspect = (np.ptp(points[:, 0]) + 0.4) / (np.ptp(points[:, 1]) + 0.3)
    fig = Figure(figsize=(float(np.clip(1.0 + 3.4 * aspect, 4.0, 14.0)), 4.0),
                 layout="constrained")
    ax = fig.add_subplot()
    colours = matplotlib.colormaps["viridis"](np.linspace(0.0, 0.85, len(frames)))
    for segments, colour in zip(frames, colours):
        for a, b in segments:
            ax.plot([a[0], b[0]], [a[1], b[1]], color=colour, linewidth=1.8,
                    solid_capstyle="round")
    ax.axhline(0.0, color="#777777", linewidth=1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m); colour: time, dark to light", fontsize=8)
    ax.set_ylabel("z (m)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(title, fontsize=9)
    return fig


def screening_counts(data: RunData):
    """(passed, tested, source) per subspace id from MODEL's screening sweep
    (``results/screen/pass_rates.csv`` of ``codesign screen``: columns ``subspace``,
    ``samples``, ``passed``), for co-design runs only; None when absent or unreadable."""
    if not searches_catalog(data.spec) or not SCREEN_CSV.is_file():
        return None
    try:
        frame = pd.read_csv(SCREEN_CSV)
        tested = dict(zip(frame["subspace"].astype(int), frame["samples"].astype(int)))
        passed = dict(zip(frame["subspace"].astype(int), frame["passed"].astype(int)))
    except (OSError, ValueError, KeyError, pd.errors.ParserError):
        return None
    return passed, tested, str(SCREEN_CSV)
