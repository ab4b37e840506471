"""Figures of the model and screening stages (functions returning matplotlib Figures).

- :func:`morphology_figure`: a morphology worn by the human at a few gait phases (thesis
  Fig. 5.5 / 5.9 style): human segments grey, WR bars blue, actuated joints red squares,
  passive joints white circles, loop-closure joints orange.
- :func:`pass_rate_heatmap`: screening pass rate per subspace, topology (x) x actuator
  pair (y), like the thesis's Fig. 5.10.
- :func:`load_heatmap`: the load screening per subspace (same axes): the fraction of the
  sampled morphologies a catalog drivetrain serves, and the lightest device mass.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from codesign.model.assemble import assemble_leg  # noqa: E402
from codesign.model.gait import nominal_gait  # noqa: E402
from codesign.model.morphology import Morphology  # noqa: E402
from codesign.screening.kinematics import forward_kinematics  # noqa: E402
from codesign.screening.screen import close_loops  # noqa: E402
from codesign.topology.catalog import Catalog  # noqa: E402


def save_figure(fig: Figure, path: Path | str, dpi: int = 120) -> None:
    """Save a figure as PNG through a temporary file and a rename."""
    from codesign.io import write_text_atomic

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    write_text_atomic(path, buf.getvalue())


def _world(pose, body, xz):
    c, s = np.cos(pose[body, 2]), np.sin(pose[body, 2])
    return pose[body, :2] + np.array([c * xz[0] - s * xz[1], s * xz[0] + c * xz[1]])


def _draw_pose(ax, morphology: Morphology, leg, q: np.ndarray, ankle: float) -> None:
    """Draw the right leg + WR at q (leg model); the figure is shifted vertically so the
    lowest foot point touches the ground line z = 0 (the hip is fixed in the leg model)."""
    model = leg.model
    a = model.arrays
    pose = np.zeros((model.n, 3))
    forward_kinematics(a.parent, a.joint_type, a.joint_xz, q, pose)
    H = morphology.human
    shank = model.body_id("shank_r")
    foot_angle = pose[shank, 2] + ankle
    rot_f = np.array([[np.cos(foot_angle), -np.sin(foot_angle)], [np.sin(foot_angle), np.cos(foot_angle)]])
    ankle_z = _world(pose, shank, (0.0, -H.shank.length))[1]
    lowest = min(ankle_z + (rot_f @ p)[1] for p in (H.heel_xz, H.toe_joint_xz, H.toe_joint_xz + H.toe_tip_xz))
    pose[:, 1] -= lowest
    body_of = {"torso": "torso", "thigh": "thigh_r", "shank": "shank_r"}
    for b in morphology.bodies:
        body_of[b.name] = f"{b.name}_r"

    def point(link, world_upright):
        return _world(pose, model.body_id(body_of[link]), world_upright - morphology.link_origin(link))

    hip = pose[model.body_id("thigh_r"), :2]
    knee = pose[model.body_id("shank_r"), :2]
    ankle_p = _world(pose, model.body_id("shank_r"), (0.0, -H.shank.length))
    shoulder = _world(pose, model.body_id("torso"), (0.0, H.torso.length))
    heel, ball = ankle_p + rot_f @ H.heel_xz, ankle_p + rot_f @ H.toe_joint_xz
    toe = ball + rot_f @ H.toe_tip_xz
    kw = dict(color="0.55", lw=6, solid_capstyle="round", zorder=1)
    ax.plot(*np.array([shoulder, hip]).T, **kw)
    ax.plot(*np.array([hip, knee, ankle_p]).T, **kw)
    ax.plot(*np.array([ankle_p, heel, ball, toe, ball, ankle_p]).T, color="0.55", lw=3, zorder=1)
    for bar in morphology.bars:
        p0 = point(bar.link, morphology.joint_positions[bar.joints[0]])
        p1 = point(bar.link, morphology.joint_positions[bar.joints[1]])
        ax.plot([p0[0], p1[0]], [p0[1], p1[1]], color="tab:blue", lw=2.5, zorder=2)
    for j in morphology.topology.joints:
        p = point(morphology.joint_mass_owner(j.id), morphology.joint_positions[j.id])
        if j.id in morphology.actuators:
            ax.plot(*p, "s", ms=9, mfc="tab:red", mec="k", zorder=4)
        else:
            ax.plot(*p, "o", ms=7, mfc="tab:orange" if j.loop_closure else "white", mec="k", zorder=4)
        ax.annotate(str(j.id), p, xytext=(5, 4), textcoords="offset points", fontsize=8, zorder=5)
    for p in (hip, knee, ankle_p):
        ax.plot(*p, "o", ms=5, color="k", zorder=3)


def morphology_figure(morphology: Morphology, phases: tuple[float, ...] = (0.0, 0.3, 0.7), title: str | None = None) -> Figure:
    """The morphology (right leg) upright and at the given gait phases (loops closed by IK;
    torso upright, lowest foot point on the ground)."""
    leg = assemble_leg(morphology)
    model = leg.model
    gait = nominal_gait()
    ids = [model.body_id(b) for b in ("torso", "thigh_r", "shank_r")]
    fig, axes = plt.subplots(1, len(phases) + 1, figsize=(3.0 * (len(phases) + 1), 5.2), sharey=True)
    panels = [("upright", None)] + [(f"gait {100 * s:.0f} %", s) for s in phases]
    for ax, (label, s) in zip(axes, panels):
        q_target = np.zeros(model.n)
        ankle = 0.0
        if s is not None:
            hip, knee, ankle = gait.angles(s)
            q_target[ids[1]], q_target[ids[2]] = hip, knee
        q, err = close_loops(model, q_target, ids)
        _draw_pose(ax, morphology, leg, q, ankle)
        ax.set_title(label + ("" if err < 1e-9 else " (not closed)"), fontsize=10)
        ax.set_aspect("equal")
        ax.set_xlim(-0.55, 0.55)
        ax.set_ylim(-0.05, morphology.human.shoulder_height + 0.1)
        ax.axhline(0.0, color="0.3", lw=0.8)
        ax.set_xlabel("x (m)")
    axes[0].set_ylabel("z (m)")
    fig.suptitle(title or f"topology {morphology.topology.id}, actuators {list(morphology.actuators)} "
                 "(red: actuated, orange: loop closure)", fontsize=10)
    fig.tight_layout()
    return fig


def pass_rate_heatmap(rows: list[dict], catalog: Catalog) -> Figure:
    """Pass rate (%) per subspace: topology on x, actuator-pair index on y (grey: no pair)."""
    n_top = len(catalog.topologies)
    n_pairs = max(len(t.actuator_pairs) for t in catalog.topologies)
    grid = np.full((n_pairs, n_top), np.nan)
    labels = {}
    for row in rows:
        t = catalog.topology(row["topology"])
        k = t.actuator_pairs.index((row["actuator_1"], row["actuator_2"]))
        grid[k, t.id - 1] = 100.0 * row["pass_rate"]
        labels[(k, t.id - 1)] = f"({row['actuator_1']},{row['actuator_2']})\n{100.0 * row['pass_rate']:.0f}%"
    fig, ax = plt.subplots(figsize=(1.0 * n_top + 2.0, 0.5 * n_pairs + 1.5))
    cmap = plt.get_cmap("viridis").with_extremes(bad="0.85")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=max(1.0, np.nanmax(grid)),
                   origin="upper", aspect="auto")
    for (k, t), text in labels.items():
        ax.text(t, k, text, ha="center", va="center", fontsize=6.5,
                color="white" if grid[k, t] < 0.6 * np.nanmax(grid) else "black")
    ax.set_xticks(range(n_top), [str(t.id) for t in catalog.topologies])
    ax.set_yticks(range(n_pairs), [str(k + 1) for k in range(n_pairs)])
    ax.set_xlabel("topology")
    ax.set_ylabel("actuator pair (index in the topology's list)")
    total = sum(r["samples"] for r in rows)
    ax.set_title(f"screening pass rate per subspace ({total} random morphologies, grey: no such pair)", fontsize=10)
    fig.colorbar(im, ax=ax, label="pass rate (%)")
    fig.tight_layout()
    return fig


def load_heatmap(rows: list[dict], catalog: Catalog) -> Figure:
    """Two panels per subspace (topology on x, actuator-pair index on y; grey: no pair or
    nothing served): the percentage of the sampled morphologies that pass the screening
    and that a catalog drivetrain serves (``served_fraction``), and the lightest device
    mass among them (kg, ``lightest_device_mass_kg``)."""
    n_top = len(catalog.topologies)
    n_pairs = max(len(t.actuator_pairs) for t in catalog.topologies)
    fig, axes = plt.subplots(1, 2, figsize=(2.0 * n_top + 4.0, 0.5 * n_pairs + 1.5))
    panels = (("served_fraction", 100.0, "served (% of samples)", "{:.0f}%", "viridis"),
              ("lightest_device_mass_kg", 1.0, "lightest device mass (kg)", "{:.1f}", "viridis_r"))
    for ax, (key, scale, label, fmt, cmap_name) in zip(axes, panels):
        grid = np.full((n_pairs, n_top), np.nan)
        for row in rows:
            t = catalog.topology(row["topology"])
            k = t.actuator_pairs.index((row["actuator_1"], row["actuator_2"]))
            grid[k, t.id - 1] = scale * row[key]
        finite = np.isfinite(grid)
        cmap = plt.get_cmap(cmap_name).with_extremes(bad="0.85")
        im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, origin="upper", aspect="auto",
                       vmin=np.min(grid[finite]) if finite.any() else 0.0,
                       vmax=np.max(grid[finite]) if finite.any() else 1.0)
        for k, t in zip(*np.nonzero(finite)):
            ax.text(t, k, fmt.format(grid[k, t]), ha="center", va="center", fontsize=6.5, color="0.1",
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.6))
        ax.set_xticks(range(n_top), [str(t.id) for t in catalog.topologies])
        ax.set_yticks(range(n_pairs), [str(k + 1) for k in range(n_pairs)])
        ax.set_xlabel("topology")
        ax.set_title(label, fontsize=10)
        fig.colorbar(im, ax=ax)
    axes[0].set_ylabel("actuator pair (index in the topology's list)")
    fig.suptitle("load screening along the reference gait: catalog drivetrains per subspace", fontsize=10)
    fig.tight_layout()
    return fig
