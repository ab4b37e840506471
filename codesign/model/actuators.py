"""Actuators of the exoskeleton's actuated joints: rating, torque-speed envelope, mass law
and electrical power (issue 15).

An :class:`Actuator` is the hardware behind one actuated joint, described at the joint
(the output of its transmission):

* ``peak_torque`` tau_p (N m), ``max_speed`` w_max (rad/s), ``rated_power`` P (W): the
  **torque-speed envelope** -- the largest torque magnitude the actuator delivers at joint
  speed w is::

      tau_lim(w) = tau_p          for |w| <= P / tau_p           (current limit)
                 = P / |w|        for P / tau_p < |w| <= w_max   (power limit)
                 = 0              for |w| > w_max                (beyond its speed)

  the same in all four quadrants (braking like motoring; a real drive brakes at any
  speed up to its current limit, which this envelope does not credit). The rollout
  delivers tau = clip(tau_cmd, -tau_lim(w), +tau_lim(w)), w the joint speed at the
  step's start (:func:`saturate`, applied in :func:`codesign.control.impedance.control_torques`).
  The power region is empty when w_max <= P / tau_p; the envelope steps from
  min(tau_p, P / w_max) to 0 at w_max.

* ``gear_ratio`` N, ``torque_constant`` Kt (N m/A, motor side), ``winding_resistance``
  R (ohm), ``regeneration`` eta in [0, 1]: the **electrical power** of one actuator at
  (tau, w) is::

      P_mech = tau w,   I = tau / (Kt N),   P_joule = I^2 R
      P_el   = P_mech + P_joule          if P_mech >= 0
             = eta P_mech + P_joule      otherwise (negative work recovered at eta)

  (:func:`electrical_power`; gear and friction losses and the rotor's reflected inertia
  N^2 J_rotor are not part of the electrical power -- the inertia is the engine's, below).
  With R and Kt per phase-to-phase and motor side, I^2 R = (tau / N)^2 / Km^2 with the
  motor constant Km = Kt / sqrt(R) of the datasheets.

* ``mass_offset`` m0 (kg), ``torque_density`` rho (N m/kg): the **mass law**
  m = m0 + tau_p / rho (:meth:`Actuator.mass`), so a stronger actuator costs mass. A
  catalog drivetrain (:mod:`codesign.model.drivetrain`) carries its own mass as m0 with
  rho = inf (no law).

* ``rated_torque`` tau_c (N m at the joint): the **continuous (thermal) rating**. The
  winding's heat follows the mean of tau^2, so the metric ``actuator_thermal_ratio`` =
  sqrt(mean tau^2) / tau_c over the walk (the largest over the motors) must stay <= 1 for
  the motor not to overheat on a long walk.

* ``rotor_inertia`` J (kg m^2, motor side): the rotor's **reflected inertia** N^2 J on the
  joint (:meth:`Actuator.armature`), which the engine adds to the mass matrix
  (:mod:`codesign.dynamics.model`, "armature"). 0 by default: the spec's fixed rating
  keeps its results bit for bit.

``model``: ``"bounded"`` enforces the envelope and uses the mass law; ``"thesis"`` keeps
the thesis's rule (5.4.2: every actuator 2 kg, torque unbounded) so that thesis
comparisons stay bit-identical -- its envelope and motor constants are then only used
to report how far a design exceeds them (the ``actuator_*_ratio_peak`` metrics above 1).

Defaults (a CubeMars AK80-64-class quasi-direct-drive exoskeleton actuator; sources and
status in docs/walking.md, "Actuators"): tau_p = 120 N m (CubeMars AK80-64 datasheet
value, as transcribed in Neurobionics' TMotorCANControl); w_max = 8 rad/s (derived: motor
Kv 100 rpm/V x 48 V / 64 = 7.85 rad/s no-load); P = tau_p w_max / 4 = 240 W (derived: the
maximum power of the linear DC-motor line tau_p (1 - |w| / w_max), to which P / |w| is
tangent at w_max / 2); N = 64; Kt = 0.091 N m/A and R = 0.17 ohm (the AK80 motor:
T-Motor AK80-6 manual); eta = 0 (no regeneration); m0 = 0.25 kg, rho = 70 N m/kg (a
least-squares fit over the CubeMars AK series, +-30 %), giving 1.96 kg at 120 N m -- the
thesis's 2 kg; tau_c = 48 N m (the AK80-64's rated torque, motors.toml); J = 0 (no
reflected inertia; the AK80-64's 5.6e-5 kg m^2 would reflect 0.23 kg m^2 at 64:1: choose
a catalog drivetrain for it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
from numba import njit

from codesign.model.morphology import ACTUATOR_MASS

MODELS = ("bounded", "thesis")

# kinds of an active joint (ControllerArrays.act_kind)
NO_MOTOR = 0     # a human joint (muscles): unbounded, not an actuator of the metrics
SATURATE = 1     # a motor whose envelope the rollout enforces
REPORT = 2       # a motor of the thesis's rule: unbounded, its envelope only reported
DRIVEN = 3       # a wearer joint whose law the device's actuators deliver (codesign.control.wearer):
                 # its torque is computed, not applied at its own row

# columns of a limit row (float64[4]) and a motor row (float64[4])
LIMIT_PEAK, LIMIT_SPEED, LIMIT_POWER, LIMIT_RATED = 0, 1, 2, 3
LIMIT_COLUMNS = 4
MOTOR_GEAR, MOTOR_KT, MOTOR_R, MOTOR_REGEN = 0, 1, 2, 3


@dataclass(frozen=True)
class Actuator:
    """One actuated joint's actuator (module docstring; SI units)."""

    peak_torque: float = 120.0        # N m at the joint
    max_speed: float = 8.0            # rad/s at the joint
    rated_power: float = 240.0        # W
    gear_ratio: float = 64.0          # motor turns per joint turn
    torque_constant: float = 0.091    # N m/A, motor side
    winding_resistance: float = 0.17  # ohm, phase to phase
    regeneration: float = 0.0         # fraction of negative mechanical work recovered
    mass_offset: float = 0.25         # kg, m0 of the mass law
    torque_density: float = 70.0      # N m/kg, rho of the mass law
    rated_torque: float = 48.0        # N m at the joint, continuous (thermal) rating
    rotor_inertia: float = 0.0        # kg m^2, motor side
    model: str = "bounded"            # "bounded" | "thesis"
    drivetrain: str = ""              # the catalog drivetrain it was made from ("": the spec's rating)

    @property
    def enforced(self) -> bool:
        """Whether the rollout saturates the torque at the envelope."""
        return self.model == "bounded"

    def mass(self) -> float:
        """kg of one actuator: the thesis's 2 kg, else m0 + peak_torque / torque_density."""
        if self.model == "thesis":
            return ACTUATOR_MASS
        return actuator_mass(self.peak_torque, self.mass_offset, self.torque_density)

    def armature(self) -> float:
        """kg m^2: the rotor's inertia reflected on the joint, N^2 J."""
        return self.gear_ratio ** 2 * self.rotor_inertia

    def rating(self) -> dict[str, float | str]:
        """What a person reads of the actuator: its drivetrain and ratings, units in the keys."""
        return {"drivetrain": self.drivetrain or "the spec's rating", "peak_torque_Nm": self.peak_torque,
                "continuous_torque_Nm": self.rated_torque, "max_speed_rad_s": self.max_speed,
                "rated_power_W": self.rated_power, "gear_ratio": self.gear_ratio, "mass_kg": self.mass(),
                "reflected_inertia_kgm2": self.armature()}

    def rating_text(self) -> str:
        """:meth:`rating` in one line."""
        return (f"{self.drivetrain or 'the spec rating'}: {self.peak_torque:.1f} N m peak, {self.rated_torque:.1f} "
                f"N m continuous, {self.max_speed:.2f} rad/s, {self.gear_ratio:g}:1, {self.mass():.2f} kg, "
                f"reflected inertia {self.armature():.3g} kg m^2")

    def limit_row(self) -> np.ndarray:
        """float64[4]: peak torque, max speed, rated power, rated torque (LIMIT_*)."""
        return np.array([self.peak_torque, self.max_speed, self.rated_power, self.rated_torque],
                        dtype=np.float64)

    def motor_row(self) -> np.ndarray:
        """float64[4]: gear ratio, torque constant, resistance, regeneration (MOTOR_*)."""
        return np.array([self.gear_ratio, self.torque_constant, self.winding_resistance,
                         self.regeneration], dtype=np.float64)


