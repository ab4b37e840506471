"""Load screening (issue 44, the second half of stage 3): the actuators' loads along a
reference gait, the lightest catalog drivetrain that carries them, the device's mass and
its cuff forces, for one screened morphology.

Reference gait (:class:`ReferenceGait`, ``human/reference_gait.csv``): one stride of the
right leg, heel strike to heel strike, N samples: engine hip and knee angles h (rad), their
rates h_dot (rad/s) and the torques tau_h (N m) the wearer's hip and knee law applies on
the hip and knee coordinates (engine convention: :mod:`codesign.model.gait`). The shipped
file is the human-like gait ``docs/designs/human-walking.json`` replayed for 10 s, its
strides of the second half averaged at equal phase (``codesign screen --record-gait``
writes it; a test checks it is current).

Loads (:func:`stride_loads`). At every sample the leg's loops are closed with the human
joints at h (the screening's damped Newton, warm-started from the previous sample), and
the transmission

    G = dh/da = B_H B_A^-1                                          (2 x 2)

is taken from an orthonormal basis B of the loop-constrained motions (the null space of
the loop-closure Jacobian; B_H its hip and knee rows, B_A the actuated angles' rows, in the
actuator pair's order; an actuated loop-closure joint's angle is theta_b - theta_a): the
same G as the screening's N_HH T^-1 and as the wearer-space drive's
(:mod:`codesign.control.wearer`). Virtual work on the constrained motion gives

    tau_a = G^T tau_h     (N m),      omega_a = G^-1 h_dot     (rad/s),

per actuator its RMS torque over the stride, peak |torque|, peak |speed| and peak
|tau_a omega_a| (W). tau_h are the human's own torques (:func:`stride_loads`), in the
screening (:func:`screen_loads`) scaled by the body mass the legs carry,

    tau_h <- tau_h (M + m_d) / M          (M the subject's mass, m_d the device's, kg),

the first approximation of joint moments that scale with body mass (gait data are
normalized per kg, Winter 2009): no inverse dynamics of the augmented model is made, so
the device's inertia, where its mass sits, and its drivetrains' reflected inertia are left
out (their effect against closed loop: docs/screening.md). m_d is the device's mass with
the drivetrains chosen for the human's own torques; the drivetrains are then chosen again
for the scaled torques (one refinement).

Drivetrains (:func:`lightest_drivetrain`): over every catalog unit and every extra stage
ratio of :data:`RATIO_GRID` (the searched range ``STAGE_RATIO_BOUNDS`` in steps of 0.05,
the catalog's stage law for efficiency and mass: :mod:`codesign.model.drivetrain`), the
lightest that meets

    peak torque n eta tau_p  >= PEAK_TORQUE_MARGIN x peak |tau_a|
    continuous  n eta tau_c  >= CONTINUOUS_MARGIN x RMS tau_a
    no-load speed w_0 / n    >= SPEED_MARGIN x peak |omega_a|

(ties: the first in catalog order, then the smaller ratio), or none with the requirement
no unit meets.

Device mass (kg, both legs): the morphology's added mass with each actuator's mass the
chosen drivetrain's, 2 (sum of the WR bodies' mass - the actuators' mass + the two
drivetrains' mass).

Cuff forces (quasi-static, N): at every sample the smallest set of forces F_i at the
attachment joints on thigh and shank that exerts tau_h on the human joints,

    tau_hip = sum_i (p_i - hip) x F_i,   tau_knee = sum_{i on shank} (p_i - knee) x F_i,
    F = A^T (A A^T)^-1 tau_h                     (A the 2 x 2k matrix of these moments),

its largest |F_i| over the stride. A lower bound of what a linkage's cuffs carry: it
leaves out the device's weight and inertia and the forces a linkage holds internally
(a torso attachment carries the reaction, not counted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from codesign.errors import UserError
from codesign.model.anthropometry import HUMAN_DIR
from codesign.model.assemble import assemble_leg
from codesign.model.drivetrain import STAGE_RATIO_BOUNDS, Drivetrain, Motor, StageLaw
from codesign.model.morphology import Morphology
from codesign.screening.kinematics import add_angle_jacobian
from codesign.screening.screen import ScreenSettings, close_loops_kernel
from codesign.topology.catalog import ATTACHMENT

REFERENCE_GAIT_CSV = HUMAN_DIR / "reference_gait.csv"
REFERENCE_GAIT_COLUMNS = ("time_s", "hip_rad", "knee_rad", "hip_rad_s", "knee_rad_s", "hip_Nm", "knee_Nm")

PEAK_TORQUE_MARGIN = 1.2
"""A drivetrain's peak torque over the stride's peak actuator torque: headroom for the
closed loop's departures from the reference gait and for the device's own inertia, which
the human's torques leave out (the check against closed loop: docs/screening.md)."""
CONTINUOUS_MARGIN = 1.2
"""A drivetrain's continuous (rated) torque over the stride's RMS actuator torque: the
closed-loop walk must keep ``actuator_thermal_ratio`` <= 1 (RMS / rated), and its RMS
differs from the prediction by up to ~20 %."""
SPEED_MARGIN = 1.2
"""A drivetrain's no-load speed over the stride's peak actuator speed: the closed loop's
``actuator_speed_ratio_peak`` <= 1 (|w| / w_max), with room for its faster swings."""
RATIO_GRID = np.round(np.arange(STAGE_RATIO_BOUNDS[0], STAGE_RATIO_BOUNDS[1] + 1e-9, 0.05), 10)
"""The extra stage ratios the sizing tries (the searched range of a design's
``j<id>.stage_ratio``, steps of 0.05; 1: the unit drives the joint directly)."""
TRANSMISSION_LIMIT = 50.0
"""Largest |G| entry before a sample counts as singular (the wearer-space drive's guard,
``codesign.control.wearer.MAX_TRANSMISSION``)."""


