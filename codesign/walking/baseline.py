"""The anthropomorphic baseline of a co-design design (thesis 5.6).

Thesis 5.6 compares the power of the best co-designed (non-anthropomorphic) wearable robot
with "an anthropomorphic wearable robot with the same material properties (i.e. masses)".
Problem ``anthropomorphic_baseline`` builds that robot: the unaugmented human
(:func:`codesign.model.human.build_human`) carrying the added mass of a given co-design
design lumped onto the human segments it rides on, actuated anthropomorphically -- step
impedance directly at hip, knee and ankle (the ``human_gait`` layout, Table 4.3 "step",
45 parameters) -- and ranked by the co-design's objectives (Table 5.3: time, longest
segment, singularity, speed/assist, power), so its power is measured as the co-design's.

Which design (the spec's ``[evaluation]`` table; the other keys are WALK's settings)::

    baseline_of = "results/demo"    # a run folder, its run.sqlite or a run name: its best
                                    # evaluation (the ranking of `codesign simulate --best`),
                                    # or a design JSON file (`codesign screen --design` form)
    baseline_eval = "59:3"          # optional, with a run: evaluation ITERATION:PARTICLE
    baseline_mass_at = "attachments"   # or "segment_com" (where the lumps sit, below)

A run is read with the loader of ``codesign simulate --run RUN --best``
(:func:`codesign.walking.command.stored_candidate`; relative paths from the working
directory, which workers on other machines must share); a run that is still being written
is refused unless ``baseline_eval`` pins one evaluation (its best may still change, and
the workers must all lump the same design). Bad input is one :class:`UserError` line,
raised by the driver before the run starts (the problem's ``check`` hook); inside an
evaluation it is a failed record. The baseline is resolved once per process (cached).
``codesign simulate --run BASELINE_RUN --best`` replays a candidate of a baseline run on
the same lumped model (its metrics equal the stored ones).

Mass rule (per leg; both legs carry the same WR). MODEL's mass model (thesis 5.4.2,
:mod:`codesign.model.morphology`): an actuated joint is 2 kg and a passive joint 0.5 kg,
each a solid cylinder of radius 5 cm (I = m r^2 / 2); a bar is 0.7 kg/m; a joint's mass
belongs to one WR link (an attachment joint to the WR link it attaches; else the child of
its tree joint; else, WR-WR loop closure, its second link). Lumped:

1. an *attachment joint* (WR link - human segment) goes whole onto the human segment it is
   attached to, at its own position on that segment, with its own cylinder inertia;
2. the *rest of a WR link* L -- its bars (0.7 kg/m x length) and the WR-WR joints L owns
   -- is split in equal shares between L's *ends*: L's attachment joints; a link without
   one (joined to other WR links only) takes the attachment joints of the nearest WR
   links that have some (fewest WR-WR joints away; all of them at that distance). Each
   share is a point mass (no inertia of its own) at its end's attachment point.

So the total added mass is the design's exactly (2 legs x the WR mass of one leg, MODEL's
``mass_report``), and each segment receives what is fixed to it plus its share of the
links hanging on it. Not kept: the WR links' own rotational inertia (bars m L^2 / 12,
and the parallel-axis terms of masses that lie off the segment), and the mass's location
when a link spans two segments (it is split between them).

Where a lump sits (``baseline_mass_at``):

* ``"attachments"`` (default): at the attachment point, (dx, z - z0) in the segment's
  frame (origin at its proximal joint: hip for torso and thigh, knee for the shank; dx
  is the design's x offset, up to +-0.15 m), so the segment's CoM moves towards it;
* ``"segment_com"``: every lump a point mass (no own inertia, not even the joints'
  cylinders) at the segment's own CoM: only the segment masses change, their CoMs and
  inertias stay the human's.

Each segment then gets the composite of its mass and its lumps (:func:`add_point_masses`:
total mass, combined CoM, parallel-axis inertia about it). The torso carries the lumps of
both legs. Record metrics besides WALK's: ``added_mass`` (kg, total), ``com_shift`` (m,
upright whole-body CoM shift from the human's, with the lumps where they sit),
``added_mass_torso``, ``added_mass_thigh`` and ``added_mass_shank`` (kg; thigh and shank
per leg); ``longest_segment`` and ``singularity`` are 0 (no linkage).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from codesign.errors import UserError
from codesign.types import EvalContext, EvalRecord

SEGMENTS = ("torso", "thigh", "shank")
MASS_AT = ("attachments", "segment_com")
KEYS = ("baseline_of", "baseline_eval", "baseline_mass_at")


# --------------------------------------------------------------------------- mass arithmetic
def add_point_masses(mass, com_xz, inertia, body, part_mass, part_xz, part_inertia):
    """Bodies' (mass, CoM, inertia) with point-like parts added: a pure function.

    mass (n,) kg, com_xz (n, 2) m in each body's frame, inertia (n,) kg m^2 about each
    body's CoM; parts k: body[k] (index), part_mass[k] kg, part_xz[k] (2,) m in that body's
    frame, part_inertia[k] kg m^2 about the part's own CoM. Per body with parts:

        M  = m + sum m_k
        c' = c + sum m_k (p_k - c) / M
        I' = I + m |c - c'|^2 + sum (I_k + m_k |p_k - c'|^2)     (parallel axes, about c')

    Written as shifts from c so that zero-mass parts leave every number bit for bit. A body
    whose total stays 0 kg is left as is. Returns new arrays (the inputs are not changed).
    """
    mass = np.array(mass, dtype=float)
    com = np.array(com_xz, dtype=float).reshape(-1, 2)
    inertia = np.array(inertia, dtype=float)
    body = np.asarray(body, dtype=np.int64).reshape(-1)
    pm = np.asarray(part_mass, dtype=float).reshape(-1)
    pxz = np.asarray(part_xz, dtype=float).reshape(-1, 2)
    pin = np.asarray(part_inertia, dtype=float).reshape(-1)
    if not len(body) == len(pm) == len(pxz) == len(pin):
        raise ValueError("parts: body, part_mass, part_xz and part_inertia differ in length")
    if len(body) and (body.min() < 0 or body.max() >= len(mass)):
        raise ValueError(f"parts: body index outside [0, {len(mass) - 1}]")
    if np.any(pm < 0) or np.any(pin < 0) or not np.all(np.isfinite(pxz)):
        raise ValueError("parts: expected masses and inertias >= 0 and finite positions")
    for b in dict.fromkeys(body.tolist()):
        k = np.flatnonzero(body == b)
        m0, c0 = mass[b], com[b].copy()
        total = m0 + pm[k].sum()
        if not total > 0:
            continue
        c1 = c0 + (pm[k, None] * (pxz[k] - c0)).sum(axis=0) / total
        d0 = c0 - c1
        inertia[b] = (inertia[b] + m0 * float(d0 @ d0)
                      + float(np.sum(pin[k] + pm[k] * np.sum((pxz[k] - c1) ** 2, axis=1))))
        mass[b], com[b] = total, c1
    return mass, com, inertia


# --------------------------------------------------------------------------- the mass rule
@dataclass(frozen=True)
class PointMass:
    """A lump of one leg's WR on a human segment: ``segment`` (torso, thigh, shank),
    ``mass`` kg, ``xz`` (2,) m in the segment's frame (origin at its proximal joint,
    upright axes), ``inertia`` kg m^2 about its own CoM, ``source`` (what it is)."""

    segment: str
    mass: float
    xz: tuple[float, float]
    inertia: float
    source: str


def segment_loads(morphology, mass_at: str = "attachments") -> tuple[PointMass, ...]:
    """One leg's WR mass as lumps on the human segments (rule in the module docstring).

    ``morphology``: MODEL's :class:`~codesign.model.morphology.Morphology`. Raises
    ValueError for an unknown ``mass_at`` or a WR link that reaches no attachment joint.
    """
    from codesign.model.morphology import (
        ACTUATOR_MASS, BAR_MASS_PER_M, JOINT_RADIUS, PASSIVE_JOINT_MASS, human_link)
    from codesign.topology.catalog import ATTACHMENT

    if mass_at not in MASS_AT:
        raise ValueError(f"mass_at {mass_at!r}; expected one of {list(MASS_AT)}")
    topo, pos, human = morphology.topology, morphology.joint_positions, morphology.human

    def point(segment: str, joint_id: int | None) -> tuple[float, float]:
        if mass_at == "segment_com" or joint_id is None:
            c = getattr(human, segment).com_xz
        else:
            c = pos[joint_id] - morphology.link_origin(segment)
        return (float(c[0]), float(c[1]))

    def joint_mass(jid: int) -> float:
        return ACTUATOR_MASS if jid in morphology.actuators else PASSIVE_JOINT_MASS

    attachments = {link: [j for j in topo.joints if j.kind == ATTACHMENT and link in j.links]
                   for link in topo.wr_links}
    neighbours = {link: [j.links[1] if j.links[0] == link else j.links[0]
                         for j in topo.joints if j.kind != ATTACHMENT and link in j.links]
                  for link in topo.wr_links}

    def ends(link: str):
        seen, layer = {link}, [link]
        while layer:
            found = [j for lk in layer for j in attachments[lk]]
            if found:
                return found
            layer = [n for lk in layer for n in neighbours[lk] if n not in seen]
            seen.update(layer)
        raise ValueError(f"topology {topo.id}: WR link {link} reaches no attachment joint")

    loads = []
    for link in topo.wr_links:
        for j in attachments[link]:     # rule 1: always owned by ``link`` (MODEL's rule)
            m = joint_mass(j.id)
            seg = human_link(j.links)
            own = 0.5 * m * JOINT_RADIUS ** 2 if mass_at == "attachments" else 0.0
            loads.append(PointMass(seg, m, point(seg, j.id), own,
                                   f"joint {j.id} ({'actuated' if j.id in morphology.actuators else 'passive'})"))
        rest = sum(BAR_MASS_PER_M * b.length for b in morphology.bars if b.link == link)
        rest += sum(joint_mass(j.id) for j in topo.joints
                    if j.kind != ATTACHMENT and morphology.joint_mass_owner(j.id) == link)
        link_ends = ends(link)
        for j in link_ends:             # rule 2: equal shares at the ends
            seg = human_link(j.links)
            loads.append(PointMass(seg, rest / len(link_ends), point(seg, j.id), 0.0,
                                   f"{link} bars and WR joints, share at joint {j.id}"))
    return tuple(loads)


def lumped_model(loads: Sequence[PointMass], model=None):
    """The human engine Model (default :func:`~codesign.model.human.build_human`) with one
    leg's ``loads`` added to both legs (the torso takes both legs' torso lumps)."""
    from codesign.model.human import LEGS, build_human

    model = build_human() if model is None else model
    body, pm, pxz, pin = [], [], [], []
    for side in LEGS:
        for load in loads:
            body.append(model.body_id("torso" if load.segment == "torso" else f"{load.segment}_{side}"))
            pm.append(load.mass)
            pxz.append(load.xz)
            pin.append(load.inertia)
    mass, com, inertia = add_point_masses(model.mass, model.com_xz, model.inertia, body, pm,
                                          np.reshape(pxz, (-1, 2)), pin)
    return dataclasses.replace(model, mass=mass, com_xz=np.ascontiguousarray(com), inertia=inertia)


def load_metrics(loads: Sequence[PointMass], human=None) -> dict[str, float]:
    """``added_mass`` (kg, both legs), ``com_shift`` (m, upright whole-body CoM shift from
    the human's) and ``added_mass_<segment>`` (kg; thigh and shank per leg)."""
    from codesign.model.anthropometry import human_geometry
    from codesign.model.morphology import human_com_upright

    human = human_geometry() if human is None else human
    m_h, c_h = human_com_upright(human)
    per = {s: 0.0 for s in SEGMENTS}
    shift_num = np.zeros(2)
    added = 0.0
    for load in loads:
        per[load.segment] += load.mass
        added += 2.0 * load.mass
        origin = np.array([0.0, human.joint_height(load.segment)])
        shift_num += 2.0 * load.mass * (origin + np.asarray(load.xz) - c_h)
    shift = shift_num / (m_h + added)
    return {"added_mass": added, "com_shift": float(math.hypot(shift[0], shift[1])),
            "added_mass_torso": 2.0 * per["torso"], "added_mass_thigh": per["thigh"],
            "added_mass_shank": per["shank"]}


# --------------------------------------------------------------------------- the baseline
@dataclass(frozen=True)
class Baseline:
    """The lumped human: where its masses come from (``source``), the co-design ``design``
    (None for hand-made loads), one leg's ``loads``, the engine ``model`` and the design
    metrics its records carry."""

    source: str
    design: Any
    loads: tuple[PointMass, ...]
    model: Any
    metrics: dict[str, float]
    run_settings: dict | None = None      # the source run's [evaluation] table, if a run

    @staticmethod
    def from_loads(loads: Sequence[PointMass], source: str = "loads", design=None,
                   run_settings: dict | None = None) -> "Baseline":
        loads = tuple(loads)
        metrics = {"longest_segment": 0.0, "singularity": 0.0, **load_metrics(loads)}
        return Baseline(source, design, loads, lumped_model(loads), metrics, run_settings)

    def summary(self) -> str:
        """One line: the source and the lumped masses."""
        m = self.metrics
        return (f"baseline of {self.source}: {m['added_mass']:.3f} kg added -> torso "
                f"{m['added_mass_torso']:.3f} kg, each thigh {m['added_mass_thigh']:.3f} kg, "
                f"each shank {m['added_mass_shank']:.3f} kg")


def _text(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"evaluation.{key}: {value!r}; expected a non-empty string")
    return value


def _design_source(of: str, which: str | None, settings: Mapping[str, Any]):
    """(Design, source text, the run's [evaluation] table or None, catalog path)."""
    from codesign.store import find_run_database, open_run
    from codesign.walking import command, problem as pb
    from codesign.walking.evaluate import load_design

    if of.endswith(".json"):
        if which is not None:
            raise UserError("evaluation.baseline_eval: only with a run in baseline_of; "
                            f"expected no baseline_eval with the design file {of}")
        return load_design(of), of, None, str(pb.catalog_path(settings))
    try:
        database = find_run_database(of)
    except UserError as exc:
        raise UserError(f"evaluation.baseline_of: {exc} (or a design .json file)") from None
    if which is None:
        with open_run(database, readonly=True) as store:
            runs = store.runs()
        if not runs.empty and runs.sort_values("run_id").iloc[-1]["status"] == "running":
            raise UserError(f"evaluation.baseline_of: {of} is still running (its best may change); "
                            "expected a finished run, or baseline_eval = \"ITERATION:PARTICLE\"")
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):       # its "replaying ..." line
            design, run_settings = command.stored_candidate(str(database), which is None, which)
    except UserError as exc:                        # name the spec's keys, not the CLI's
        text = str(exc)
        if text.startswith("--eval"):
            raise UserError("evaluation.baseline_eval" + text.removeprefix("--eval")) from None
        raise UserError(f"evaluation.baseline_of: {text.removeprefix('--run ')}") from None
    text = out.getvalue().strip().removeprefix("replaying ")
    return design, text or of, run_settings, str(pb.catalog_path(run_settings))


