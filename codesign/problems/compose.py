"""The one factory of the walking problems: options -> :class:`~codesign.problems.base.Problem`.

:func:`walking_problem` reads a :class:`~codesign.problems.options.ProblemOptions` record
and builds, from it alone, the problem's space, its default stages (joined by name,
:func:`stages_before`, never by position), its metrics, its settings parser and the
hooks that decode, check and replay one design. The families' own code stays in their
modules (what a candidate is and how it is evaluated):

* ``device = "none"``: the unaugmented human (:mod:`codesign.problems.human_gait`); with
  ``wearer_model = "muscles"``, its reflexes searched (:mod:`codesign.problems.muscle_gait`);
* a passive wearer: the co-design (:mod:`codesign.problems.exo_codesign`);
* an active wearer, ``search = "device"``: a device assisting it
  (:mod:`codesign.problems.exo_assist`); ``device = "ideal"``: an ideal device's
  assistance profile alone (the same module);
* an active wearer, ``search = "wearer"``: the wearer adapting to a frozen device
  (:mod:`codesign.problems.wearer_adapt`); ``search = "wearer_assist"``: with the
  device's assistance profile.
"""

from __future__ import annotations

import functools

from codesign.errors import UserError
from codesign.objectives import Objective
from codesign.problems import exo_assist as ea
from codesign.problems import exo_codesign as ex
from codesign.problems import human_gait as hg
from codesign.problems import muscle_gait as mg
from codesign.problems import objectives as ob
from codesign.problems import wearer_adapt as wa
from codesign.problems.base import Problem, WalkingHooks
from codesign.problems.effort import EFFORT_UNITS, OWN_UNITS
from codesign.problems.options import LATER_OPTIONS, PRESETS, ProblemOptions, problem_key
from codesign.problems.robust import ROBUST_METRIC
from codesign.problems.walking import METRICS, cost_notes, parse_human_settings, replay_design, unit_of
from codesign.topology.catalog import cached_catalog
from codesign.types import Parameter

# the metrics robust checks add to every walking problem's record (an assisting device's effort besides)
ROBUST_WALK = (ROBUST_METRIC, "grf_peak_bw_robust", "grf_peak_bw_start_robust",
               "knee_flexion_stance_peak_min_deg_robust")
ROBUST_EFFORT = ("effort_reduction_robust", "speed_change_abs_robust")
# what each preset is, in a sentence (a composed problem's is its options')
DESCRIPTIONS = {
    "exo_codesign": "co-design of a wearable robot: topology, actuator pair, morphology and control "
                    "(thesis chapter 5); MMPSO over the catalog's subspaces",
    "exo_codesign_balance": "co-design as exo_codesign, the actuated pair also servoing the torso pitch "
                            "(a balance term; not in the thesis)",
    "exo_codesign_wearer": "co-design as exo_codesign with the control in the wearer's joint space: one hip, "
                           "knee and ankle law for every subspace, delivered through each linkage's "
                           "transmission (tau_a = G^T tau_h)",
    "exo_codesign_wearer_drive": "co-design as exo_codesign_wearer with each actuated joint's drivetrain "
                                 "searched too: a catalog motor and an extra reduction (reflected inertia, "
                                 "continuous rating, mass)",
    "exo_codesign_drive": "co-design as exo_codesign (the thesis's law) with each actuated joint's drivetrain "
                          "searched too, as in exo_codesign_wearer_drive",
    "exo_codesign_wearer_balance_drive": "co-design as exo_codesign_wearer_drive with the hip's torso term in "
                                         "the wearer-space law (human_gait_balance's law: a human-like gait's "
                                         "seed)",
    "exo_assist": "co-design a device that lowers an active wearer's effort: topology, actuator pair, "
                  "morphology, drivetrains and an assistance profile (issue 32)",
    "exo_assist_wearer": "the wearer adapting to a frozen assisting device: the wearer's hip, knee and ankle "
                         "law searched, compared with the wearer before it adapted and with the adapted law "
                         "alone (issue 32)",
    "exo_assist_ideal": "an ideal device assisting an active wearer: its assistance profile at the wearer's "
                        "own hip and knee, no linkage and no mass (a real device's as evaluation.device_loads; "
                        "Dembia et al. 2017)",
    "human_gait": "unaugmented human, step impedance at hip, knee and ankle (thesis chapter 4, Table 4.2 "
                  "objectives)",
    "human_gait_balance": "unaugmented human, step impedance at hip, knee and ankle, the hip servoing the "
                          "torso's pitch (SIMBICON's stance hip)",
}


