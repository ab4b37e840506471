"""Robustness priced inside the search: a walker replayed under other contact models.

A walk the optimizer finds with the 1-ms hard-contact rollout may exist in that model
only: the thesis-scale study's topology 5 met every stage in five focused rounds, and every
one of its 37 distinct stage-15 designs fell or slowed under the soft contact law
(studies/codesign-study/README.md). Checking the chosen design afterwards (a study's
verification, ``codesign report --robustness``) cannot steer the swarm away from such
walks; this module lets it price them.

With ``evaluation.robust_checks`` (a list of :data:`CONTACT_CHECKS`: ``"half_step"``, the
run's time step halved; ``"soft"``, the soft law stepped at a quarter of it; and load
checks ``"<segment>_<kg>kg"``, e.g. ``"torso_4kg"`` or ``"foot_2kg"``: that mass carried at
the segment's centre of mass, on each leg for a leg segment, beside the run's own loads --
Browning et al. 2007's protocol, and what a device's mass asks of its wearer; and mass
checks ``"mass_<factor>"``, e.g. ``"mass_1.1"``: every segment of the wearer that much
heavier, ``evaluation.wearer_mass_scale``, issue 46's +-10 %; and checks applied together,
joined by ``+``: ``"mass_1.1+half_step"``, the heavier wearer at half the step) a
co-design, human-gait or ideal-device evaluation (the muscle-driven human's too) whose
walk meets the walking verdict as searched (``time_fraction`` >= 1,
``speed_assist_score`` >= 1) is replayed under each check, and its record gains

    robust_walk_score = min over the checks of  min(time_fraction, 1)
                                                + (speed_assist_score if time_fraction >= 1 else 0)

in [0, 3]: below 1 it fell (the fraction of the walk it survived), in [1, 2) it walked the
whole time too slowly or on the pitch assist (1 + the thesis's speed x no-assist
product), >= 2 it walks under that check as the verdict says (:data:`ROBUST_STAGE`'s
threshold). A walk that does not meet the verdict as searched is not replayed and scores
0: the stage belongs after the speed stage (``speed_assist_score``), where only walkers
reach it. Cost: a replay per check (a soft one ~8 walks: 4x the steps at ~2x a hard
step's cost), for the walkers alone.

The walk's worst under the checks (:data:`ROBUST_WORST`): ``grf_peak_bw_robust``, the
largest steady ground-reaction peak over the walk and its replays (a heavier wearer that
walks on landings of 2 BW does not walk as a person does); ``grf_peak_bw_start_robust`` and
``knee_flexion_stance_peak_min_deg_robust``, the start's largest landing and the least knee
yield (a gait-lab stage met at the run's step can fail at half of it: a muscle walk at 1.3
BW landed at 1.6 BW from the start at h/2); and for an assisting device,
whose walk compares its wearer's effort with the same wearer alone (``effort_reduction``,
:mod:`codesign.problems.effort`) and whose replays do too, each against that wearer alone
under the same check (walked once per process),

    effort_reduction_robust        = the least effort_reduction over the walk and its replays
    effort_reduction_device_robust = the least effort_reduction_device (a wearer adapting
                                     with the device: its adapted law walked alone under
                                     each check too)
    speed_change_abs_robust        = the largest |speed change| over the walk and its replays

issue 46's verdict that "must hold" under the soft law, at half the step and with the
wearer's mass +-10 %; for an adapting wearer the device's share is the one to search, so
that a gain of the reflexes alone does not count (a round asking the first found 11.7 % at
+-10 % mass, 2 % of it the device's). Each is absent unless the walk and every replay
measured it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Callable

from codesign.errors import UserError, shown
from codesign.model.wearer_body import SEGMENTS, Load
from codesign.objectives import Objective
from codesign.types import EvalRecord
from codesign.walking import WalkSettings

# the soft check's step, a fraction of the run's: the stepped soft law converges at first
# order, and a marginal walk can survive 1 ms that falls at 0.5 ms as under the event-driven
# model (docs/contacts.md); at a quarter step its speed is within 1 % of that model's
SOFT_STEP_FRACTION = 0.25
# the contact-model checks a walk is replayed under (check name -> the change of WALK's
# settings): here, in a study's verification and in the report (codesign.report)
CONTACT_CHECKS: dict[str, Callable[[WalkSettings], WalkSettings]] = {
    "half_step": lambda walk: walk.with_rollout(h=0.5 * walk.rollout.h),
    "soft": lambda walk: walk.with_rollout(contact_model="soft_step", h=SOFT_STEP_FRACTION * walk.rollout.h)}
# a load check's name: "<segment>_<kg>kg", the mass in (0, MAX_CHECK_LOAD] kg
LOAD_CHECK = re.compile(rf"({'|'.join(SEGMENTS)})_(\d+(?:\.\d+)?)kg")
MAX_CHECK_LOAD = 40.0
# a mass check's name: "mass_<factor>", the factor on the wearer's segment masses in MASS_CHECK_RANGE
MASS_CHECK = re.compile(r"mass_(\d+(?:\.\d+)?)")
MASS_CHECK_RANGE = (0.5, 1.5)
# what joins checks applied together: "mass_1.1+half_step" (a check list's entries are replayed apart)
JOINED = "+"
ROBUST_METRIC = "robust_walk_score"
# the score at which a walk meets the walking verdict under every check (module docstring)
WALKS_UNDER_EVERY_CHECK = 2.0
ROBUST_STAGE = Objective(ROBUST_METRIC, "maximize", WALKS_UNDER_EVERY_CHECK)
ROBUST_DEFINITION = ("the least over evaluation.robust_checks of the walk replayed under that check: min(time "
                     "fraction, 1) + its speed_assist_score once it walks the whole time (>= 2: it walks under "
                     "every check; 0: not replayed, the walk as searched does not meet the walking verdict)")


@dataclasses.dataclass(frozen=True)
class WorstUnderChecks:
    """A metric of the walk's worst under its checks (module docstring): the worst
    (``worst``: min or max) of ``metric`` over the walk and its replays; its unit and definition."""

    metric: str
    worst: Callable[..., float]
    unit: str
    definition: str


_EACH = "each against the wearer alone under the same check"
# the record's name -> what it is the worst of
ROBUST_WORST: dict[str, WorstUnderChecks] = {
    "effort_reduction_robust": WorstUnderChecks("effort_reduction", min, "-", (
        f"the least effort_reduction over the assisted walk and its replays under evaluation.robust_checks, {_EACH}")),
    "effort_reduction_device_robust": WorstUnderChecks("effort_reduction_device", min, "-", (
        "the least effort_reduction_device (a wearer adapting with the device: the smaller of the reductions "
        "against it before and against its adapted law alone) over the assisted walk and its replays")),
    "speed_change_abs_robust": WorstUnderChecks("speed_change_abs", max, "-", (
        f"the largest speed_change_abs over the assisted walk and its replays under evaluation.robust_checks, {_EACH}")),
    "grf_peak_bw_robust": WorstUnderChecks("grf_peak_bw", max, "-", (
        "the largest grf_peak_bw over the walk and its replays under evaluation.robust_checks")),
    "grf_peak_bw_start_robust": WorstUnderChecks("grf_peak_bw_start", max, "-", (
        "the largest grf_peak_bw_start (the start's landings) over the walk and its replays under "
        "evaluation.robust_checks")),
    "knee_flexion_stance_peak_min_deg_robust": WorstUnderChecks("knee_flexion_stance_peak_min_deg", min, "deg", (
        "the least knee_flexion_stance_peak_min_deg (the smaller leg's knee yield at loading) over the walk and "
        "its replays under evaluation.robust_checks")),
}
KEY = "robust_checks"


def check_change(name: str) -> Callable[[WalkSettings], WalkSettings] | None:
    """The change of WALK's settings a robust check names (module docstring): a contact
    check, a load check adding ``Load(segment, kg)`` at the segment's centre of mass, a
    mass check scaling the wearer's segment masses, or distinct checks joined by ``+``
    (e.g. ``"mass_1.1+half_step"``: the heavier wearer at half the step), applied left to
    right; None for a name that is none of them."""
    parts = name.split(JOINED)
    if len(parts) == 1:
        return _single_check_change(name)
    changes = [_single_check_change(part) for part in parts]
    if len(set(parts)) != len(parts) or not all(changes):
        return None

    def joined(walk: WalkSettings) -> WalkSettings:
        for change in changes:
            walk = change(walk)
        return walk
    return joined


def _single_check_change(name: str) -> Callable[[WalkSettings], WalkSettings] | None:
    """:func:`check_change` of one check (no ``+``)."""
    if name in CONTACT_CHECKS:
        return CONTACT_CHECKS[name]
    scale = MASS_CHECK.fullmatch(name)
    if scale is not None:
        factor = float(scale[1])
        if not MASS_CHECK_RANGE[0] <= factor <= MASS_CHECK_RANGE[1]:
            return None
        return lambda walk: dataclasses.replace(walk, wearer_mass_scale=walk.wearer_mass_scale * factor)
    match = LOAD_CHECK.fullmatch(name)
    if match is None or not 0.0 < float(match[2]) <= MAX_CHECK_LOAD:
        return None
    load = Load(match[1], float(match[2]))
    return lambda walk: dataclasses.replace(walk, loads=walk.loads + (load,))


def read_robust_checks(table: dict[str, Any]) -> tuple[str, ...]:
    """Pop ``robust_checks`` from an ``[evaluation]`` table (a dict, changed in place) as a
    tuple of distinct check names (:func:`check_change`; () when absent); UserError, one line."""
    value = table.pop(KEY, [])
    if (not isinstance(value, list) or not all(isinstance(v, str) and check_change(v) for v in value)
            or len(set(value)) != len(value)):
        raise UserError(f"evaluation.{KEY}: got {shown(value)}; expected a list of distinct checks among "
                        + ", ".join(f'"{c}"' for c in CONTACT_CHECKS)
                        + f', loads "<segment>_<kg>kg" (segment {", ".join(SEGMENTS)}; '
                        f'0 < kg <= {MAX_CHECK_LOAD:g}) and masses "mass_<factor>" '
                        f"({MASS_CHECK_RANGE[0]:g} <= factor <= {MASS_CHECK_RANGE[1]:g}), or distinct ones "
                        f'joined by "{JOINED}" (e.g. "mass_1.1{JOINED}half_step")')
    return tuple(value)


def check_score(record: EvalRecord) -> float:
    """One replay's term of ``robust_walk_score`` (module docstring); 0 for a failed record."""
    if not record.ok:
        return 0.0
    survived = min(float(record.metrics.get("time_fraction", 0.0)), 1.0)
    if survived < 1.0:
        return max(survived, 0.0)
    return 1.0 + float(record.metrics.get("speed_assist_score", 0.0))


