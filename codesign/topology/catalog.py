"""The topology catalog: the records stage 1 writes and every later stage reads.

A *topology* is the connectivity of a wearable robot (WR) worn in parallel with one human
leg (thesis 5.2.1): the human is three links, ``torso``, ``thigh`` and ``shank``, joined by
the hip (torso-thigh) and the knee (thigh-shank); the WR adds links ``wr1`` .. ``wrN`` and
revolute *added joints*, each joining a WR link to a human link (``attachment``) or two WR
links (``wearable``). Added joints are numbered 1..n per topology; these are the ids the
thesis's Table 5.1 uses for actuator pairs. The model appends ``_r`` / ``_l`` per leg.

For the dynamics each topology carries a spanning tree: the human tree (hip, knee) plus one
tree joint per WR link; the other added joints are *loop-closure* joints (``loop_closure``
flag), closed with constraints by the engine (thesis 2.6.9, Fig. 5.4 in orange).

``catalog.json`` layout (keys sorted, two-space indentation, flat records on one line, so
the same catalog always gives the same bytes)::

    {"settings": {"added_joints": 6, "mobility": 2, "wr_links": 4},
     "human": {"links": ["torso", "thigh", "shank"], "joint_names": ["hip", "knee"],
               "joints": [["torso", "thigh"], ["thigh", "shank"]]},
     "topologies": [{"id": 1, "wr_links": ["wr1", ...],
                     "joints": [{"id": 1, "links": ["torso", "wr1"], "kind": "attachment",
                                 "loop_closure": false}, ...],
                     "tree_joints": [...], "loop_closure_joints": [...],
                     "actuator_pairs": [[1, 4], ...]}, ...],
     "subspaces": [{"id": 1, "topology": 1, "actuators": [1, 4]}, ...]}

``actuator_pairs`` holds tuples of ``mobility`` joint ids (pairs for the default mobility 2).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codesign.errors import UserError, shown
from codesign.io import read_user_file, write_text_atomic

HUMAN_LINKS: tuple[str, ...] = ("torso", "thigh", "shank")
HUMAN_JOINT_NAMES: tuple[str, ...] = ("hip", "knee")
HUMAN_JOINTS: tuple[tuple[str, str], ...] = (("torso", "thigh"), ("thigh", "shank"))
ATTACHMENT = "attachment"
WEARABLE = "wearable"
JOINT_KINDS = (ATTACHMENT, WEARABLE)


def wr_link_names(count: int) -> tuple[str, ...]:
    """WR link names ``wr1`` .. ``wr<count>``."""
    return tuple(f"wr{k}" for k in range(1, count + 1))


@dataclass(frozen=True)
class Joint:
    """An added revolute joint: ``id`` (1..n in its topology), the two links it joins
    (human link first for an attachment), ``kind`` (``attachment`` | ``wearable``) and
    whether it is a loop-closure joint (not in the spanning tree)."""

    id: int
    links: tuple[str, str]
    kind: str
    loop_closure: bool


@dataclass(frozen=True)
class Topology:
    """One WR topology for one leg; see the module docstring."""

    id: int
    wr_links: tuple[str, ...]
    joints: tuple[Joint, ...]
    actuator_pairs: tuple[tuple[int, ...], ...]

    @property
    def links(self) -> tuple[str, ...]:
        """All links, human first: ``("torso", "thigh", "shank", "wr1", ...)``."""
        return HUMAN_LINKS + self.wr_links

    @property
    def tree_joints(self) -> tuple[int, ...]:
        """Ids of the added joints in the spanning tree (one per WR link)."""
        return tuple(j.id for j in self.joints if not j.loop_closure)

    @property
    def loop_closure_joints(self) -> tuple[int, ...]:
        """Ids of the added joints closed as loop constraints."""
        return tuple(j.id for j in self.joints if j.loop_closure)

    def joint(self, joint_id: int) -> Joint:
        """The added joint with this id."""
        for j in self.joints:
            if j.id == joint_id:
                return j
        raise KeyError(f"topology {self.id} has no joint {joint_id}")

    def tree_parents(self) -> tuple[tuple[str, str, int], ...]:
        """``(wr_link, parent_link, tree_joint_id)`` for every WR link, parents before
        children (breadth first from the human links, joints in id order), ready for a
        model builder that needs each body's parent first."""
        placed = set(HUMAN_LINKS)
        tree = [self.joint(i) for i in self.tree_joints]
        order: list[tuple[str, str, int]] = []
        while len(order) < len(self.wr_links):
            grew = False
            for j in tree:
                a, b = j.links
                if (a in placed) != (b in placed):
                    parent, child = (a, b) if a in placed else (b, a)
                    placed.add(child)
                    order.append((child, parent, j.id))
                    grew = True
            if not grew:
                raise ValueError(f"topology {self.id}: tree joints do not span the WR links")
        return tuple(order)


@dataclass(frozen=True)
class CatalogSettings:
    """The enumeration settings: number of WR links, of added joints, and the mobility
    (degrees of freedom relative to the torso) every topology must have."""

    wr_links: int = 4
    added_joints: int = 6
    mobility: int = 2


