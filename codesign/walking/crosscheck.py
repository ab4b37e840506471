"""A design's walk in this project's engine and in MuJoCo, side by side
(``codesign crosscheck``).

Both runs start from the same state (the evaluation's initial state, the MuJoCo
model's keyframe) under the same compiled control law and are measured by the same
metric accumulators (:mod:`codesign.walking.mujoco_rollout`); what differs is the
physics engine and its contact model. The joint-angle correlation is Pearson's r between
the two runs' hip, knee and ankle angles sampled every ``sample`` s over the time both
walked, both legs pooled per joint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, NamedTuple

import numpy as np

from codesign.walking.mujoco_model import CONTACT_RADIUS, INTEGRATOR, SOLIMP, TIMESTEP, export_setup, solref
from codesign.walking.mujoco_rollout import MujocoRollout, run_mujoco
from codesign.walking.rollout import Rollout
from codesign.walking.rollout_base import gait_coordinates
from codesign.walking.settings import WalkSettings
from codesign.walking.setup import Setup

JOINTS = ("hip", "knee", "ankle")


class Agreement(NamedTuple):
    """A metric MuJoCo's walk shares with the engine's and how far apart the two may be:
    |mujoco - engine| <= ``rel`` |engine| (both finite), and why that bound."""

    metric: str
    rel: float
    why: str


_ACCEPTED = "docs/mujoco.md's acceptance: a walk's whole-gait numbers within 6 %"
_WHOLE = ("a whole-gait number, held to the same 6 %: measured +0.1 % / +3.0 % (torque_rms), -1.2 % / +0.9 % "
          "(cost_of_transport), +1.1 % / +3.7 % (step_length) on human-walking (4 s) / human-thesis-walking (10 s)")
_WEARER = ("the active wearer's metabolic proxy sums positive and negative work, which moves with how each "
           "impact is absorbed (MuJoCo's soft contacts): measured -4.8 % (human-walking, 4 s), -7.5 % "
           "(human-thesis-walking, 10 s)")
# The tolerances of the cross-check of a design that walks the whole time in both (the
# human designs meet them all, tests/walking/test_one_measurement.py; so does the walking
# co-design, codesign-walking.json at 10 s: speed +0.8 %, GRF +2.5 %, power -2.5 %, torque
# RMS -0.3 %, cost of transport -3.3 %, step length +0.8 %; drive-t05-walking does not,
# docs/mujoco.md). The metrics not listed differ by the contact
# models by design (the interaction and cuff forces at impacts, slip under MuJoCo's soft
# friction, the start's landing) or are not measured by both.
AGREEMENT: tuple[Agreement, ...] = (
    Agreement("speed", 0.06, _ACCEPTED),
    Agreement("grf_peak_bw", 0.06, _ACCEPTED),
    Agreement("power", 0.06, _ACCEPTED),
    Agreement("torque_rms", 0.06, _WHOLE),
    Agreement("cost_of_transport", 0.06, _WHOLE),
    Agreement("step_length", 0.06, _WHOLE),
    Agreement("wearer_metabolic", 0.10, _WEARER),
)
MIN_CORRELATION = 0.995   # Pearson's r of every joint's angle (docs/mujoco.md's acceptance)


def disagreements(engine: Mapping[str, float], mujoco: Mapping[str, float]) -> list[str]:
    """One line per metric of :data:`AGREEMENT` whose MuJoCo value (``mujoco``, named
    metrics) is not within its tolerance of the engine's (``engine``), or measured by one
    of them only; empty when they agree (a metric neither measures, such as a passive
    wearer's effort, is skipped)."""
    out = []
    for a in AGREEMENT:
        e, m = float(engine.get(a.metric, math.nan)), float(mujoco.get(a.metric, math.nan))
        if not (math.isfinite(e) or math.isfinite(m)):
            continue
        if not (math.isfinite(e) and math.isfinite(m) and abs(m - e) <= a.rel * abs(e)):
            out.append(f"{a.metric}: engine {e:.6g}, MuJoCo {m:.6g}; expected within {a.rel:.0%} ({a.why})")
    return out


@dataclass(frozen=True)
class Walk:
    """One simulator's walk: ``status``; ``walked_s`` s; ``speed`` m/s; ``grf_peak_bw``
    (the vertical ground reaction's peak over 30 ms, body weights); ``cuff_force_peak``
    N (NaN without a device); ``power`` W (mean sum |tau qd| of the effort joints);
    ``wall_s`` s of wall time (the rollout alone)."""

    status: str
    walked_s: float
    speed: float
    grf_peak_bw: float
    cuff_force_peak: float
    power: float
    wall_s: float


@dataclass(frozen=True)
class Crosscheck:
    """The two walks, the joint-angle correlation (``correlation``: r per joint of
    :data:`JOINTS`), MuJoCo's constraint softness (``max_loop_residual_m``,
    ``max_penetration_m``, m) and its settings (``mujoco_settings``, one line)."""

    engine: Walk
    mujoco: Walk
    correlation: tuple[float, ...]
    max_loop_residual_m: float
    max_penetration_m: float
    mujoco_settings: str


def walk_of(status: str, walked: float, metrics: dict[str, float], wall_s: float) -> Walk:
    """A :class:`Walk` of an evaluation's named metrics (NaN where not measured)."""
    def get(name: str) -> float:
        return float(metrics.get(name, math.nan))
    return Walk(status, walked, get("speed"), get("grf_peak_bw"), get("cuff_force_peak"), get("power"), wall_s)


def joint_correlation(setup: Setup, a: np.ndarray, b: np.ndarray) -> tuple[float, ...]:
    """Pearson's r per joint (:data:`JOINTS`) between two recorded state series a, b
    float64[k, 2n] (rows where both are finite; both legs pooled); NaN without samples."""
    gait_q = gait_coordinates(setup.model)
    rows = np.isfinite(a[:, 0]) & np.isfinite(b[:, 0])
    out = []
    for j in range(len(JOINTS)):
        cols = [int(gait_q[j]), int(gait_q[3 + j])]
        x, y = a[rows][:, cols].ravel(), b[rows][:, cols].ravel()
        out.append(float(np.corrcoef(x, y)[0, 1]) if x.size > 2 else math.nan)
    return tuple(out)


def crosscheck(setup: Setup, settings: WalkSettings, engine: Rollout, engine_metrics: dict[str, float],
               engine_wall_s: float, record_times: np.ndarray,
               timestep: float = TIMESTEP) -> tuple[Crosscheck, MujocoRollout]:
    """Walk the set-up in MuJoCo (steps of ``timestep`` s) for ``settings.rollout.max_time``
    and set it beside the engine's rollout ``engine`` (recorded at ``record_times`` s, with
    its named metrics and wall time s). Returns (the comparison, MuJoCo's rollout)."""
    export = export_setup(setup, settings, timestep=timestep)
    mj = run_mujoco(export, settings.rollout.max_time, record_times)
    result = Crosscheck(
        engine=walk_of(engine.status, engine.time, engine_metrics, engine_wall_s),
        mujoco=walk_of(mj.status, mj.time, mj.metrics, mj.wall_s),
        correlation=joint_correlation(setup, engine.records, mj.records),
        max_loop_residual_m=mj.max_loop_residual_m, max_penetration_m=mj.max_penetration_m,
        mujoco_settings=mujoco_settings(settings, timestep))
    return result, mj


def mujoco_settings(settings: WalkSettings, timestep: float = TIMESTEP) -> str:
    """MuJoCo's numbers of the export at ``timestep`` s, one line."""
    ref = solref(timestep)
    return (f"MuJoCo {timestep * 1e3:g}-ms steps, {INTEGRATOR}, elliptic cones, friction {settings.rollout.mu:g}, "
            f"solref {ref[0] * 1e3:g} ms / damping ratio {ref[1]:g}, solimp {SOLIMP[0]:g} "
            f"(contacts: spheres of {CONTACT_RADIUS * 1e3:g} mm; loop equalities)")


def relative(a: float, b: float) -> float:
    """(b - a) / |a|, NaN where a is 0 or either is not finite."""
    return (b - a) / abs(a) if math.isfinite(a) and math.isfinite(b) and a != 0.0 else math.nan


ROWS = (("time walked", "s", "walked_s", "{:.2f}"), ("speed", "m/s", "speed", "{:.3f}"),
        ("ground-reaction peak (30 ms)", "BW", "grf_peak_bw", "{:.2f}"),
        ("worst cuff force", "N", "cuff_force_peak", "{:.0f}"), ("mechanical power", "W", "power", "{:.1f}"),
        ("rollout wall time", "s", "wall_s", "{:.1f}"))


def table_lines(result: Crosscheck) -> list[str]:
    """The side-by-side table (every number with its unit) and what the contact models
    account for, as text lines."""
    lines = [f"{'':30}{'this engine':>14}{'MuJoCo':>14}{'MuJoCo - engine':>18}"]
    for label, unit, field, fmt in ROWS:
        a, b = getattr(result.engine, field), getattr(result.mujoco, field)
        rel = relative(a, b)
        lines.append(f"{label + ' [' + unit + ']':30}{fmt.format(a):>14}{fmt.format(b):>14}"
                     + (f"{rel * 100:>+17.1f}%" if math.isfinite(rel) else f"{'-':>18}"))
    lines.append(f"{'status':30}{result.engine.status:>14}{result.mujoco.status:>14}")
    lines.append("joint-angle correlation r (engine vs MuJoCo, both legs): "
                 + ", ".join(f"{j} {r:.3f}" for j, r in zip(JOINTS, result.correlation)))
    lines.append(f"MuJoCo's soft constraints: deepest contact point {result.max_penetration_m * 1e3:.2f} mm "
                 f"under the floor, largest loop-closure residual {result.max_loop_residual_m * 1e3:.3f} mm "
                 "(the engine: hard contacts, loops held to its drift bound)")
    lines.append("differences from the contact models: the engine's foot impacts are plastic (an impulse, "
                 "no rebound) and its contacts and loops rigid; MuJoCo's are stiff springs-dampers "
                 "(solref/solimp), so impacts spread over a few ms and the points sink slightly -- this moves "
                 "the ground-reaction and cuff-force peaks first, the speed and power through the gait they "
                 "change; the knee ligament is MuJoCo's joint limit, not the engine's cubic spring")
    lines.append(result.mujoco_settings)
    return lines
