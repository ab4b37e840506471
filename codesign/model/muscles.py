"""Hill-type muscle-tendon units of Geyer & Herr 2010 (issue 45, item 1: the foundations).

Source: H. Geyer and H. Herr, "A muscle-reflex model that encodes principles of legged
mechanics produces human walking dynamics and muscle activities", IEEE Trans. Neural Syst.
Rehabil. Eng. 18(3):263-273, 2010 (open copy: MIT DSpace, http://hdl.handle.net/1721.1/70926),
its Appendix "Muscle-tendon dynamics", which builds on Geyer, Seyfarth & Blickhan 2003
(Proc. R. Soc. B 270:2173). docs/muscles.md carries the equations, the parameter table and
every source; the per-muscle numbers are in :mod:`codesign.model.muscle_table`.

One muscle-tendon unit (MTU) is a contractile element (CE) with a parallel elastic element
(PE) and a buffer elasticity (BE), in series with a series elastic element (SE, the tendon):

    l_mtu = l_ce + l_se                                          (m)
    F_se  = F_max (eps / eps_ref)^2                  eps = (l_se - l_slack)/l_slack > 0, else 0
    F_ce  = A F_max f_l(l_ce) f_v(v_ce)
    f_l   = exp(c |(l_ce - l_opt) / (l_opt w)|^3)     c = ln(0.05): f_l = 0.05 at l_opt (1 +- w)
    f_v   = (1 + v0) / (1 - K v0)                      v0 <= 0 (shortening)
          = N + (N - 1) (v0 - 1) / (7.56 K v0 + 1)     v0 >  0 (lengthening)
            v0 = v_ce / (v_max l_opt), v_max in l_opt/s (the paper writes the same with
            v_max < 0; dividing by it gives this form)
    F_pe  = F_max ((l_ce - l_opt) / (l_opt eps_pe))^2 f_v(v_ce)   l_ce > l_opt, eps_pe = w
    F_be  = F_max ((l_min - l_ce) / (l_opt eps_be))^2              l_ce < l_min = l_opt (1 - w),
                                                                   eps_be = w / 2
    force balance  F_se = F_ce + F_pe - F_be

The PE force carries f_v (the paper's choice), so the balance solves for f_v in closed form,

    f_v = (F_se + F_be) / (A F_max f_l + F_pe*),   F_pe* = F_pe / f_v,

and the CE velocity is f_v's inverse (:func:`fv_inverse`). Given the MTU length and the
activation, l_ce is the one state: dl_ce/dt = v_ce(l_ce, l_mtu, A). :func:`ce_step`
integrates it by backward Euler, solving the scalar step equation by Newton safeguarded by
bisection: stable for any step and activation, including A = 0 below l_opt, where v_ce
jumps between -v_max l_opt and the lengthening cap at a slack tendon and an explicit step
would chatter by dt V0_CAP v_max l_opt (near an isometric equilibrium an explicit 1-ms
step is also stable: checked for the seven muscles at A = 0.01 to 1). An MTU held at a
fixed length settles on the static balance F_se + F_be = A F_max f_l + F_pe* (v_ce = 0).

Activation: first-order excitation-contraction coupling dA/dt = (S - A)/tau, tau = 0.01 s
(the paper's "ECC"); :func:`activation_step` is its exact solution for S held over the step.

Geometry (the paper's Appendix, Fig. 1 and its attachment table): joint angles phi are the
paper's, in radians, the internal angles of the leg -- ankle 90 deg with the foot at right
angles to the shank, growing in plantarflexion; knee and hip 180 deg straight, shrinking in
flexion (:func:`paper_angles`: from the project's anatomical angles). For an attachment
(r0, phi_max, phi_ref, rho, direction d = +1 where the MTU lengthens as phi grows):

    ankle, knee (cosine):  r(phi) = r0 cos(phi - phi_max)
                           dl_mtu = d rho r0 [sin(phi - phi_max) - sin(phi_ref - phi_max)]
    hip (constant):        r(phi) = r0,   dl_mtu = d rho r0 (phi - phi_ref)
    l_mtu = l_opt + l_slack + sum of dl_mtu over the MTU's joints
    joint torque (N m, on the paper's angle) = -d r(phi) F_se

rho scales the length change (pennation and compliance of the path), not the torque, as in
the paper. Units: SI throughout (m, N, s, rad); v0 and f_* are dimensionless.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit


class MuscleConstants(NamedTuple):
    """The constants the paper shares across muscles (Appendix; values in
    :data:`GEYER_HERR_2010`)."""
    w: float          # width of f_l, in l_opt
    c: float          # ln(0.05): f_l at l_opt (1 +- w)
    n: float          # eccentric force enhancement: f_v at v0 = 1 (lengthening at v_max)
    k: float          # curvature of the hyperbolic f_v
    eps_ref: float    # tendon strain at which F_se = F_max
    eps_pe: float     # PE strain (in l_opt) at which F_pe* = F_max: w
    eps_be: float     # BE compression (in l_opt) at which F_be = F_max: w / 2
    tau: float        # activation time constant (s)


GEYER_HERR_2010 = MuscleConstants(w=0.56, c=math.log(0.05), n=1.5, k=5.0, eps_ref=0.04,
                                  eps_pe=0.56, eps_be=0.28, tau=0.01)

# numerical guards, not the paper's model (docs/muscles.md "Numerics"):
FV_BEYOND_SLOPE = 100.0   # f_v = N + 100 (v0 - 1) for v0 > 1, so f_v^-1 exists for f_v > N
V0_CAP = 10.0             # lengthening faster than 10 v_max l_opt is cut (a CE with no force)
DENOMINATOR_FLOOR = 1e-12  # A f_l + f_pe* below this is taken as this (A = 0, l_ce <= l_opt)
ROOT_STEPS = 100          # bound on the step equation's iterations (bisection alone needs ~36)
LENGTH_TOL = 1e-13        # m: the step equation's bracket width, or residual, at which it stops

# joints of the geometry table (muscle_table.py), in the order of the paper's angles
ANKLE, KNEE, HIP, NO_JOINT = 0, 1, 2, -1
COSINE, CONSTANT = 0, 1


# --------------------------------------------------------------------------- curves
@njit(cache=True, _nrt=False)
def force_length(l_ce_norm: float, w: float, c: float) -> float:
    """f_l (dimensionless) at l_ce / l_opt."""
    x = abs((l_ce_norm - 1.0) / w)
    return math.exp(c * x * x * x)


@njit(cache=True, _nrt=False)
def force_velocity(v0: float, k: float, n: float) -> float:
    """f_v (dimensionless) at v0 = v_ce / (v_max l_opt), negative in shortening; beyond
    v0 = 1 the numerical extension N + FV_BEYOND_SLOPE (v0 - 1)."""
    if v0 <= 0.0:
        return (1.0 + v0) / (1.0 - k * v0)
    if v0 <= 1.0:
        return n + (n - 1.0) * (v0 - 1.0) / (7.56 * k * v0 + 1.0)
    return n + FV_BEYOND_SLOPE * (v0 - 1.0)


@njit(cache=True, _nrt=False)
def fv_inverse(f: float, k: float, n: float) -> float:
    """v0 with force_velocity(v0) = f: the exact inverse of each branch; f <= 0 gives
    v0 = -1 (shortening at v_max), and v0 is capped at V0_CAP."""
    if f <= 0.0:
        return -1.0
    if f <= 1.0:
        return (f - 1.0) / (1.0 + k * f)
    if f <= n:
        return (f - 1.0) / ((n - 1.0) - 7.56 * k * (f - n))
    v0 = 1.0 + (f - n) / FV_BEYOND_SLOPE
    return v0 if v0 < V0_CAP else V0_CAP


@njit(cache=True, _nrt=False)
def tendon_force_norm(l_se: float, l_slack: float, eps_ref: float) -> float:
    """F_se / F_max at tendon length l_se (m)."""
    eps = (l_se - l_slack) / l_slack
    if eps <= 0.0:
        return 0.0
    return (eps / eps_ref) * (eps / eps_ref)


@njit(cache=True, _nrt=False)
def parallel_force_norm(l_ce_norm: float, eps_pe: float) -> float:
    """F_pe* / F_max (the PE force before its factor f_v) at l_ce / l_opt."""
    if l_ce_norm <= 1.0:
        return 0.0
    x = (l_ce_norm - 1.0) / eps_pe
    return x * x


@njit(cache=True, _nrt=False)
def buffer_force_norm(l_ce_norm: float, w: float, eps_be: float) -> float:
    """F_be / F_max at l_ce / l_opt: engages below l_min = l_opt (1 - w)."""
    x = (1.0 - w) - l_ce_norm
    if x <= 0.0:
        return 0.0
    x = x / eps_be
    return x * x


# --------------------------------------------------------------------------- one MTU
@njit(cache=True, _nrt=False)
def ce_velocity(l_ce: float, l_mtu: float, act: float, v_max: float, l_opt: float,
                l_slack: float, cst: MuscleConstants) -> float:
    """v_ce (m/s, negative in shortening) from the force balance at CE length l_ce and MTU
    length l_mtu (m), activation ``act``; v_max in l_opt/s."""
    x = l_ce / l_opt
    num = tendon_force_norm(l_mtu - l_ce, l_slack, cst.eps_ref) + buffer_force_norm(x, cst.w, cst.eps_be)
    den = act * force_length(x, cst.w, cst.c) + parallel_force_norm(x, cst.eps_pe)
    if den < DENOMINATOR_FLOOR:
        den = DENOMINATOR_FLOOR
    return fv_inverse(num / den, cst.k, cst.n) * v_max * l_opt


@njit(cache=True, _nrt=False)
def mtu_forces(l_ce: float, v_ce: float, l_mtu: float, act: float, f_max: float, v_max: float,
               l_opt: float, l_slack: float, cst: MuscleConstants) -> tuple:
    """(F_se, F_ce, F_pe, F_be) in N at the state (l_ce, v_ce) of an MTU of length l_mtu;
    F_ce = act F_max f_l f_v, F_pe = F_pe* f_v. On the force balance (v_ce from
    :func:`ce_velocity`) F_se = F_ce + F_pe - F_be."""
    x = l_ce / l_opt
    fv = force_velocity(v_ce / (v_max * l_opt), cst.k, cst.n)
    f_se = f_max * tendon_force_norm(l_mtu - l_ce, l_slack, cst.eps_ref)
    f_ce = act * f_max * force_length(x, cst.w, cst.c) * fv
    f_pe = f_max * parallel_force_norm(x, cst.eps_pe) * fv
    f_be = f_max * buffer_force_norm(x, cst.w, cst.eps_be)
    return f_se, f_ce, f_pe, f_be


@njit(cache=True, _nrt=False)
def step_residual(x: float, l_ce: float, l_mtu: float, act: float, dt: float, v_max: float, l_opt: float,
                  l_slack: float, cst: MuscleConstants) -> float:
    """g(x) = x - l_ce - dt v_ce(x) (m): the backward-Euler step equation of the CE length."""
    return x - l_ce - dt * ce_velocity(x, l_mtu, act, v_max, l_opt, l_slack, cst)


@njit(cache=True, _nrt=False)
def fv_inverse_slope(f: float, k: float, n: float) -> float:
    """d v0 / d f of :func:`fv_inverse` at f (0 where v0 is held at -1 or V0_CAP)."""
    if f <= 0.0:
        return 0.0
    if f <= 1.0:
        return (1.0 + k) / ((1.0 + k * f) * (1.0 + k * f))
    if f <= n:
        d = (n - 1.0) - 7.56 * k * (f - n)
        return (d + 7.56 * k * (f - 1.0)) / (d * d)
    return 1.0 / FV_BEYOND_SLOPE if 1.0 + (f - n) / FV_BEYOND_SLOPE < V0_CAP else 0.0


@njit(cache=True, _nrt=False)
def step_residual_slope(x: float, l_ce: float, l_mtu: float, act: float, dt: float, v_max: float, l_opt: float,
                        l_slack: float, cst: MuscleConstants) -> tuple:
    """(g(x), g'(x)) of :func:`step_residual` (m, dimensionless): g' = 1 - dt dv_ce/dx by
    the chain rule through the force balance of :func:`ce_velocity`, each element's
    one-sided slope at its kink (the value g is :func:`step_residual`'s, bit for bit)."""
    xn = x / l_opt
    tendon = tendon_force_norm(l_mtu - x, l_slack, cst.eps_ref)   # the elements as ce_velocity's
    buffer = buffer_force_norm(xn, cst.w, cst.eps_be)
    f_l = force_length(xn, cst.w, cst.c)
    parallel = parallel_force_norm(xn, cst.eps_pe)
    eps = (l_mtu - x - l_slack) / l_slack          # their slopes in x (1/m), 0 where slack
    d_tendon = -2.0 * eps / (cst.eps_ref * cst.eps_ref * l_slack) if eps > 0.0 else 0.0
    b = (1.0 - cst.w) - xn
    d_buffer = -2.0 * b / (cst.eps_be * cst.eps_be * l_opt) if b > 0.0 else 0.0
    d_f_l = f_l * 3.0 * cst.c * abs((xn - 1.0) / cst.w) * (xn - 1.0) / (cst.w * cst.w * l_opt)
    d_parallel = 2.0 * ((xn - 1.0) / cst.eps_pe) / (cst.eps_pe * l_opt) if xn > 1.0 else 0.0
    num = tendon + buffer
    den = act * f_l + parallel
    d_den = act * d_f_l + d_parallel
    if den < DENOMINATOR_FLOOR:
        den = DENOMINATOR_FLOOR
        d_den = 0.0
    f = num / den
    g = x - l_ce - dt * (fv_inverse(f, cst.k, cst.n) * v_max * l_opt)
    d_f = ((d_tendon + d_buffer) - f * d_den) / den
    return g, 1.0 - dt * v_max * l_opt * fv_inverse_slope(f, cst.k, cst.n) * d_f


@njit(cache=True, _nrt=False)
def ce_step(l_ce: float, l_mtu: float, act: float, dt: float, v_max: float, l_opt: float,
            l_slack: float, cst: MuscleConstants, v_guess: float = 0.0) -> tuple:
    """One backward-Euler step of the CE length: (l_ce', v_ce') with
    l_ce' = l_ce + dt v_ce(l_ce', l_mtu, act), l_mtu and act the values at the step's end.

    g(x) = x - l_ce - dt v_ce(x) (m, :func:`step_residual`) is negative at
    x = l_ce - dt v_max l_opt and positive at l_ce + dt V0_CAP v_max l_opt (v_ce lies
    between), so that bracket always holds a root (or, where v_ce jumps -- a slack tendon
    at A = 0 --, the jump). Newton's method on g (slope :func:`step_residual_slope`),
    started at the guess l_ce + dt v_guess (the last step's v_ce, m/s), safeguarded by
    bisection: each iterate narrows the bracket by g's sign, and where a Newton step would
    leave the bracket, or has not halved |g| of the Newton iterate before, the next is the
    bracket's midpoint (then Newton again). It stops at a residual |g| or a bracket below
    LENGTH_TOL (docs/muscles.md, "Numerics")."""
    vmax = v_max * l_opt
    lo = l_ce - dt * vmax
    hi = l_ce + dt * V0_CAP * vmax
    floor = 1e-6 * l_opt
    if lo < floor:
        lo = floor
        if step_residual(lo, l_ce, l_mtu, act, dt, v_max, l_opt, l_slack, cst) >= 0.0:
            return lo, (lo - l_ce) / dt
    x = min(max(l_ce + dt * v_guess, lo), hi)
    g_newton = math.inf   # |g| where the last Newton step was taken (inf after a midpoint)
    for _ in range(ROOT_STEPS):
        g, slope = step_residual_slope(x, l_ce, l_mtu, act, dt, v_max, l_opt, l_slack, cst)
        if abs(g) < LENGTH_TOL:
            break
        if g > 0.0:
            hi = x
        else:
            lo = x
        if hi - lo < LENGTH_TOL:
            x = 0.5 * (lo + hi)
            break
        step = x - g / slope if slope > 0.0 else math.inf
        if lo - LENGTH_TOL < step < hi + LENGTH_TOL:   # a root at the bracket's end: v_ce capped
            step = min(max(step, lo), hi)
        if lo <= step <= hi and abs(g) <= 0.5 * g_newton:
            x, g_newton = step, abs(g)
        else:
            x, g_newton = 0.5 * (lo + hi), math.inf
    return x, (x - l_ce) / dt


@njit(cache=True, _nrt=False)
def activation_step(act: float, stim: float, dt: float, tau: float) -> float:
    """A after dt (s) of dA/dt = (S - A)/tau with S = ``stim`` held: the exact solution."""
    return stim + (act - stim) * math.exp(-dt / tau)


# --------------------------------------------------------------------------- geometry
@njit(cache=True, _nrt=False)
def attachment_length(phi: float, kind: int, r0: float, phi_max: float, phi_ref: float,
                      rho: float, direction: float) -> float:
    """dl_mtu (m) of one attachment at the paper's joint angle phi (rad)."""
    if kind == COSINE:
        return direction * rho * r0 * (math.sin(phi - phi_max) - math.sin(phi_ref - phi_max))
    return direction * rho * r0 * (phi - phi_ref)


@njit(cache=True, _nrt=False)
def moment_arm(phi: float, kind: int, r0: float, phi_max: float) -> float:
    """r(phi) (m) of one attachment: r0 cos(phi - phi_max), or r0 at the hip."""
    if kind == COSINE:
        return r0 * math.cos(phi - phi_max)
    return r0


@njit(cache=True, _nrt=False)
def mtu_lengths(table, phi: np.ndarray, out: np.ndarray) -> None:
    """l_mtu (m) of every muscle of ``table`` (a MuscleTable) at the paper's angles
    phi = (ankle, knee, hip) (rad), into ``out``."""
    for i in range(table.f_max.shape[0]):
        length = table.l_opt[i] + table.l_slack[i]
        for j in range(table.joint.shape[1]):
            joint = table.joint[i, j]
            if joint == NO_JOINT:
                continue
            length += attachment_length(phi[joint], table.kind[i, j], table.r0[i, j],
                                        table.phi_max[i, j], table.phi_ref[i, j],
                                        table.rho[i, j], table.direction[i, j])
        out[i] = length


@njit(cache=True, _nrt=False)
def joint_torques(table, phi: np.ndarray, f_se: np.ndarray, out: np.ndarray) -> None:
    """Torques (N m) on the paper's angles (ankle, knee, hip) from the MTU forces f_se (N):
    -d r(phi) F summed over the attachments, into ``out`` (3,)."""
    out[:] = 0.0
    for i in range(table.f_max.shape[0]):
        for j in range(table.joint.shape[1]):
            joint = table.joint[i, j]
            if joint == NO_JOINT:
                continue
            r = moment_arm(phi[joint], table.kind[i, j], table.r0[i, j], table.phi_max[i, j])
            out[joint] -= table.direction[i, j] * r * f_se[i]


@njit(cache=True, _nrt=False)
def muscles_step(table, cst: MuscleConstants, phi: np.ndarray, stim: np.ndarray, dt: float,
                 l_ce: np.ndarray, act: np.ndarray, v_ce: np.ndarray, l_mtu: np.ndarray,
                 f_se: np.ndarray) -> None:
    """Advance every MTU of one leg by dt (s) at the paper's angles phi (rad) at the step's
    end and stimulations ``stim`` held over it: act (exact), then l_ce (backward Euler,
    started at the last step's v_ce); writes l_ce, act, v_ce (m/s), l_mtu (m) and the
    tendon forces f_se (N) in place."""
    mtu_lengths(table, phi, l_mtu)
    for i in range(table.f_max.shape[0]):
        act[i] = activation_step(act[i], stim[i], dt, cst.tau)
        l_ce[i], v_ce[i] = ce_step(l_ce[i], l_mtu[i], act[i], dt, table.v_max[i], table.l_opt[i],
                                   table.l_slack[i], cst, v_ce[i])
        f_se[i] = table.f_max[i] * tendon_force_norm(l_mtu[i] - l_ce[i], table.l_slack[i], cst.eps_ref)


# --------------------------------------------------------------------------- angles
def paper_angles(hip_flexion: float, knee_flexion: float, ankle_dorsiflexion: float) -> np.ndarray:
    """The paper's (ankle, knee, hip) angles (rad) from the project's anatomical angles
    (rad, positive in flexion / dorsiflexion; codesign.model.gait): ankle = pi/2 -
    dorsiflexion, knee = pi - flexion, hip = pi - flexion (the hip angle between trunk and
    thigh, so an upright trunk is assumed where the hip flexion is the thigh's from
    vertical)."""
    return np.array([0.5 * math.pi - ankle_dorsiflexion, math.pi - knee_flexion, math.pi - hip_flexion])