@lru_cache(maxsize=8)
def _resolve(of: str, which: str | None, mass_at: str, settings_items: tuple, cwd: str) -> Baseline:
    from codesign.model.anthropometry import human_geometry
    from codesign.model.morphology import build_morphology
    from codesign.walking import problem as pb
    from codesign.walking.evaluate import _morphology_params

    design, source, run_settings, catalog = _design_source(of, which, dict(settings_items))
    if design.topology is None:
        raise UserError(f"evaluation.baseline_of: {source} is the unaugmented human; expected a "
                        "co-design design (a topology and actuator pair) whose masses to lump")
    try:
        topology = pb.get_catalog({"catalog": catalog}).topology(design.topology)
    except KeyError:
        raise UserError(f"evaluation.baseline_of: {source}: topology {design.topology} is not in "
                        f"{catalog}; expected a topology of the catalog") from None
    try:
        morph = build_morphology(topology, design.actuators,
                                 _morphology_params(topology, design.params), human_geometry())
        loads = segment_loads(morph, mass_at)
    except (UserError, ValueError) as exc:
        raise UserError(f"evaluation.baseline_of: {source}: {exc}") from None
    label = f"{source} (topology {design.topology}, actuators {design.actuators[0]}-{design.actuators[1]})"
    return Baseline.from_loads(loads, label, design, run_settings)


