"""Transfer a human-gait controller to a co-design: the device does what the human's hip
and knee did.

In the co-design the wearer is passive (thesis chapter 5): the WR's two actuated joints
per leg must produce the torques that the chapter-4 controller asked of the human's hip and
knee. This module writes a co-design's control parameters from a human-gait design
(chapter-4 layout: hip, knee, ankle step impedance) through the mechanism's kinematics,
for a given topology, actuated pair and morphology:

* reference: at N phases the human's hip and knee references are set on the right leg,
  the WR loops closed around them (loop-closure IK, :func:`close_wr_loops`) and each
  actuated joint's angle read from its row; a 5-point ppoly (the chapter-5 layout) is
  fitted to those angles by least squares;
* stiffness and damping: with G = d(hip, knee) / d(actuated angles) (2 x 2, by central
  differences of the IK), the human-space impedance diag(K_hip, K_knee) seen from the
  actuated joints is G^T diag(K) G (virtual work); its diagonal at each phase is fitted
  by a step signal (the best arc on the sample grid, least-squares levels), clipped to
  the bounds;
* the ankle (a human joint in both problems): the human's law, its 4-point reference
  refitted with 5 points; every other WR joint a free joint (no spring, light damping).

For a parallelogram four-bar around each joint (topology 1, actuators 1 and 3: the
device's links stay parallel to thigh and shank) G is the identity and the transfer is
exact up to the reference refit. It is a starting point for a search (``[space.start]``),
not an optimum: the device's mass, its torque limits and the passive joints change the
dynamics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from codesign.control import bounds as bd
from codesign.control import signals as sg
from codesign.model.anthropometry import human_geometry
from codesign.model.assemble import assemble
from codesign.model.gait import nominal_gait
from codesign.model.morphology import build_morphology
from codesign.walking.design import Design
from codesign.walking.initial_state import HUMAN_JOINT_BODY, close_wr_loops
from codesign.walking.settings import WalkSettings
from codesign.topology.catalog import cached_catalog
from codesign.walking.setup import (_wr_rows, human_control_layout, wr_control_layout,
                                    wr_joint_name)

SAMPLES = 100              # phases per gait cycle
IK_STEP = 1e-4             # rad, central differences of the IK (G)


@dataclass(frozen=True)
class Transfer:
    """A transferred co-design and how well its signals fit.

    design: the co-design (morphology as given, control transferred); reference_rms_deg:
    actuated joint (and ``ankle``) -> RMS of its 5-point reference fit over the cycle,
    deg; gain_rms: joint -> (stiffness, damping) RMS of the step fits, N m/rad and
    N m s/rad; transmission: actuated joint -> mean over the cycle of |d hip / d joint|
    (the first joint) or |d knee / d joint| (the second), dimensionless (1: parallelogram).
    """

    design: Design
    reference_rms_deg: dict[str, float]
    gain_rms: dict[str, tuple[float, float]]
    transmission: dict[str, float]


def fit_ppoly(phases: np.ndarray, values: np.ndarray, n_points: int,
              value_bounds: tuple[float, float], starts: int = 24) -> tuple[np.ndarray, np.ndarray, float]:
    """(dx (n_points + 1,), y (n_points,), RMS error) of the closed monotone cubic
    (:func:`codesign.control.signals.ppoly`) nearest to ``values`` at ``phases``: least
    squares (dx in [0, 1], y within value_bounds) from ``starts`` knot sets (the knot
    positions make local minima): four of equally spaced knots shifted by a quarter of
    their spacing each, the rest random (a fixed seed: the same fit every time); the
    best is kept."""
    lo, hi = value_bounds
    low = np.concatenate([np.zeros(n_points + 1), np.full(n_points, lo)])
    high = np.concatenate([np.ones(n_points + 1), np.full(n_points, hi)])

    def residual(z):
        return sg.ppoly(z[:n_points + 1], z[n_points + 1:])(phases) - values

    best = None
    rng = np.random.default_rng(0)
    for k in range(starts):
        if k < 4:                                          # first knot at (k + 0.5) / 4 spacings
            dx = np.full(n_points + 1, 0.5)
            dx[0], dx[-1] = 0.5 * (k + 0.5) / 4, 0.5 * (1.0 - (k + 0.5) / 4)
        else:
            dx = rng.uniform(0.05, 1.0, n_points + 1)
        knots = sg.differential_knots(dx)
        y0 = np.interp(knots, phases, values, period=1.0)
        x0 = np.clip(np.concatenate([dx, y0]), low + 1e-12, high - 1e-12)
        fit = least_squares(residual, x0, bounds=(low, high))
        if best is None or fit.cost < best.cost:
            best = fit
    rms = float(np.sqrt(np.mean(best.fun ** 2)))
    return best.x[:n_points + 1], best.x[n_points + 1:], rms


def fit_step(values: np.ndarray, value_bounds: tuple[float, float]
             ) -> tuple[float, float, float, float, float]:
    """(t1, dt, v1, v2, RMS error) of the step signal nearest to ``values`` sampled at the
    N phases k / N: every arc holding samples i .. i + m - 1 (0 < m < N; its ends put
    midway between samples), v1 and v2 the means inside and outside it (least squares),
    then clipped to value_bounds."""
    n = values.size
    total, total2 = values.sum(), (values ** 2).sum()
    m = np.arange(1, n)                                     # samples inside: dt = m / n
    best = (np.inf, 0, 1)
    for i in range(n):                                      # t1 = i / n
        inside = np.cumsum(np.roll(values, -i))[:-1]        # sums of the first m samples
        sse = total2 - inside ** 2 / m - (total - inside) ** 2 / (n - m)
        k = int(np.argmin(sse))
        if sse[k] < best[0]:
            best = (sse[k], i, int(m[k]))
    _, i, k = best
    rolled = np.roll(values, -i)
    lo, hi = value_bounds
    t1, dt = ((i - 0.5) / n) % 1.0, k / n        # boundaries midway between samples
    v1, v2 = float(np.clip(rolled[:k].mean(), lo, hi)), float(np.clip(rolled[k:].mean(), lo, hi))
    rms = float(np.sqrt(np.mean((sg.step(t1, dt, v1, v2)(np.arange(n) / n) - values) ** 2)))
    return t1, dt, v1, v2, rms


def _actuated_angles(model, rows, wr_coords, human_q):
    """Angles (rad) of the actuated rows with the right leg's hip, knee at human_q (2,)."""
    q = np.zeros(model.n)
    for joint, value in zip(("hip", "knee"), human_q):
        q[model.body_id(f"{HUMAN_JOINT_BODY[joint]}_r")] = value
    q, _qd, err = close_wr_loops(model, q, np.zeros(model.n), wr_coords)
    if not err <= 1e-8:
        raise ValueError(f"the loops do not close at hip {human_q[0]:.3f}, knee {human_q[1]:.3f} rad "
                         f"(residual {err:.2g} m)")
    return np.array([row @ q for row in rows])


