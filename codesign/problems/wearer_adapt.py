"""``exo_assist_wearer`` (issue 32, optional item): the wearer adapting to a frozen device.

People adapt their gait to an exoskeleton; the ``exo_assist`` wearer does not (its law is
fixed). Here the device is frozen -- an ``exo_assist`` design named by
``evaluation.device_design``: its linkage, drivetrains, passive joints, assistance profile
and its wearer's law -- and the wearer's law is searched: the 51 parameters of
``human_gait_balance`` (chapter 4's hip, knee and ankle with the hip's torso term), or,
under ``wearer_model = "muscles"``, the 25 reflexes of the muscle-driven wearer
(:func:`codesign.problems.muscle_gait.reflex_parameters`; the device's unused impedance
law kept as it is). Under ``search = "wearer_assist"`` the frozen device's assistance
profile is searched with it (16 parameters, :mod:`codesign.control.assist`): the wearer
and the profile adapt together, as a controller and a device are co-optimized in
predictive simulation; the linkage and drivetrains stay frozen.

Two comparisons per candidate (:mod:`codesign.problems.effort`):

* against the wearer *before* it adapted -- the device design's own law walking alone,
  walked once and cached (:func:`codesign.problems.exo_assist.unassisted`): the issue's
  ``effort_reduction``, ``speed_change`` and per-joint metrics, the comparison of a
  human-in-the-loop study (normal walking against walking adapted to the device);
* against the adapted law walking *alone* (``*_own``): ``effort_reduction_own`` = 1 -
  assisted / the candidate's law without the device, and ``wearer_metabolic_own``. The
  chapter-4 law is not effort-optimal, so a search for effort can also find a cheaper
  gait without any device; this says how much of the reduction the device still makes
  once the wearer has adapted.

Stages (:func:`adapt_stages`): ``exo_assist``'s physical stages up to the speed within 5 %
of the wearer before it adapted, the gait of issue 31 kept (its stages of
:data:`codesign.problems.objectives.HUMAN_LIKE` on the joints: per-stride r against
Winter's gait, hip >= 0.96, knee >= 0.90, ankle >= 0.70; push-off plantarflexion >= 10
deg), then
``effort_reduction`` maximized.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from codesign.control.assist import has_assist
from codesign.errors import UserError
from codesign.objectives import Objective
from codesign.problems import exo_assist as ea
from codesign.problems import exo_codesign as ex
from codesign.problems import muscle_gait as mg
from codesign.problems import objectives as ob
from codesign.problems.effort import EFFORT_METRIC, own_comparison
from codesign.problems.human_gait import human_params_error
from codesign.problems.options import PRESETS, ProblemOptions
from codesign.problems.walking import Replay, WalkingProblemSettings, check_walking_design, replay
from codesign.types import EvalRecord
from codesign.walking import Design, load_design

ADAPT = PRESETS["exo_assist_wearer"]


@dataclass(frozen=True)
class AdaptSettings(WalkingProblemSettings):
    """WALK's settings (an active wearer) and the frozen device (None: none named)."""

    device: Design | None = None


def parse_adapt_settings(table: Mapping[str, Any]) -> AdaptSettings:
    """``parse_settings``: WALK's settings with ``wearer = "active"`` (the default here;
    "passive" is refused) and ``device_design``, the path of an ``exo_assist`` design
    (UserError, one line naming the key)."""
    walk, path = ea.parse_active_settings(table, "device_design", "an exo_assist design", "the wearer adapts to the device")
    if path is None:
        return AdaptSettings(walk)
    device = load_design(path)
    if device.topology is None or not has_assist(device.params):
        raise UserError(f"evaluation.device_design: {path} is not a device with an assistance profile; "
                        "expected an exo_assist design (a topology, actuators and assist.*)")
    check_walking_design(device, walk, f"evaluation.device_design ({path})", augmented=True)
    return AdaptSettings(walk, device)


def decode(groups: tuple[str, ...], params: Mapping[str, float], settings: AdaptSettings,
           options: ProblemOptions = ADAPT) -> Design:
    """The frozen device with the candidate's law (:func:`searched_names` under the
    problem's ``options``) in place of its wearer's (ValueError: a law parameter missing,
    not finite or out of bounds; UserError: no device named)."""
    if settings.device is None:
        raise UserError("evaluation.device_design: none named; expected the path of an exo_assist design")
    check_law(params, options)
    if options.search == "wearer_assist":
        for parameter in ea.assist_parameters():
            ex.checked_value(parameter, params)
    law = searched_names(options)
    device = {k: v for k, v in settings.device.params.items() if k not in law}
    return Design({**device, **{k: float(v) for k, v in params.items() if k in law}},
                  settings.device.topology, settings.device.actuators)