@dataclass(frozen=True)
class Catalog:
    """All topologies for one setting, in catalog order (ids 1..N)."""

    settings: CatalogSettings
    topologies: tuple[Topology, ...]

    def subspaces(self) -> list[tuple[int, int, tuple[int, ...]]]:
        """``(subspace id, topology id, actuator pair)`` for every (topology, pair),
        numbered 1.. in catalog order (126 with the default settings, thesis 5.2.2)."""
        out = []
        for topology in self.topologies:
            for pair in topology.actuator_pairs:
                out.append((len(out) + 1, topology.id, pair))
        return out

    def topology(self, topology_id: int) -> Topology:
        """The topology with this id."""
        for t in self.topologies:
            if t.id == topology_id:
                return t
        raise KeyError(f"catalog has no topology {topology_id}")


# --------------------------------------------------------------------------- writing


CATALOG_KEYS = ("settings", "human", "topologies", "subspaces")     # a catalog document's keys, all of them


def catalog_to_dict(catalog: Catalog) -> dict[str, Any]:
    """The JSON document of a catalog (plain dicts, lists, ints, strings, bools)."""
    s = catalog.settings
    return {
        "settings": {"wr_links": s.wr_links, "added_joints": s.added_joints, "mobility": s.mobility},
        "human": {
            "links": list(HUMAN_LINKS),
            "joint_names": list(HUMAN_JOINT_NAMES),
            "joints": [list(pair) for pair in HUMAN_JOINTS],
        },
        "topologies": [
            {
                "id": t.id,
                "wr_links": list(t.wr_links),
                "joints": [
                    {"id": j.id, "links": list(j.links), "kind": j.kind, "loop_closure": j.loop_closure}
                    for j in t.joints
                ],
                "tree_joints": list(t.tree_joints),
                "loop_closure_joints": list(t.loop_closure_joints),
                "actuator_pairs": [list(p) for p in t.actuator_pairs],
            }
            for t in catalog.topologies
        ],
        "subspaces": [
            {"id": sid, "topology": tid, "actuators": list(pair)}
            for sid, tid, pair in catalog.subspaces()
        ],
    }


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _is_flat(value: Any) -> bool:
    """A value printed on one line: a scalar, or a list/dict of scalars or scalar lists."""
    if _is_scalar(value):
        return True
    items = value.values() if isinstance(value, dict) else value
    return all(_is_scalar(v) or (isinstance(v, list) and all(map(_is_scalar, v))) for v in items)


def dumps_catalog_json(document: dict[str, Any]) -> str:
    """Deterministic text: keys sorted, two-space indentation, flat records on one line."""

    def dump(value: Any, indent: str) -> str:
        if _is_flat(value):
            return json.dumps(value, sort_keys=True)
        inner = indent + "  "
        if isinstance(value, dict):
            body = [f"{inner}{json.dumps(k)}: {dump(value[k], inner)}" for k in sorted(value)]
            return "{\n" + ",\n".join(body) + "\n" + indent + "}"
        body = [inner + dump(v, inner) for v in value]
        return "[\n" + ",\n".join(body) + "\n" + indent + "]"

    return dump(document, "") + "\n"


def save_catalog(catalog: Catalog, path: str | os.PathLike) -> None:
    """Write ``catalog`` as JSON to ``path`` atomically (same catalog -> same bytes)."""
    write_text_atomic(path, dumps_catalog_json(catalog_to_dict(catalog)))


# --------------------------------------------------------------------------- reading