def transfer_human_control(human: Design, topology_id: int, actuators: tuple[int, int],
                           morphology: dict[str, float],
                           settings: WalkSettings | None = None) -> Transfer:
    """The co-design of ``topology_id`` / ``actuators`` with ``morphology`` (MODEL's
    parameter names) whose WR control reproduces ``human``'s hip and knee law (module
    docstring). Raises ValueError when the loops do not close along the references or
    the actuated pair cannot move the hip and knee (singular G)."""
    settings = settings or WalkSettings()
    controller = human_control_layout(settings).decode(human.params)
    law = {j.name: j for j in controller.active}
    topology = cached_catalog(settings.catalog).topology(topology_id)
    aug = assemble(build_morphology(topology, actuators, morphology, human_geometry(),
                                    settings.actuators.mass()))
    model = aug.model
    wr_rows = _wr_rows(model, aug.actuated)
    names = [wr_joint_name(a) for a in actuators]
    rows = [wr_rows[name][0] for name in names]               # right leg
    wr_coords = [j.index for j in aug.wr_joints if not j.loop]

    phases = np.arange(SAMPLES) / SAMPLES
    human_q = np.stack([law["hip"].reference(phases), law["knee"].reference(phases)], axis=1)
    k_h = np.stack([law["hip"].stiffness(phases), law["knee"].stiffness(phases)], axis=1)
    d_h = np.stack([law["hip"].damping(phases), law["knee"].damping(phases)], axis=1)
    angles = np.zeros((SAMPLES, 2))
    k_act = np.zeros((SAMPLES, 2))
    d_act = np.zeros((SAMPLES, 2))
    ratio = np.zeros((SAMPLES, 2))
    for k in range(SAMPLES):
        angles[k] = _actuated_angles(model, rows, wr_coords, human_q[k])
        a = np.zeros((2, 2))                                  # d actuated / d (hip, knee)
        for j in range(2):
            e = np.zeros(2)
            e[j] = IK_STEP
            a[:, j] = (_actuated_angles(model, rows, wr_coords, human_q[k] + e)
                       - _actuated_angles(model, rows, wr_coords, human_q[k] - e)) / (2 * IK_STEP)
        if abs(np.linalg.det(a)) < 1e-6:
            raise ValueError(f"the actuated pair cannot move hip and knee independently at phase "
                             f"{phases[k]:.2f} (d actuated / d human singular)")
        g = np.linalg.inv(a)                                  # d (hip, knee) / d actuated
        k_act[k] = (g ** 2 * k_h[k][:, None]).sum(axis=0)     # diag(G^T diag(K) G)
        d_act[k] = (g ** 2 * d_h[k][:, None]).sum(axis=0)
        ratio[k] = np.abs(np.diag(g))
    angles = np.unwrap(angles, axis=0)

    layout = wr_control_layout(topology, tuple(actuators), settings)
    params: dict[str, float] = dict(morphology)
    reference_rms: dict[str, float] = {}
    gain_rms: dict[str, tuple[float, float]] = {}
    for j, name in enumerate(names):
        dx, y, rms = fit_ppoly(phases, angles[:, j], 5, bd.WR_REFERENCE_ANGLE)
        params.update(_ppoly_params(f"{name}.ref", dx, y))
        reference_rms[name] = float(np.rad2deg(rms))
        fits = []
        for role, values, bound in (("K", k_act[:, j], bd.STIFFNESS), ("D", d_act[:, j], bd.DAMPING)):
            t1, dt, v1, v2, rms_g = fit_step(values, bound)
            params.update({f"{name}.{role}.t1": t1, f"{name}.{role}.dt": dt,
                           f"{name}.{role}.v1": v1, f"{name}.{role}.v2": v2})
            fits.append(rms_g)
        gain_rms[name] = (fits[0], fits[1])
    ankle = law["ankle"]
    dx, y, rms = fit_ppoly(phases, ankle.reference(phases), 5, bd.human_reference_angle("ankle"))
    params.update(_ppoly_params("ankle.ref", dx, y))
    reference_rms["ankle"] = float(np.rad2deg(rms))
    for role, signal in (("K", ankle.stiffness), ("D", ankle.damping)):
        t1, dt = (float(v) for v in signal.x)
        v1, v2 = (float(v) for v in signal.y)
        params.update({f"ankle.{role}.t1": t1, f"ankle.{role}.dt": dt,
                       f"ankle.{role}.v1": v1, f"ankle.{role}.v2": v2})
    for name in layout.passive:                               # free joints, lightly damped
        params.update({f"{name}.k": 0.0, f"{name}.rest": 0.0, f"{name}.d": 1.0})
    missing = set(layout.parameter_names()) - set(params)
    if missing:
        raise ValueError(f"transfer: no value for {sorted(missing)}")
    transmission = {name: float(ratio[:, j].mean()) for j, name in enumerate(names)}
    return Transfer(Design(params, topology_id, tuple(actuators)), reference_rms, gain_rms, transmission)


def _ppoly_params(prefix: str, dx: np.ndarray, y: np.ndarray) -> dict[str, float]:
    names = sg.parameter_names(prefix, sg.PPOLY, len(y))
    return dict(zip(names, [float(v) for v in np.concatenate([dx, y])]))