def check_law(params: Mapping[str, float], options: ProblemOptions) -> None:
    """ValueError (one line) for a candidate's wearer law -- the reflexes under muscles, else
    the impedance law -- with a parameter missing, not finite or out of bounds."""
    if options.wearer_model == "muscles":
        bad = mg.reflex_error(params)
    else:
        record = human_params_error(params, options.torso_feedback)
        bad = None if record is None else record.message.removeprefix("decode: ")
    if bad is not None:
        raise ValueError(bad)


def decode_ideal(groups: tuple[str, ...], params: Mapping[str, float], settings: ea.AssistSettings,
                 options: ProblemOptions) -> Design:
    """An ideal device's candidate whose wearer adapts (``device = "ideal"``, ``search =
    "wearer_assist"``): the settings' wearer with the candidate's law (:func:`check_law`)
    and profile (:func:`codesign.problems.exo_assist.decode_ideal`)."""
    check_law(params, options)
    design = ea.decode_ideal(groups, params, settings, options)
    law = searched_names(options)
    return Design({**design.params, **{k: float(v) for k, v in params.items() if k in law}})


def searched_names(options: ProblemOptions) -> set[str]:
    """What the wearer's adaptation searches: the muscle-driven wearer's reflexes, else the
    impedance law (:func:`codesign.problems.exo_assist.law_names`); with the device's
    assistance profile (``assist.*``) under ``search = "wearer_assist"``."""
    law = mg.reflex_names() if options.wearer_model == "muscles" else ea.law_names()
    if options.search != "wearer_assist":
        return law
    return law | {p.name for p in ea.ideal_parameters(options)}


def encode(design: Design, options: ProblemOptions = ADAPT) -> tuple[tuple[str, ...], dict[str, float]]:
    """``WalkingHooks.encode``: a design's wearer law under ``options``
    (:func:`searched_names`: a human design's whole law, or an assisting design's wearer)."""
    law = searched_names(options)
    return (), {k: v for k, v in design.params.items() if k in law}


def with_own(record: EvalRecord, design: Design, settings: AdaptSettings) -> EvalRecord:
    """The assisted record compared with the device design's own wearer
    (:func:`codesign.problems.exo_assist.with_effort`) and with ``design``'s law walking
    alone (:func:`~codesign.problems.effort.own_comparison`); a failed record as it is."""
    if not record.ok or settings.device is None:
        return record
    return with_own_alone(ea.with_effort(record, settings.device, settings.walk), design, settings.walk)


def with_own_alone(record: EvalRecord, design: Design, walk) -> EvalRecord:
    """The assisted record compared with ``design``'s law walking alone under ``walk``
    (:func:`~codesign.problems.effort.own_comparison`); a failed record as it is."""
    if not record.ok:
        return record
    alone = ea.unassisted_replay(design, walk).record.metrics
    own = own_comparison(record.metrics, alone, EFFORT_METRIC[walk.wearer_model])
    return dataclasses.replace(record, metrics={**record.metrics, **own})


def replay_ideal_adapted(design: Design, settings: ea.AssistSettings, record_times=None) -> Replay:
    """``WalkingHooks.replay`` of an ideal device whose wearer adapts: the assisted walk
    compared with the settings' wearer before it adapted and with ``design``'s adapted law
    alone, under the settings and under each robust check (the device's share there too)."""
    before = Design(dict(settings.wearer))

    def compare(record: EvalRecord, walk) -> EvalRecord:
        return with_own_alone(ea.with_effort(record, before, walk), design, walk)

    return ea.replay_assist(design, settings, record_times, reference=before, compare=compare)


def replay_adapted(design: Design, settings: AdaptSettings, record_times=None) -> Replay:
    """``WalkingHooks.replay``: the assisted walk with both comparisons."""
    out = replay(design, settings.walk, record_times)
    return dataclasses.replace(out, record=with_own(out.record, design, settings), reference=settings.device)


def check_design(design: Design, settings: AdaptSettings, where: str = "design") -> None:
    """``WalkingHooks.check_design``: an assisting design (:func:`exo_assist.check_design`)."""
    ea.check_design(design, settings, where)


def warmup(settings: AdaptSettings) -> None:
    """Compile (or load) the kernels: the co-design problems' warm-up."""
    ea.warmup(settings)


def adapt_stages(physical: tuple[Objective, ...]) -> tuple[Objective, ...]:
    """The default stages (module docstring) after ``exo_assist``'s ``physical`` stages
    (those before its ``effort_reduction``, :func:`codesign.problems.compose.stages_before`)."""
    gait = tuple(Objective(*stage) for stage in ob.HUMAN_LIKE if stage[0].startswith(("stride_r_", "ankle_")))
    return physical + gait + (Objective("effort_reduction", "maximize"),)
