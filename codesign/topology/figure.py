"""Kinematic sketches of the catalog's topologies (one panel per topology).

Each panel shows one leg seen from the side with the human fixed in place: torso above the
hip, thigh between hip and knee, shank below the knee (grey bars). A WR link is a coloured
bar (two joints) or plate (three or more) labelled ``wr1`` ...; each added joint is a circle
labelled with its catalog id; loop-closure joints are orange, tree joints green, hip and
knee white with a black rim.

The drawing is a schematic of the connectivity, not a morphology. Layout: attachment points
sit evenly along their human segment; a WR link's distance from the leg is its graph
distance from the human links, its height the mean height of its neighbours (a linear,
Tutte-style solve); a wearable joint sits between the centres of its two links (midway, or
near the link closer to the leg, so that the outer link spans its neighbours). Among the choices
of side (in front of / behind the leg) for each WR link and of attachment order along each
segment, the layout with the fewest bar crossings and near-misses is drawn (first found on
ties, so the figure is deterministic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import permutations, product

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Polygon  # noqa: E402
from matplotlib.path import Path  # noqa: E402

from codesign.topology.catalog import ATTACHMENT, HUMAN_LINKS, Catalog, Topology  # noqa: E402

# human segments as (top z, bottom z) at x = 0, and where attachments may sit on them
HUMAN_SPAN = {"torso": (1.0, 0.0), "thigh": (0.0, -1.0), "shank": (-1.0, -2.0)}
ATTACH_SPAN = {"torso": (0.75, 0.25), "thigh": (-0.25, -0.75), "shank": (-1.25, -1.75)}
HUMAN_JOINT_XZ = {"hip": (0.0, 0.0), "knee": (0.0, -1.0)}
X_STEP = 1.0  # horizontal distance per graph step away from the human (schematic units)
MIN_GAP = 0.8  # least vertical distance between WR links in one column
NEAR = 0.35  # a joint closer than this to a bar it is not on looks as if it were on it
# clutter weights: a crossing or near-miss costs more than drawing a link behind the leg
CROSSING_COST, NEAR_COST, BEHIND_COST = 3, 3, 1
OUTWARD = 0.6  # optional extra distance of a WR link from the leg (graph steps)
SHORT = 0.6  # a bar shorter than this is hard to read
LABEL_CLEARANCE = 0.3  # least distance from a link label to any joint centre
NEAR_SHARE = 0.25  # a joint between links at different distances sits this far out from the nearer
MAX_LAYOUTS = 256  # layouts tried per topology (side x distance x attachment order choices)
TREE_COLOR, LOOP_COLOR, HUMAN_COLOR = "tab:green", "tab:orange", "0.55"
WR_COLORS = ("tab:blue", "tab:purple", "tab:cyan", "tab:olive", "tab:brown", "tab:pink")


@dataclass(frozen=True)
class Layout:
    """Drawing positions (schematic units, x forward, z up): added joint id -> (x, z),
    WR link -> centre (x, z), the outline of each WR link (points in drawing order) and
    the links drawn as closed plates (the others are open bars or bent bars)."""

    points: dict[int, np.ndarray]
    centres: dict[str, np.ndarray]
    outlines: dict[str, np.ndarray]
    plates: frozenset[str]


def _graph_depth(topology: Topology) -> dict[str, int]:
    """WR link -> number of joints on the shortest path to a human link (1 = attached)."""
    depth = {name: len(topology.wr_links) + 1 for name in topology.wr_links}
    for j in topology.joints:
        if j.kind == ATTACHMENT:
            depth[j.links[1]] = 1
    for _ in topology.wr_links:  # relax over wearable joints until stable
        for j in topology.joints:
            if j.kind != ATTACHMENT:
                a, b = j.links
                depth[a], depth[b] = min(depth[a], depth[b] + 1), min(depth[b], depth[a] + 1)
    return depth


def _outline(points: list[np.ndarray], centre: np.ndarray) -> tuple[np.ndarray, bool]:
    """A link's outline and whether it is a closed plate: a bar between two joints (bent
    through the link centre when both joints sit on the leg, so it does not hide along
    the human segment), or the polygon around three or more joints (with the centre
    added when they are nearly collinear, so the plate stays visible)."""
    xy = np.array(points)
    if len(xy) == 2:
        on_leg = np.all(np.abs(xy[:, 0]) < 1e-9)
        return (np.array([xy[0], centre, xy[1]]) if on_leg else xy), False
    mid = xy.mean(axis=0)
    spread = np.linalg.svd(xy - mid, compute_uv=False)
    if spread[1] < 0.1:
        xy = np.vstack([xy, centre])
        mid = xy.mean(axis=0)
    return xy[np.argsort(np.arctan2(xy[:, 1] - mid[1], xy[:, 0] - mid[0]))], True


def _area_centroid(polygon: np.ndarray) -> np.ndarray:
    """Centroid of the area of a simple polygon (vertices in order), float64[2]."""
    x, z = polygon[:, 0], polygon[:, 1]
    cross = x * np.roll(z, -1) - np.roll(x, -1) * z
    area = cross.sum() / 2
    if abs(area) < 1e-9:
        return polygon.mean(axis=0)
    return np.array([((x + np.roll(x, -1)) * cross).sum(), ((z + np.roll(z, -1)) * cross).sum()]) / (6 * area)


def _layout(
    topology: Topology, sides: dict[str, int], outward: dict[str, float], orders: dict[str, tuple[int, ...]]
) -> Layout:
    """The layout for one choice of side (+1 front, -1 back) and extra distance from the
    leg (in graph steps) per WR link, and of attachment order (joint ids top to bottom)
    per human segment."""
    points: dict[int, np.ndarray] = {}
    for human, ids in orders.items():
        top, bottom = ATTACH_SPAN[human]
        heights = [(top + bottom) / 2] if len(ids) == 1 else np.linspace(top, bottom, len(ids))
        points.update({jid: np.array([0.0, float(z)]) for jid, z in zip(ids, heights)})
    wr = list(topology.wr_links)
    index = {name: k for k, name in enumerate(wr)}
    laplacian = np.zeros((len(wr), len(wr)))
    rhs = np.zeros(len(wr))
    for j in topology.joints:
        a, b = j.links
        if j.kind == ATTACHMENT:
            laplacian[index[b], index[b]] += 1
            rhs[index[b]] += points[j.id][1]
        else:
            ka, kb = index[a], index[b]
            laplacian[[ka, kb], [ka, kb]] += 1
            laplacian[[ka, kb], [kb, ka]] -= 1
    harmonic = dict(zip(wr, np.linalg.solve(laplacian, rhs)))
    z = dict(harmonic)
    depth = _graph_depth(topology)
    for column_key in {(sides[n], depth[n] + outward[n]) for n in wr}:
        column = sorted((n for n in wr if (sides[n], depth[n] + outward[n]) == column_key), key=lambda n: (-z[n], n))
        for upper, lower in zip(column, column[1:]):  # top to bottom, keep a gap
            z[lower] = min(z[lower], z[upper] - MIN_GAP)
        shift = sum(z[n] - harmonic[n] for n in column) / len(column)
        for n in column:  # keep the column's mean height
            z[n] -= shift
    centres = {n: np.array([sides[n] * X_STEP * (depth[n] + outward[n]), z[n]]) for n in wr}
    for j in topology.joints:
        if j.kind != ATTACHMENT:
            a, b = sorted(j.links, key=lambda n: (depth[n] + outward[n], n))  # a nearer the leg
            near = depth[a] + outward[a] < depth[b] + outward[b]
            points[j.id] = centres[a] + (NEAR_SHARE if near else 0.5) * (centres[b] - centres[a])
    shapes = {n: _outline([points[j.id] for j in topology.joints if n in j.links], centres[n]) for n in wr}
    return Layout(
        points,
        centres,
        {n: outline for n, (outline, _) in shapes.items()},
        frozenset(n for n, (_, closed) in shapes.items() if closed),
    )


def _segments_cross(p1, p2, q1, q2) -> bool:
    """True when the open segments p1-p2 and q1-q2 properly intersect."""

    def orient(a, b, c) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2 = orient(q1, q2, p1), orient(q1, q2, p2)
    d3, d4 = orient(p1, p2, q1), orient(p1, p2, q2)
    return d1 * d2 < -1e-12 and d3 * d4 < -1e-12


def _point_segment_distances(points: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Distances from every point (float64[n, 2]) to every segment (starts/ends
    float64[m, 2]) as float64[n, m]."""
    ab = ends - starts  # (m, 2)
    ap = points[:, None, :] - starts[None, :, :]  # (n, m, 2)
    t = np.clip((ap * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-12), 0.0, 1.0)
    return np.linalg.norm(ap - t[..., None] * ab, axis=-1)


