"""A walking design: which linkage (topology, actuator pair; none for the unaugmented
human) and its parameter values, and its JSON form ({"topology", "actuators", "params"},
and optionally "evaluation": the settings it is replayed with)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from codesign.errors import UserError
from codesign.io import read_user_file

DESIGN_KEYS = ("topology", "actuators", "params", "evaluation")    # a design document's keys, all of them


@dataclass(frozen=True)
class Design:
    """A design: ``topology``/``actuators`` (None for the unaugmented human) and the
    parameter values (morphology names of MODEL, control names of
    :mod:`codesign.control.parameters`); ``evaluation``: the evaluation settings the
    design is replayed with (a spec's ``[evaluation]`` keys, e.g. ``initial_state`` or an
    active wearer's; read by the problem's ``parse_settings`` where a command replays the
    design file, under ``--settings``; a run's own ``[evaluation]`` table is its spec's)."""

    params: dict[str, float]
    topology: int | None = None
    actuators: tuple[int, int] | None = None
    evaluation: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        doc = {"topology": self.topology,
               "actuators": list(self.actuators) if self.actuators else None,
               "params": dict(sorted(self.params.items()))}
        if self.evaluation:
            doc["evaluation"] = dict(self.evaluation)
        return doc

    @staticmethod
    def from_json(doc: Any, where: str = "design") -> "Design":
        if not isinstance(doc, Mapping) or not isinstance(doc.get("params"), Mapping):
            raise UserError(f"{where}: expected an object with \"params\" (name -> number), "
                            "\"topology\" and \"actuators\" (null for the human)")
        unknown = [str(k) for k in doc if k not in DESIGN_KEYS]
        if unknown:
            raise UserError(f"{where}: unknown key \"{unknown[0]}\"; expected only \"topology\", "
                            "\"actuators\", \"params\" and \"evaluation\"")
        evaluation = doc.get("evaluation", {})
        if not isinstance(evaluation, Mapping):
            raise UserError(f"{where}.evaluation: {evaluation!r}; expected an object of evaluation "
                            "settings (a spec's [evaluation] keys)")
        params = {}
        for k, v in doc["params"].items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise UserError(f"{where}.params.{k}: {v!r}; expected a finite number")
            params[str(k)] = float(v)
        topo = doc.get("topology")
        acts = doc.get("actuators")
        if topo is not None and (isinstance(topo, bool) or not isinstance(topo, int)):
            raise UserError(f"{where}.topology: {topo!r}; expected a topology id or null")
        if (topo is None) != (acts is None):
            raise UserError(f"{where}.actuators: {acts!r}; expected two joint ids with a "
                            "topology, null without")
        if acts is not None:
            if not isinstance(acts, list) or len(acts) != 2 or not all(isinstance(a, int) for a in acts):
                raise UserError(f"{where}.actuators: {acts!r}; expected two joint ids")
            acts = (int(acts[0]), int(acts[1]))
        return Design(params, topo, acts, dict(evaluation))


def load_design(path: str | Path) -> Design:
    """A design JSON file ({"topology", "actuators", "params"})."""
    doc = read_user_file(path, "a design JSON file", "json")
    return Design.from_json(doc, str(path))
