"""The ground, the contact settings vector and the constraint rows of contacts and loops.

Shared by every contact model of the engine: the event-driven hard contacts
(:mod:`codesign.dynamics.contact_event`), the soft penalty contacts
(:mod:`codesign.dynamics.contact_soft`) and the time-stepping hard contacts
(:mod:`codesign.dynamics.timestep`).

Ground
    A line through (0, ``GROUND_Z``) rising at angle ``SLOPE`` (rad) with x; unit tangent
    t = (cos a, sin a), outward normal n = (-sin a, cos a). Height of a point p:
    h = n . (p - (0, GROUND_Z)). Gravity keeps acting along -z.

Mode (the integrator's discrete state): int64[c], one entry per contact point
    ``INACTIVE`` (0) away from the ground, ``STICK`` (1) held in both directions,
    ``SLIP_POS`` (2) / ``SLIP_NEG`` (3) sliding along +t / -t with kinetic Coulomb
    friction ``mu lambda_n`` opposing the slip.


Settings vector: float64[N_SETTINGS], indexed by the constants below, built and
    validated by :func:`make_settings` (SI units: m, m/s, rad, N/m, N s/m, 1/s).

Rows (:func:`loop_rows`, :func:`contact_rows`; thesis 2.6.9-2.6.10)
    For R = 2 m + 2 c rows (m loops, c contacts) of a model with n coordinates:
    K float64[R, n] the row Jacobians, bias float64[R] J-dot q-dot, vel float64[R] the row
    velocities K q-dot, pos float64[R] the position residuals (loop residual; contact
    height h; 0 for tangents). Loops take rows 0..2m-1, contact i the normal row
    2m + i (n.J) and the tangent row 2m + c + i (t.J). Call
    :func:`~codesign.dynamics.kinematics.forward_kinematics` first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from codesign.dynamics.kinematics import add_point_jacobian, point_kinematics
from codesign.dynamics.loops import loop_constraints
from codesign.errors import UserError

# contact modes
INACTIVE = 0
STICK = 1
SLIP_POS = 2
SLIP_NEG = 3
MODE_NAMES = ("inactive", "stick", "slip+", "slip-")
# "no contact point" where a compiled function takes a point's index (forced, strike): an
# int64, never a literal -1 -- numba compiles a callee once per literal argument, with all
# it links, so a literal -1 beside a variable index would compile it twice
NO_POINT = np.int64(-1)

# settings vector (float64[N_SETTINGS]); build it with make_settings
MU = 0                 # Coulomb friction coefficient (static = kinetic)
RESTITUTION = 1        # Newton's coefficient of restitution e in [0, 1]
SLOPE = 2              # ground angle, rad (positive: rising with x)
GROUND_Z = 3           # ground height at x = 0, m
BAUMGARTE_D = 4        # velocity gain of the drift stabilisation, 1/s (k -= 2 D phidot)
BAUMGARTE_P = 5        # position gain, 1/s (k -= P^2 phi)
TOL_H = 6              # m: a point this close to the ground joins an impact
TOL_V = 7              # m/s: slower than this a point counts as not moving (sliding / separating)
TOL_REL = 8            # relative tolerance of the complementarity checks
BOUNCE_MIN_SPEED = 9   # m/s: impacts slower than this are plastic (e = 0)
CONTACT_MODEL = 10     # HARD or SOFT (which flow a contact rollout runs)
SOFT_STIFFNESS = 11    # soft contact: normal stiffness, N/m
SOFT_DAMPING = 12      # soft contact: normal damping, N s/m
SOFT_VREG = 13         # soft contact: slip speed below which friction is linear in v_t, m/s
SOFT_EXPONENT = 14     # soft contact: the spring's exponent n (1: linear, eq. 2.91; 1.5: Hertz)
SOFT_DISSIPATION = 15  # soft contact: Hunt-Crossley dissipation c, s/m (0: none)
REST_SPEED = 16        # m/s: a point near the ground separating slower than this rests on it
                       #   (joins the acceleration-level mode search; hard)
N_SETTINGS = 17
HARD = 0
SOFT = 1
CONTACT_MODELS = {"hard": HARD, "soft": SOFT}


def make_settings(model: str = "hard", mu: float = 1.0, restitution: float = 0.0,
                  slope_rad: float = 0.0, ground_z: float = 0.0, baumgarte_d: float = 0.0,
                  baumgarte_p: float = 0.0, tol_h: float = 1e-7, tol_v: float = 1e-7,
                  tol_rel: float = 1e-8, bounce_min_speed: float = 0.0,
                  stiffness: float = 1e5, damping: float = 1e3, v_reg: float = 1e-2,
                  exponent: float = 1.0, dissipation: float = 0.0, rest_speed: float = 1e-4) -> np.ndarray:
    """The contact settings vector (float64[N_SETTINGS]), validated.

    model: "hard" (contact_event, timestep) or "soft" (contact_soft); mu: Coulomb coefficient (>= 0);
    restitution: e in [0, 1] (hard); slope_rad: ground angle (|.| < pi/2); ground_z: ground
    height at x = 0 (m); baumgarte_d, baumgarte_p: drift stabilisation gains of loop and
    contact rows (1/s, >= 0; 0 = none); tol_h (m), tol_v (m/s), tol_rel: event
    tolerances (hard); bounce_min_speed (m/s): slower impacts are plastic (hard);
    rest_speed (m/s, >= tol_v): a point within tol_h of the ground that separates slower
    than this after an event takes part in the mode search (hard; it stays if it would
    come straight back, a flight of 2 v / |a_n| the guards cannot resolve);
    stiffness (N/m^n), damping (N s/m), v_reg (m/s), exponent n (>= 1), dissipation c
    (s/m): the soft model's normal law lambda_n = max(0, k d^n (1 + c v) + damping v) at a
    depth d and an approach speed v (:func:`codesign.dynamics.contact_soft.soft_normal_force`)
    and its friction regularisation speed.
    """
    if model not in CONTACT_MODELS:
        raise UserError(f"contact.model: {model!r}; expected one of {', '.join(sorted(CONTACT_MODELS))}")
    values = {"mu": mu, "restitution": restitution, "slope_rad": slope_rad, "ground_z": ground_z,
              "baumgarte_d": baumgarte_d, "baumgarte_p": baumgarte_p, "tol_h": tol_h,
              "tol_v": tol_v, "tol_rel": tol_rel, "bounce_min_speed": bounce_min_speed,
              "stiffness": stiffness, "damping": damping, "v_reg": v_reg, "exponent": exponent,
              "dissipation": dissipation, "rest_speed": rest_speed}
    for key, value in values.items():
        if not np.isfinite(value):
            raise UserError(f"contact.{key}: {value!r}; expected a finite number")
        if key not in ("slope_rad", "ground_z") and value < 0:
            raise UserError(f"contact.{key}: {value!r}; expected >= 0")
    if restitution > 1:
        raise UserError(f"contact.restitution: {restitution!r}; expected a number in [0, 1]")
    if abs(slope_rad) >= np.pi / 2:
        raise UserError(f"contact.slope_rad: {slope_rad!r}; expected |slope| < pi/2")
    if rest_speed < tol_v:
        raise UserError(f"contact.rest_speed: {rest_speed!r}; expected >= tol_v ({tol_v!r} m/s)")
    if v_reg <= 0:
        raise UserError(f"contact.v_reg: {v_reg!r}; expected > 0")
    if exponent < 1:
        raise UserError(f"contact.exponent: {exponent!r}; expected an exponent >= 1 (1: linear, 1.5: Hertz)")
    s = np.zeros(N_SETTINGS)
    s[CONTACT_MODEL] = CONTACT_MODELS[model]
    s[MU], s[RESTITUTION], s[SLOPE], s[GROUND_Z] = mu, restitution, slope_rad, ground_z
    s[BAUMGARTE_D], s[BAUMGARTE_P] = baumgarte_d, baumgarte_p
    s[TOL_H], s[TOL_V], s[TOL_REL], s[BOUNCE_MIN_SPEED] = tol_h, tol_v, tol_rel, bounce_min_speed
    s[SOFT_STIFFNESS], s[SOFT_DAMPING], s[SOFT_VREG] = stiffness, damping, v_reg
    s[SOFT_EXPONENT], s[SOFT_DISSIPATION], s[REST_SPEED] = exponent, dissipation, rest_speed
    return s



# ---------------------------------------------------------------------------------------
# rows: kinematics of loop closures and contact points


@njit(cache=True, _nrt=False)
def loop_rows(m, w, K, bias, vel, pos):
    """Rows 0..2m-1 from the engine's loop_constraints: K, bias J̇q̇, vel phidot, pos phi."""
    nl = loop_constraints(m, w, 0.0, 0.0)
    rows = w.rows
    for r in range(nl):
        for j in range(K.shape[1]):
            K[r, j] = rows[r, j]
        bias[r] = -w.rows_rhs[r]
        vel[r] = w.phidot[r]
        pos[r] = w.phi[r]


