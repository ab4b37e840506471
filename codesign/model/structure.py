"""The structure mass law: what a wearable robot's bars, passive joints and cuffs weigh.

Two laws, a :class:`StructureLaw` each (kg/m of bar, kg per passive joint, kg per cuff):

* ``"thesis"`` (:data:`THESIS`, the default everywhere): thesis 5.4.2's 0.7 kg/m bars,
  0.5 kg passive joints and no cuffs -- every stored design replays with it bit for bit;
* ``"parts"`` (:func:`parts_law`): a bar is a tube of a named section of the catalog
  ``data/structure.toml`` (kg/m from its material's density and its outer and inner
  diameter, :func:`tube_mass_per_m`), a passive joint a catalog joint (two ball bearings
  of a maker's datasheet mass, a steel pin and an aluminium housing, :func:`joint_mass`),
  and every attachment joint (a WR link strapped to the torso, thigh or shank) carries a
  catalog cuff with its strap.

Every number of the catalog has its ``<field>_source`` (a datasheet, handbook or vendor
page, or "derived:"/"ESTIMATE:" and how); a catalog without one is refused. The law is a
number record :class:`~codesign.model.morphology.build_morphology` reads; the actuators'
masses are not its business (:mod:`codesign.model.actuators`, :mod:`codesign.model.drivetrain`).
Selected by the walking settings ``evaluation.structure`` (and ``link_section``,
``passive_joint``, ``cuff``): :func:`structure_law`. docs/structure.md has the table.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from codesign.errors import UserError, nearest, shown

CATALOG_PATH = Path(__file__).parent / "data" / "structure.toml"
LAWS = ("thesis", "parts")


@dataclass(frozen=True)
class StructureLaw:
    """What the structure weighs: ``bar_mass_per_m`` kg per metre of WR bar,
    ``passive_joint_mass`` kg per passive (unactuated) added joint, ``cuff_mass`` kg per
    attachment joint (its cuff and strap); ``law`` ("thesis" | "parts") and the catalog
    names it was built from (``section``, ``joint``, ``cuff``; "" under the thesis)."""

    law: str
    bar_mass_per_m: float
    passive_joint_mass: float
    cuff_mass: float
    section: str = ""
    joint: str = ""
    cuff: str = ""


THESIS = StructureLaw("thesis", 0.7, 0.5, 0.0)   # thesis 5.4.2, "Mass distribution"


@dataclass(frozen=True)
class Material:
    """A structural material: ``density`` kg/m^3 and where it was read."""

    name: str
    density: float
    source: str


@dataclass(frozen=True)
class Section:
    """A round tube of ``material``: ``outer_diameter`` and ``inner_diameter`` m."""

    name: str
    material: Material
    outer_diameter: float
    inner_diameter: float
    description: str

    @property
    def mass_per_m(self) -> float:
        """kg/m: :func:`tube_mass_per_m` of its material and diameters."""
        return tube_mass_per_m(self.material.density, self.outer_diameter, self.inner_diameter)


@dataclass(frozen=True)
class JointPart:
    """A passive revolute joint of the catalog and its ``mass`` kg (:func:`joint_mass`)."""

    name: str
    mass: float
    description: str


@dataclass(frozen=True)
class Cuff:
    """One cuff with its strap: ``mass`` kg."""

    name: str
    mass: float
    description: str


@dataclass(frozen=True)
class StructureCatalog:
    """``data/structure.toml`` read: materials, sections, joints and cuffs by name, and
    the names the parts law takes when a setting names none (``default_*``)."""

    materials: dict[str, Material]
    sections: dict[str, Section]
    joints: dict[str, JointPart]
    cuffs: dict[str, Cuff]
    default_section: str
    default_joint: str
    default_cuff: str


def tube_mass_per_m(density: float, outer_diameter: float, inner_diameter: float) -> float:
    """kg per metre of a round tube: rho pi (D^2 - d^2) / 4 (rho kg/m^3, D and d in m,
    0 <= d < D; d = 0: a solid rod)."""
    if not (density > 0 and 0.0 <= inner_diameter < outer_diameter):
        raise ValueError(f"tube: density {density} kg/m^3, D {outer_diameter} m, d {inner_diameter} m; "
                         "expected density > 0 and 0 <= d < D")
    return density * math.pi * (outer_diameter**2 - inner_diameter**2) / 4.0


def cylinder_mass(density: float, outer_diameter: float, inner_diameter: float, length: float) -> float:
    """kg of a round tube (or rod, d = 0) of ``length`` m: :func:`tube_mass_per_m` x length."""
    return tube_mass_per_m(density, outer_diameter, inner_diameter) * length


def joint_mass(entry: dict, materials: dict[str, Material]) -> float:
    """kg of a catalog ``[[joint]]``: its ``mass_kg`` if it gives one, else
    bearing_count x bearing_mass_kg + the pin (a solid steel rod, pin_diameter_m x
    pin_length_m) + the housing (a tube, housing_outer/inner_diameter_m x housing_width_m)."""
    if "mass_kg" in entry:
        return float(entry["mass_kg"])
    pin = cylinder_mass(materials[entry["pin_material"]].density, entry["pin_diameter_m"], 0.0,
                        entry["pin_length_m"])
    housing = cylinder_mass(materials[entry["housing_material"]].density, entry["housing_outer_diameter_m"],
                            entry["housing_inner_diameter_m"], entry["housing_width_m"])
    return entry["bearing_count"] * entry["bearing_mass_kg"] + pin + housing


_NUMBERS = {"material": ("density_kg_m3",),
            "section": ("outer_diameter_m", "inner_diameter_m"),
            "cuff": ("mass_kg",)}
_JOINT_PARTS = ("bearing_count", "bearing_mass_kg", "pin_diameter_m", "pin_length_m",
                "housing_outer_diameter_m", "housing_inner_diameter_m", "housing_width_m")


def _check_sources(path: Path, kind: str, entry: dict, keys) -> None:
    for key in keys:
        if not isinstance(entry.get(key), (int, float)) or not math.isfinite(entry[key]) or entry[key] < 0:
            raise ValueError(f"{path}: {kind} {entry.get('name')}: {key} is missing or not a finite number >= 0")
        if not entry.get(f"{key}_source"):
            raise ValueError(f"{path}: {kind} {entry.get('name')}: {key} has no {key}_source")


def read_catalog(path: Path | str = CATALOG_PATH) -> StructureCatalog:
    """The structure catalog at ``path`` (ValueError, naming the entry: a number missing
    or without its ``_source``, a material or default that is not in it)."""
    path = Path(path)
    data = tomllib.loads(path.read_text())
    materials = {}
    for e in data.get("material", []):
        _check_sources(path, "material", e, _NUMBERS["material"])
        materials[e["name"]] = Material(e["name"], float(e["density_kg_m3"]), e["density_kg_m3_source"])
    sections = {}
    for e in data.get("section", []):
        _check_sources(path, "section", e, _NUMBERS["section"])
        if e.get("material") not in materials:
            raise ValueError(f"{path}: section {e.get('name')}: material {e.get('material')!r} is not a [[material]]")
        sections[e["name"]] = Section(e["name"], materials[e["material"]], float(e["outer_diameter_m"]),
                                      float(e["inner_diameter_m"]), e.get("description", ""))
        sections[e["name"]].mass_per_m     # noqa: B018 -- checks 0 <= d < D
    joints = {}
    for e in data.get("joint", []):
        _check_sources(path, "joint", e, ("mass_kg",) if "mass_kg" in e else _JOINT_PARTS)
        for key in () if "mass_kg" in e else ("pin_material", "housing_material"):
            if e.get(key) not in materials:
                raise ValueError(f"{path}: joint {e.get('name')}: {key} {e.get(key)!r} is not a [[material]]")
        joints[e["name"]] = JointPart(e["name"], joint_mass(e, materials), e.get("description", ""))
    cuffs = {}
    for e in data.get("cuff", []):
        _check_sources(path, "cuff", e, _NUMBERS["cuff"])
        cuffs[e["name"]] = Cuff(e["name"], float(e["mass_kg"]), e.get("description", ""))
    default = data.get("default", {})
    for key, table in (("section", sections), ("joint", joints), ("cuff", cuffs)):
        if default.get(key) not in table:
            raise ValueError(f"{path}: [default] {key} {default.get(key)!r} is not in the catalog")
    return StructureCatalog(materials, sections, joints, cuffs, default["section"], default["joint"],
                            default["cuff"])


@lru_cache(maxsize=4)
def structure_catalog(path: str = str(CATALOG_PATH)) -> StructureCatalog:
    """The catalog, read once per process (and path)."""
    return read_catalog(path)


def _named(kind: str, name, table: dict, key: str) -> str:
    if not isinstance(name, str) or name not in table:
        raise UserError(f"evaluation.{key}: got {shown(name)}{nearest(name, sorted(table))}; "
                        f"expected a {kind} of the structure catalog: {', '.join(sorted(table))} "
                        "(codesign/model/data/structure.toml)")
    return name


def parts_law(section: str | None = None, joint: str | None = None, cuff: str | None = None,
              catalog: StructureCatalog | None = None) -> StructureLaw:
    """The parts law of catalog ``section``, ``joint`` and ``cuff`` (None: the catalog's
    default). UserError, one line naming the setting and the catalog's entries, for a
    name the catalog does not hold."""
    cat = structure_catalog() if catalog is None else catalog
    s = _named("section", cat.default_section if section is None else section, cat.sections, "link_section")
    j = _named("joint", cat.default_joint if joint is None else joint, cat.joints, "passive_joint")
    c = _named("cuff", cat.default_cuff if cuff is None else cuff, cat.cuffs, "cuff")
    return StructureLaw("parts", cat.sections[s].mass_per_m, cat.joints[j].mass, cat.cuffs[c].mass, s, j, c)


def structure_law(law, section=None, joint=None, cuff=None) -> StructureLaw:
    """The law the settings name: ``law`` "thesis" (:data:`THESIS`; then no catalog name
    may be given) or "parts" (:func:`parts_law`). UserError, one line: an unknown law, a
    catalog name beside the thesis's law, a name not in the catalog."""
    if law not in LAWS:
        raise UserError(f"evaluation.structure: got {shown(law)}; expected one of {', '.join(LAWS)}")
    if law == "thesis":
        given = [k for k, v in (("link_section", section), ("passive_joint", joint), ("cuff", cuff)) if v is not None]
        if given:
            raise UserError(f"evaluation.{given[0]}: given with the thesis's structure law; expected "
                            "evaluation.structure = \"parts\" beside it")
        return THESIS
    return parts_law(section, joint, cuff)
