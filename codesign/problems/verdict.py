"""Does a design walk? One verdict from a walking problem's metrics, in words.

A design *walks* when it survives the whole evaluation (``time_fraction`` >= 1), keeps the
target speed (``speed_match`` >= ``SPEED_MATCH_MIN`` = 0.95 of 1.3 m/s, Tables 4.2 and
5.3) and needs the pitch assist less than ``ASSIST_FRACTION_MAX`` = 10 % of the time
(Table 5.3): the bounds of the default stages, so a design that passes them is one a
reader would call walking, and one that stands with the assist on is not called walking
whatever else it scores. An assisted active wearer (its record carries ``speed_change``,
:mod:`codesign.problems.effort`) keeps its own speed instead: within ``SPEED_CHANGE_MAX``
= 5 % of the same wearer's unassisted walk (issue 32), not of 1.3 m/s. Otherwise the
verdict names each of the three that fails, with its number and unit.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, NamedTuple

from codesign.errors import UserError

from codesign.problems.effort import SPEED_CHANGE_MAX
from codesign.problems.objectives import ASSIST_FRACTION_MAX, SPEED_MATCH_MIN
from codesign.walking.metrics import TARGET_SPEED


class Verdict(NamedTuple):
    """``walks``: all three conditions hold; ``reasons``: one phrase per condition that
    fails (empty when it walks); ``text``: the one line a reader sees first."""

    walks: bool
    reasons: tuple[str, ...]
    text: str

    @property
    def short(self) -> str:
        """A table cell: "yes", or "no: " and the reasons."""
        return "yes" if self.walks else "no: " + "; ".join(self.reasons)


def assists(problem: Any) -> bool | None:
    """Whether a problem's designs assist an active wearer (its options say it; None for a
    problem without options: :func:`walking_verdict` then reads its record)."""
    options = getattr(problem, "options", None)
    return None if options is None else options.wearer == "active"


def walking_verdict(metrics: Mapping[str, float], max_time: float, assisted: bool | None = None) -> Verdict:
    """The verdict of a walking problem's record metrics (``time_fraction``, ``time`` s,
    ``speed`` m/s, ``speed_match`` -- or, for an assisted wearer, ``speed_change`` and
    ``speed_unassisted`` m/s --, ``assist_fraction``; a missing one fails its condition)
    for an evaluation of ``max_time`` s. ``assisted``: the problem assists an active
    wearer (:func:`assists`; None: a record with ``speed_change`` is one)."""

    def value(name: str) -> float:
        v = metrics.get(name, math.nan)
        return math.nan if v is None else float(v)

    time, speed = value("time"), value("speed")
    match, assist = value("speed_match"), value("assist_fraction")
    reasons = []
    if not value("time_fraction") >= 1.0:
        reasons.append(f"stops at {time:.2f} s of {max_time:g} s")
    if ("speed_change" in metrics) if assisted is None else assisted:
        if not abs(value("speed_change")) <= SPEED_CHANGE_MAX:
            reasons.append(f"speed {speed:.2f} m/s, not within {100 * SPEED_CHANGE_MAX:.0f} % of the unassisted "
                           f"walk's {value('speed_unassisted'):.2f} m/s")
    elif not match >= SPEED_MATCH_MIN:
        reasons.append(f"speed {speed:.2f} m/s, not within {100 * (1 - SPEED_MATCH_MIN):.0f} % of the "
                       f"{TARGET_SPEED:g}-m/s target" if math.isfinite(speed) else "no speed measured")
    if not assist < ASSIST_FRACTION_MAX:
        reasons.append(f"pitch assist on {100 * assist:.0f} % of the time (walking: under "
                       f"{100 * ASSIST_FRACTION_MAX:.0f} %)" if math.isfinite(assist) else
                       "no assist fraction measured")
    if reasons:
        return Verdict(False, tuple(reasons), "does not walk: " + "; ".join(reasons))
    return Verdict(True, (), f"walks: {speed:.2f} m/s for the whole {max_time:g} s, pitch assist on "
                              f"{100 * assist:.0f} % of the time")


def run_verdict(problem: Any, table: Mapping[str, Any]) -> Callable[[Mapping[str, float]], Verdict] | None:
    """metrics -> :func:`walking_verdict` under a run's ``[evaluation]`` table (its
    ``max_time``, read by the problem's ``parse_settings``); None for a problem without
    walking designs or a table that no longer parses."""
    if problem.walking is None:
        return None
    try:
        max_time = problem.parse_settings(table).walk.rollout.max_time
    except UserError:
        return None
    return lambda metrics: walking_verdict(metrics, max_time, assists(problem))
