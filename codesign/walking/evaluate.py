"""Evaluate one design: screening, rollout, metrics, lexicographic fitness.

``evaluate(design, settings) -> EvalRecord`` never raises for a bad design: a parameter
out of its domain, a singular mechanism, a fall, an integrator failure all come back as
a record (``status`` + ``message``). The steps:

1. design -> model: the unaugmented human (``design.topology is None``; chapter 4, hip,
   knee and ankle under step impedance) or the human with the WR of a catalog topology
   and actuator pair (chapter 5: the two actuated WR joints and the ankle under step
   impedance, the other WR joints spring/dampers);
2. screening (MODEL, thesis 5.4.4) -- a singular design is not simulated: it is recorded
   with ``time = 0`` and ``singularity = 1`` and the screening's reason;
3. initial state inside the gait and the compiled rollout (:mod:`codesign.walking.rollout`);
4. metrics (:mod:`codesign.walking.metrics`) plus the design's own numbers
   (``longest_segment`` m, ``singularity`` 0/1, ``added_mass`` kg, ``com_shift`` m),
   and the fitness (:mod:`codesign.walking.objectives`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from codesign.control import impedance as imp
from codesign.control import signals as sg
from codesign.control.parameters import ControlLayout, codesign_layout, human_layout
from codesign.errors import UserError
from codesign.optimize.fitness import Objective
from codesign.types import EvalRecord
from codesign.walking import metrics as mt
from codesign.walking import objectives as ob
from codesign.walking import rollout as ro

HUMAN_JOINT_BODY = {"hip": "thigh", "knee": "shank", "ankle": "foot"}
SITES = ("thigh_r", "shank_r", "thigh_l", "shank_l")         # human hip and knee joints
SITE_NAMES = ("hip_r", "knee_r", "hip_l", "knee_l")
DEFAULT_CATALOG = Path("topologies/catalog.json")


@dataclass(frozen=True)
class Design:
    """A design: ``topology``/``actuators`` (None for the unaugmented human) and the
    parameter values (morphology names of MODEL, control names of
    :mod:`codesign.control.parameters`)."""

    params: dict[str, float]
    topology: int | None = None
    actuators: tuple[int, int] | None = None

    def to_json(self) -> dict:
        return {"topology": self.topology,
                "actuators": list(self.actuators) if self.actuators else None,
                "params": dict(sorted(self.params.items()))}

    @staticmethod
    def from_json(doc: Any, where: str = "design") -> "Design":
        if not isinstance(doc, Mapping) or not isinstance(doc.get("params"), Mapping):
            raise UserError(f"{where}: expected an object with \"params\" (name -> number), "
                            "\"topology\" and \"actuators\" (null for the human)")
        params = {}
        for k, v in doc["params"].items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise UserError(f"{where}.params.{k}: {v!r}; expected a finite number")
            params[str(k)] = float(v)
        topo = doc.get("topology")
        acts = doc.get("actuators")
        if topo is not None and (isinstance(topo, bool) or not isinstance(topo, int)):
            raise UserError(f"{where}.topology: {topo!r}; expected a topology id or null")
        if (topo is None) != (acts is None):
            raise UserError(f"{where}.actuators: {acts!r}; expected two joint ids with a "
                            "topology, null without")
        if acts is not None:
            if not isinstance(acts, list) or len(acts) != 2 or not all(isinstance(a, int) for a in acts):
                raise UserError(f"{where}.actuators: {acts!r}; expected two joint ids")
            acts = (int(acts[0]), int(acts[1]))
        return Design(params, topo, acts)


@dataclass(frozen=True)
class WalkSettings:
    """Evaluation settings (the spec's ``[evaluation]`` table; all keys optional).

    rollout: :class:`~codesign.walking.rollout.RolloutSettings` fields (``max_time``,
    ``phase0``, ``contact_model``, ``mu``, ``rtol`` ...); objectives: preset name or list
    (see :func:`codesign.walking.objectives.objectives_from_settings`); human_control:
    ``constant`` | ``step`` | ``ppoly`` (chapter-4 K/D kind); optimize_frequency: bool;
    catalog: path of the topology catalog.
    """

    rollout: ro.RolloutSettings = ro.RolloutSettings()
    objectives: tuple[Objective, ...] = field(default_factory=ob.table_5_3)
    human_control: str = "step"
    optimize_frequency: bool = False
    catalog: str = str(DEFAULT_CATALOG)

    @staticmethod
    def from_dict(d: Mapping[str, Any] | None, default_objectives: str = "table_5_3") -> "WalkSettings":
        d = dict(d or {})
        fields = {f.name: f for f in dataclasses.fields(ro.RolloutSettings)}
        known = set(fields) | {"objectives", "human_control", "optimize_frequency", "catalog"}
        for key in d:
            if key not in known:
                raise UserError(f"evaluation.{key}: unknown key; expected one of {sorted(known)}")
        kw = {}
        for key, f in fields.items():
            if key in d:
                value = d[key]
                kind = type(getattr(ro.RolloutSettings(), key))
                if kind is str:
                    ok = isinstance(value, str)
                else:
                    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
                          and math.isfinite(value) and value >= 0)
                    value = kind(value) if ok else value
                if not ok:
                    raise UserError(f"evaluation.{key}: {value!r}; expected a "
                                    f"{'string' if kind is str else 'finite number >= 0'}")
                kw[key] = value
        rollout = ro.RolloutSettings(**kw)
        if rollout.contact_model not in ro.CONTACT_MODELS:
            raise UserError(f"evaluation.contact_model: {rollout.contact_model!r}; expected one of "
                            f"{', '.join(ro.CONTACT_MODELS)}")
        if not rollout.max_time > 0:
            raise UserError("evaluation.max_time: expected a duration > 0 s")
        if not 0 < rollout.h <= 0.01:
            raise UserError(f"evaluation.h: {rollout.h!r}; expected a time step in (0, 0.01] s")
        human_control = d.get("human_control", "step")
        if human_control not in sg.KIND_NAMES:
            raise UserError(f"evaluation.human_control: {human_control!r}; expected one of {list(sg.KIND_NAMES)}")
        objectives = ob.objectives_from_settings(d, default_objectives, rollout.max_time)
        return WalkSettings(rollout, objectives, human_control,
                            bool(d.get("optimize_frequency", False)), str(d.get("catalog", DEFAULT_CATALOG)))


@dataclass
class Setup:
    """Everything a rollout needs, built from a design (Python side)."""

    model: Any
    layout: ControlLayout
    ctrl: imp.ControllerArrays
    p: tuple
    x0: np.ndarray
    mode0: np.ndarray
    design_metrics: dict[str, float]
    n_active: int


# --------------------------------------------------------------------------- layouts
def human_control_layout(settings: WalkSettings) -> ControlLayout:
    """Chapter-4 layout for the unaugmented human (Table 4.3)."""
    lay = human_layout(sg.KIND_NAMES[settings.human_control])
    return dataclasses.replace(lay, optimize_frequency=settings.optimize_frequency)


def wr_joint_name(catalog_id: int) -> str:
    """Control-parameter prefix of WR joint ``catalog_id`` (e.g. ``j5``)."""
    return f"j{catalog_id}"


def wr_control_layout(topology, actuators: tuple[int, int], settings: WalkSettings) -> ControlLayout:
    """Chapter-5 layout: the actuated pair and the ankle active, every other added joint a
    spring/damper (eq. 5.12)."""
    passive = tuple(wr_joint_name(j.id) for j in topology.joints if j.id not in actuators)
    return codesign_layout(tuple(wr_joint_name(a) for a in actuators), passive,
                           settings.optimize_frequency)


# --------------------------------------------------------------------------- model + state
def _human_rows(model, joints=("hip", "knee", "ankle")) -> dict:
    n = model.n
    return {j: tuple(imp.tree_joint_row(n, model.body_id(f"{HUMAN_JOINT_BODY[j]}_{s}"))
                     for s in ("r", "l")) for j in joints}


def _wr_rows(model, wr_joints) -> dict:
    rows: dict[str, list] = {}
    parent, jtype = model.parent, model.joint_type
    for j in wr_joints:   # sorted right leg first (assemble)
        if j.loop:
            row = imp.loop_joint_row(parent, jtype, model.loop_body_a[j.index], model.loop_body_b[j.index])
        else:
            row = imp.tree_joint_row(model.n, j.index)
        rows.setdefault(wr_joint_name(j.catalog_id), []).append(row)
    return {k: tuple(v) for k, v in rows.items()}


def gait_configuration(model, gait, frequency: float, phase0: float, hip_height: float):
    """(q, qd) of the human joints at phase ``phase0`` of the right leg (left + 0.5)."""
    q = np.zeros(model.n)
    qd = np.zeros(model.n)
    q[model.body_id("torso_z")] = hip_height
    for side, shift in (("r", 0.0), ("l", 0.5)):
        ang = gait.angles(phase0 + shift)
        rate = gait.rates(phase0 + shift) * frequency
        for k, joint in enumerate(("hip", "knee", "ankle")):
            i = model.body_id(f"{HUMAN_JOINT_BODY[joint]}_{side}")
            q[i] = ang[k]
            qd[i] = rate[k]
    return q, qd


def close_wr_loops(model, q, qd, wr_coords, steps: int = 12, tol: float = 1e-10):
    """Loop-closure IK on the WR coordinates only (human coordinates held): a homotopy
    from the upright pose (where the loops close at 0) to ``q`` in ``steps`` stages, each
    closed by MODEL's damped Newton; WR rates from the loop velocity constraint
    J_wr qd_wr = -J_human qd_human (least squares). Returns (q, qd, residual m)."""
    from codesign.screening.kinematics import loop_residual_jacobian
    from codesign.screening.screen import close_loops_kernel

    a = model.arrays
    free = np.asarray(sorted(wr_coords), dtype=np.int64)
    r = 2 * model.n_loops
    pose, phi, jac = np.zeros((model.n, 3)), np.zeros(r), np.zeros((r, model.n))
    target = q.copy()
    cur = np.zeros(model.n)
    held = np.setdiff1d(np.arange(model.n), free)
    err = 0.0
    for k in range(1, steps + 1):
        cur[held] = target[held] * k / steps
        err = close_loops_kernel(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b,
                                 a.loop_xz_a, a.loop_xz_b, cur, free, tol, 50, 0.5, 1e-12,
                                 pose, phi, jac)
    loop_residual_jacobian(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b,
                           a.loop_xz_a, a.loop_xz_b, cur, pose, phi, jac)
    qd = qd.copy()
    qd[free] = 0.0
    rhs = -jac @ qd
    qd[free] = np.linalg.lstsq(jac[:, free], rhs, rcond=None)[0]
    return cur, qd, float(err)


def build_setup(design: Design, settings: WalkSettings, screen_first: bool = True,
                human_model=None):
    """(Setup or None, EvalRecord of a design that is not simulated or None, seconds spent
    in screening). Raises UserError for malformed parameters (evaluate catches it).

    ``human_model``: for the unaugmented human (``design.topology is None``), an engine
    Model used instead of ``build_human()`` -- the same bodies, joints and contacts with
    other masses (the anthropomorphic baseline, :mod:`codesign.walking.baseline`)."""
    from codesign.model.anthropometry import human_geometry
    from codesign.model.gait import nominal_gait
    from codesign.model.human import build_human

    human = human_geometry()
    gait = nominal_gait()
    screen_s = 0.0
    if design.topology is None:
        model = build_human() if human_model is None else human_model
        layout = human_control_layout(settings)
        active_rows = _human_rows(model)
        passive_rows: dict = {}
        wr_coords: list[int] = []
        design_metrics = {"longest_segment": 0.0, "singularity": 0.0, "added_mass": 0.0,
                          "com_shift": 0.0}
    else:
        from codesign.model.assemble import assemble
        from codesign.model.morphology import build_morphology, mass_report
        from codesign.screening.screen import screen

        topology = _catalog(settings.catalog).topology(design.topology)
        morph = build_morphology(topology, design.actuators, _morphology_params(topology, design.params),
                                 human)
        masses = mass_report(morph)
        design_metrics = {"longest_segment": float(morph.longest_link), "singularity": 0.0,
                          "added_mass": float(masses["added_mass_kg"]),
                          "com_shift": float(math.hypot(masses["com_shift_x_m"], masses["com_shift_z_m"]))}
        if screen_first:
            t0 = time.perf_counter()
            verdict = screen(morph, gait)
            screen_s = time.perf_counter() - t0
            if not verdict.ok:
                metrics = {"time": 0.0, **design_metrics, "singularity": 1.0}
                return None, ob.make_record(metrics, settings.objectives,
                                            f"singular: {verdict.reason}"), screen_s
        aug = assemble(morph)
        model = aug.model
        layout = wr_control_layout(topology, design.actuators, settings)
        active_rows = {**_wr_rows(model, aug.actuated), **_human_rows(model, ("ankle",))}
        passive_rows = _wr_rows(model, aug.passive)
        wr_coords = [j.index for j in aug.wr_joints if not j.loop]
    controller = layout.decode(design.params)
    rs = settings.rollout
    ctrl = imp.compile_controller(controller, model.n, active_rows, passive_rows,
                                  model.body_id("torso"), rs.phase0)
    q, qd = gait_configuration(model, gait, controller.frequency, rs.phase0, human.hip_height)
    if model.n_loops:
        q, qd, err = close_wr_loops(model, q, qd, wr_coords)
        if not err <= 1e-8:
            metrics = {"time": 0.0, **design_metrics}
            return None, ob.make_record(metrics, settings.objectives,
                                        f"initial_state: loops do not close in the gait ({err:.2g} m)"), screen_s
    q, qd, lowest = ro.place_on_ground(model, q, qd)
    p = ro.make_params(model, ctrl, rs, human.hip_height, SITES)
    x0 = np.concatenate([q, qd])
    mode0, code = ro.initial_modes(x0, p, lowest)
    if code != 0:
        metrics = {"time": 0.0, **design_metrics}
        return None, ob.make_record(metrics, settings.objectives,
                                    f"initial_state: contact modes (code {code})"), screen_s
    return (Setup(model, layout, ctrl, p, x0, mode0, design_metrics, ctrl.act_rows.shape[0]),
            None, screen_s)


_CATALOGS: dict[str, Any] = {}


def _catalog(path: str):
    from codesign.topology.catalog import load_catalog

    if path not in _CATALOGS:
        _CATALOGS[path] = load_catalog(path)
    return _CATALOGS[path]


def _morphology_params(topology, params: Mapping[str, float]) -> dict[str, float]:
    from codesign.model.morphology import parameter_space

    return {p.name: params[p.name] for p in parameter_space(topology) if p.name in params}


# --------------------------------------------------------------------------- evaluation
def metrics_of(rollout: ro.Rollout, setup: Setup) -> dict[str, float]:
    """Named metrics of a finished rollout (gait metrics + design metrics)."""
    m = mt.finalize(rollout.acc, time=rollout.time, n_joints=setup.n_active,
                    site_names=SITE_NAMES, total_mass=setup.model.total_mass(),
                    gravity=setup.model.gravity)
    return {**m, **setup.design_metrics}


def evaluate_detailed(design: Design, settings: WalkSettings, record_times=None, human_model=None):
    """(EvalRecord, timings {screen_s, setup_s, rollout_s}, Rollout or None, Setup or None).
    ``human_model``: see :func:`build_setup`."""
    t0 = time.perf_counter()
    timings = {"screen_s": 0.0, "setup_s": 0.0, "rollout_s": 0.0}
    try:
        setup, early, timings["screen_s"] = build_setup(design, settings, human_model=human_model)
    except (UserError, KeyError, ValueError) as exc:
        text = str(exc) if not isinstance(exc, KeyError) else f"missing parameter {exc.args[0]}"
        return (EvalRecord.failed(f"design: {text}", wall_s=time.perf_counter() - t0), timings,
                None, None)
    timings["setup_s"] = time.perf_counter() - t0 - timings["screen_s"]
    if early is not None:
        return dataclasses.replace(early, wall_s=time.perf_counter() - t0), timings, None, None
    t1 = time.perf_counter()
    rollout = ro.run(setup.x0, setup.mode0, setup.p, settings.rollout, record_times)
    timings["rollout_s"] = time.perf_counter() - t1
    message = "" if rollout.status == "ok" else f"{rollout.status}: {rollout.message}"
    record = ob.make_record(metrics_of(rollout, setup), settings.objectives, message,
                            time.perf_counter() - t0)
    return record, timings, rollout, setup


def evaluate(design: Design | Mapping, settings: WalkSettings | Mapping | None = None) -> EvalRecord:
    """Evaluate one design (module docstring); never raises for a bad design."""
    if not isinstance(settings, WalkSettings):
        settings = WalkSettings.from_dict(settings)
    if not isinstance(design, Design):
        design = Design.from_json(design)
    return evaluate_detailed(design, settings)[0]


def load_design(path: str | Path) -> Design:
    """A design JSON file ({"topology", "actuators", "params"})."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read the design ({exc.__class__.__name__}); "
                        "expected a JSON file") from None
    return Design.from_json(doc, str(path))