@njit(cache=True, _nrt=False)
def in_reach(height, normal_speed, h, reach_speed):
    """True if a contact point ``height`` (m) above the ground, moving at ``normal_speed``
    (m/s) along the normal, can reach it within a time step of ``h`` (s):
    height <= h (|normal_speed| + reach_speed) (reach_speed, m/s: the margin)."""
    return height <= h * (abs(normal_speed) + reach_speed)


@njit(cache=True, _nrt=False)
def contact_rows(m, w, s, K, bias, vel, pos, r0, h=0.0, reach_speed=0.0):
    """Rows r0 + i (normal) and r0 + c + i (tangent) of contact i: n.J, t.J; pos = height
    h for the normal row, 0 for the tangent; vel and bias likewise projected.
    With a time step h > 0 (s), only the points :func:`in_reach` (h, reach_speed) get
    their Jacobian rows K (a time step's contact problem leaves the others out; their
    rows keep what they held); pos, vel and bias are written for every point."""
    c = m.contact_body.shape[0]
    n = K.shape[1]
    sa = np.sin(s[SLOPE])
    ca = np.cos(s[SLOPE])
    buf = w.point6
    J = w.jac2
    for i in range(c):
        body = m.contact_body[i]
        point_kinematics(w, body, m.contact_xz[i, 0], m.contact_xz[i, 1], buf)
        rn = r0 + i
        rt = r0 + c + i
        pos[rn] = -sa * buf[0] + ca * (buf[1] - s[GROUND_Z])
        pos[rt] = 0.0
        vel[rn] = -sa * buf[2] + ca * buf[3]
        vel[rt] = ca * buf[2] + sa * buf[3]
        bias[rn] = -sa * buf[4] + ca * buf[5]
        bias[rt] = ca * buf[4] + sa * buf[5]
        if h > 0.0 and not in_reach(pos[rn], vel[rn], h, reach_speed):
            continue
        for j in range(n):
            J[0, j] = 0.0
            J[1, j] = 0.0
        add_point_jacobian(m, w, body, buf[0], buf[1], 1.0, J, 0)
        for j in range(n):
            K[rn, j] = -sa * J[0, j] + ca * J[1, j]
            K[rt, j] = ca * J[0, j] + sa * J[1, j]
