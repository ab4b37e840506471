"""Control parameter layout: names, bounds and decoding into a :class:`Controller`.

A design's control part is a flat ``dict[str, float]`` (what the optimizer moves). The
layout fixes which joints are controlled and with which signal kinds, and from it follow
the parameter names (stable strings), their bounds (:mod:`codesign.control.bounds`) and
the decoding. Names::

    <joint>.ref.dx0 .. dxN, <joint>.ref.y0 .. y{N-1}   reference angle, ppoly (rad)
    <joint>.K.t1, .dt, .v1, .v2                          stiffness, step (N m/rad)
    <joint>.D.t1, .dt, .v1, .v2                          damping, step (N m s/rad)
    <joint>.torso.step.t1, .dt, <joint>.torso.K.v1, .v2, <joint>.torso.D.v1, .v2
                                                         torso feedback (optional), step
                                                         (N m/rad, N m s/rad; signed)
    <joint>.k, <joint>.rest, <joint>.d                   passive spring/damper (eq. 5.12)
    gait.frequency                                       Hz, only if optimised

(K and D may also be ``constant`` -> ``.v``, or ``ppoly`` -> ``.dx*``, ``.y*``.)
Chapter 5 uses 5 reference points and step K, D: 19 parameters per active joint, the
count of Table 5.2 (6 dx + 5 y + 2 + 2 + 2 + 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from codesign.control import bounds as bd
from codesign.control import signals as sg
from codesign.control.impedance import (
    GAIT_FREQUENCY, ActiveJoint, Assist, Controller, PassiveJoint,
)

FREQUENCY_NAME = "gait.frequency"


@dataclass(frozen=True)
class ActiveLayout:
    """One step-impedance joint: its name (parameter prefix), the number of reference
    points, the kinds of its stiffness and damping signals and its reference-angle bound."""

    name: str
    reference_points: int = 5
    stiffness_kind: int = sg.STEP
    damping_kind: int = sg.STEP
    reference_bounds: tuple[float, float] = bd.WR_REFERENCE_ANGLE
    shared_step_timing: bool = False
    torso_feedback: bool = False

    def signals(self) -> list[tuple[int, int, list[str], tuple[float, float]]]:
        """(kind, points, parameter names in decode order, value bound) of the reference,
        stiffness and damping signals. With ``shared_step_timing`` (chapter 4, Table 4.3:
        "two parameters t1,2 determining when the step occurs") step K and D share the
        transition parameters ``<joint>.step.t1`` and ``.dt``. With ``torso_feedback`` two
        more step signals follow, the torso stiffness and damping (sharing
        ``<joint>.torso.step.t1``, ``.dt``: on during one arc of the leg's phase)."""
        out = []
        for role, kind, npts, value_bound in (
                ("ref", sg.PPOLY, self.reference_points, self.reference_bounds),
                ("K", self.stiffness_kind, 4, bd.STIFFNESS),
                ("D", self.damping_kind, 4, bd.DAMPING)):
            names = sg.parameter_names(f"{self.name}.{role}", kind, npts)
            if kind == sg.STEP and self.shared_step_timing:
                names[:2] = [f"{self.name}.step.t1", f"{self.name}.step.dt"]
            out.append((kind, npts, names, value_bound))
        if self.torso_feedback:
            for role, value_bound in (("K", bd.TORSO_STIFFNESS), ("D", bd.TORSO_DAMPING)):
                names = sg.parameter_names(f"{self.name}.torso.{role}", sg.STEP)
                names[:2] = [f"{self.name}.torso.step.t1", f"{self.name}.torso.step.dt"]
                out.append((sg.STEP, 4, names, value_bound))
        return out


@dataclass(frozen=True)
class ControlLayout:
    """Which joints are controlled and how (see module docstring)."""

    active: tuple[ActiveLayout, ...] = ()
    passive: tuple[str, ...] = ()
    optimize_frequency: bool = False
    frequency: float = GAIT_FREQUENCY      # Hz, used when not optimised
    assist: Assist = Assist()

    def bounds(self) -> dict[str, tuple[float, float]]:
        """name -> (low, high), in decode order."""
        out: dict[str, tuple[float, float]] = {}
        for a in self.active:
            for _kind, _npts, names, value_bound in a.signals():
                for name in names:
                    field = name.rsplit(".", 1)[1]
                    phase_like = field.startswith("dx") or field in ("t1", "dt")
                    out[name] = bd.UNIT_INTERVAL if phase_like else value_bound
        for p in self.passive:
            out[f"{p}.k"] = bd.STIFFNESS
            out[f"{p}.rest"] = bd.PASSIVE_REST_ANGLE
            out[f"{p}.d"] = bd.DAMPING
        if self.optimize_frequency:
            out[FREQUENCY_NAME] = bd.GAIT_FREQUENCY
        return out

    def parameter_names(self) -> list[str]:
        return list(self.bounds())

    def decode(self, params: Mapping[str, float]) -> Controller:
        """Controller from a parameter dict (extra keys are ignored; a missing key raises
        KeyError naming it)."""
        def values(names):
            return [float(params[n]) for n in names]

        active = []
        for a in self.active:
            sigs = [sg.decode(kind, values(names), npts) for kind, npts, names, _ in a.signals()]
            torso = dict(torso_stiffness=sigs[3], torso_damping=sigs[4]) if a.torso_feedback else {}
            active.append(ActiveJoint(a.name, *sigs[:3], **torso))
        passive = [PassiveJoint(p, *values([f"{p}.k", f"{p}.rest", f"{p}.d"]))
                   for p in self.passive]
        frequency = float(params[FREQUENCY_NAME]) if self.optimize_frequency else self.frequency
        return Controller(tuple(active), tuple(passive), frequency, self.assist)


def codesign_layout(active_wr: tuple[str, str], passive_wr: tuple[str, ...],
                    optimize_frequency: bool = False, torso_feedback: bool = False) -> ControlLayout:
    """Chapter-5 layout: two actuated WR joints and the ankle with step impedance and a
    5-point reference; the other WR joints passive (eq. 5.12). ``torso_feedback``: the
    actuated WR joints also servo the torso pitch (the ankle never does)."""
    active = tuple(ActiveLayout(name, torso_feedback=torso_feedback) for name in active_wr) + (
        ActiveLayout("ankle", reference_bounds=bd.human_reference_angle("ankle")),)
    return ControlLayout(active=active, passive=tuple(passive_wr),
                         optimize_frequency=optimize_frequency)


def human_layout(kind: int = sg.STEP, reference_points: int = 4,
                 passive_wr: tuple[str, ...] = (), hip_torso_feedback: bool = False) -> ControlLayout:
    """Chapter-4 layout (Table 4.3): hip, knee, ankle with a 4-point ppoly reference and
    stiffness/damping of one kind (constant, step or ppoly with 4 points). With
    ``passive_wr`` the wearer-space law of a co-design (:mod:`codesign.control.wearer`):
    the same hip, knee and ankle law, the device's actuators delivering hip and knee, and
    its other joints passive (eq. 5.12). ``hip_torso_feedback``: the hip also servos the
    torso's pitch over an arc of its phase (``hip.torso.*``, SIMBICON's stance hip;
    :mod:`codesign.control.impedance`), 6 parameters more (51)."""
    active = tuple(ActiveLayout(j, reference_points, kind, kind, bd.human_reference_angle(j),
                                shared_step_timing=True,
                                torso_feedback=hip_torso_feedback and j == "hip")
                   for j in ("hip", "knee", "ankle"))
    return ControlLayout(active=active, passive=tuple(passive_wr))
