"""The optimization problems of the walking evaluation: co-design (chapter 5), human gait (chapter 4).

The co-design search (``exo_codesign``, thesis 5.4.1): its MMPSO space.

* Pool ``subspace``: one group per (topology, actuator pair) in catalog order (126 with the
  default catalog), named ``t<topology>_a<i>-<j>`` (``t03_a1-4``: topology 3, joints 1 and
  4 actuated). Its subspace id is the catalog's (OPT's mixed-radix id with a one-group
  second pool). A group holds its topology's morphological parameters (MODEL's
  :func:`~codesign.model.morphology.parameter_space`) and the control parameters of its
  WR joints (WALK's :func:`~codesign.control.parameters.codesign_layout` without the
  ankle): step impedance with a 5-point reference for the two actuated joints, a
  spring/damper (eq. 5.12) for every other added joint.
* Pool ``common``: one group ``common`` with the ankle's step impedance (thesis 5.4.1:
  "a second parameter pool with a single parameter group ... the common parameters").

Names (what is shared between groups is shared *by name*, and MMPSO keeps a shared value
when a particle migrates, thesis 3.2.1): a topology's parameters carry its prefix
``t<NN>.`` followed by MODEL's / WALK's name: ``t03.j2_s`` (morphology), ``t03.j1.ref.y0``
(actuated joint 1), ``t03.j5.k`` (passive joint 5). So

* the morphology of topology t is shared by all its actuator pairs (the same linkage),
* an actuated joint's impedance is shared by the pairs of t that actuate that joint,
* a passive joint's spring/damper by the pairs of t in which it is passive,
* nothing is shared across topologies: joint ids are numbered per topology, joint 3 of
  topology 1 and joint 3 of topology 2 are different joints in different places.

The ankle (``ankle.*``) has no prefix: it is the human's ankle in every design. The gait
frequency is not searched: WALK's 0.9 Hz (thesis 4.1.2; ``evaluation.optimize_frequency``
is refused). The space is built from ``topologies/catalog.json`` (else the repository's
copy); an ``evaluation.catalog`` must hold the same subspaces, or its candidates fail.

Objectives. Stage 1 of Tables 5.3 and 4.2 ("time until time = maxtime") is stated on
``time_fraction`` = time survived / ``max_time`` (until >= 1): the same order for a fixed
``max_time``, and it stays right when a spec changes ``evaluation.max_time`` (a stage on
``time`` until 10 s could never be met by a 5-s evaluation). The stages are
:func:`codesign.problems.objectives.codesign_stages` (Table 5.3 with the issue-15 stages
that reject unphysical gaits). A spec's ``[[objectives]]`` replaces them.

The options (:mod:`codesign.problems.options`; each preset name is a set of them) change
the space, never the rest:

* ``torso_feedback`` under ``control = "actuator"`` (``exo_codesign_balance``, not in the
  thesis): the actuated pair's torso feedback (:mod:`codesign.control.impedance`): six
  more parameters per actuated joint, ``t03.j1.torso.step.t1`` ...
* ``control = "wearer"`` (``exo_codesign_wearer``, issue 29): the control in the
  wearer's joint space (:mod:`codesign.control.wearer`). The common pool holds the
  chapter-4 hip, knee and ankle law under its own names (``hip.ref.y0``, ``knee.step.t1``
  ..., 45 parameters: a human-gait design is a point of it, and a spec's
  ``space.start_design`` can start the swarm there), one law for every subspace; a group
  holds its topology's morphology and its passive joints' springs (24 parameters for the
  default catalog, against 62). The pair's actuators deliver tau_a = G^T tau_h through
  the linkage's transmission, so moving the morphology keeps the gait. With
  ``torso_feedback`` the law carries the hip's torso term (``hip.torso.*``, 6 more in
  the common pool): a ``human_gait_balance`` design is a point of it.
* ``drivetrains = "searched"`` (``exo_codesign_wearer_drive``, ``exo_codesign_drive``,
  issue 30): per group, for each joint of the pair, ``t03.j1.motor`` (a unit of the
  motor catalog, ``codesign/model/data/motors.toml``, by the integer part of a value in
  [0, number of units)) and ``t03.j1.stage_ratio`` (an extra reduction in [1, 8]); a
  drivetrain sets its joint's envelope, continuous rating, mass and reflected inertia
  (:mod:`codesign.model.drivetrain`).

Evaluation: decode the candidate (group name + parameters) into WALK's
:class:`~codesign.walking.Design` and hand it to WALK's ``evaluate(design,
settings)`` (screening, rollout, metrics; the spec's ``[evaluation]`` table are WALK's
:class:`~codesign.walking.WalkSettings`). Never raises: a bad candidate or a bad
settings table is a failed :class:`EvalRecord` naming the problem.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Mapping

from codesign.control.parameters import ControlLayout, codesign_layout
from codesign.errors import UserError
from codesign.model.drivetrain import drive_parameter_bounds
from codesign.model.morphology import parameter_space
from codesign.problems.human_gait import warmup as warmup_human
from codesign.problems.options import ProblemOptions
from codesign.problems.walking import (WalkingProblemSettings, check_walking_design, parse_problem_settings, walk,
                                       walk_robust, warmup_settings)
from codesign.types import Group, Parameter, Pool
from codesign.topology.catalog import Catalog, Topology, cached_catalog
from codesign.types import EvalContext, EvalRecord
from codesign.walking import Design, WalkSettings, human_control_layout, wearer_control_layout, wr_control_layout

SUBSPACE_POOL = "subspace"
COMMON_POOL = "common"
COMMON_GROUP = "common"

_GROUP_RE = re.compile(r"^t(\d+)_a(\d+)-(\d+)$")


# --------------------------------------------------------------------------- names
def group_name(topology_id: int, actuators: tuple[int, ...]) -> str:
    """Stable group name of a (topology, actuator pair) subspace: ``t03_a1-4``."""
    return f"t{topology_id:02d}_a" + "-".join(str(a) for a in actuators)


def parse_group_name(name: str) -> tuple[int, tuple[int, int]]:
    """(topology id, actuator pair) of a group name; ValueError if it is not one."""
    match = _GROUP_RE.match(name)
    if match is None:
        raise ValueError(f"group {name!r}: expected a name like 't03_a1-4'")
    return int(match.group(1)), (int(match.group(2)), int(match.group(3)))


def topology_prefix(topology_id: int) -> str:
    return f"t{topology_id:02d}."


# --------------------------------------------------------------------------- settings
def parse_codesign_settings(table: Mapping[str, Any]) -> WalkingProblemSettings:
    """``parse_settings`` of the co-design problems: WALK's settings (the gait frequency
    fixed, a passive wearer) and a catalog that can be read."""
    settings = parse_problem_settings(table)
    if settings.walk.wearer != "passive":
        raise UserError(f"evaluation.wearer: got {settings.walk.wearer!r}; expected \"passive\" (these problems "
                        "move a passive wearer; a device assisting an active wearer is problem exo_assist)")
    cached_catalog(settings.walk.catalog)
    return settings


# --------------------------------------------------------------------------- layouts
# Under the wearer-space law a passive joint's spring acts on the wearer's hip and knee
# through the linkage (its angle is a function of theirs): drawn from its whole range
# (up to 12 000 N m/rad) it locks the leg, and the device fights the gait (the first
# wearer-space search: cuff forces of 10 kN, the actuators asked 10x what they deliver).
# Its particles start with the passive joints nearly free, as codesign transfer sets
# them; the search may stiffen them within the bounds. Field -> (init low, init high).
PASSIVE_INIT = {"k": (0.0, 20.0), "d": (0.0, 2.0)}      # N m/rad, N m s/rad
THESIS = ProblemOptions()          # the thesis's law, the spec's rating (exo_codesign)


def subspace_layout(topology: Topology, actuators: tuple[int, ...], options: ProblemOptions = THESIS) -> ControlLayout:
    """WALK's control layout of one subspace (gait frequency fixed): the thesis's chapter-5
    layout (``control = "actuator"``: the pair's joints and the ankle active, every other
    added joint passive; ``torso_feedback``: the pair also servos the torso pitch) or the
    wearer-space law's (``control = "wearer"``: chapter-4 hip, knee and ankle, delivered
    through the pair, with the hip's torso term under ``torso_feedback``; the other added
    joints passive)."""
    if options.control == "wearer":
        return wearer_control_layout(topology, tuple(actuators), WalkSettings(), options.torso_feedback)
    return wr_control_layout(topology, tuple(actuators), WalkSettings(), options.torso_feedback)


def common_layout(options: ProblemOptions = THESIS) -> ControlLayout:
    """The common pool's layout: the ankle (the thesis's law) or the wearer's hip, knee
    and ankle (chapter 4's names: a human-gait design is a point of this pool)."""
    if options.control == "wearer":
        return human_control_layout(WalkSettings(), options.torso_feedback)
    return codesign_layout((), ())


def subspace_parameters(topology: Topology, actuators: tuple[int, ...],
                        options: ProblemOptions = THESIS) -> tuple[Parameter, ...]:
    """The group's parameters (prefixed names, bounds): morphology, then the added joints'
    control (the common pool's names left out), then (``drivetrains = "searched"``) the
    pair's drivetrains."""
    prefix = topology_prefix(topology.id)
    common = set(common_layout(options).parameter_names())
    out = [Parameter(prefix + p.name, p.low, p.high) for p in parameter_space(topology)]
    for name, (low, high) in subspace_layout(topology, actuators, options).bounds().items():
        if name in common:
            continue
        init = PASSIVE_INIT.get(name.rsplit(".", 1)[1]) if options.control == "wearer" else None
        out.append(Parameter(prefix + name, low, high, *(init or (None, None))))
    if options.drivetrains == "searched":
        out += [Parameter(prefix + name, low, high) for name, (low, high) in drive_parameter_bounds(actuators).items()]
    return tuple(out)


def common_parameters(options: ProblemOptions = THESIS) -> tuple[Parameter, ...]:
    """The common pool's parameters (the same for every subspace): :func:`common_layout`."""
    return tuple(Parameter(n, lo, hi) for n, (lo, hi) in common_layout(options).bounds().items())


def codesign_space(catalog: Catalog, options: ProblemOptions = THESIS, common: tuple[Parameter, ...] | None = None
                   ) -> tuple[tuple[Parameter, ...], tuple[Pool, Pool]]:
    """(all parameters, (subspace pool, common pool)) of the co-design search under
    ``options``; ``common``: the common pool's parameters instead of the law's
    (:func:`common_parameters`; exo_assist's assistance profile)."""
    parameters: dict[str, Parameter] = {}
    groups = []
    for _sid, tid, pair in catalog.subspaces():
        own = subspace_parameters(catalog.topology(tid), pair, options)
        for p in own:
            known = parameters.setdefault(p.name, p)
            if (known.low, known.high) != (p.low, p.high):
                raise ValueError(f"parameter {p.name}: bounds differ between groups")
        groups.append(Group(group_name(tid, pair), tuple(p.name for p in own)))
    common = common_parameters(options) if common is None else common
    parameters.update((p.name, p) for p in common)
    pools = (Pool(SUBSPACE_POOL, tuple(groups)),
             Pool(COMMON_POOL, (Group(COMMON_GROUP, tuple(p.name for p in common)),)))
    return tuple(parameters.values()), pools


# --------------------------------------------------------------------------- designs
def decode(groups: tuple[str, ...], params: Mapping[str, float], settings: WalkingProblemSettings,
           options: ProblemOptions = THESIS) -> Design:
    """The design of a candidate (its active groups, the subspace pool's first, and
    parameters) under ``settings``' catalog and the problem's ``options``: :func:`decode_group`."""
    if len(groups) < 1:
        raise ValueError("no subspace group given; expected the subspace pool's group name")
    return decode_group(groups[0], params, cached_catalog(settings.walk.catalog), options)


def decode_group(group: str, params: Mapping[str, float], catalog: Catalog,
                 options: ProblemOptions = THESIS) -> Design:
    """WALK's :class:`~codesign.walking.Design` of a candidate (its subspace
    group name and parameters) under the problem's ``options`` (its law and drivetrains):
    topology id, actuator pair and the parameters under their local names (MODEL's
    ``j2_s``, WALK's ``j1.ref.y0``, ``ankle.K.v1``).

    Raises ValueError naming the problem: unknown group, a missing parameter, a value
    that is not a finite number or lies outside its bounds. Parameters of other groups
    are ignored (a space passes only the active groups' parameters anyway).
    """
    tid, pair = parse_group_name(group)
    if not any(t == tid and tuple(p) == pair for _sid, t, p in catalog.subspaces()):
        raise ValueError(f"group {group!r}: no such (topology, actuator pair) in the catalog")
    prefix = topology_prefix(tid)
    local = {}
    for p in subspace_parameters(catalog.topology(tid), pair, options) + common_parameters(options):
        local[p.name.removeprefix(prefix)] = checked_value(p, params, f" for group {group}")
    return Design(local, tid, pair)


def checked_value(p: Parameter, params: Mapping[str, float], where: str = "") -> float:
    """The value of parameter ``p`` in a candidate's ``params``; ValueError naming it (and
    ``where``) when missing, not a finite number or outside its bounds."""
    value = params.get(p.name)
    if value is None:
        raise ValueError(f"parameter {p.name}: missing{where}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"parameter {p.name}: {value!r} is not a finite number")
    if not p.low <= value <= p.high:
        raise ValueError(f"parameter {p.name}: {value} outside [{p.low}, {p.high}]")
    return float(value)


def encode(design: Design, options: ProblemOptions = THESIS) -> tuple[str, dict[str, float]]:
    """(group name, candidate parameters) of a co-design Design under ``options``: the
    inverse of :func:`decode`."""
    prefix = topology_prefix(design.topology)
    common = set(common_layout(options).parameter_names())
    params = {(k if k in common else prefix + k): v for k, v in design.params.items()}
    return group_name(design.topology, design.actuators), params


def evaluate_decoded(params: dict[str, float], context: EvalContext, parse: Callable, decoder: Callable,
                     run: Callable) -> EvalRecord:
    """A co-design problem's evaluate (OPT's contract; never raises for a bad candidate):
    the context's settings (else ``parse({})``), the candidate decoded by ``decoder``
    (groups, params, settings) -> Design, and ``run(design, settings)`` -> EvalRecord; a
    candidate that does not decode is a failed record naming why."""
    try:
        settings = context.settings or parse({})
        design = decoder(context.subspace, params, settings)
    except (ValueError, UserError) as exc:
        return EvalRecord.failed(f"decode: {exc}")
    return run(design, settings)


def run_walk(design: Design, settings: WalkingProblemSettings) -> EvalRecord:
    """The co-design problems' evaluation of a decoded design: WALK's walk (replayed under
    the settings' robust checks when it walks: :func:`~codesign.problems.walking.walk_robust`)."""
    return walk_robust(design, settings)


def check_design(design: Design, settings: WalkingProblemSettings, where: str = "design") -> None:
    """``WalkingHooks.check_design``: :func:`~codesign.problems.walking.check_walking_design`."""
    check_walking_design(design, settings.walk, where, augmented=True)


def warmup(settings: WalkingProblemSettings) -> None:
    """Compile (or load from numba's disk cache) the kernels in this process once: screen
    the first subspace's design at the middle of its bounds, and simulate the unaugmented
    human for 50 ms (the same compiled rollout; a mid-bounds WR design is usually singular
    and would not reach it). Measured: 50-93 s CPU on a cold cache, ~1 s warm."""
    catalog = cached_catalog(settings.walk.catalog)
    parameters, pools = codesign_space(catalog, THESIS)
    names = set(pools[0].groups[0].parameters) | set(pools[1].groups[0].parameters)
    middle = {p.name: 0.5 * (p.low + p.high) for p in parameters if p.name in names}
    short = warmup_settings(settings.walk)
    walk(decode_group(pools[0].groups[0].name, middle, catalog), short)
    warmup_human(WalkingProblemSettings(short))