def resolve_baseline(settings: Mapping[str, Any]) -> Baseline:
    """The baseline the ``[evaluation]`` table asks for (cached per process). Raises
    UserError (one line) for a missing or bad ``baseline_of``/``baseline_eval``/
    ``baseline_mass_at``, an unknown ``baseline_*`` key, or a design without a topology."""
    for key in settings:
        if str(key).startswith("baseline_") and key not in KEYS:
            raise UserError(f"evaluation.{key}: unknown key; expected one of {list(KEYS)}")
    of = _text(settings, "baseline_of")
    if of is None:
        raise UserError("evaluation.baseline_of: missing; expected a co-design run folder "
                        "(e.g. \"results/demo\": its best evaluation) or a design .json file")
    which = _text(settings, "baseline_eval")
    mass_at = _text(settings, "baseline_mass_at") or MASS_AT[0]
    if mass_at not in MASS_AT:
        raise UserError(f"evaluation.baseline_mass_at: {mass_at!r}; expected one of {list(MASS_AT)}")
    catalog = settings.get("catalog")
    return _resolve(of, which, mass_at, (("catalog", catalog),) if catalog else (), str(Path.cwd()))


# --------------------------------------------------------------------------- evaluation
def walk_settings_dict(settings: Mapping[str, Any]) -> dict:
    """The ``[evaluation]`` table without the baseline's keys (WALK's settings)."""
    return {k: v for k, v in settings.items() if k not in KEYS}


