"""The optimization problems of the walking evaluation: co-design (chapter 5), human gait (chapter 4).

``PROBLEM`` ("exo_codesign", thesis 5.4.1): the MMPSO space of the co-design search.

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

``BALANCE_PROBLEM`` ("exo_codesign_balance", not in the thesis): the same search with the
actuated pair's torso feedback (:mod:`codesign.control.impedance`): six more parameters
per actuated joint, ``t03.j1.torso.step.t1`` ... (a design with them is decoded with that
law; one without, with the thesis's).

Evaluation: decode the candidate (group name + parameters) into WALK's
:class:`~codesign.walking.Design` and hand it to WALK's ``evaluate(design,
settings)`` (screening, rollout, metrics; the spec's ``[evaluation]`` table are WALK's
:class:`~codesign.walking.WalkSettings`). Never raises: a bad candidate or a bad
settings table is a failed :class:`EvalRecord` naming the problem.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from codesign.control.parameters import ControlLayout, codesign_layout
from codesign.errors import UserError
from codesign.model.morphology import parameter_space
from codesign.problems.base import Problem, WalkingHooks
from codesign.problems.human_gait import warmup as warmup_human
from codesign.problems.walking import (METRICS, WalkingProblemSettings, check_walking_design, cost_notes,
                                       parse_walk_settings, replay_design, walk, warmup_settings)
from codesign.types import Group, Parameter, Pool
from codesign.topology.catalog import Catalog, Topology, cached_catalog
from codesign.types import EvalContext, EvalRecord
from codesign.problems import objectives as ob
from codesign.walking import Design, WalkSettings, has_torso_feedback, wr_control_layout

PROBLEM = "exo_codesign"
BALANCE_PROBLEM = "exo_codesign_balance"
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
    fixed) and a catalog that can be read."""
    settings = WalkingProblemSettings(parse_walk_settings(table))
    cached_catalog(settings.walk.catalog)
    return settings


# --------------------------------------------------------------------------- layouts
def subspace_layout(topology: Topology, actuators: tuple[int, ...],
                    torso_feedback: bool = False) -> ControlLayout:
    """WALK's chapter-5 control layout of one subspace: the pair's joints and the ankle
    actuated, every other added joint passive (gait frequency fixed); ``torso_feedback``:
    the pair also servos the torso pitch (the balance problem)."""
    return wr_control_layout(topology, tuple(actuators), WalkSettings(), torso_feedback)


def _is_ankle(name: str) -> bool:
    return name.startswith("ankle.")


def subspace_parameters(topology: Topology, actuators: tuple[int, ...],
                        torso_feedback: bool = False) -> tuple[Parameter, ...]:
    """The group's parameters (prefixed names, bounds): morphology, then WR-joint control."""
    prefix = topology_prefix(topology.id)
    out = [Parameter(prefix + p.name, p.low, p.high) for p in parameter_space(topology)]
    for name, (low, high) in subspace_layout(topology, actuators, torso_feedback).bounds().items():
        if not _is_ankle(name):
            out.append(Parameter(prefix + name, low, high))
    return tuple(out)


def common_parameters() -> tuple[Parameter, ...]:
    """The common pool's parameters: the ankle's (the same for every subspace)."""
    layout = codesign_layout((), ())
    return tuple(Parameter(n, lo, hi) for n, (lo, hi) in layout.bounds().items())


def codesign_space(catalog: Catalog, torso_feedback: bool = False
                   ) -> tuple[tuple[Parameter, ...], tuple[Pool, Pool]]:
    """(all parameters, (subspace pool, common pool)) of the co-design search (with the
    torso-feedback parameters: the balance problem's)."""
    parameters: dict[str, Parameter] = {}
    groups = []
    for _sid, tid, pair in catalog.subspaces():
        own = subspace_parameters(catalog.topology(tid), pair, torso_feedback)
        for p in own:
            known = parameters.setdefault(p.name, p)
            if (known.low, known.high) != (p.low, p.high):
                raise ValueError(f"parameter {p.name}: bounds differ between groups")
        groups.append(Group(group_name(tid, pair), tuple(p.name for p in own)))
    common = common_parameters()
    parameters.update((p.name, p) for p in common)
    pools = (Pool(SUBSPACE_POOL, tuple(groups)),
             Pool(COMMON_POOL, (Group(COMMON_GROUP, tuple(p.name for p in common)),)))
    return tuple(parameters.values()), pools