# --------------------------------------------------------------------------- reference gait


@dataclass(frozen=True)
class ReferenceGait:
    """One stride of the right leg (N samples, heel strike to heel strike; engine
    convention). time float64[N] s from heel strike (its last sample before the next);
    angles, rates, torques float64[N, 2]: (hip, knee) in rad, rad/s, N m; source: where
    it came from (one line); period: the stride's duration, s."""

    time: np.ndarray
    angles: np.ndarray
    rates: np.ndarray
    torques: np.ndarray
    period: float
    source: str


def reference_gait_text(gait: ReferenceGait) -> str:
    """The CSV text of ``gait`` (comment lines first: its source and period; then the
    columns :data:`REFERENCE_GAIT_COLUMNS`, 9 significant digits)."""
    lines = [f"# reference gait for the load screening (codesign.screening.loads): {gait.source}",
             f"# period_s = {gait.period:.9g}",
             "# engine convention: hip = thigh from torso (flexion +), knee = shank from thigh (flexion -);"
             " torques on those coordinates",
             ",".join(REFERENCE_GAIT_COLUMNS)]
    data = np.column_stack([gait.time, gait.angles, gait.rates, gait.torques])
    lines += [",".join(f"{v:.9g}" for v in row) for row in data]
    return "\n".join(lines) + "\n"


def read_reference_gait(path: Path | str = REFERENCE_GAIT_CSV) -> ReferenceGait:
    """The reference gait in ``path`` (:func:`reference_gait_text`'s format). UserError
    (one line naming the file) unless it has the columns, at least 20 finite rows, times
    rising from 0 within a period of 0.5-2.5 s, and a stride that walks: the hip swings
    through at least 20 deg and the knee flexes at least 30 deg."""
    from codesign.io import read_user_text

    path = Path(path)
    expected = f"a reference gait CSV with columns {','.join(REFERENCE_GAIT_COLUMNS)} (codesign screen --record-gait)"
    text = read_user_text(path, expected)
    comments = [ln for ln in text.splitlines() if ln.startswith("#")]
    rows = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if not rows or [c.strip() for c in rows[0].split(",")] != list(REFERENCE_GAIT_COLUMNS):
        raise UserError(f"{path}: header {rows[0][:80] if rows else '(none)'!r}; expected {expected}")
    try:
        data = np.array([[float(v) for v in ln.split(",")] for ln in rows[1:]], dtype=float).reshape(-1, 7)
    except ValueError:
        raise UserError(f"{path}: a row that is not 7 numbers; expected {expected}") from None
    period = math.nan
    for c in comments:
        key, _, value = c.lstrip("# ").partition("=")
        if key.strip() == "period_s":
            try:
                period = float(value)
            except ValueError:
                pass
    source = comments[0].partition(": ")[2] if comments else str(path)
    if len(data) < 20 or not np.all(np.isfinite(data)):
        raise UserError(f"{path}: {len(data)} rows, {int(np.sum(~np.all(np.isfinite(data), axis=1)))} not finite; "
                        f"expected at least 20 rows of finite numbers")
    t = data[:, 0]
    if not (t[0] == 0.0 and np.all(np.diff(t) > 0) and 0.5 <= period <= 2.5 and t[-1] < period):
        raise UserError(f"{path}: times {t[0]:g}..{t[-1]:g} s, period {period:g} s; expected times rising from 0 "
                        f"within one stride of 0.5-2.5 s ('# period_s = ...')")
    hip_swing = np.ptp(data[:, 1])
    knee_flex = np.ptp(data[:, 2])
    if hip_swing < np.deg2rad(20.0) or knee_flex < np.deg2rad(30.0):
        raise UserError(f"{path}: hip swings {np.rad2deg(hip_swing):.1f} deg, knee {np.rad2deg(knee_flex):.1f} deg; "
                        f"expected a stride that walks (hip >= 20 deg, knee >= 30 deg)")
    return ReferenceGait(t, data[:, 1:3], data[:, 3:5], data[:, 5:7], period, source)


