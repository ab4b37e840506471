"""Drivetrains from a motor catalog (issue 30): a real drive unit and an extra reduction.

A :class:`Drivetrain` is one catalog unit (``data/motors.toml``: a motor with its built-in
gear, e.g. a CubeMars AK80-9 -- 9:1 planetary -- or a maxon motor on a 100:1 harmonic
drive; every number there has its source) and an extra reduction of ratio n >= 1 between
the unit's output and the joint (a belt, cable or planetary stage; n = 1: the unit drives
the joint directly). With the unit's output peak torque tau_p, continuous torque tau_c,
no-load speed w_0 (at its bus voltage), built-in ratio N_b, rotor inertia J and mass m_u,
and the stage law of the catalog's ``[stage]`` (:class:`StageLaw`: ``s(n) = ceil(ln n /
ln r_max)`` stages of efficiency eta_s each; mass c T^e for an output torque rating T)::

    eta         = eta_s ** s(n)                      (1 at n = 1)
    peak torque = n eta tau_p                        N m at the joint
    continuous  = n eta tau_c                        N m
    max speed   = w_0 / n                            rad/s
    power       = peak torque x max speed / 4        W: the DC-motor line's maximum, as
                                                     the default rating's (actuators.py)
    gear ratio  = N_b n                              motor turns per joint turn
    armature    = (N_b n)^2 J                        kg m^2, reflected on the joint
    mass        = m_u + [n > 1] c (n eta tau_c)^e    kg

:func:`drivetrain_actuator` turns it into the :class:`~codesign.model.actuators.Actuator`
that the rollout enforces (torque-speed envelope), meters (electrical power with the
motor's Kt and winding resistance) and integrates (the reflected inertia), whose mass is
the drivetrain's (``mass_offset`` = that mass, ``torque_density`` = inf: no law).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from codesign.errors import UserError, nearest
from codesign.model.actuators import Actuator

CATALOG_PATH = Path(__file__).parent / "data" / "motors.toml"


@dataclass(frozen=True)
class Motor:
    """One catalog drive unit (``data/motors.toml``; SI units, torques and speed at its
    output, constants on the motor side)."""

    name: str
    description: str
    builtin_gear_ratio: float     # N_b
    peak_torque: float            # N m, output
    rated_torque: float           # N m, output, continuous
    no_load_speed: float          # rad/s, output, at bus_voltage
    bus_voltage: float            # V
    torque_constant: float        # N m/A, motor side
    winding_resistance: float     # ohm, line to line
    rotor_inertia: float          # kg m^2, motor side
    mass: float                   # kg, the unit


@dataclass(frozen=True)
class StageLaw:
    """An extra reduction stage's law (the catalog's ``[stage]``)."""

    efficiency: float             # per stage
    max_ratio: float              # of one stage
    mass_coefficient: float       # kg / (N m)^mass_exponent
    mass_exponent: float

    def stages(self, ratio: float) -> int:
        """How many stages a reduction of ``ratio`` >= 1 needs (0 at ratio 1)."""
        return 0 if ratio <= 1.0 else math.ceil(math.log(ratio) / math.log(self.max_ratio) - 1e-12)

    def mass(self, ratio: float, torque: float) -> float:
        """kg of a reduction of ``ratio`` rated ``torque`` N m at its output (0 at ratio 1)."""
        return 0.0 if ratio <= 1.0 else self.mass_coefficient * torque ** self.mass_exponent


_MOTOR_KEYS = {"builtin_gear_ratio": "builtin_gear_ratio", "peak_torque_Nm": "peak_torque",
               "rated_torque_Nm": "rated_torque", "no_load_speed_rad_s": "no_load_speed",
               "bus_voltage_V": "bus_voltage", "kt_Nm_per_A": "torque_constant",
               "phase_resistance_ohm": "winding_resistance", "rotor_inertia_kgm2": "rotor_inertia",
               "mass_kg": "mass"}


@lru_cache(maxsize=None)
def _catalog(path: str) -> tuple[dict[str, Motor], StageLaw]:
    """The catalog file: its motors by name and its stage law (each number is checked to
    have a source: a catalog without one is refused)."""
    data = tomllib.loads(Path(path).read_text())
    motors = {}
    for entry in data["motor"]:
        for key in _MOTOR_KEYS:
            if not entry.get(f"{key}_source"):
                raise ValueError(f"{path}: motor {entry.get('name')}: {key} has no {key}_source")
        motors[entry["name"]] = Motor(entry["name"], entry["description"],
                                      **{field: float(entry[key]) for key, field in _MOTOR_KEYS.items()})
    stage = data["stage"]
    for key in ("efficiency", "max_ratio", "mass"):
        if not stage.get(f"{key}_source"):
            raise ValueError(f"{path}: [stage] {key} has no {key}_source")
    law = StageLaw(float(stage["efficiency"]), float(stage["max_ratio"]),
                   float(stage["mass_coefficient"]), float(stage["mass_exponent"]))
    return motors, law


def motor_catalog() -> dict[str, Motor]:
    """The shipped catalog's motors by name."""
    return _catalog(str(CATALOG_PATH))[0]


