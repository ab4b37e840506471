"""Evaluation settings of a walking design (a job spec's ``[evaluation]`` table)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from codesign.control import signals as sg
from codesign.errors import UserError
from codesign.walking import rollout as ro

DEFAULT_CATALOG = Path("topologies/catalog.json")


@dataclass(frozen=True)
class WalkSettings:
    """Evaluation settings (the spec's ``[evaluation]`` table; all keys optional).

    rollout: :class:`~codesign.walking.rollout.RolloutSettings` fields (``max_time``,
    ``phase0``, ``contact_model``, ``mu``, ``rtol`` ...); human_control:
    ``constant`` | ``step`` | ``ppoly`` (chapter-4 K/D kind); optimize_frequency: bool;
    catalog: path of the topology catalog.
    """

    rollout: ro.RolloutSettings = ro.RolloutSettings()
    human_control: str = "step"
    optimize_frequency: bool = False
    catalog: str = str(DEFAULT_CATALOG)

    @staticmethod
    def from_dict(d: Mapping[str, Any] | None) -> "WalkSettings":
        d = dict(d or {})
        fields = {f.name: f for f in dataclasses.fields(ro.RolloutSettings)}
        known = set(fields) | {"human_control", "optimize_frequency", "catalog"}
        if "objectives" in d:
            raise UserError("evaluation.objectives: objectives are not evaluation settings; expected "
                            "them as the spec's [[objectives]] tables (default: the problem's)")
        for key in d:
            if key not in known:
                raise UserError(f"evaluation.{key}: unknown key; expected one of {sorted(known)}")
        kw = {}
        for key, f in fields.items():
            if key in d:
                value = d[key]
                kind = type(getattr(ro.RolloutSettings(), key))
                if kind is str:
                    ok = isinstance(value, str)
                else:
                    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
                          and math.isfinite(value) and value >= 0)
                    value = kind(value) if ok else value
                if not ok:
                    raise UserError(f"evaluation.{key}: {value!r}; expected a "
                                    f"{'string' if kind is str else 'finite number >= 0'}")
                kw[key] = value
        rollout = ro.RolloutSettings(**kw)
        if rollout.contact_model not in ro.CONTACT_MODELS:
            raise UserError(f"evaluation.contact_model: {rollout.contact_model!r}; expected one of "
                            f"{', '.join(ro.CONTACT_MODELS)}")
        if not rollout.max_time > 0:
            raise UserError("evaluation.max_time: expected a duration > 0 s")
        if not 0 < rollout.h <= 0.01:
            raise UserError(f"evaluation.h: {rollout.h!r}; expected a time step in (0, 0.01] s")
        human_control = d.get("human_control", "step")
        if human_control not in sg.KIND_NAMES:
            raise UserError(f"evaluation.human_control: {human_control!r}; expected one of {list(sg.KIND_NAMES)}")
        return WalkSettings(rollout, human_control,
                            bool(d.get("optimize_frequency", False)), str(d.get("catalog", DEFAULT_CATALOG)))