def mean_stride(t: np.ndarray, strikes: np.ndarray, columns: np.ndarray, n: int = 100) -> tuple[np.ndarray, np.ndarray, float]:
    """The strides between consecutive heel strikes ``strikes`` (s, rising) of the samples
    ``columns`` float64[T, c] at times ``t`` (s), each resampled at phases k / n (k < n,
    linear interpolation) and averaged: returns (time float64[n] s from heel strike at the
    mean period, mean float64[n, c], the mean period s)."""
    phases = np.arange(n) / n
    strides, periods = [], []
    for t0, t1 in zip(strikes[:-1], strikes[1:]):
        times = t0 + phases * (t1 - t0)
        strides.append(np.column_stack([np.interp(times, t, columns[:, j]) for j in range(columns.shape[1])]))
        periods.append(t1 - t0)
    period = float(np.mean(periods))
    return phases * period, np.mean(strides, axis=0), period


# --------------------------------------------------------------------------- loads


class StrideLoads(NamedTuple):
    """A morphology's actuator loads along a reference gait (N samples, 2 actuators in the
    pair's order). ok False: the linkage cannot follow the gait (``reason``; the arrays
    hold the samples before). transmission float64[N, 2, 2] G[h, a] = dh/da;
    torque float64[N, 2] N m (G^T tau_h); speed float64[N, 2] rad/s (G^-1 h_dot);
    rms_torque, peak_torque, peak_speed (abs), peak_power (abs tau omega, W) float64[2];
    cuff_force_peak N (module docstring); transmission_peak: largest |G| entry."""

    ok: bool
    reason: str
    transmission: np.ndarray
    torque: np.ndarray
    speed: np.ndarray
    rms_torque: np.ndarray
    peak_torque: np.ndarray
    peak_speed: np.ndarray
    peak_power: np.ndarray
    cuff_force_peak: float
    transmission_peak: float


def _actuated_rows(leg, morphology: Morphology) -> list[np.ndarray]:
    """Each actuated joint's angle as a row over the leg model's coordinates (pair order)."""
    model = leg.model
    a = model.arrays
    rows = []
    for jid in morphology.actuators:
        joint = next(j for j in leg.actuated if j.catalog_id == jid)
        row = np.zeros(model.n)
        if joint.loop:
            add_angle_jacobian(a.parent, a.joint_type, a.loop_body_b[joint.index], 1.0, row)
            add_angle_jacobian(a.parent, a.joint_type, a.loop_body_a[joint.index], -1.0, row)
        else:
            row[joint.index] = 1.0
        rows.append(row)
    return rows