def _get(mapping: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise UserError(f"{where}.{key}: missing; expected a {_kind_name(kind)}")
    value = mapping[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise UserError(f"{where}.{key}: got {shown(value)}; expected a {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({int: "integer", str: "string", list: "list", dict: "object", bool: "boolean"}[k] for k in kinds)


def _topology_from_dict(doc: Any, index: int, settings: CatalogSettings, where: str) -> Topology:
    where = f"{where}.topologies[{index}]"
    tid = _get(doc, "id", int, where)
    if tid != index + 1:
        raise UserError(f"{where}.id: got {tid}; expected {index + 1} (ids number the topologies in order)")
    wr_links = tuple(_get(doc, "wr_links", list, where))
    if wr_links != wr_link_names(settings.wr_links):
        raise UserError(f"{where}.wr_links: got {list(wr_links)}; expected {list(wr_link_names(settings.wr_links))}")
    known = set(HUMAN_LINKS) | set(wr_links)
    joints = []
    for k, jd in enumerate(_get(doc, "joints", list, where)):
        jw = f"{where}.joints[{k}]"
        jid = _get(jd, "id", int, jw)
        links = _get(jd, "links", list, jw)
        kind = _get(jd, "kind", str, jw)
        if jid != k + 1:
            raise UserError(f"{jw}.id: got {jid}; expected {k + 1}")
        if len(links) != 2 or not set(links) <= known or links[0] == links[1]:
            raise UserError(f"{jw}.links: got {links}; expected two different links of {sorted(known)}")
        if kind not in JOINT_KINDS:
            raise UserError(f"{jw}.kind: got {kind!r}; expected one of {', '.join(JOINT_KINDS)}")
        joints.append(Joint(jid, (links[0], links[1]), kind, _get(jd, "loop_closure", bool, jw)))
    if len(joints) != settings.added_joints:
        raise UserError(f"{where}.joints: got {len(joints)} joints; expected {settings.added_joints}")
    pairs = []
    for k, pair in enumerate(_get(doc, "actuator_pairs", list, where)):
        if (
            not isinstance(pair, list)
            or len(pair) != settings.mobility
            or not all(isinstance(i, int) and 1 <= i <= len(joints) for i in pair)
        ):
            raise UserError(
                f"{where}.actuator_pairs[{k}]: got {shown(pair)}; expected {settings.mobility} joint ids in 1..{len(joints)}"
            )
        pairs.append(tuple(pair))
    topology = Topology(tid, wr_links, tuple(joints), tuple(pairs))
    try:
        spanned = len(topology.tree_parents()) == len(wr_links) == len(topology.tree_joints)
    except ValueError:
        spanned = False
    if not spanned:
        raise UserError(f"{where}.joints: the joints with loop_closure false do not form a spanning tree; "
                        f"expected exactly one per WR link, connecting every WR link to the human")
    for key, value in (("tree_joints", topology.tree_joints), ("loop_closure_joints", topology.loop_closure_joints)):
        if key in doc and doc[key] != list(value):
            raise UserError(f"{where}.{key}: got {doc[key]}; expected {list(value)} (from the joints' loop_closure flags)")
    return topology


def catalog_from_dict(doc: Any, where: str = "catalog") -> Catalog:
    """Validate a catalog JSON document and build the :class:`Catalog` (UserError naming
    the first bad key otherwise)."""
    if not isinstance(doc, dict):
        raise UserError(f"{where}: got {shown(doc)}; expected a JSON object with {', '.join(CATALOG_KEYS)}")
    unknown = [str(k) for k in doc if k not in CATALOG_KEYS]
    if unknown:
        raise UserError(f"{where}: unknown key \"{unknown[0]}\"; expected only {', '.join(CATALOG_KEYS)}")
    sd = _get(doc, "settings", dict, where)
    settings = CatalogSettings(
        wr_links=_get(sd, "wr_links", int, f"{where}.settings"),
        added_joints=_get(sd, "added_joints", int, f"{where}.settings"),
        mobility=_get(sd, "mobility", int, f"{where}.settings"),
    )
    human = _get(doc, "human", dict, where)
    if _get(human, "links", list, f"{where}.human") != list(HUMAN_LINKS):
        raise UserError(f"{where}.human.links: got {human['links']}; expected {list(HUMAN_LINKS)}")
    topologies = tuple(
        _topology_from_dict(td, k, settings, where) for k, td in enumerate(_get(doc, "topologies", list, where))
    )
    catalog = Catalog(settings, topologies)
    if "subspaces" in doc:
        expected = catalog_to_dict(catalog)["subspaces"]
        if doc["subspaces"] != expected:
            raise UserError(f"{where}.subspaces: do not match the topologies' actuator pairs; expected {len(expected)} subspaces in catalog order")
    return catalog


def load_catalog(path: str | os.PathLike) -> Catalog:
    """Read and validate a ``catalog.json`` written by :func:`save_catalog` (UserError, one
    line naming the file, for one that cannot be read or is not a catalog)."""
    doc = read_user_file(path, "a topology catalog (catalog.json from `codesign topologies`)", "json")
    return catalog_from_dict(doc, where=str(path))


# --------------------------------------------------------------------------- the default catalog
DEFAULT_CATALOG = Path("topologies/catalog.json")
# the repository's copy, used when the working directory has no topologies/ (e.g. a worker
# started elsewhere); the package is installed editable from the repository
REPOSITORY_CATALOG = Path(__file__).resolve().parents[2] / DEFAULT_CATALOG
_CACHED: dict[str, Catalog] = {}


def catalog_path(path: str | os.PathLike | None = None) -> Path:
    """The catalog a setting or option names: ``path`` when given, else
    ``topologies/catalog.json`` of the working directory, else the repository's copy --
    the one rule every stage resolves a catalog by."""
    if path:
        return Path(path)
    return DEFAULT_CATALOG if DEFAULT_CATALOG.exists() else REPOSITORY_CATALOG


def cached_catalog(path: str | os.PathLike | None = None) -> Catalog:
    """:func:`load_catalog` of :func:`catalog_path` (``path``), read once per process and
    path (UserError, one line, when it is missing or bad)."""
    chosen = catalog_path(path)
    key = str(chosen)
    if key not in _CACHED:
        if not chosen.exists():
            raise UserError(f"{chosen}: no topology catalog; expected one written by `codesign topologies`")
        _CACHED[key] = load_catalog(chosen)
    return _CACHED[key]