# --------------------------------------------------------------------------- typical designs
def nominal_control_params(layout: ControlLayout, angle_of, stiffness: float = 2000.0,
                           damping: float = 30.0) -> dict[str, float]:
    """Control parameters that track a periodic joint-angle pattern with constant impedance.

    angle_of(name, phases) -> engine angles (rad) of the active joint ``name`` at the
    right-leg phases; reference points at equally spaced knots (all dx equal), K = stiffness
    and D = damping on the whole cycle; passive joints: no spring, rest 0, light damping.
    A "typical design" for benchmarks and tests, not an optimum.
    """
    params: dict[str, float] = {}
    for a in layout.active:
        n = a.reference_points
        knots = sg.differential_knots(np.ones(n + 1))
        ref = angle_of(a.name, knots)
        for kind, npts, names, _bound in a.signals():
            for name in names:
                field_ = name.rsplit(".", 1)[1]
                role = name.split(".")[1]
                if field_.startswith("dx"):
                    params[name] = 1.0
                elif role == "ref":
                    params[name] = float(ref[int(field_[1:])])
                elif field_ in ("t1", "dt"):
                    params[name] = 0.0 if field_ == "t1" else 0.5
                else:
                    params[name] = stiffness if role == "K" else damping
    for name in layout.passive:
        params.update({f"{name}.k": 0.0, f"{name}.rest": 0.0, f"{name}.d": 1.0})
    if layout.optimize_frequency:
        params["gait.frequency"] = imp.GAIT_FREQUENCY
    return params