def stride_transmissions(morphology: Morphology, angles: np.ndarray,
                         settings: ScreenSettings = ScreenSettings()) -> tuple[np.ndarray, int]:
    """G = dh/da (float64[N, 2, 2]) of ``morphology``'s right leg at the engine (hip, knee)
    ``angles`` float64[N, 2] (torso upright): the loops closed by the screening's damped
    Newton from the upright pose (homotopy to the first sample) and then from sample to
    sample. Returns (G, k): k = N when every sample closed and has an invertible
    transmission, else the first sample that did not (G's later rows NaN)."""
    leg = assemble_leg(morphology)
    model = leg.model
    a = model.arrays
    n = model.n
    torso, hip, knee = (model.body_id(b) for b in ("torso", "thigh_r", "shank_r"))
    free = np.array([i for i in range(n) if i not in (torso, hip, knee)], dtype=np.int64)
    cols = np.array([i for i in range(n) if i != torso], dtype=np.int64)
    rows = np.array(_actuated_rows(leg, morphology))[:, cols]
    h_cols = [int(np.flatnonzero(cols == hip)[0]), int(np.flatnonzero(cols == knee)[0])]
    r = 2 * model.n_loops
    pose, phi, jac = np.zeros((n, 3)), np.zeros(r), np.zeros((r, n))
    q = np.zeros(n)
    angles = np.asarray(angles, dtype=float)
    G = np.full((len(angles), 2, 2), np.nan)
    jacs = np.zeros((len(angles), r, len(cols)))
    step = np.deg2rad(settings.homotopy_step_deg)
    closed = len(angles)
    for k, (h, kn) in enumerate(angles):
        start = q[[hip, knee]].copy()
        steps = max(1, int(np.ceil(max(abs(h - start[0]), abs(kn - start[1])) / step)))
        err = 0.0
        for s in range(1, steps + 1):
            q[hip] = start[0] + (h - start[0]) * s / steps
            q[knee] = start[1] + (kn - start[1]) * s / steps
            err = close_loops_kernel(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b, a.loop_xz_a,
                                     a.loop_xz_b, q, free, settings.tol, settings.max_iter, settings.max_step,
                                     settings.damping, pose, phi, jac)
        if not err <= settings.tol:
            closed = k
            break
        jacs[k] = jac[:, cols]
    if closed == 0:
        return G, 0
    # every closed sample at once: the null space of J (2 motions), then G = B_H B_A^-1
    if r:
        _u, sv, vt = np.linalg.svd(jacs[:closed])
        rank = np.sum(sv > 1e-9 * sv[:, :1], axis=1)
        B = np.transpose(vt[:, -2:, :], (0, 2, 1))               # (k, ns, 2): the last two right vectors
        bad = rank != len(cols) - 2
    else:
        B = np.broadcast_to(np.eye(len(cols))[None], (closed, len(cols), len(cols)))
        bad = np.full(closed, len(cols) != 2)
    B_A = np.einsum("an,knm->kam", rows, B)
    det = np.linalg.det(B_A)
    bad |= ~(np.abs(det) >= 1e-12)
    B_A[bad] = np.eye(2)
    G[:closed] = np.linalg.solve(np.transpose(B_A, (0, 2, 1)), np.transpose(B[:, h_cols, :], (0, 2, 1))).transpose(0, 2, 1)
    bad |= ~(np.max(np.abs(G[:closed]), axis=(1, 2)) <= TRANSMISSION_LIMIT)
    first = int(np.argmax(bad)) if bad.any() else closed
    G[first:] = np.nan
    return G, first


