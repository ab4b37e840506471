"""An active wearer's effort with a device against the same wearer without it (issue 32).

The assisted walk's record (the device's mass carried by the wearer) and the unassisted
walk's (the wearer alone, the same law and settings) each carry WALK's ``wearer_*``
metrics (:func:`codesign.walking.metrics.finalize_wearer`); :func:`effort_comparison`
states the difference:

* ``effort_reduction`` = 1 - effort / effort unassisted (a fraction; negative when the
  device makes the wearer work harder, e.g. by its mass), the effort being what the
  wearer model prices (:data:`EFFORT_METRIC`): the impedance wearer's joint-work proxy
  ``wearer_metabolic``, the muscle-driven wearer's net metabolic cost ``metabolic_cost``
  (issue 46); ``effort_reduction_<joint>`` the proxy's per joint (hip, knee, ankle);
* ``speed_change`` = speed / speed_unassisted - 1 and ``speed_change_abs`` its magnitude;
* the unassisted values themselves, ``wearer_metabolic_unassisted``,
  ``wearer_<joint>_metabolic_unassisted``, ``wearer_<joint>_torque_rms_unassisted``,
  ``speed_unassisted``.

A wearer that adapted to the device (:mod:`codesign.problems.wearer_adapt`) is compared
with itself too, its adapted law walking without the device (:func:`own_comparison`):
``effort_reduction_own``, ``wearer_metabolic_own``, ``metabolic_cost_own``, ``speed_own``;
and ``effort_reduction_device``, the smaller of ``effort_reduction`` and
``effort_reduction_own``: the device's share that holds against both references. Each alone
can be had without a device's help: a reflex search lowers the cost by itself (the first
counts that gain), and a wearer whose adapted law walks worse alone makes any device look
good (the second counts that loss); a search for the smaller gets neither.
"""

from __future__ import annotations

from typing import Mapping

from codesign.walking.metrics import WEARER_JOINTS

SPEED_CHANGE_MAX = 0.05       # |assisted speed / unassisted - 1| of a walk that keeps its speed (issue 32)

# the effort each wearer model (evaluation.wearer_model) prices, whose reduction is the
# device's effort_reduction: the joint-work proxy, or the muscles' net metabolic cost
EFFORT_METRIC: dict[str, str] = {"impedance": "wearer_metabolic", "muscles": "metabolic_cost"}

REFERENCE = ("wearer_metabolic", "speed",
             *(f"wearer_{j}_{m}" for j in WEARER_JOINTS for m in ("metabolic", "torque_rms")))
# the metrics effort_comparison adds, and their units
EFFORT_UNITS: dict[str, str] = {
    "effort_reduction": "-", "speed_change": "-", "speed_change_abs": "-",
    **{f"effort_reduction_{j}": "-" for j in WEARER_JOINTS},
    **{f"{name}_unassisted": unit for name, unit in (
        ("wearer_metabolic", "J/(kg m)"), ("metabolic_cost", "J/(kg m)"), ("speed", "m/s"),
        *((f"wearer_{j}_metabolic", "J/(kg m)") for j in WEARER_JOINTS),
        *((f"wearer_{j}_torque_rms", "N m") for j in WEARER_JOINTS))},
}
# the metrics own_comparison adds, and their units
OWN_UNITS: dict[str, str] = {"effort_reduction_own": "-", "effort_reduction_device": "-",
                             "wearer_metabolic_own": "J/(kg m)", "metabolic_cost_own": "J/(kg m)", "speed_own": "m/s"}


# the one sign convention of every printed effort reduction (simulate, compare, report):
# a reduction in %, positive = less effort with the device than without
REDUCTION_CONVENTION = "reduction in %, positive = less effort with the device"


def reduction_text(fraction: float) -> str:
    """An effort reduction (a fraction, :func:`reduction`) in words that cannot be misread
    by its sign: "69.8 % less", "12.0 % more", "no change" (rounded to 0.1 %), "-" for NaN."""
    if fraction != fraction:
        return "-"
    percent = round(100.0 * fraction, 1)
    return "no change" if percent == 0 else f"{abs(percent):.1f} % {'less' if percent > 0 else 'more'}"


def reduction(assisted: float, unassisted: float) -> float:
    """1 - assisted / unassisted (NaN when the unassisted effort is not > 0)."""
    return 1.0 - assisted / unassisted if unassisted > 0 else float("nan")


def effort_comparison(assisted: Mapping[str, float], unassisted: Mapping[str, float],
                      effort: str = EFFORT_METRIC["impedance"]) -> dict[str, float]:
    """The metrics of the module docstring from an assisted walk's metrics and the
    unassisted walk's, ``effort_reduction`` on the metric ``effort`` (a value of
    :data:`EFFORT_METRIC`); only those both walks measured (an early fall measures none)."""
    out = {f"{name}_unassisted": unassisted[name] for name in (*REFERENCE, effort) if name in unassisted}
    for joint in WEARER_JOINTS:
        name = f"wearer_{joint}_metabolic"
        if name in assisted and name in unassisted:
            out[f"effort_reduction_{joint}"] = reduction(assisted[name], unassisted[name])
    if effort in assisted and effort in unassisted:
        out["effort_reduction"] = reduction(assisted[effort], unassisted[effort])
    if "speed" in assisted and unassisted.get("speed", 0.0) > 0:
        out["speed_change"] = assisted["speed"] / unassisted["speed"] - 1.0
        out["speed_change_abs"] = abs(out["speed_change"])
    return out


def own_comparison(assisted: Mapping[str, float], alone: Mapping[str, float],
                   effort: str = EFFORT_METRIC["impedance"]) -> dict[str, float]:
    """The ``*_own`` metrics of the module docstring from an assisted walk's metrics and
    the same law's walk without the device (``effort_reduction_own`` on ``effort``, as
    :func:`effort_comparison`), and ``effort_reduction_device`` where ``assisted`` holds
    ``effort_reduction`` too; only those both walks measured."""
    out = {f"{name}_own": alone[name] for name in ("wearer_metabolic", effort, "speed") if name in alone}
    if effort in assisted and effort in alone:
        out["effort_reduction_own"] = reduction(assisted[effort], alone[effort])
        if "effort_reduction" in assisted:
            out["effort_reduction_device"] = min(assisted["effort_reduction"], out["effort_reduction_own"])
    return out