def stages_before(stages: tuple[Objective, ...], metric: str) -> tuple[Objective, ...]:
    """The stages before the one on ``metric`` (ValueError when none is)."""
    names = [stage.metric for stage in stages]
    return tuple(stages[:names.index(metric)])


def law_parameters(hip_torso_feedback: bool) -> tuple[Parameter, ...]:
    """The human's (or an active wearer's) law as a searched space: Table 4.3 "step" (45
    parameters; 51 with the hip's torso term)."""
    return tuple(Parameter(n, lo, hi) for n, (lo, hi) in hg.human_gait_layout(hip_torso_feedback).bounds().items())


def wearer_law_parameters(options: ProblemOptions) -> tuple[Parameter, ...]:
    """An adapting wearer's searched law: the 25 reflexes under muscles, else the impedance
    law (:func:`law_parameters`)."""
    if options.wearer_model == "muscles":
        return mg.reflex_parameters()
    return law_parameters(options.torso_feedback)


def family(options: ProblemOptions) -> str:
    """Which family's code evaluates the options: "human", "codesign", "assist", "ideal" or
    "adapt"."""
    if options.device == "none":
        return "human"
    if options.device == "ideal":
        return "ideal"
    if options.wearer == "passive":
        return "codesign"
    return "assist" if options.search == "device" else "adapt"