def typical_human_design(settings: WalkSettings | None = None, stiffness: float = 2000.0,
                         damping: float = 30.0) -> Design:
    """The unaugmented human tracking the nominal gait (Winter) with constant impedance."""
    from codesign.model.gait import nominal_gait

    settings = settings or WalkSettings()
    gait = nominal_gait()
    index = {"hip": 0, "knee": 1, "ankle": 2}
    layout = human_control_layout(settings)
    return Design(nominal_control_params(layout, lambda name, ph: gait.angles(ph)[:, index[name]],
                                         stiffness, damping))


def typical_codesign_design(settings: WalkSettings | None = None, actuators=(1, 3),
                            stiffness: float = 2000.0, damping: float = 30.0) -> Design:
    """An anthropomorphic augmented design: catalog topology 1 (a four-bar around the hip
    and one around the knee) with parallelogram joint positions (MODEL's screening
    example), the actuated joints and the ankles tracking their angles along the nominal
    gait (loop-closure IK at the reference knots) with constant impedance, passive joints
    lightly damped. A "typical design" for benchmarks and tests, not an optimum."""
    from codesign.model.anthropometry import human_geometry
    from codesign.model.assemble import assemble
    from codesign.model.gait import nominal_gait
    from codesign.model.morphology import build_morphology
    from codesign.screening.examples import params_from_positions, parallelogram_positions

    settings = settings or WalkSettings()
    human = human_geometry()
    gait = nominal_gait()
    topology = _catalog(settings.catalog).topology(1)
    morph_params = params_from_positions(topology, human, parallelogram_positions(human))
    aug = assemble(build_morphology(topology, actuators, morph_params, human))
    model = aug.model
    rows = {**_wr_rows(model, aug.actuated), **_human_rows(model, ("ankle",))}
    wr_coords = [j.index for j in aug.wr_joints if not j.loop]

    def angle_of(name, phases):
        out = []
        for ph in phases:
            q, qd = gait_configuration(model, gait, 0.9, float(ph), human.hip_height)
            q, _qd, _err = close_wr_loops(model, q, qd, wr_coords)
            out.append(float(rows[name][0] @ q))
        return np.array(out)

    layout = wr_control_layout(topology, tuple(actuators), settings)
    params = {**morph_params, **nominal_control_params(layout, angle_of, stiffness, damping)}
    return Design(params, topology.id, tuple(actuators))