def evaluate_lumped(params: Mapping[str, float], baseline: Baseline,
                    settings: Mapping[str, Any]) -> EvalRecord:
    """WALK's evaluation of the human-gait controller ``params`` on ``baseline``'s model,
    with its design metrics and ``time_fraction``. Never raises: a bad candidate or a bad
    settings table is a failed record. Objectives: the settings' (default Table 5.3)."""
    from codesign.walking import problem as pb
    from codesign.walking.evaluate import Design, WalkSettings, evaluate_detailed

    settings = walk_settings_dict(settings)
    bad = pb.human_params_error(params)
    if bad is not None:
        return bad
    if settings.get("human_control", "step") != "step":
        return EvalRecord.failed("evaluation.human_control: this problem searches the step "
                                 "layout of Table 4.3; expected \"step\"")
    if settings.get("optimize_frequency"):
        return EvalRecord.failed("evaluation.optimize_frequency: not part of this problem's "
                                 "space; expected false (the gait frequency is fixed at 0.9 Hz)")
    try:
        walk = WalkSettings.from_dict(settings)
    except UserError as exc:
        return EvalRecord.failed(str(exc))
    record = evaluate_detailed(Design(dict(params)), walk, human_model=baseline.model)[0]
    return pb.with_time_fraction(with_baseline_metrics(record, baseline, walk), settings)