def stage_law() -> StageLaw:
    """The shipped catalog's extra-stage law."""
    return _catalog(str(CATALOG_PATH))[1]


def catalog_motor(name: str, where: str = "motor") -> Motor:
    """The catalog motor ``name`` (UserError naming ``where`` and the choices)."""
    motors = motor_catalog()
    if name not in motors:
        raise UserError(f"{where}: got {name!r}, an unknown motor{nearest(name, motors)}; expected one of "
                        f"{', '.join(motors)} (codesign/model/data/motors.toml)")
    return motors[name]


@dataclass(frozen=True)
class Drivetrain:
    """A catalog unit and an extra reduction of ``stage_ratio`` >= 1 (module docstring)."""

    motor: Motor
    stage_ratio: float = 1.0
    law: StageLaw | None = None       # None: the catalog's

    @property
    def stage(self) -> StageLaw:
        return stage_law() if self.law is None else self.law

    @property
    def efficiency(self) -> float:
        return self.stage.efficiency ** self.stage.stages(self.stage_ratio)

    @property
    def peak_torque(self) -> float:
        return self.stage_ratio * self.efficiency * self.motor.peak_torque

    @property
    def rated_torque(self) -> float:
        return self.stage_ratio * self.efficiency * self.motor.rated_torque

    @property
    def max_speed(self) -> float:
        return self.motor.no_load_speed / self.stage_ratio

    @property
    def rated_power(self) -> float:
        return self.peak_torque * self.max_speed / 4.0

    @property
    def gear_ratio(self) -> float:
        return self.motor.builtin_gear_ratio * self.stage_ratio

    @property
    def armature(self) -> float:
        return self.gear_ratio ** 2 * self.motor.rotor_inertia

    @property
    def mass(self) -> float:
        return self.motor.mass + self.stage.mass(self.stage_ratio, self.rated_torque)


def drivetrain_actuator(drivetrain: Drivetrain, regeneration: float = 0.0,
                        model: str = "bounded") -> Actuator:
    """The :class:`Actuator` of ``drivetrain`` (module docstring)."""
    if not drivetrain.stage_ratio >= 1.0:
        raise ValueError(f"stage ratio {drivetrain.stage_ratio}: expected >= 1")
    return Actuator(peak_torque=drivetrain.peak_torque, max_speed=drivetrain.max_speed,
                    rated_power=drivetrain.rated_power, gear_ratio=drivetrain.gear_ratio,
                    torque_constant=drivetrain.motor.torque_constant,
                    winding_resistance=drivetrain.motor.winding_resistance,
                    regeneration=regeneration, mass_offset=drivetrain.mass, torque_density=math.inf,
                    rated_torque=drivetrain.rated_torque, rotor_inertia=drivetrain.motor.rotor_inertia,
                    model=model, drivetrain=f"{drivetrain.motor.name} x {drivetrain.stage_ratio:g}")


# --------------------------------------------------------------------------- design parameters
# A design may choose each actuated joint's drivetrain: j<id>.motor (the catalog's units in
# file order, by the integer part: 0 <= value < number of units) and j<id>.stage_ratio; an
# ideal device's, at the wearer joint it assists: assist.<joint>.motor, assist.<joint>.stage_ratio.
STAGE_RATIO_BOUNDS = (1.0, 8.0)     # a searched extra reduction: up to one belt/planetary stage


def drive_parameter_names(joint: int | str) -> tuple[str, str]:
    """The drivetrain parameters of actuated joint ``joint``: a linkage's joint id, or the
    name of the wearer joint an ideal device drives (``"hip"``, ``"knee"``, ``"ankle"``)."""
    prefix = f"assist.{joint}" if isinstance(joint, str) else f"j{joint}"
    return f"{prefix}.motor", f"{prefix}.stage_ratio"


def drive_parameter_bounds(joint_ids) -> dict[str, tuple[float, float]]:
    """{name: (low, high)} of the drivetrain parameters of ``joint_ids`` (as
    :func:`drive_parameter_names` takes them)."""
    out = {}
    for a in joint_ids:
        motor, ratio = drive_parameter_names(a)
        out[motor] = (0.0, float(len(motor_catalog())))
        out[ratio] = STAGE_RATIO_BOUNDS
    return out


def motor_at(value: float) -> Motor:
    """The catalog unit a ``j<id>.motor`` value selects (its integer part; the upper bound
    itself selects the last unit)."""
    motors = list(motor_catalog().values())
    return motors[min(max(int(math.floor(value)), 0), len(motors) - 1)]


def design_drivetrain(params, joint_id: int | str) -> Drivetrain | None:
    """The drivetrain ``params`` choose for actuated joint ``joint_id``
    (:func:`drive_parameter_names`); None when they choose none (the settings' rating
    applies, or an ideal device's joint is unbounded)."""
    motor, ratio = drive_parameter_names(joint_id)
    if motor not in params:
        return None
    return Drivetrain(motor_at(params[motor]), float(params[ratio]))
