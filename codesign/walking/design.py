"""A walking design: which linkage (topology, actuator pair; none for the unaugmented
human) and its parameter values, and its JSON form ({"problem", "topology", "actuators",
"params"}, and optionally "evaluation": the settings it is replayed with, and "objectives": the
lexicographic stages of the run that found it, as its spec's ``[[objectives]]`` tables).

``"problem"``: the problem that made the design, its name and options (read by
:mod:`codesign.problems.identity`; a file written before designs said so has none).
Categorical parameters are stored by name: a drivetrain's ``j<id>.motor`` is its catalog
unit's name (``"AK80-9-V3"``, ``codesign/model/data/motors.toml``), read back as the
unit's index in the catalog (a number, as the search space holds it; a file that stores
the number is read as it is)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from codesign.errors import UserError
from codesign.io import read_user_file
from codesign.model.drivetrain import motor_at, motor_catalog

DESIGN_KEYS = ("problem", "topology", "actuators", "params", "evaluation", "objectives")   # a design document's keys
MOTOR_SUFFIX = ".motor"     # a drivetrain's unit (j<id>.motor): stored by name


def stored_value(name: str, value: float) -> float | str:
    """A parameter's value as a design file stores it: a motor by its catalog name."""
    return motor_at(value).name if name.endswith(MOTOR_SUFFIX) else value


def read_value(name: str, value: Any, where: str) -> float:
    """A parameter's value from a design file (UserError naming it): a number, or for a
    motor its catalog name (-> the unit's index)."""
    if name.endswith(MOTOR_SUFFIX) and isinstance(value, str):
        units = list(motor_catalog())
        if value not in units:
            raise UserError(f"{where}.params.{name}: {value!r}; expected a motor of the catalog "
                            f"({', '.join(units)}; codesign/model/data/motors.toml)")
        return float(units.index(value))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserError(f"{where}.params.{name}: {value!r}; expected a finite number")
    return float(value)


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
    # the problem that made it: {"name", option: value ...} (empty: not known)
    problem: dict[str, Any] = field(default_factory=dict)
    # the run's own stages, its spec's [[objectives]] tables ({"metric", "sense", "until"});
    # empty: the problem's (parsed where a command reads them, codesign.run.spec.parse_objectives)
    objectives: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict:
        doc = {"problem": dict(self.problem)} if self.problem else {}
        doc.update({"topology": self.topology,
                    "actuators": list(self.actuators) if self.actuators else None,
                    "params": {k: stored_value(k, v) for k, v in sorted(self.params.items())}})
        if self.evaluation:
            doc["evaluation"] = dict(self.evaluation)
        if self.objectives:
            doc["objectives"] = [dict(o) for o in self.objectives]
        return doc

    @staticmethod
    def from_json(doc: Any, where: str = "design") -> "Design":
        if not isinstance(doc, Mapping) or not isinstance(doc.get("params"), Mapping):
            raise UserError(f"{where}: expected an object with \"params\" (name -> number), "
                            "\"topology\" and \"actuators\" (null for the human)")
        unknown = [str(k) for k in doc if k not in DESIGN_KEYS]
        if unknown:
            raise UserError(f"{where}: unknown key \"{unknown[0]}\"; expected only \"problem\", \"topology\", "
                            "\"actuators\", \"params\", \"evaluation\" and \"objectives\"")
        problem = doc.get("problem", {})
        if not isinstance(problem, Mapping):
            raise UserError(f"{where}.problem: {problem!r}; expected an object: the problem's name and options")
        evaluation = doc.get("evaluation", {})
        if not isinstance(evaluation, Mapping):
            raise UserError(f"{where}.evaluation: {evaluation!r}; expected an object of evaluation "
                            "settings (a spec's [evaluation] keys)")
        objectives = doc.get("objectives", [])
        if not (isinstance(objectives, list) and all(isinstance(o, Mapping) for o in objectives)):
            raise UserError(f"{where}.objectives: {objectives!r}; expected a list of objects (metric, sense, "
                            "until), a spec's [[objectives]]")
        params = {str(k): read_value(str(k), v, where) for k, v in doc["params"].items()}
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
        return Design(params, topo, acts, dict(evaluation), dict(problem), tuple(dict(o) for o in objectives))


def load_design(path: str | Path) -> Design:
    """A design JSON file ({"problem", "topology", "actuators", "params"}, module docstring)."""
    doc = read_user_file(path, "a design JSON file", "json")
    return Design.from_json(doc, str(path))
