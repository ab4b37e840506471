"""Singularity screening along the nominal gait (thesis 5.2.3 and 5.4.4, steps 1-5).

For every gait point k (N phases k/N of the nominal gait) and offset delta in (0, +D, -D)
added to BOTH hip and knee flexion (anatomical; engine hip + delta, knee - delta):

1. close the loops by damped Newton on the loop-closure residual phi (2m,): with the human
   joints held at the target, the other coordinates take steps
   dq = -J_F^T (J_F J_F^T + lambda I)^-1 phi (the damped pseudo-inverse of the Jacobian
   columns J_F of the free coordinates; lambda -> 0 is the pseudo-inverse step of eq. 5.14),
   with the step norm clamped. Warm start: the nominal point k from point k-1 (point 0 from
   the upright pose, where the loops close by construction, in steps of at most
   ``homotopy_step_deg``), the offsets from point k's solution. No convergence to
   ``tol`` within ``max_iter`` -> UNREACHABLE (singular type 1);
2. the stacked loop-closure Jacobian J (2m x n_s, columns of all mechanism coordinates,
   i.e. without the grounded torso) must keep full row rank (smallest / largest singular
   value >= ``rank_tol``), else CONSTRAINT_SINGULAR (a loop at full extension or folded:
   the boundary of type 1);
3. N = I - J^+ J (eq. 5.18). Each human joint h (hip, knee) must be able to move:
   N_hh >= eps, else HUMAN_LOCKED (type 2, step 4 of 5.4.4);
4. the actuated WR joints must drive hip and knee. Transmission T[a, h] = N_ah for an
   actuated tree joint a (eq. 5.17-5.18). An actuated loop-closure joint c has no
   coordinate of its own; eq. 5.20, qdot = (J_parent - J_child)^+ S_c qdot_c, maps its rate
   to the coordinates. Our reading: J_parent - J_child is the joint's relative
   spatial-velocity Jacobian (angular row w_c + the two translation rows, which are loop
   c's rows of J) and S_c = (1, 0, 0); requiring the other loops to hold as well, the
   minimum-norm solution is u = [J; w_c]^+ e_last = N w_c^T / (w_c N w_c^T), so T[c, h] =
   (N w_c^T)_h, the same projection as N_ah for a tree joint. Require the smallest singular
   value of T (actuators x (hip, knee)) >= eps, else ACTUATOR_SINGULAR (type 2, step 5).

   Why not "every N_ah >= eps" literally: with two decoupled four-bars (an anthropomorphic
   design: one actuator per human joint) N_{hip actuator, knee} is exactly 0 everywhere,
   so the literal test would reject every anthropomorphic design, which the thesis's own
   best solution resembles (5.5). sigma_min(T) >= eps says each actuator moves hip or knee
   (no row ~ 0), each human joint is moved by an actuator (no column ~ 0), and the pair
   drives both independently (T invertible: T = B_A B_H^T for an orthonormal basis B of
   the feasible motions, so T is singular exactly when the actuators or the human joints
   stop parametrizing the motion). For one actuator and one observed joint (a four-bar)
   it is |N_ah|, the thesis's test.

A design passes only if every configuration passes (step 3 of the issue). The result gives
the first failing (point, offset) and reason, and the smallest margin: min over all tested
values N_hh and sigma_min(T) (dimensionless, rad/rad), so a near-singular design is visible.

Only one leg is screened (``assemble_leg``): both legs carry the same WR and follow the same
gait half a period apart, and a leg's loops involve only the torso, that leg and its WR.
The whole loop over the gait runs in one compiled call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

from codesign.dynamics.linalg import pivoted_cholesky_solve
from codesign.dynamics.model import Model
from codesign.model.assemble import AugmentedModel, assemble_leg
from codesign.model.gait import NominalGait, nominal_gait
from codesign.model.morphology import Morphology
from codesign.screening.kinematics import add_angle_jacobian, loop_residual_jacobian

PASS = 0
UNREACHABLE = 1
CONSTRAINT_SINGULAR = 2
HUMAN_LOCKED = 3
ACTUATOR_SINGULAR = 4
REASONS = {
    PASS: "pass",
    UNREACHABLE: "unreachable: loop closure did not converge (singular type 1)",
    CONSTRAINT_SINGULAR: "loop-closure Jacobian rank deficient (loop at full extension or folded)",
    HUMAN_LOCKED: "human joint cannot move (singular type 2)",
    ACTUATOR_SINGULAR: "actuated joint cannot move a human joint (singular type 2)",
}


@dataclass(frozen=True)
class ScreenSettings:
    """Screening settings (SI except the *_deg fields)."""

    n_points: int = 50  # gait points N
    offset_deg: float = 5.0  # offset D on hip and knee flexion
    tol: float = 1e-11  # m, loop-closure residual (max abs component)
    max_iter: int = 30  # Newton iterations per configuration
    max_step: float = 0.5  # rad, clamp on the Newton step norm
    damping: float = 1e-12  # lambda (m^2) of the damped pseudo-inverse
    eps: float = 1e-3  # null-space threshold (dimensionless)
    rank_tol: float = 1e-6  # smallest/largest singular value of J
    homotopy_step_deg: float = 5.0  # from the upright pose to gait point 0


@dataclass(frozen=True)
class ScreenResult:
    """Verdict of one design. gait_point/phase/offset_deg: first failing configuration
    (-1 / nan when ok); margin: smallest null-space value met (dimensionless);
    min_sigma_ratio: smallest singular-value ratio of J met; both 0 for an UNREACHABLE
    design (singular type 1: its failing configuration has no value, and without this a
    design failing before any check would report inf, i.e. look safest); detail: which
    joints."""

    ok: bool
    code: int
    reason: str
    gait_point: int
    phase: float
    offset_deg: float
    margin: float
    min_sigma_ratio: float
    detail: str
    # the largest |entry| of the transmission G = d(hip, knee) / d(actuated angles) and of
    # its inverse over the configurations of a passing design (NaN for a failing one):
    # how much the actuators amplify the gait's torques and its speeds (1: a parallelogram)
    transmission_peak: float = float("nan")
    inverse_transmission_peak: float = float("nan")


@njit(cache=True)
def close_loops_kernel(parent, joint_type, joint_xz, loop_a, loop_b, loop_xa, loop_xb, q, free,
                       tol, max_iter, max_step, damping, pose, phi, jac):
    """Damped Newton on the loop closures, moving only the coordinates ``free`` (int64[f]).

    q (n,) in/out. Returns the final residual (max abs component, m); converged if <= tol.
    pose (n,3), phi (2m,), jac (2m,n) are scratch.

    Step: dq_free = -J_f^T (J_f J_f^T + damping I)^-1 phi (Euclidean metric, Levenberg
    damping), scaled down to at most ``max_step``. Not the same algorithm as the engine's
    :func:`codesign.dynamics.loops.project_positions` (every coordinate, mass-matrix
    metric, undamped, no step cap): the two give different configurations from the same
    start, and the walking initial state (``codesign.walking.initial_state.close_wr_loops``)
    and the screening results depend on this one's numbers, so they are kept separate.
    """
    r = phi.shape[0]
    nf = free.shape[0]
    A = np.empty((r, r))
    y = np.empty(r)
    perm = np.empty(r, dtype=np.int64)
    work = np.empty(r)
    dq = np.empty(nf)
    err = 0.0
    for it in range(max_iter + 1):
        loop_residual_jacobian(parent, joint_type, joint_xz, loop_a, loop_b, loop_xa, loop_xb, q, pose, phi, jac)
        err = 0.0
        for i in range(r):
            err = max(err, abs(phi[i]))
        if err <= tol or it == max_iter:
            break
        for i in range(r):
            for j in range(i + 1):
                s = 0.0
                for k in range(nf):
                    s += jac[i, free[k]] * jac[j, free[k]]
                A[i, j] = s
                A[j, i] = s
            A[i, i] += damping
        pivoted_cholesky_solve(A, phi, r, y, perm, work, 1e-15)
        norm = 0.0
        for k in range(nf):
            s = 0.0
            for i in range(r):
                s -= jac[i, free[k]] * y[i]
            dq[k] = s
            norm += s * s
        scale = 1.0
        norm = np.sqrt(norm)
        if norm > max_step:
            scale = max_step / norm
        for k in range(nf):
            q[free[k]] += scale * dq[k]
    return err


@njit(cache=True)
def nullspace_checks(parent, joint_type, loop_a, loop_b, pose, jac, cols, observed, act_tree, act_loop,
                     eps, rank_tol, out):
    """Steps 2-4 at the current configuration (after close_loops_kernel filled pose, jac).

    cols: coordinates of the mechanism (J's columns); observed, act_tree: positions in cols;
    act_loop: loop indices. Writes out = (code, weakest actuator k or -1, weakest observed
    k or -1, margin, sigma ratio, largest |entry| of the transmission G = d(observed) /
    d(actuated), largest |entry| of its inverse; the last two NaN unless two actuators
    drive two observed joints through an invertible T) and returns the code. Actuator k
    counts act_tree first, then act_loop. T[a, h] = N_ah (tree joint a) or (N w_c^T)_h
    (loop joint c).
    """
    r = jac.shape[0]
    ns = cols.shape[0]
    J = np.empty((r, ns))
    for i in range(r):
        for k in range(ns):
            J[i, k] = jac[i, cols[k]]
    N = np.eye(ns)
    ratio = 1.0
    if r > 0:
        _u, s, vt = np.linalg.svd(J)
        ratio = s[min(r, ns) - 1] / s[0] if s[0] > 0.0 else 0.0
        for k in range(min(r, ns)):
            if s[k] > 1e-12 * s[0]:
                for i in range(ns):
                    for j in range(ns):
                        N[i, j] -= vt[k, i] * vt[k, j]
    out[1] = -1.0
    out[2] = -1.0
    out[4] = ratio
    out[5] = np.nan
    out[6] = np.nan
    margin = np.inf
    code = 0
    if ratio < rank_tol:
        code = 2
    n_obs = observed.shape[0]
    for h in range(n_obs):
        v = N[observed[h], observed[h]]
        if v < margin:
            margin = v
            if code == 0 and v < eps:
                code = 3
                out[2] = h
    n_act = act_tree.shape[0] + act_loop.shape[0]
    if n_act > 0:
        T = np.empty((n_act, n_obs))
        for a in range(act_tree.shape[0]):
            for h in range(n_obs):
                T[a, h] = N[act_tree[a], observed[h]]
        n = parent.shape[0]
        row = np.zeros(n)
        for c in range(act_loop.shape[0]):
            row[:] = 0.0
            add_angle_jacobian(parent, joint_type, loop_b[act_loop[c]], 1.0, row)
            add_angle_jacobian(parent, joint_type, loop_a[act_loop[c]], -1.0, row)
            for h in range(n_obs):
                v = 0.0
                for k in range(ns):
                    v += N[observed[h], k] * row[cols[k]]
                T[act_tree.shape[0] + c, h] = v
        sv = np.linalg.svd(T)[1]
        tmin = sv[min(n_act, n_obs) - 1]
        if tmin < margin:
            margin = tmin
        if n_act == 2 and n_obs == 2 and tmin > 0.0:
            # the transmission (step 5): T = B_A B_H^T and N_HH = B_H B_H^T for an
            # orthonormal basis B of the feasible motions, so d(actuated)/d(observed) =
            # B_A B_H^-1 = T N_HH^-1 and its inverse G = N_HH T^-1: their largest entries
            det = T[0, 0] * T[1, 1] - T[0, 1] * T[1, 0]
            h0, h1 = observed[0], observed[1]
            n00, n01, n11 = N[h0, h0], N[h0, h1], N[h1, h1]
            g00 = (n00 * T[1, 1] - n01 * T[1, 0]) / det
            g01 = (-n00 * T[0, 1] + n01 * T[0, 0]) / det
            g10 = (n01 * T[1, 1] - n11 * T[1, 0]) / det
            g11 = (-n01 * T[0, 1] + n11 * T[0, 0]) / det
            out[5] = max(abs(g00), abs(g01), abs(g10), abs(g11))
            dn = n00 * n11 - n01 * n01
            a00 = (T[0, 0] * n11 - T[0, 1] * n01) / dn
            a01 = (-T[0, 0] * n01 + T[0, 1] * n00) / dn
            a10 = (T[1, 0] * n11 - T[1, 1] * n01) / dn
            a11 = (-T[1, 0] * n01 + T[1, 1] * n00) / dn
            out[6] = max(abs(a00), abs(a01), abs(a10), abs(a11))
        if code == 0 and tmin < eps:
            code = 4
            # name the weakest actuator (row) and human joint (column)
            out[1] = np.argmin((T * T).sum(axis=1))
            out[2] = np.argmin((T * T).sum(axis=0))
    out[0] = code
    out[3] = margin
    return code


@njit(cache=True)
def screen_kernel(parent, joint_type, joint_xz, loop_a, loop_b, loop_xa, loop_xb,
                  driven, free, cols, observed, act_tree, act_loop, targets,
                  tol, max_iter, max_step, damping, eps, rank_tol, homotopy_step, q_out, info):
    """The whole screen of one design (module docstring). targets (N, n_off, n_driven):
    values of the ``driven`` coordinates; offset 0 must be the nominal. q_out (N, n):
    closed nominal configurations. info float64[10] = (fail point, fail offset, actuator k,
    observed k, margin, min sigma ratio, last residual, 0, largest |G| entry, largest
    |G^-1| entry over the configurations checked). Returns the status code."""
    n = parent.shape[0]
    n_pts, n_off, nd = targets.shape
    r = 2 * loop_a.shape[0]
    pose = np.zeros((n, 3))
    phi = np.zeros(r)
    jac = np.zeros((r, n))
    q = np.zeros(n)
    out = np.zeros(7)
    info[:] = -1.0
    info[4] = np.inf
    info[5] = np.inf
    info[8] = 0.0
    info[9] = 0.0
    # from the upright pose (loops closed by construction) to gait point 0
    span = 0.0
    for d in range(nd):
        span = max(span, abs(targets[0, 0, d]))
    steps = max(1, int(np.ceil(span / homotopy_step)))
    for k in range(1, steps + 1):
        for d in range(nd):
            q[driven[d]] = targets[0, 0, d] * k / steps
        err = close_loops_kernel(parent, joint_type, joint_xz, loop_a, loop_b, loop_xa, loop_xb, q, free,
                                 tol, max_iter, max_step, damping, pose, phi, jac)
        if err > tol:
            info[0], info[1], info[6] = 0.0, 0.0, err
            return 1
    q_nominal = q.copy()
    for k in range(n_pts):
        for o in range(n_off):
            if o == 0:
                q[:] = q_nominal
            else:
                q[:] = q_out[k]
            for d in range(nd):
                q[driven[d]] = targets[k, o, d]
            err = close_loops_kernel(parent, joint_type, joint_xz, loop_a, loop_b, loop_xa, loop_xb, q, free,
                                     tol, max_iter, max_step, damping, pose, phi, jac)
            info[6] = err
            if err > tol:
                info[0], info[1] = k, o
                return 1
            if o == 0:
                q_out[k, :] = q
                q_nominal[:] = q
            code = nullspace_checks(parent, joint_type, loop_a, loop_b, pose, jac, cols, observed,
                                    act_tree, act_loop, eps, rank_tol, out)
            info[4] = min(info[4], out[3])
            info[5] = min(info[5], out[4])
            if out[5] > info[8]:         # (a NaN, no transmission, adds nothing)
                info[8] = out[5]
            if out[6] > info[9]:
                info[9] = out[6]
            if code != 0:
                info[0], info[1], info[2], info[3] = k, o, out[1], out[2]
                return code
    return 0


def screen_mechanism(model: Model, driven: np.ndarray, grounded: np.ndarray, targets: np.ndarray,
                     observed: np.ndarray, act_tree: np.ndarray, act_loop: np.ndarray,
                     settings: ScreenSettings = ScreenSettings()) -> tuple[int, np.ndarray, np.ndarray]:
    """Screen any engine model (coordinate ids, not positions): returns (code, info (8,),
    q (N, n) closed nominal configurations). ``grounded`` coordinates are held and left out
    of J's columns (e.g. the torso, the ground of the leg's linkage)."""
    a = model.arrays
    n = model.n
    driven = np.asarray(driven, dtype=np.int64)
    free = np.array([i for i in range(n) if i not in set(driven.tolist())], dtype=np.int64)
    cols = np.array([i for i in range(n) if i not in set(np.asarray(grounded).tolist())], dtype=np.int64)
    pos = {c: k for k, c in enumerate(cols.tolist())}
    obs = np.array([pos[int(i)] for i in observed], dtype=np.int64)
    act = np.array([pos[int(i)] for i in act_tree], dtype=np.int64)
    targets = np.ascontiguousarray(targets, dtype=np.float64)
    q_out = np.zeros((targets.shape[0], n))
    info = np.zeros(10)
    code = screen_kernel(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b, a.loop_xz_a, a.loop_xz_b,
                         driven, free, cols, obs, act, np.asarray(act_loop, dtype=np.int64), targets,
                         settings.tol, settings.max_iter, settings.max_step, settings.damping, settings.eps,
                         settings.rank_tol, np.deg2rad(settings.homotopy_step_deg), q_out, info)
    return int(code), info, q_out


def gait_targets(gait: NominalGait, settings: ScreenSettings) -> np.ndarray:
    """(N, 3, 2) engine (hip, knee) targets: gait points k/N, offsets (0, +D, -D) of flexion."""
    hk = gait.sample(settings.n_points)[:, :2]
    d = np.deg2rad(settings.offset_deg)
    flex = np.array([0.0, d, -d])
    out = np.empty((settings.n_points, 3, 2))
    out[:, :, 0] = hk[:, None, 0] + flex[None, :]
    out[:, :, 1] = hk[:, None, 1] - flex[None, :]
    return out


@lru_cache(maxsize=1)
def _default_gait() -> NominalGait:
    return nominal_gait()


def screen(morphology: Morphology, gait: NominalGait | None = None, settings: ScreenSettings = ScreenSettings()) -> ScreenResult:
    """Screen one design along the nominal gait (see the module docstring); gait defaults
    to ``nominal_gait()`` (Winter)."""
    gait = _default_gait() if gait is None else gait
    leg = assemble_leg(morphology)
    model = leg.model
    torso, hip, knee = (model.body_id(b) for b in ("torso", "thigh_r", "shank_r"))
    hip_knee = gait_targets(gait, settings)
    targets = np.concatenate([np.zeros(hip_knee.shape[:2] + (1,)), hip_knee], axis=2)  # torso held at 0
    act_tree = [j.index for j in leg.actuated if not j.loop]
    act_loop = [j.index for j in leg.actuated if j.loop]
    code, info, _q = screen_mechanism(model, np.array([torso, hip, knee]), np.array([torso]), targets,
                                      np.array([hip, knee]), np.array(act_tree, dtype=np.int64),
                                      np.array(act_loop, dtype=np.int64), settings)
    return _result(code, info, settings, leg)


def _result(code: int, info: np.ndarray, settings: ScreenSettings, leg: AugmentedModel) -> ScreenResult:
    failed = code != PASS
    point = int(info[0]) if failed else -1
    phase = point / settings.n_points if failed else float("nan")
    offset = (0.0, settings.offset_deg, -settings.offset_deg)[int(info[1])] if failed else float("nan")
    actuated = [j for j in leg.actuated if not j.loop] + [j for j in leg.actuated if j.loop]
    human = ("hip", "knee")
    detail = ""
    if code == HUMAN_LOCKED:
        detail = f"{human[int(info[3])]} locked"
    elif code == ACTUATOR_SINGULAR:
        detail = f"actuated joint {actuated[int(info[2])].catalog_id} cannot move the {human[int(info[3])]}"
    elif code == UNREACHABLE:
        detail = f"residual {info[6]:.3g} m"
    reason = REASONS[code] + (f" ({detail})" if detail else "")
    if failed:
        reason += f" at gait point {point} (phase {phase:.2f}, flexion offset {offset:+g} deg)"
    return ScreenResult(ok=not failed, code=code, reason=reason, gait_point=point, phase=phase, offset_deg=offset,
                        margin=0.0 if code == UNREACHABLE else float(info[4]),
                        min_sigma_ratio=0.0 if code == UNREACHABLE else float(info[5]), detail=detail,
                        transmission_peak=float(info[8]) if not failed else float("nan"),
                        inverse_transmission_peak=float(info[9]) if not failed else float("nan"))


def close_loops(model: Model, q_target: np.ndarray, fixed: Sequence[int], q_start: np.ndarray | None = None,
                settings: ScreenSettings = ScreenSettings()) -> tuple[np.ndarray, float]:
    """Close the loop closures of any engine model by the screening's damped Newton.

    The coordinates ``fixed`` (ids) move from ``q_start`` (default: all zero = the upright
    pose, where an assembled model's loops are closed) to their values in ``q_target`` in
    steps of at most ``settings.homotopy_step_deg`` (staying on the upright assembly
    branch); the other coordinates follow. Returns (q (n,), final residual in m); the
    result is closed if the residual <= settings.tol. Used for initial states in the gait.
    """
    a = model.arrays
    fixed = np.asarray(fixed, dtype=np.int64)
    q = np.zeros(model.n) if q_start is None else np.array(q_start, dtype=float)
    free = np.array([i for i in range(model.n) if i not in set(fixed.tolist())], dtype=np.int64)
    start = q[fixed].copy()
    goal = np.asarray(q_target, dtype=float)[fixed]
    steps = max(1, int(np.ceil(np.max(np.abs(goal - start), initial=0.0) / np.deg2rad(settings.homotopy_step_deg))))
    r = 2 * model.n_loops
    pose, phi, jac = np.zeros((model.n, 3)), np.zeros(r), np.zeros((r, model.n))
    err = 0.0
    for k in range(1, steps + 1):
        q[fixed] = start + (goal - start) * k / steps
        err = close_loops_kernel(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b, a.loop_xz_a,
                                 a.loop_xz_b, q, free, settings.tol, settings.max_iter, settings.max_step,
                                 settings.damping, pose, phi, jac)
    return q, float(err)


def check_configuration(model: Model, q: np.ndarray, grounded: Sequence[int], observed: Sequence[int],
                        act_tree: Sequence[int], act_loop: Sequence[int],
                        settings: ScreenSettings = ScreenSettings()) -> tuple[int, float, float]:
    """Steps 2-4 at one closed configuration q (n,) of any engine model (coordinate ids).

    Returns (code, margin, singular-value ratio of J); code is PASS or the reason."""
    a = model.arrays
    r = 2 * model.n_loops
    pose, phi, jac = np.zeros((model.n, 3)), np.zeros(r), np.zeros((r, model.n))
    loop_residual_jacobian(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b, a.loop_xz_a,
                           a.loop_xz_b, np.asarray(q, dtype=float), pose, phi, jac)
    cols = np.array([i for i in range(model.n) if i not in set(np.asarray(grounded).tolist())], dtype=np.int64)
    pos = {c: k for k, c in enumerate(cols.tolist())}
    out = np.zeros(7)       # nullspace_checks writes 7 values
    code = nullspace_checks(a.parent, a.joint_type, a.loop_body_a, a.loop_body_b, pose, jac, cols,
                            np.array([pos[int(i)] for i in observed], dtype=np.int64),
                            np.array([pos[int(i)] for i in act_tree], dtype=np.int64),
                            np.asarray(act_loop, dtype=np.int64), settings.eps, settings.rank_tol, out)
    return int(code), float(out[3]), float(out[4])