def _clutter(topology: Topology, layout: Layout) -> int:
    """Crossings between bars (WR outline edges and the human segments), joints that sit
    on or too near a bar, plate or joint they do not share a link with (hip and knee
    included), bars too short to read, and WR links drawn behind the leg, weighted as
    above. Smaller is clearer."""
    bars = []  # (segment start, end, owner)
    for name, outline in layout.outlines.items():
        for k in range(len(outline) if name in layout.plates else len(outline) - 1):
            bars.append((outline[k], outline[(k + 1) % len(outline)], name))
    bars.append((np.array([0.0, 1.0]), np.array([0.0, -2.0]), "human"))
    score = BEHIND_COST * sum(1 for c in layout.centres.values() if c[0] < 0)
    score += NEAR_COST * sum(1 for a, b, n in bars if n != "human" and np.linalg.norm(b - a) < SHORT)
    for k, (a1, a2, na) in enumerate(bars):
        for b1, b2, nb in bars[k + 1 :]:
            if na != nb and _segments_cross(a1, a2, b1, b2):
                score += CROSSING_COST
    joints = []  # (position, links it belongs to)
    for jid, p in sorted(layout.points.items()):
        joint = topology.joint(jid)
        joints.append((p, set(joint.links) | ({"human"} if joint.kind == ATTACHMENT else set())))
    joints += [(np.array(xz), {"human"}) for xz in HUMAN_JOINT_XZ.values()]
    plates = {n: Path(layout.outlines[n]) for n in layout.plates}
    near_bar = _point_segment_distances(
        np.array([p for p, _ in joints]), np.array([a for a, _, _ in bars]), np.array([b for _, b, _ in bars])
    ) < NEAR
    for k, (p, owners) in enumerate(joints):
        score += NEAR_COST * sum(1 for n, plate in plates.items() if n not in owners and plate.contains_point(p))
        score += NEAR_COST * sum(
            1 for q, other in joints[k + 1 :] if not owners & other and np.linalg.norm(p - q) < NEAR
        )
        score += NEAR_COST * sum(1 for m, (_, _, n) in enumerate(bars) if n not in owners and near_bar[k, m])
    return score


