"""Anthropometry: body height and mass -> the planar human's segment properties.

Pure data layer (no engine): reads the tables in ``human/`` (see ``human/SOURCE.md`` for
where every number comes from) and scales them by height H (lengths) and mass M (masses).

Frames (upright pose, thesis 4.1.1 / Fig. 4.1): every segment frame has its origin at the
segment's proximal joint (torso: the hip), axes parallel to the world's (x forward, z up)
when all joint angles are zero, i.e. standing upright with the sole flat on the ground.
"""

from __future__ import annotations

import csv
import tomllib
from numbers import Real
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codesign.errors import UserError, shown
from codesign.topology.catalog import HUMAN_LINKS

HUMAN_DIR = Path(__file__).resolve().parents[2] / "human"


@dataclass(frozen=True)
class Segment:
    """One rigid segment in its own frame (origin at its proximal joint), SI units.

    mass: kg; com_xz: (2,) m; inertia: kg m^2 about the CoM (planar, about the pitch axis);
    length: m (proximal joint to distal joint, or the span used for the radius of gyration).
    """

    name: str
    length: float
    mass: float
    com_xz: np.ndarray
    inertia: float


@dataclass(frozen=True)
class HumanGeometry:
    """Scaled human: segments and landmark points, upright pose, SI units.

    Heights (``*_height``) are above the ground in the upright pose. ``foot_points``
    are in the foot frame (origin at the ankle), ``toe_tip`` in the toe frame (origin at
    the toe joint = metatarsal heads).
    """

    height_m: float
    mass_kg: float
    torso: Segment
    thigh: Segment
    shank: Segment
    foot: Segment
    toe: Segment
    hip_height: float
    knee_height: float
    ankle_height: float
    shoulder_height: float
    toe_joint_xz: np.ndarray  # toe joint (MT heads) in the foot frame, m
    heel_xz: np.ndarray  # heel contact point in the foot frame, m
    toe_tip_xz: np.ndarray  # toe-tip contact point in the toe frame, m
    toe_stiffness: float  # N m / rad
    knee_ligament_k1: float
    knee_ligament_k2: float
    knee_ligament_limit_flexion_rad: float

    def segment_span(self, link: str) -> tuple[float, float]:
        """Heights (m, upright pose) of the proximal and distal ends of a catalog link.

        torso: hip -> shoulder; thigh: hip -> knee; shank: knee -> ankle. The relative
        attachment position s in 0..1 of Table 5.2 runs along this span.
        """
        spans = {
            "torso": (self.hip_height, self.shoulder_height),
            "thigh": (self.hip_height, self.knee_height),
            "shank": (self.knee_height, self.ankle_height),
        }
        if link not in spans:
            raise ValueError(f"unknown human link {link!r}; expected one of {HUMAN_LINKS}")
        return spans[link]

    def joint_height(self, link: str) -> float:
        """Height (m, upright) of the origin of a human link's frame (its proximal joint)."""
        return {"torso": self.hip_height, "thigh": self.hip_height, "shank": self.knee_height}[link]


def _read_segment_table(path: Path) -> dict[str, dict[str, float]]:
    with open(path, newline="") as fh:
        rows = {}
        for row in csv.DictReader(fh):
            rows[row["segment"]] = {
                k: float(v) for k, v in row.items() if k not in ("segment", "endpoints_proximal_distal", "note") and v != ""
            }
    return rows


def _read_dimensions(path: Path) -> dict[str, float]:
    with open(path, newline="") as fh:
        return {row["name"]: float(row["fraction_of_height"]) for row in csv.DictReader(fh)}


def load_subject(path: Path | str | None = None) -> dict:
    """The subject TOML (default ``human/subject.toml``) as a dict."""
    path = Path(path) if path is not None else HUMAN_DIR / "subject.toml"
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise UserError(f"{path}: no such subject file; expected a TOML file like human/subject.toml") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML ({exc}); expected a file like human/subject.toml") from None


def _segment(name: str, length: float, mass: float, com_xz, rg_fraction: float) -> Segment:
    return Segment(name, float(length), float(mass), np.asarray(com_xz, dtype=float), float(mass * (rg_fraction * length) ** 2))


