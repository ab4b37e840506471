"""Where a search starts, as the ``[space]`` table names it: a design file's values
(``start_design``), each subspace's start designs (``start_designs``), further start
points (``[[space.seeds]]``) and the subspaces the load screening leaves out
(``drop_unserved``). Each reader returns plain values or raises
:class:`~codesign.run.spec_values.Invalid` naming its key; :mod:`codesign.run.spec`
checks them against the problem's space."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codesign.errors import UserError
from codesign.io import read_user_file, read_user_text
from codesign.run.spec_values import Invalid, fail, read_float, user_table


@dataclass(frozen=True)
class Unserved:
    """A subspace the load screening found no catalog drivetrain for (``codesign screen``'s
    ``loads_subspaces.csv`` row with served = 0): ``topology``, ``actuators`` and the
    requirement no unit met, in words (``reason``)."""

    topology: int
    actuators: tuple[int, int]
    reason: str


def _read_start_file(key: str, path: Any, expected: str) -> Any:
    """The JSON document of a file named by ``space.<key>`` (one line naming the key when
    it cannot be read)."""
    if not isinstance(path, str) or not path:
        fail(f"space.{key}", path, f"the path of {expected}")
    try:
        return read_user_file(path, expected)
    except UserError as exc:
        raise Invalid(f"space.{key}: {exc}") from None


def read_start_design(path: Any) -> tuple[dict[str, float], dict]:
    """The parameter values of a design file named by ``space.start_design`` (its
    ``params`` table; names and values checked against the space later) and the file's
    document (a walking problem places a design whose parameters are not all the search's
    through its ``encode``: :func:`codesign.run.spec.placed_start`)."""
    doc = _read_start_file("start_design", path, "a design JSON file")
    params = doc.get("params") if isinstance(doc, dict) else None
    if not isinstance(params, dict):
        fail("space.start_design", path, "a design JSON file with a \"params\" table")
    from codesign.walking.design import read_value    # a motor stored by its name

    try:
        return {name: read_value(name, params[name], f"space.start_design {path}") for name in params}, doc
    except UserError as exc:
        raise Invalid(str(exc)) from None


def read_start_designs(path: Any) -> tuple[dict, ...]:
    """The designs of a file named by ``space.start_designs``: a JSON list of design
    objects, or one design file (each with a ``params`` table; checked against the
    problem later)."""
    doc = _read_start_file("start_designs", path, "a JSON list of designs")
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list) or not all(isinstance(d, dict) and isinstance(d.get("params"), dict) for d in doc):
        fail("space.start_designs", path, "a design file or a JSON list of designs, each with a \"params\" table")
    return tuple(doc)


UNSERVED_COLUMNS = ("topology", "actuator_1", "actuator_2", "served", "common_reason")


def read_unserved(path: Any) -> tuple[Unserved, ...]:
    """The subspaces of a load screening's per-subspace table (``space.drop_unserved``,
    ``codesign screen``'s ``loads_subspaces.csv``) that no catalog drivetrain serves."""
    import csv
    import io

    if not isinstance(path, str) or not path:
        fail("space.drop_unserved", path, "the path of codesign screen's loads_subspaces.csv")
    expected = "the load screening's loads_subspaces.csv (codesign screen)"
    try:
        rows = list(csv.DictReader(io.StringIO(read_user_text(path, expected))))
    except UserError as exc:
        raise Invalid(f"space.drop_unserved: {exc}") from None
    if not rows or any(c not in rows[0] for c in UNSERVED_COLUMNS):
        fail("space.drop_unserved", path, f"{expected} with the columns {', '.join(UNSERVED_COLUMNS)}")
    out = []
    for k, row in enumerate(rows):
        try:
            topology, a, b, served = (int(row[c]) for c in UNSERVED_COLUMNS[:4])
        except (TypeError, ValueError):
            raise Invalid(f"space.drop_unserved: {path}: row {k + 1}: topology, actuator_1, actuator_2, "
                          f"served {[row[c] for c in UNSERVED_COLUMNS[:4]]}; expected integers") from None
        if served == 0:
            out.append(Unserved(topology, (a, b), row["common_reason"] or "no pass to size"))
    return tuple(out)


def read_seeds(tables: Any) -> tuple[dict[str, float], ...]:
    """``[[space.seeds]]``: each table's parameter values (names and bounds checked
    against the space later)."""
    if not isinstance(tables, list):
        fail("space.seeds", tables, "an array of tables [[space.seeds]] of parameter = value")
    out = []
    for k, table in enumerate(tables):
        values = user_table(table, f"space.seeds[{k}]")
        out.append({name: read_float(values, name, f"space.seeds[{k}]", None) for name in values})
    return tuple(out)