def layout_topology(topology: Topology) -> Layout:
    """The clearest layout among the side and attachment-order choices (module docstring)."""
    attachments = {
        h: [j.id for j in topology.joints if j.kind == ATTACHMENT and j.links[0] == h] for h in HUMAN_LINKS
    }
    order_choices = [list(permutations(ids)) for ids in attachments.values()]
    wearable = [j.links for j in topology.joints if j.kind != ATTACHMENT]
    side_choices = [  # no wearable joint across the leg
        sides
        for sides in product((1, -1), repeat=len(topology.wr_links))
        if all(sides[topology.wr_links.index(a)] == sides[topology.wr_links.index(b)] for a, b in wearable)
    ]
    outward_choices = list(product((0.0, OUTWARD), repeat=len(topology.wr_links)))
    choices = product(side_choices, outward_choices, product(*order_choices))
    scored = []
    for count, (sides, outward, orders) in enumerate(choices):
        if count >= MAX_LAYOUTS:
            break
        layout = _layout(
            topology,
            dict(zip(topology.wr_links, sides)),
            dict(zip(topology.wr_links, outward)),
            dict(zip(HUMAN_LINKS, orders)),
        )
        scored.append((_clutter(topology, layout), count, layout))
    return min(scored, key=lambda row: row[:2])[2]