def actuator_loads(G: np.ndarray, torques: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tau_a, omega_a), float64[N, 2] each: tau_a = G^T tau_h (N m), omega_a = G^-1 h_dot
    (rad/s) per sample, for G float64[N, 2, 2] (G[h, a] = dh/da), torques tau_h and rates
    h_dot float64[N, 2] (hip, knee)."""
    tau = np.einsum("kha,kh->ka", G, torques)
    omega = np.linalg.solve(G, np.asarray(rates, dtype=float)[..., None])[..., 0]
    return tau, omega


def cuff_forces(morphology: Morphology, angles: np.ndarray, torques: np.ndarray) -> np.ndarray:
    """Largest quasi-static attachment force (N) at each sample, float64[N] (module
    docstring: the least-norm forces at the thigh and shank attachments that exert the
    hip and knee torques; NaN where they cannot, e.g. no shank attachment)."""
    hip0, knee0 = morphology.link_origin("thigh"), morphology.link_origin("shank")
    points = [(morphology.joint_positions[j.id], seg) for j in morphology.topology.joints if j.kind == ATTACHMENT
              for seg in ("thigh", "shank") if seg in j.links]
    angles = np.asarray(angles, dtype=float)
    if not points:
        return np.full(len(angles), np.nan)

    def turned(angle, v):           # v (2,) turned by angle (N,): (N, 2)
        c, s = np.cos(angle), np.sin(angle)
        return np.column_stack([c * v[0] - s * v[1], s * v[0] + c * v[1]])

    h, kn = angles[:, 0], angles[:, 1]
    knee = hip0 + turned(h, knee0 - hip0)
    A = np.zeros((len(angles), 2, 2 * len(points)))
    for i, (p0, seg) in enumerate(points):
        p = hip0 + turned(h, p0 - hip0) if seg == "thigh" else knee + turned(h + kn, p0 - knee0)
        rh, rk = p - hip0, p - knee
        A[:, 0, 2 * i], A[:, 0, 2 * i + 1] = -rh[:, 1], rh[:, 0]      # (p - hip) x F = r_x F_z - r_z F_x
        if seg == "shank":
            A[:, 1, 2 * i], A[:, 1, 2 * i + 1] = -rk[:, 1], rk[:, 0]
    AAT = A @ np.transpose(A, (0, 2, 1))
    ok = np.abs(np.linalg.det(AAT)) > 1e-12
    AAT[~ok] = np.eye(2)
    F = np.einsum("kij,ki->kj", A, np.linalg.solve(AAT, np.asarray(torques, dtype=float)[..., None])[..., 0])
    out = np.max(np.hypot(F[:, 0::2], F[:, 1::2]), axis=1)
    out[~ok] = np.nan
    return out


def stride_loads(morphology: Morphology, gait: ReferenceGait,
                 settings: ScreenSettings = ScreenSettings()) -> StrideLoads:
    """The actuator loads of ``morphology`` along ``gait`` (module docstring)."""
    G, k = stride_transmissions(morphology, gait.angles, settings)
    nan2 = np.full(2, np.nan)
    if k < len(gait.time):
        reason = (f"the linkage cannot follow the reference gait: its loops do not close or its transmission is "
                  f"singular at phase {gait.time[k] / gait.period:.2f}")
        return StrideLoads(False, reason, G, np.full((len(G), 2), np.nan), np.full((len(G), 2), np.nan),
                           nan2, nan2, nan2, nan2, math.nan, math.nan)
    tau, omega = actuator_loads(G, gait.torques, gait.rates)
    cuffs = cuff_forces(morphology, gait.angles, gait.torques)
    return StrideLoads(True, "", G, tau, omega, rms_torque=np.sqrt(np.mean(tau ** 2, axis=0)),
                       peak_torque=np.max(np.abs(tau), axis=0), peak_speed=np.max(np.abs(omega), axis=0),
                       peak_power=np.max(np.abs(tau * omega), axis=0),
                       cuff_force_peak=float(np.max(cuffs)) if np.all(np.isfinite(cuffs)) else math.nan,
                       transmission_peak=float(np.max(np.abs(G))))


# --------------------------------------------------------------------------- drivetrains


class DrivetrainChoice(NamedTuple):
    """The lightest catalog drivetrain for one actuator, or ``drivetrain`` None and
    ``reason`` the requirement no unit meets ("" when one was found)."""

    drivetrain: Drivetrain | None
    reason: str


def lightest_drivetrain(peak_torque: float, rms_torque: float, peak_speed: float, motors: Sequence[Motor],
                        law: StageLaw, ratios: np.ndarray = RATIO_GRID) -> DrivetrainChoice:
    """The lightest of ``motors`` x ``ratios`` (extra stage, ``law``) meeting an actuator's
    peak torque (N m), RMS torque (N m) and peak speed (rad/s) with the module's margins
    (module docstring); ties: first motor, then smallest ratio."""
    need_peak, need_rms, need_speed = (PEAK_TORQUE_MARGIN * peak_torque, CONTINUOUS_MARGIN * rms_torque,
                                       SPEED_MARGIN * peak_speed)
    if not motors:
        return DrivetrainChoice(None, "the motor catalog is empty")
    r = np.asarray(ratios, dtype=float)
    stages = np.where(r <= 1.0, 0, np.ceil(np.log(np.maximum(r, 1.0)) / math.log(law.max_ratio) - 1e-12))
    eta = law.efficiency ** stages
    tp = np.array([m.peak_torque for m in motors])[:, None] * (r * eta)[None, :]
    tc = np.array([m.rated_torque for m in motors])[:, None] * (r * eta)[None, :]
    w = np.array([m.no_load_speed for m in motors])[:, None] / r[None, :]
    stage_mass = np.where(r[None, :] > 1.0, law.mass_coefficient * np.maximum(tc, 0.0) ** law.mass_exponent, 0.0)
    mass = np.array([m.mass for m in motors])[:, None] + stage_mass
    ok_peak, ok_rms, ok_speed = tp >= need_peak, tc >= need_rms, w >= need_speed
    ok = ok_peak & ok_rms & ok_speed
    if not ok.any():
        top = f"ratio <= {r.max():g}"
        if not ok_peak.any():
            reason = f"peak torque: no unit x {top} reaches {need_peak:.1f} N m ({PEAK_TORQUE_MARGIN:g} x {peak_torque:.1f})"
        elif not ok_rms.any():
            reason = f"continuous torque: no unit x {top} is rated {need_rms:.1f} N m ({CONTINUOUS_MARGIN:g} x RMS {rms_torque:.1f})"
        elif not ok_speed.any():
            reason = f"speed: no unit reaches {need_speed:.1f} rad/s ({SPEED_MARGIN:g} x {peak_speed:.1f})"
        else:
            reason = (f"no unit meets peak torque {need_peak:.1f} N m, continuous {need_rms:.1f} N m and speed "
                      f"{need_speed:.1f} rad/s together (the reduction that gives the torque is too slow)")
        return DrivetrainChoice(None, reason)
    flat = np.where(ok, mass, np.inf).ravel()
    best = int(np.argmin(flat))
    i, j = divmod(best, len(r))
    return DrivetrainChoice(Drivetrain(motors[i], float(r[j]), law), "")


class LoadScreen(NamedTuple):
    """One morphology's load screening: its ``loads`` (with the torques scaled by
    ``load_scale`` = (M + m_d) / M, module docstring), each actuator's ``drivetrains``
    choice (pair order), ``served`` (both found), ``reason`` (why not: the loads' or the
    first actuator's without a drivetrain; "" when served) and ``device_mass`` (kg, both
    legs, with the chosen drivetrains; NaN unless served)."""

    loads: StrideLoads
    drivetrains: tuple[DrivetrainChoice, ...]
    served: bool
    reason: str
    device_mass: float
    load_scale: float = 1.0


def device_mass(morphology: Morphology, drivetrains: Sequence[Drivetrain]) -> float:
    """kg of both legs' device with ``drivetrains`` (pair order) as its actuators."""
    actuators = sum(morphology.mass_of_actuator(a) for a in morphology.actuators)
    return 2.0 * (morphology.added_mass_per_leg - actuators + sum(d.mass for d in drivetrains))