def _subject_number(key: str, value, low: float, high: float, unit: str) -> float:
    """``value`` as a float in [low, high] (UserError naming ``key`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not (low <= value <= high):
        raise UserError(f"{key}: got {shown(value)}; expected a number in {low:g}..{high:g} {unit}")
    return float(value)


def human_geometry(height_m: float | None = None, mass_kg: float | None = None, subject: dict | None = None) -> HumanGeometry:
    """Scale Winter's tables to a subject of ``height_m`` (m) and ``mass_kg`` (kg).

    Defaults come from ``human/subject.toml`` (1.80 m, 70 kg). Raises UserError for a
    non-positive or implausible height/mass.
    """
    subject = load_subject() if subject is None else subject
    H = _subject_number("height_m", subject.get("height_m") if height_m is None else height_m, 0.5, 2.5, "m")
    M = _subject_number("mass_kg", subject.get("mass_kg") if mass_kg is None else mass_kg, 10.0, 300.0, "kg")
    table = _read_segment_table(HUMAN_DIR / "winter_segment_parameters.csv")
    dim = _read_dimensions(HUMAN_DIR / "segment_dimensions.csv")

    hip_h, knee_h, ankle_h, shoulder_h = (dim[k] * H for k in ("hip_height", "knee_height", "ankle_height", "shoulder_height"))
    hat, thigh_t, shank_t, foot_t = table["hat"], table["thigh"], table["leg_shank"], table["foot"]

    # torso (HAT): Winter's HAT row, length greater trochanter -> glenohumeral joint,
    # CoM measured up from the hip.
    l_torso = shoulder_h - hip_h
    torso = _segment("torso", l_torso, hat["mass_fraction_of_body"] * M,
                     (0.0, hat["com_from_proximal_fraction_of_length"] * l_torso), hat["rg_about_com_fraction_of_length"])
    l_thigh = hip_h - knee_h
    thigh = _segment("thigh", l_thigh, thigh_t["mass_fraction_of_body"] * M,
                     (0.0, -thigh_t["com_from_proximal_fraction_of_length"] * l_thigh), thigh_t["rg_about_com_fraction_of_length"])
    l_shank = knee_h - ankle_h
    shank = _segment("shank", l_shank, shank_t["mass_fraction_of_body"] * M,
                     (0.0, -shank_t["com_from_proximal_fraction_of_length"] * l_shank), shank_t["rg_about_com_fraction_of_length"])

    # foot: rear foot from the ankle to the metatarsal heads (toe joint) on the sole.
    heel_back = dim["heel_behind_ankle"] * H
    toe_len = dim["toe_length"] * H
    mt_forward = dim["foot_length"] * H - heel_back - toe_len
    toe_joint = np.array([mt_forward, -ankle_h])
    toe_mass_fraction = 0.003  # thesis Fig. 4.1 table, toe row
    l_foot = float(np.hypot(*toe_joint))  # Winter's foot segment LMAL-MT2
    foot = _segment("foot", l_foot, (foot_t["mass_fraction_of_body"] - toe_mass_fraction) * M,
                    foot_t["com_from_proximal_fraction_of_length"] * toe_joint, foot_t["rg_about_com_fraction_of_length"])
    # toe: thesis Fig. 4.1 table (CoM 0.010 H ahead of the toe joint, rg 0.10 of its length)
    toe = _segment("toe", toe_len, toe_mass_fraction * M, (0.010 * H, 0.0), 0.10)

    lig = subject.get("knee_ligament", {})
    return HumanGeometry(
        height_m=H, mass_kg=M, torso=torso, thigh=thigh, shank=shank, foot=foot, toe=toe,
        hip_height=hip_h, knee_height=knee_h, ankle_height=ankle_h, shoulder_height=shoulder_h,
        toe_joint_xz=toe_joint, heel_xz=np.array([-heel_back, -ankle_h]), toe_tip_xz=np.array([toe_len, 0.0]),
        toe_stiffness=float(subject.get("toe", {}).get("stiffness_nm_per_rad", 122.0)),
        knee_ligament_k1=float(lig.get("k1", 1e6)), knee_ligament_k2=float(lig.get("k2", 1e2)),
        knee_ligament_limit_flexion_rad=float(np.deg2rad(lig.get("limit_flexion_deg", -2.0))),
    )