def meets_verdict(record: EvalRecord) -> bool:
    """Whether the walk as searched meets the walking verdict (and so is replayed)."""
    return (record.ok and record.metrics.get("time_fraction", 0.0) >= 1.0
            and record.metrics.get("speed_assist_score", 0.0) >= 1.0)


def with_robust_score(record: EvalRecord, checks: tuple[str, ...],
                      replay: Callable[[Callable[[WalkSettings], WalkSettings]], EvalRecord]) -> EvalRecord:
    """``record`` (the design's walk) with ``robust_walk_score`` over ``checks``
    (``replay(change)``: the same design's record with its WALK settings changed by a
    check, :func:`check_change`) and the worst of :data:`ROBUST_WORST` where every record
    measures it (module docstring); a failed record, or no checks, as it is."""
    if not checks or not record.ok:
        return record
    if not meets_verdict(record):
        return dataclasses.replace(record, metrics={**record.metrics, ROBUST_METRIC: 0.0})
    replays = [replay(check_change(c)) for c in checks]
    metrics = {**record.metrics, ROBUST_METRIC: min(check_score(r) for r in replays)}
    for name, of in ROBUST_WORST.items():
        values = [r.metrics.get(of.metric, math.nan) if r.ok else math.nan for r in (record, *replays)]
        if all(math.isfinite(v) for v in values):
            metrics[name] = of.worst(values)
    return dataclasses.replace(record, metrics=metrics)


def without_robust_checks(settings: Any) -> Any:
    """A problem's settings record without robust checks (a replay under one check is a
    plain walk); records without the field as they are."""
    if getattr(settings, KEY, ()):
        return dataclasses.replace(settings, **{KEY: ()})
    return settings
