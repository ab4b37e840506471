"""The nominal gait (Winter 2009, Table A.1) as a periodic interpolant in engine angles.

THE angle convention (the one place it is defined; README "Human model"):

    engine angle = SIGN * anatomical angle, SIGN = (+1, -1, +1) for (hip, knee, ankle)

Engine angles are counter-clockwise relative angles (x forward to the right, z up), zero in
the upright pose (torso up, legs straight down, sole flat). Anatomical angles are positive in
flexion: hip flexion swings the thigh forward (CCW, +), knee flexion swings the shank
backward relative to the thigh (CW, so the engine knee angle is -flexion), ankle
dorsiflexion lifts the toes (CCW, +). The toe joint (not in the data) is 0.

Data -> anatomical (marker definitions, ``human/SOURCE.md``): hip = thigh from vertical
(equal to the model's hip angle for an upright torso), knee as recorded, ankle + 3.6 deg
(the data's MT5->heel marker line reads -3.6 deg with a flat foot).

Periodicity: the CSV's 0 % and 100 % rows differ (1.0 deg hip, 0.3 deg knee, 1.4 deg ankle:
stride variability). We remove the mismatch as a linear drift over the cycle,
y(s) - (y_100 - y_0) s for phase s in [0, 1], and fit a periodic cubic spline through the
101 detrended samples (whose ends now agree). The interpolant therefore equals the CSV at 0 % and differs from it by at
most |y_100 - y_0| * s elsewhere (tested).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline

from codesign.errors import UserError
from codesign.model.anthropometry import HUMAN_DIR

GAIT_JOINTS = ("hip", "knee", "ankle")
SIGN = np.array([1.0, -1.0, 1.0])  # engine = SIGN * anatomical, order GAIT_JOINTS
ANKLE_MARKER_OFFSET_DEG = 3.6  # anatomical ankle = data ankle + this (human/SOURCE.md)
GAIT_CSV = HUMAN_DIR / "winter_walking_sagittal_joint_angles.csv"
_COLUMNS = ("hip_flexion_deg", "knee_flexion_deg", "ankle_dorsiflexion_deg")


def anatomical_to_engine(anatomical_rad: np.ndarray) -> np.ndarray:
    """Anatomical (hip flexion, knee flexion, ankle dorsiflexion) -> engine angles.

    anatomical_rad: (..., 3) radians, last axis in GAIT_JOINTS order. Returns (..., 3) rad.
    """
    return np.asarray(anatomical_rad, dtype=float) * SIGN


def engine_to_anatomical(engine_rad: np.ndarray) -> np.ndarray:
    """Inverse of :func:`anatomical_to_engine` (the map is its own inverse)."""
    return np.asarray(engine_rad, dtype=float) * SIGN


def read_gait_csv(path: Path | str = GAIT_CSV) -> tuple[np.ndarray, np.ndarray]:
    """The gait CSV as (percent (101,), anatomical angles in DEGREES (101, 3), data convention)."""
    path = Path(path)
    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        percent = np.array([float(r["gait_cycle_percent"]) for r in rows])
        deg = np.array([[float(r[c]) for c in _COLUMNS] for r in rows])
    except FileNotFoundError:
        raise UserError(f"{path}: no such gait file; expected a CSV like {GAIT_CSV.name}") from None
    except (KeyError, ValueError) as exc:
        raise UserError(f"{path}: bad gait CSV ({exc}); expected columns gait_cycle_percent, {', '.join(_COLUMNS)}") from None
    if len(percent) < 4 or percent[0] != 0.0 or percent[-1] != 100.0 or np.any(np.diff(percent) <= 0):
        raise UserError(f"{path}: gait_cycle_percent must rise from 0 to 100; expected one stride")
    return percent, deg


@dataclass(frozen=True)
class NominalGait:
    """Periodic right-leg gait in engine angles (radians); phase s in [0, 1), 0 = heel strike.

    The left leg runs half a period later: ``angles(s + 0.5)``.
    """

    spline: CubicSpline  # phase (1,) -> (3,) engine rad, periodic with period 1
    drift_rad: np.ndarray  # (3,) the removed end mismatch y_100 - y_0, engine rad

    def angles(self, phase: float | np.ndarray) -> np.ndarray:
        """Engine angles (..., 3) rad [hip, knee, ankle] at phase(s) (any real, wrapped mod 1)."""
        return self.spline(np.mod(phase, 1.0))

    def rates(self, phase: float | np.ndarray) -> np.ndarray:
        """d(angles)/d(phase) (..., 3) rad per cycle; multiply by the gait frequency (Hz) for rad/s."""
        return self.spline(np.mod(phase, 1.0), 1)

    def sample(self, n_points: int) -> np.ndarray:
        """Angles at the n phases k/n, k = 0..n-1: (n, 3) engine rad."""
        return self.angles(np.arange(n_points) / n_points)


_BUILT: dict[tuple[str, int], NominalGait] = {}


def nominal_gait(path: Path | str = GAIT_CSV) -> NominalGait:
    """The periodic nominal gait interpolant (see the module docstring for the method).
    Built once per process for each version of the file (its path and modification
    time): every walking evaluation asks for it (reading and fitting cost ~1 ms, issue
    16). The interpolant is shared: read it, do not modify it."""
    path = Path(path)
    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        return _fit_gait(path)           # (reports the missing file)
    if key not in _BUILT:
        _BUILT[key] = _fit_gait(path)
    return _BUILT[key]


def _fit_gait(path: Path) -> NominalGait:
    percent, deg = read_gait_csv(path)
    deg = deg.copy()
    deg[:, 2] += ANKLE_MARKER_OFFSET_DEG
    engine = anatomical_to_engine(np.deg2rad(deg))
    s = percent / 100.0
    drift = engine[-1] - engine[0]
    detrended = engine - np.outer(s, drift)  # detrended[-1] == detrended[0]
    spline = CubicSpline(s, detrended, bc_type="periodic", axis=0)
    return NominalGait(spline=spline, drift_rad=drift)
