"""Does a design walk? One verdict from a walking problem's metrics, in words.

A design *walks* when it survives the whole evaluation (``time_fraction`` >= 1), keeps the
target speed (``speed_match`` >= ``SPEED_MATCH_MIN`` = 0.95 of 1.3 m/s, Tables 4.2 and
5.3) and needs the pitch assist less than ``ASSIST_FRACTION_MAX`` = 10 % of the time
(Table 5.3): the bounds of the default stages, so a design that passes them is one a
reader would call walking, and one that stands with the assist on is not called walking
whatever else it scores. An assisted active wearer (its record carries ``speed_change``,
:mod:`codesign.problems.effort`) keeps its own speed instead: within ``SPEED_CHANGE_MAX``
= 5 % of the same wearer's unassisted walk (issue 32), not of 1.3 m/s.

A design that does not walk gets one of two verdicts, never confused:

* it **falls** (the rollout ended before ``max_time``): "falls at 3.20 s of 10 s" -- or,
  where the rollout's message names a stop that is not a fall (constraint drift, a singular
  transmission ...), "stops at 3.20 s of 10 s: <message>"; speed and assist of a walk that
  ended early are not judged;
* it **stays up the whole evaluation** but too slowly (or too fast) or leaning on the
  pitch assist: "walks 10 s, too slow: 0.60 m/s (wanted within 5 % of 1.3 m/s); pitch
  assist on 100 % of the time (walking: under 10 %)", each failing condition with its
  number and unit.

Numerical health (issue 43) is part of the verdict: a walk whose contact steps miss the
time step's tolerance in more than ``UNSOLVED_FRACTION_MAX`` = 0.1 % of its steps, or any
step whose impulses do more work against the contact conditions than the energy bound, is
flagged "numerically unreliable" (:func:`numerical_flags`; docs/contacts.md), whether it
walks or not: its numbers may be the solver's, not the design's.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, NamedTuple

from codesign.errors import UserError

from codesign.problems.effort import SPEED_CHANGE_MAX
from codesign.problems.objectives import ASSIST_FRACTION_MAX, SPEED_MATCH_MIN
from codesign.walking.metrics import TARGET_SPEED


# the rollout statuses (codesign.walking.rollout_base.STATUS) that are falls; any other
# early end is a "stop" and its message is quoted
FALLS = ("fall_height", "fall_pitch")
UNSOLVED_FRACTION_MAX = 1e-3   # of a walk's time steps (issue 43)


class Verdict(NamedTuple):
    """``walks``: all three conditions hold; ``reasons``: one phrase per condition that
    fails (empty when it walks; a fall is the one reason of a walk that ended early);
    ``text``: the one line a reader sees first ("walks: ...", "falls at ...", "stops at
    ...", or "walks 10 s, " and the reasons); ``flags``: warnings that hold whether it
    walks or not (:func:`numerical_flags`), also at the end of ``text``."""

    walks: bool
    reasons: tuple[str, ...]
    text: str
    flags: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        """A table cell: "yes" (and its flags after "⚠"), or "no: " and the text."""
        return "no: " + self.text if not self.walks else "yes" + "".join(f" ⚠ {flag}" for flag in self.flags)


def numerical_flags(metrics: Mapping[str, float]) -> tuple[str, ...]:
    """("numerically unreliable: ...",) when the walk's contact steps missed the solver's
    tolerance in more than UNSOLVED_FRACTION_MAX of its steps (``contact_unsolved_fraction``)
    or any step's impulses exceeded the energy bound (``contact_energy_error_steps``);
    () otherwise, and for a record without them (the event-driven and soft models)."""
    unsolved = float(metrics.get("contact_unsolved_fraction", math.nan) or 0.0)
    energy = float(metrics.get("contact_energy_error_steps", math.nan) or 0.0)
    said = []
    if unsolved > UNSOLVED_FRACTION_MAX:
        said.append(f"{100 * unsolved:.2f} % of the time steps beyond the contact solver's tolerance "
                    f"(at most {100 * UNSOLVED_FRACTION_MAX:.1f} %)")
    if energy > 0:
        said.append(f"{energy:.0f} time steps whose contact impulses exceed the energy bound")
    return ("numerically unreliable: " + "; ".join(said),) if said else ()


def assists(problem: Any) -> bool | None:
    """Whether a problem's designs assist an active wearer (its options say it; None for a
    problem without options: :func:`walking_verdict` then reads its record)."""
    options = getattr(problem, "options", None)
    return None if options is None else options.wearer == "active"


def walking_verdict(metrics: Mapping[str, float], max_time: float, stop: str = "",
                    assisted: bool | None = None) -> Verdict:
    """The verdict of a walking problem's record metrics (``time_fraction``, ``time`` s,
    ``speed`` m/s, ``speed_match`` -- or, for an assisted wearer, ``speed_change`` and
    ``speed_unassisted`` m/s --, ``assist_fraction``; a missing one fails its condition)
    for an evaluation of ``max_time`` s. ``stop``: the record's message where known
    ("fall_height: hip below ..."; "" for none): a walk that ended early on a status
    other than a fall (:data:`FALLS`) "stops", quoting it, instead of "falls".
    ``assisted``: the problem assists an active wearer (:func:`assists`; None: a record
    with ``speed_change`` is one)."""

    def value(name: str) -> float:
        v = metrics.get(name, math.nan)
        return math.nan if v is None else float(v)

    time, speed = value("time"), value("speed")
    match, assist = value("speed_match"), value("assist_fraction")
    flags = numerical_flags(metrics)
    warned = "".join(f" -- {flag}" for flag in flags)
    if not value("time_fraction") >= 1.0:
        status = stop.partition(":")[0].strip()
        ended = (f"stops at {time:.2f} s of {max_time:g} s: {stop.strip()}" if stop.strip() and status not in FALLS
                 else f"falls at {time:.2f} s of {max_time:g} s")
        return Verdict(False, (ended,), ended + warned, flags)
    reasons = []
    if ("speed_change" in metrics) if assisted is None else assisted:
        if not abs(value("speed_change")) <= SPEED_CHANGE_MAX:
            pace = "too slow" if value("speed_change") < 0 else "too fast"
            reasons.append(f"{pace}: {speed:.2f} m/s (wanted within {100 * SPEED_CHANGE_MAX:.0f} % of the "
                           f"unassisted walk's {value('speed_unassisted'):.2f} m/s)")
    elif not match >= SPEED_MATCH_MIN:
        pace = "too slow" if not speed > TARGET_SPEED else "too fast"
        reasons.append(f"{pace}: {speed:.2f} m/s (wanted within {100 * (1 - SPEED_MATCH_MIN):.0f} % of "
                       f"{TARGET_SPEED:g} m/s)" if math.isfinite(speed) else "no speed measured")
    if not assist < ASSIST_FRACTION_MAX:
        reasons.append(f"pitch assist on {100 * assist:.0f} % of the time (walking: under "
                       f"{100 * ASSIST_FRACTION_MAX:.0f} %)" if math.isfinite(assist) else
                       "no assist fraction measured")
    if reasons:
        return Verdict(False, tuple(reasons), f"walks {max_time:g} s, " + "; ".join(reasons) + warned, flags)
    return Verdict(True, (), f"walks: {speed:.2f} m/s for the whole {max_time:g} s, pitch assist on "
                              f"{100 * assist:.0f} % of the time" + warned, flags)


def run_verdict(problem: Any, table: Mapping[str, Any]) -> Callable[..., Verdict] | None:
    """(metrics, stop="") -> :func:`walking_verdict` under a run's ``[evaluation]`` table (its
    ``max_time``, read by the problem's ``parse_settings``); None for a problem without
    walking designs or a table that no longer parses."""
    if problem.walking is None:
        return None
    try:
        max_time = problem.parse_settings(table).walk.rollout.max_time
    except UserError:
        return None
    return lambda metrics, stop="": walking_verdict(metrics, max_time, stop, assists(problem))