# --------------------------------------------------------------------------- designs
def decode(groups: tuple[str, ...], params: Mapping[str, float], settings: WalkingProblemSettings) -> Design:
    """The design of a candidate (its active groups, the subspace pool's first, and
    parameters) under ``settings``' catalog: :func:`decode_group`."""
    if len(groups) < 1:
        raise ValueError("no subspace group given; expected the subspace pool's group name")
    return decode_group(groups[0], params, cached_catalog(settings.walk.catalog))


def decode_group(group: str, params: Mapping[str, float], catalog: Catalog) -> Design:
    """WALK's :class:`~codesign.walking.Design` of a candidate (its subspace
    group name and parameters): topology id, actuator pair and the parameters under their
    local names (MODEL's ``j2_s``, WALK's ``j1.ref.y0``, ``ankle.K.v1``).

    Raises ValueError naming the problem: unknown group, a missing parameter, a value
    that is not a finite number or lies outside its bounds. Parameters of other groups
    are ignored (a space passes only the active groups' parameters anyway). A candidate
    with the pair's torso-feedback parameters is decoded with them (the balance
    problem's), else with the thesis's law.
    """
    tid, pair = parse_group_name(group)
    if not any(t == tid and tuple(p) == pair for _sid, t, p in catalog.subspaces()):
        raise ValueError(f"group {group!r}: no such (topology, actuator pair) in the catalog")
    prefix = topology_prefix(tid)
    torso = has_torso_feedback(pair, {k.removeprefix(prefix): v for k, v in params.items()
                                      if k.startswith(prefix)})
    local = {}
    for p in subspace_parameters(catalog.topology(tid), pair, torso) + common_parameters():
        value = params.get(p.name)
        if value is None:
            raise ValueError(f"parameter {p.name}: missing for group {group}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"parameter {p.name}: {value!r} is not a finite number")
        if not p.low <= value <= p.high:
            raise ValueError(f"parameter {p.name}: {value} outside [{p.low}, {p.high}]")
        local[p.name.removeprefix(prefix)] = float(value)
    return Design(local, tid, pair)


def encode(design: Design) -> tuple[str, dict[str, float]]:
    """(group name, candidate parameters) of a co-design Design: the inverse of :func:`decode`."""
    prefix = topology_prefix(design.topology)
    params = {(k if _is_ankle(k) else prefix + k): v for k, v in design.params.items()}
    return group_name(design.topology, design.actuators), params


def evaluate(params: dict[str, float], context: EvalContext) -> EvalRecord:
    """The co-design problem's evaluate (OPT's contract): never raises for a bad candidate."""
    try:
        settings = context.settings or parse_codesign_settings({})
        design = decode(context.subspace, params, settings)
    except (ValueError, UserError) as exc:
        return EvalRecord.failed(f"decode: {exc}")
    return walk(design, settings.walk)


def check_design(design: Design, settings: WalkingProblemSettings, where: str = "design") -> None:
    """``WalkingHooks.check_design``: :func:`~codesign.problems.walking.check_walking_design`."""
    check_walking_design(design, settings.walk, where, augmented=True)


def warmup(settings: WalkingProblemSettings) -> None:
    """Compile (or load from numba's disk cache) the kernels in this process once: screen
    the first subspace's design at the middle of its bounds, and simulate the unaugmented
    human for 50 ms (the same compiled rollout; a mid-bounds WR design is usually singular
    and would not reach it). Measured: 50-93 s CPU on a cold cache, ~1 s warm."""
    catalog = cached_catalog(settings.walk.catalog)
    parameters, pools = codesign_space(catalog)
    names = set(pools[0].groups[0].parameters) | set(pools[1].groups[0].parameters)
    middle = {p.name: 0.5 * (p.low + p.high) for p in parameters if p.name in names}
    short = warmup_settings(settings.walk)
    walk(decode_group(pools[0].groups[0].name, middle, catalog), short)
    warmup_human(WalkingProblemSettings(short))


WALKING = WalkingHooks(decode=decode, check_design=check_design, replay=replay_design)


def problem(torso_feedback: bool = False) -> Problem:
    """The co-design problem (``torso_feedback``: the balance variant)."""
    parameters, pools = codesign_space(cached_catalog(), torso_feedback)
    name, description = (
        (BALANCE_PROBLEM, "co-design as exo_codesign, the actuated pair also servoing the "
                          "torso pitch (a balance term; not in the thesis)") if torso_feedback else
        (PROBLEM, "co-design of a wearable robot: topology, actuator pair, morphology and "
                  "control (thesis chapter 5); MMPSO over the catalog's subspaces"))
    return Problem(name, evaluate, description, parameters=parameters, pools=pools,
                   objectives=ob.codesign_stages(), parse_settings=parse_codesign_settings,
                   warmup=warmup, notes=cost_notes, metrics=METRICS, walking=WALKING)
