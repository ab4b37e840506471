"""What carrying a device costs it (issue 46 item 5): one assisting design walked with its
device's mass at several values, its effort reduction against that mass and the break-even
mass where carrying the device costs what its assistance saves.

The front of :mod:`codesign.report.mass_buys` asks which of a search's designs buy the most
reduction for their mass; this asks the other question a designer has of one assistance
profile: how heavy may the hardware that delivers it be? The device's mass is placed as
point masses (``evaluation.device_loads``,
:class:`~codesign.problems.exo_assist.AssistSettings`: carried in the assisted walk, not in
the unassisted one) by a :class:`Share` list -- by default a portable hip exoskeleton's,
:data:`HIP_EXO_PLACEMENT` --, and each mass is one evaluation of the design's own problem
(the reduction on the effort its wearer model prices, ``effort_reduction``).

Break-even: :func:`codesign.report.mass_buys.break_even` of the walking points (a
least-squares line r = a + b m, falling, m0 = -a / b with its standard error); the line is
an assumption, stated with the number, and the standard error says how well the masses
walked lie on it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from codesign.errors import UserError, shown
from codesign.model.wearer_body import SEGMENTS, Load
from codesign.report.mass_buys import draw_fit


@dataclass(frozen=True)
class Share:
    """A share of the device's mass: ``segment`` (of SEGMENTS; a leg segment's share is
    split evenly between the legs), ``share`` (fraction of the mass, > 0; the shares sum
    to 1), ``position`` (fraction along the segment from its proximal joint; None: its
    centre of mass), as :class:`~codesign.model.wearer_body.Load` places a load."""

    segment: str
    share: float
    position: float | None = None


# A portable hip exoskeleton: "more than 90 % of its weight near the body's centre of gravity"
# (Kim et al. 2019, Science 365:668, the 5-kg hip exosuit; press release), so 90 % at the waist
# belt (the torso at the hip joints, position 0) and 10 % in the thigh wraps, placed on the
# upper third of each thigh (position 0.3: an assumption, the wraps' place was not sourced).
HIP_EXO_PLACEMENT = (Share("torso", 0.9, 0.0), Share("thigh", 0.1, 0.3))
SHARE_KEYS = ("segment", "share", "position")


def parse_placement(value: Any, where: str = "--placement") -> tuple[Share, ...]:
    """A list of ``{segment, share, position}`` tables as :class:`Share` records; UserError,
    one line naming the entry: not a list of tables, an unknown key or segment, a share
    not > 0, a position outside [0, 1], shares that do not sum to 1 (within 1e-9)."""
    if not isinstance(value, (list, tuple)) or not value:
        raise UserError(f"{where}: got {shown(value)}; expected a non-empty list of "
                        "{\"segment\": ..., \"share\": ..., \"position\": ...}")
    shares = []
    for i, entry in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict) or set(entry) - set(SHARE_KEYS) or not {"segment", "share"} <= set(entry):
            raise UserError(f"{at}: got {shown(entry)}; expected a table with segment and share (and position)")
        if entry["segment"] not in SEGMENTS:
            raise UserError(f"{at}.segment: got {shown(entry['segment'])}; expected one of {', '.join(SEGMENTS)}")
        share, position = entry["share"], entry.get("position")
        if isinstance(share, bool) or not (isinstance(share, (int, float)) and math.isfinite(share) and share > 0):
            raise UserError(f"{at}.share: got {shown(share)}; expected a fraction of the device's mass > 0")
        if position is not None and (isinstance(position, bool) or not (isinstance(position, (int, float))
                                                                         and 0 <= position <= 1)):
            raise UserError(f"{at}.position: got {shown(position)}; expected a fraction in [0, 1] along the segment")
        shares.append(Share(entry["segment"], float(share), None if position is None else float(position)))
    total = sum(s.share for s in shares)
    if abs(total - 1.0) > 1e-9:
        raise UserError(f"{where}: shares sum to {total:g}; expected 1 (fractions of the device's mass)")
    return tuple(shares)


def device_loads(mass_kg: float, placement: Sequence[Share]) -> tuple[Load, ...]:
    """``mass_kg`` (kg) placed by ``placement`` as loads (a leg segment's share halved: a
    Load on a leg segment is on each leg)."""
    return tuple(Load(s.segment, mass_kg * s.share / (1 if s.segment == "torso" else 2), s.position)
                 for s in placement)


@dataclass(frozen=True)
class CarryPoint:
    """One mass of the sweep: ``mass_kg`` (the device's loads, kg), ``walks`` (its walking
    verdict), ``reason`` (the verdict in words), ``speed`` (m/s), ``effort`` and
    ``effort_unassisted`` (the wearer model's effort metric, e.g. J/(kg m)),
    ``reduction`` (fraction, positive: less effort), ``speed_change`` (fraction)."""

    mass_kg: float
    walks: bool
    reason: str
    speed: float
    effort: float
    effort_unassisted: float
    reduction: float
    speed_change: float


def carry_table(points: Sequence[CarryPoint], effort: str) -> pd.DataFrame:
    """The sweep as a table, one row per mass, every column with its unit."""
    return pd.DataFrame({
        "device mass [kg]": [p.mass_kg for p in points], "walks": [p.walks for p in points],
        "speed [m/s]": [p.speed for p in points], f"{effort} with [J/(kg m)]": [p.effort for p in points],
        f"{effort} without [J/(kg m)]": [p.effort_unassisted for p in points],
        "reduction [%]": [100.0 * p.reduction for p in points],
        "speed change [%]": [100.0 * p.speed_change for p in points], "verdict": [p.reason for p in points]})


def carry_figure(points: Sequence[CarryPoint], fit, effort: str) -> Figure:
    """Reduction (%) against the device's mass (kg): each mass (filled: walks; open: does
    not), the fitted line out to the break-even mass, the break-even (red, its +- standard
    error shaded), zero."""
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    m = np.array([p.mass_kg for p in points])
    r = 100.0 * np.array([p.reduction for p in points])
    ok = np.array([p.walks for p in points], dtype=bool)
    ax.plot(m[ok], r[ok], "o", color="black", ms=6, label="walks")
    if (~ok).any():
        ax.plot(m[~ok], r[~ok], "o", mfc="none", color="tab:red", ms=6, label="does not walk")
    ax.axhline(0.0, color="0.4", lw=0.8)
    draw_fit(ax, fit, m.min(), m.max(),
             f"linear fit: {100 * fit.intercept:+.1f} % {100 * fit.slope_per_kg:+.2f} % per kg")
    ax.set_xlabel("device mass carried [kg]")
    ax.set_ylabel(f"reduction of {effort} [%]")
    ax.set_title("What carrying the device costs: one profile, its mass varied")
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def with_device_loads(settings, loads: tuple[Load, ...]):
    """An assisting problem's settings with its device's loads replaced (UserError, one
    line, for settings that have none: a problem that does not compare with the wearer
    alone)."""
    if not hasattr(settings, "device_loads"):
        raise UserError("design: its problem does not compare an assisted wearer with the wearer alone; "
                        "expected an exo_assist or exo_assist_ideal design")
    return dataclasses.replace(settings, device_loads=loads)