def walking_problem(options: ProblemOptions) -> Problem:
    """The walking problem the options describe (checked by
    :func:`~codesign.problems.options.parse_options`), under its key
    (:func:`~codesign.problems.options.problem_key`); the frozen designs' files are
    settings, not part of it."""
    options = options.space()
    name = problem_key(options)
    kind = family(options)
    pools: tuple = ()
    metrics = METRICS
    codesign = ob.codesign_stages()
    if kind == "human" and options.wearer_model == "muscles":   # the reflexes searched (issue 45)
        parameters = mg.reflex_parameters()
        stages, parse, run, check = mg.muscle_stages(), parse_human_settings, hg.run_human, hg.check_design
        decode, replay, warmup, encode = mg.decode, replay_design, hg.warmup, mg.encode
        metrics += ROBUST_WALK
    elif kind == "human":
        parameters = law_parameters(options.torso_feedback)
        stages, parse, run, check = ob.human_stages(), parse_human_settings, hg.run_human, hg.check_design
        decode, replay, warmup, encode = hg.decode, replay_design, hg.warmup, None
        metrics += ROBUST_WALK
    elif kind == "codesign":
        parameters, pools = ex.codesign_space(cached_catalog(), options)
        stages, parse, run, check = codesign, ex.parse_codesign_settings, ex.run_walk, ex.check_design
        decode, replay, warmup = ex.decode, replay_design, ex.warmup
        encode = functools.partial(encode_codesign, options=options)
        metrics += ROBUST_WALK
    elif kind == "assist":
        parameters, pools = ex.codesign_space(cached_catalog(), options, ea.assist_parameters())
        stages = ea.assist_stages(stages_before(codesign, "speed_assist_score"))
        parse, run, check = ea.parse_assist_settings, run_assist, ea.check_design
        decode, replay, warmup, encode = ea.decode, ea.replay_assist, ea.warmup, ea.encode
        metrics += (*EFFORT_UNITS, *ROBUST_WALK, *ROBUST_EFFORT)
    elif kind == "ideal":
        parameters = ea.ideal_parameters(options)
        motors = options.drivetrains == "searched"       # its drivetrains' speed and thermal stages
        stages = ea.ideal_stages(stages_before(ob.codesign_stages(motors=motors), "speed_assist_score"))
        parse, run, check = ea.parse_assist_settings, run_assist, ea.check_ideal_design
        decode, replay, warmup, encode = ea.decode_ideal, ea.replay_assist, hg.warmup, ea.encode_ideal
        metrics += (*EFFORT_UNITS, *ROBUST_WALK, *ROBUST_EFFORT)
        if options.search == "wearer_assist":                   # the wearer adapts with the profile
            parameters = wearer_law_parameters(options) + parameters
            stages = wa.adapt_stages(stages_before(stages, "effort_reduction"))
            decode, replay, run = wa.decode_ideal, wa.replay_ideal_adapted, run_ideal_adapted
            encode = functools.partial(wa.encode, options=options)
            metrics += (*OWN_UNITS, "effort_reduction_device_robust")
    else:
        parameters = wearer_law_parameters(options)     # the reflexes (or law) adapt (issue 46)
        if options.search == "wearer_assist":                    # the profile adapts with it
            parameters += ea.assist_parameters()
        assist = ea.assist_stages(stages_before(codesign, "speed_assist_score"))
        stages = wa.adapt_stages(stages_before(assist, "effort_reduction"))
        parse, run, check = wa.parse_adapt_settings, run_adapted, wa.check_design
        decode, replay, warmup = wa.decode, wa.replay_adapted, wa.warmup
        encode = functools.partial(wa.encode, options=options)
        metrics += tuple(EFFORT_UNITS) + tuple(OWN_UNITS)
    # the options that set evaluation keys: each where it is not its default, the assisted
    # joints wherever there is a device (a linkage's hip_knee refuses another in the table)
    device = kind in ("assist", "ideal", "adapt")
    fixed = {key: getattr(options, key) for key in LATER_OPTIONS
             if getattr(options, key) != LATER_OPTIONS[key] or (key == "assisted_joints" and device)}
    if fixed:
        parse = functools.partial(parse_option_settings, parse=parse, fixed=fixed)
    decoder = functools.partial(decode, options=options)
    evaluate = functools.partial(ex.evaluate_decoded, parse=parse, decoder=decoder, run=run)
    hooks = WalkingHooks(decode=decoder, check_design=check, replay=replay, encode=encode)
    return Problem(name, evaluate, DESCRIPTIONS.get(name) or f"a walking problem with the options {name}",
                   parameters=parameters, pools=pools, objectives=stages, parse_settings=parse,
                   warmup=warmup, notes=cost_notes, metrics=metrics, walking=hooks, metric_unit=unit_of,
                   options=options)


def parse_option_settings(table, parse, fixed: dict):
    """``parse_settings`` of a problem whose options set evaluation keys of the same name
    (``fixed``: ``wearer_model``, ``assisted_joints``; :data:`~codesign.problems.options.LATER_OPTIONS`):
    the ``[evaluation]`` table's keys set to them (UserError, one line, where the table
    names another), then the family's ``parse``."""
    table = dict(table)
    for key, value in fixed.items():
        given = table.setdefault(key, value)
        if given != value:
            raise UserError(f"evaluation.{key}: {given!r} under the problem's {key} = {value!r}; "
                            "expected it once (in [problem])")
    return parse(table)


def encode_codesign(design, options: ProblemOptions):
    """``WalkingHooks.encode`` of the co-design: ((its subspace group,), its parameters
    under the search's names) (:func:`codesign.problems.exo_codesign.encode`)."""
    group, params = ex.encode(design, options)
    return (group,), params


def run_assist(design, settings):
    """An assisting device's evaluation: the assisted walk and the comparison."""
    return ea.replay_assist(design, settings).record


def run_ideal_adapted(design, settings):
    """An ideal device's evaluation with its wearer adapting: the walk and both comparisons."""
    return wa.replay_ideal_adapted(design, settings).record


def run_adapted(design, settings):
    """An adapted wearer's evaluation: the assisted walk and both comparisons."""
    return wa.replay_adapted(design, settings).record