NUMBER_FIELDS = tuple(f.name for f in fields(Actuator) if f.name not in ("model", "drivetrain"))


def actuator_mass(peak_torque: float, mass_offset: float, torque_density: float) -> float:
    """kg of an actuator of ``peak_torque`` (N m): m0 + peak_torque / rho."""
    return float(mass_offset + peak_torque / torque_density)


UNBOUNDED_LIMIT = np.array([math.inf, math.inf, math.inf, math.inf])
NO_MOTOR_ROW = np.array([1.0, 1.0, 0.0, 0.0])


# --------------------------------------------------------------------------- compiled
@njit(cache=True, _nrt=False)
def torque_limit(rate: float, limit: np.ndarray) -> float:
    """tau_lim(rate) (N m) of the envelope ``limit`` = (peak, max speed, rated power);
    module docstring. Infinite entries make the corresponding limit vanish."""
    w = abs(rate)
    if w > limit[LIMIT_SPEED]:
        return 0.0
    if w * limit[LIMIT_PEAK] > limit[LIMIT_POWER]:
        return limit[LIMIT_POWER] / w
    return limit[LIMIT_PEAK]


@njit(cache=True, _nrt=False)
def saturate(torque: float, rate: float, limit: np.ndarray) -> tuple:
    """(delivered torque, saturated?): ``torque`` clipped to +-tau_lim(rate)."""
    lim = torque_limit(rate, limit)
    if torque > lim:
        return lim, True
    if torque < -lim:
        return -lim, True
    return torque, False


@njit(cache=True, _nrt=False)
def electrical_power(torque: float, rate: float, motor: np.ndarray) -> float:
    """W drawn by one actuator delivering ``torque`` (N m) at ``rate`` (rad/s); motor =
    (gear ratio, torque constant, resistance, regeneration); module docstring."""
    mech = torque * rate
    current = torque / (motor[MOTOR_KT] * motor[MOTOR_GEAR])
    joule = current * current * motor[MOTOR_R]
    if mech >= 0.0:
        return mech + joule
    return motor[MOTOR_REGEN] * mech + joule