def with_baseline_metrics(record: EvalRecord, baseline: Baseline, walk) -> EvalRecord:
    """An ok record of a rollout of ``baseline.model`` with the baseline's design metrics
    (``added_mass``, ``com_shift``, ``added_mass_<segment>``) in place of the human's, its
    fitness recomputed under ``walk.objectives`` (WALK's settings); others as they are."""
    from codesign.walking import objectives as ob

    if not record.ok:
        return record
    metrics = {**record.metrics, **baseline.metrics}
    return ob.make_record(metrics, walk.objectives, record.message, record.wall_s)


def evaluate_baseline(params: dict[str, float], context: EvalContext) -> EvalRecord:
    """The problem's evaluate (OPT's contract): never raises for a bad candidate; a bad
    ``baseline_*`` setting is a failed record too (the driver refuses it before the run,
    :func:`check_settings`)."""
    try:
        baseline = resolve_baseline(context.settings)
    except UserError as exc:
        return EvalRecord.failed(str(exc))
    return evaluate_lumped(params, baseline, context.settings)


def check_settings(settings: Mapping[str, Any]) -> None:
    """Driver-side check of the ``[evaluation]`` table before a run starts: resolves the
    baseline and WALK's settings (UserError, one line), prints the lumped masses to stderr
    and warns when the rollout settings differ from the source run's."""
    from codesign.walking.evaluate import WalkSettings

    baseline = resolve_baseline(settings)
    own = walk_settings_dict(settings)
    if own.get("human_control", "step") != "step":
        raise UserError("evaluation.human_control: expected \"step\" (this problem searches the "
                        "step layout of Table 4.3)")
    if own.get("optimize_frequency"):
        raise UserError("evaluation.optimize_frequency: expected false (the gait frequency is fixed)")
    rollout = WalkSettings.from_dict(own).rollout
    print(baseline.summary(), file=sys.stderr)
    if baseline.run_settings is not None:
        try:
            theirs = WalkSettings.from_dict(baseline.run_settings).rollout
        except UserError:
            return
        differ = [f.name for f in dataclasses.fields(rollout)
                  if getattr(rollout, f.name) != getattr(theirs, f.name)]
        if differ:
            print(f"warning: evaluation settings {', '.join(differ)} differ from the source run's; "
                  "power is compared on the same footing only with the same settings", file=sys.stderr)