def _limits(layouts: list[Layout]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Common axis limits (x, z) so every panel has the same scale."""
    xy = np.array([p for lay in layouts for p in [*lay.points.values(), *lay.centres.values()]])
    x = (min(-0.6, xy[:, 0].min() - 0.3) - 0.3, max(1.8, xy[:, 0].max() + 0.35))
    z = (min(-2.1, xy[:, 1].min() - 0.3), max(1.25, xy[:, 1].max() + 0.3))
    return x, z


def draw_topology(
    ax: Axes,
    topology: Topology,
    layout: Layout | None = None,
    limits: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> None:
    """Draw one topology on ``ax`` (see the module docstring)."""
    layout = layout or layout_topology(topology)
    (x0, x1), (z0, z1) = limits or _limits([layout])
    for human, (top, bottom) in HUMAN_SPAN.items():
        ax.plot([0, 0], [top, bottom], color=HUMAN_COLOR, lw=9, solid_capstyle="butt", zorder=1)
        ax.text(x0 + 0.05, (top + bottom) / 2, human, rotation=90, ha="left", va="center", fontsize=9, color="0.35")
    for name, (x, z) in HUMAN_JOINT_XZ.items():
        ax.plot(x, z, "o", ms=9, mfc="white", mec="black", mew=2, zorder=4)
    for k, link in enumerate(topology.wr_links):
        outline = layout.outlines[link]
        color = WR_COLORS[k % len(WR_COLORS)]
        if link not in layout.plates:
            ax.plot(outline[:, 0], outline[:, 1], color=color, lw=5, solid_capstyle="round", alpha=0.85, zorder=2)
            a, b = outline[len(outline) // 2 - 1 : len(outline) // 2 + 1]  # the middle segment
            along = (b - a) / max(np.linalg.norm(b - a), 1e-9)
            normal = np.array([-along[1], along[0]]) * (1 if along[1] <= 0 else -1)
            middle = (a + b) / 2 if len(outline) == 2 else outline[1]
            spots = [middle + 0.17 * normal, middle - 0.17 * normal, middle + np.array([0.25, 0.0])]
        else:
            ax.add_patch(Polygon(outline, closed=True, facecolor=color, edgecolor=color, alpha=0.35, lw=3, zorder=2))
            centre = _area_centroid(outline)
            spots = [centre + 0.25 * np.array(step) for step in ((0, 0), (1, 0), (0, -1), (0, 1), (-1, 0))]
        joints_xz = list(layout.points.values())
        label_at = next(
            (p for p in spots if min(np.linalg.norm(p - q) for q in joints_xz) >= LABEL_CLEARANCE), spots[0]
        )
        ax.text(*label_at, link, fontsize=9, color=color, fontweight="bold", ha="center", va="center", zorder=6)
    for j in topology.joints:
        x, z = layout.points[j.id]
        color = LOOP_COLOR if j.loop_closure else TREE_COLOR
        ax.plot(x, z, "o", ms=13, mfc=color, mec="black", mew=1, zorder=5)
        ax.text(x, z, str(j.id), ha="center", va="center", fontsize=8, fontweight="bold", color="white", zorder=6)
    ax.set_xlim(x0, x1)
    ax.set_ylim(z0, z1)
    ax.set_aspect("equal")
    kind = "pairs" if all(len(p) == 2 for p in topology.actuator_pairs) else "sets"
    ax.set_title(f"topology {topology.id}: {len(topology.actuator_pairs)} actuator {kind}", fontsize=10)
    ax.axis("off")


def catalog_figure(catalog: Catalog, columns: int = 5, progress: bool = False) -> Figure:
    """All topologies of a catalog, ``columns`` panels per row, at one common scale, with
    a legend (``progress``: a progress bar over the layouts, for large catalogs)."""
    from tqdm import tqdm

    s = catalog.settings
    if not catalog.topologies:  # a valid result for some settings: say so instead of an empty grid
        fig = plt.figure(figsize=(7.0, 1.2))
        fig.text(0.5, 0.5, f"No topology satisfies the rules with {s.wr_links} WR links, {s.added_joints} added "
                 f"joints, mobility {s.mobility}.", ha="center", va="center", fontsize=11)
        return fig
    topologies = tqdm(catalog.topologies, desc="layouts", unit="topology", disable=not progress)
    layouts = [layout_topology(t) for t in topologies]
    (x0, x1), (z0, z1) = limits = _limits(layouts)
    n = len(catalog.topologies)
    columns = min(columns, n)
    rows = math.ceil(n / columns)
    panel_w = 3.0
    panel_h = panel_w * (z1 - z0) / (x1 - x0) + 0.35
    height = panel_h * rows + 0.9
    fig, axes = plt.subplots(rows, columns, figsize=(panel_w * columns, height), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, topology, layout in zip(axes.flat, catalog.topologies, layouts):
        draw_topology(ax, topology, layout, limits)
    fig.suptitle(
        f"Wearable-robot topologies: {s.wr_links} WR links, {s.added_joints} added joints, mobility {s.mobility} "
        f"({len(catalog.topologies)} topologies, {len(catalog.subspaces())} subspaces)",
        fontsize=12,
        y=1 - 0.25 / height,
    )
    legend = [
        Line2D([], [], marker="o", ls="", ms=10, mfc=TREE_COLOR, mec="black", label="added joint, spanning tree"),
        Line2D([], [], marker="o", ls="", ms=10, mfc=LOOP_COLOR, mec="black", label="added joint, loop closure"),
        Line2D([], [], marker="o", ls="", ms=9, mfc="white", mec="black", mew=2, label="human joint (hip, knee)"),
        Line2D([], [], color=HUMAN_COLOR, lw=7, label="human segment (fixed)"),
    ]
    fig.legend(handles=legend, loc="lower center", ncol=4, frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0.45 / height, 1, 1 - 0.6 / height), h_pad=3.0)
    return fig