def scaled_loads(loads: StrideLoads, scale: float) -> StrideLoads:
    """``loads`` with every torque (and so every power and cuff force) times ``scale``."""
    return loads._replace(torque=scale * loads.torque, rms_torque=scale * loads.rms_torque,
                          peak_torque=scale * loads.peak_torque, peak_power=scale * loads.peak_power,
                          cuff_force_peak=scale * loads.cuff_force_peak)


def _sized(morphology: Morphology, loads: StrideLoads, motors, law) -> tuple[tuple[DrivetrainChoice, ...], str, float]:
    choices = tuple(lightest_drivetrain(loads.peak_torque[i], loads.rms_torque[i], loads.peak_speed[i], motors, law)
                    for i in range(2))
    missing = [(a, c) for a, c in zip(morphology.actuators, choices) if c.drivetrain is None]
    if missing:
        a, c = missing[0]
        return choices, f"actuator j{a}: {c.reason}", math.nan
    return choices, "", device_mass(morphology, [c.drivetrain for c in choices])


def screen_loads(morphology: Morphology, gait: ReferenceGait, motors: Sequence[Motor], law: StageLaw,
                 settings: ScreenSettings = ScreenSettings()) -> LoadScreen:
    """Loads, drivetrains and device mass of ``morphology`` along ``gait`` (module
    docstring: the human's torques scaled by the body mass with the device), its
    drivetrains from ``motors`` with the stage ``law``."""
    human = stride_loads(morphology, gait, settings)
    if not human.ok:
        return LoadScreen(human, (), False, human.reason, math.nan)
    choices, reason, mass = _sized(morphology, human, motors, law)
    if reason:       # the human's own torques are the least the device must carry
        return LoadScreen(human, choices, False, reason, math.nan)
    scale = (morphology.human.mass_kg + mass) / morphology.human.mass_kg
    loads = scaled_loads(human, scale)
    choices, reason, mass = _sized(morphology, loads, motors, law)
    return LoadScreen(loads, choices, not reason, reason, mass, scale)