def warmup_baseline(settings: dict) -> None:
    """Compile the kernels once in this process: a 50-ms rollout of the mid-bounds
    controller on the lumped model (resolving the baseline on the way)."""
    from codesign.walking import problem as pb

    middle = {n: 0.5 * (lo + hi) for n, (lo, hi) in pb.human_gait_layout().bounds().items()}
    evaluate_lumped(middle, resolve_baseline(settings), pb._short(settings))


def baseline_problem():
    """Problem ``anthropomorphic_baseline``: the human-gait space, Table 5.3 objectives with
    stage 1 on ``time_fraction`` (as ``exo_codesign``)."""
    from codesign.optimize.fitness import Objective
    from codesign.optimize.problems import Problem
    from codesign.optimize.space import Parameter
    from codesign.walking import objectives as ob
    from codesign.walking import problem as pb

    parameters = tuple(Parameter(n, lo, hi) for n, (lo, hi) in pb.human_gait_layout().bounds().items())
    stages = (Objective("time_fraction", "maximize", 1.0),) + ob.table_5_3()[1:]
    return Problem("anthropomorphic_baseline", evaluate_baseline,
                   "anthropomorphic baseline (thesis 5.6): the human carrying a co-design "
                   "design's added mass on its segments, step impedance at hip, knee and ankle, "
                   "Table 5.3 objectives", parameters=parameters, objectives=stages,
                   warmup=warmup_baseline, check=check_settings)
