"""Soft (penalty) contact of body points with the ground (compiled): thesis 2.6.10 eq. 2.91
and the model of its section 4.1 -- a flow without events.

For every contact point below the ground (height h < 0, ground as in ``contact_rows``):

    normal:     lambda_n = max(0, -k h - d v_n)                       (eq. 2.91, N)
    tangential: lambda_t = -mu lambda_n * clip(v_t / v_reg, -1, 1)    (N)

k = ``SOFT_STIFFNESS``, d = ``SOFT_DAMPING``, v_reg = ``SOFT_VREG``; v_n, v_t the point's
velocity along the ground normal and tangent. The normal law generalises eq. 2.91 to a
nonlinear spring with Hunt & Crossley's dissipation (J. Appl. Mech. 42:440, 1975), at the
depth x = -h and approach speed v = -v_n (:func:`soft_normal_force`):

    lambda_n = max(0, k x^n (1 + c v) + d v),

n = ``SOFT_EXPONENT`` (1: eq. 2.91; 1.5: Hertz's sphere), c = ``SOFT_DISSIPATION`` (s/m).
With n = 1 and c = 0 it is eq. 2.91; with d = 0 it is the Hunt-Crossley force of Simbody
and OpenSim's ``HuntCrossleyForce`` (k = (4/3) sqrt(R) E, c their 1.5 times the
dissipation), whose force starts at zero on touching: a point that lands has no damper
step. The normal force is clipped at zero so the
ground never pulls. Reading of the thesis: it switches between a tangential spring
(stick) and Coulomb slip with events; here friction is Coulomb's exactly while
|v_t| >= v_reg and viscous below (a regularised Coulomb law), so the flow needs no events
and no extra state. The price, stated: a point under a tangential load below mu lambda_n
creeps at |v_t| = v_reg |lambda_t| / (mu lambda_n) instead of sticking, and a sliding
point's last v_reg of speed decays exponentially (time constant v_reg / (mu g) for a
block), adding at most v_reg^2 / (2 mu g) to a Coulomb stopping distance.

The forces enter as external generalized forces J^T (lambda_n n + lambda_t t); loop
closures are solved by the engine's constrained dynamics (Baumgarte gains of the
settings). The contact workspace is shared with the hard model (``contact_event``): the forces are stored
in the same rows of ``cw.lam`` (normal row nl + i, tangent row nl + c + i).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from codesign.dynamics.contact_event import store_cache
from codesign.dynamics.contact_rows import (BAUMGARTE_D, BAUMGARTE_P, GROUND_Z, MU, SLOPE, SOFT_DAMPING,
                                            SOFT_DISSIPATION, SOFT_EXPONENT, SOFT_STIFFNESS, SOFT_VREG)
from codesign.dynamics.kinematics import add_point_jacobian, forward_kinematics, point_kinematics
from codesign.dynamics.loops import DEFAULT_REL_TOL, constrained_solve, loop_constraints, prepare_mass
from codesign.dynamics.passive import add_passive_forces


@njit(cache=True, _nrt=False)
def soft_normal_law(depth, speed, k, d, n, c):
    """(force N, its derivative by the depth N/m, by the speed N s/m) of the soft law at a
    depth (m, > 0 below the ground) and an approach speed (m/s, > 0 moving into it):
    max(0, k depth^n (1 + c speed) + d speed) (module docstring); zeros where it is 0."""
    if depth <= 0.0:
        return 0.0, 0.0, 0.0
    xn = depth * math.sqrt(depth) if n == 1.5 else depth ** n     # Hertz's power, cheaply
    force = k * xn * (1.0 + c * speed) + d * speed
    if force <= 0.0:
        return 0.0, 0.0, 0.0
    return force, k * n * xn / depth * (1.0 + c * speed), k * xn * c + d


@njit(cache=True, _nrt=False)
def soft_normal_force(depth, speed, k, d, n, c):
    """The normal force (N) of :func:`soft_normal_law`."""
    return soft_normal_law(depth, speed, k, d, n, c)[0]


@njit(cache=True)
def soft_forces(m, w, s, c, nl, lam, tau):
    """Penalty forces of every contact (after forward_kinematics): lam[nl + i] (normal)
    and lam[nl + c + i] (tangent), N; tau[n] += J^T of them."""
    sa = np.sin(s[SLOPE])
    ca = np.cos(s[SLOPE])
    buf = np.empty(6)
    n = tau.shape[0]
    J = np.zeros((2, n))
    for i in range(c):
        body = m.contact_body[i]
        point_kinematics(w, body, m.contact_xz[i, 0], m.contact_xz[i, 1], buf)
        h = -sa * buf[0] + ca * (buf[1] - s[GROUND_Z])
        lam[nl + i] = 0.0
        lam[nl + c + i] = 0.0
        if h >= 0.0:
            continue
        vn = -sa * buf[2] + ca * buf[3]
        vt = ca * buf[2] + sa * buf[3]
        fn = soft_normal_force(-h, -vn, s[SOFT_STIFFNESS], s[SOFT_DAMPING], s[SOFT_EXPONENT],
                               s[SOFT_DISSIPATION])
        ratio = min(1.0, max(-1.0, vt / s[SOFT_VREG]))
        ft = -s[MU] * fn * ratio
        lam[nl + i] = fn
        lam[nl + c + i] = ft
        fx = -sa * fn + ca * ft
        fz = ca * fn + sa * ft
        J[:, :] = 0.0
        add_point_jacobian(m, w, body, buf[0], buf[1], 1.0, J, 0)
        for j in range(n):
            tau[j] += J[0, j] * fx + J[1, j] * fz


@njit(cache=True)
def soft_dynamics(m, w, cw, s, t, x, mode):
    """Accelerations cw.qdd of the soft-contact model at (t, x) with the controller's
    forces in cw.tau; contact forces in cw.lam (contact rows), loop multipliers in w.lam.
    ``mode`` is not used by the dynamics (kept for the cache key). False if the mass
    matrix is not positive definite."""
    n = cw.qdd.shape[0]
    q = x[:n]
    qd = x[n:]
    nl = 2 * m.loop_body_a.shape[0]
    c = m.contact_body.shape[0]
    forward_kinematics(m, q, qd, w)
    if prepare_mass(m, w) != 0:
        return False
    add_passive_forces(m, w, q, qd, cw.tau)
    cw.lam[:] = 0.0
    soft_forces(m, w, s, c, nl, cw.lam, cw.tau)
    r = loop_constraints(m, w, s[BAUMGARTE_D], s[BAUMGARTE_P])
    constrained_solve(m, w, r, cw.tau, DEFAULT_REL_TOL)
    for k in range(r):
        cw.lam[k] = w.lam[k]
    cw.qdd[:] = w.qdd
    store_cache(cw, t, x, mode)
    return True
