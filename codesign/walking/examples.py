"""Typical designs for benchmarks and tests (not optima): the human and an anthropomorphic
augmented design tracking the nominal gait with constant impedance."""

from __future__ import annotations

import numpy as np

from codesign.control import impedance as imp
from codesign.control import signals as sg
from codesign.control.parameters import ControlLayout
from codesign.model.anthropometry import human_geometry
from codesign.model.assemble import assemble
from codesign.model.gait import nominal_gait
from codesign.model.morphology import build_morphology
from codesign.screening.examples import params_from_positions, parallelogram_positions
from codesign.walking.design import Design
from codesign.walking.initial_state import close_wr_loops, gait_configuration
from codesign.walking.settings import WalkSettings
from codesign.topology.catalog import cached_catalog
from codesign.walking.setup import _human_rows, _wr_rows, human_control_layout, wr_control_layout


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


# the typical human's constant joint impedance (the thesis's): N m/rad, N m s/rad
HUMAN_STIFFNESS, HUMAN_DAMPING = 2000.0, 30.0


def typical_human_design(settings: WalkSettings | None = None, stiffness: float = HUMAN_STIFFNESS,
                         damping: float = HUMAN_DAMPING) -> Design:
    """The unaugmented human tracking the nominal gait (Winter) with constant impedance."""

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

    settings = settings or WalkSettings()
    human = human_geometry()
    gait = nominal_gait()
    topology = cached_catalog(settings.catalog).topology(1)
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
