"""Classic hybrid walkers and runners with known answers: rimless wheel, simplest walker, SLIP.

Each ``*_model(...)`` returns a :class:`~codesign.analysis.returnmap.HybridModel` (njit
flow/guards/jump of the hybrid-integrator contract, p a float64 array), each
``*_section(...)`` the Poincaré section its gaits are fixed points on, and ``*_guesses``
the starting points for Newton. All functions are written for complex arrays too, so the
complex-step derivatives apply to every model; rimless wheel and simplest walker also
provide their analytic derivatives (used by default), the SLIP runner uses complex step.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from codesign.analysis.returnmap import HybridModel, Section

# ----------------------------------------------------------------------------- rimless wheel
# Coleman's rimless wheel (as stated in issue 5): theta'' = lambda^2 sin(theta + gamma),
# heel strike when theta = pi/n, jump theta+ = theta - 2 pi/n, theta'+ = mu theta'.
# p = [lambda^2, mu, gamma, n]


@nb.njit(cache=True)
def rimless_flow(t, x, mode, p, xdot):
    xdot[0] = x[1]
    xdot[1] = p[0] * np.sin(x[0] + p[2])


@nb.njit(cache=True)
def rimless_guards(t, x, mode, p, g):
    g[0] = np.pi / p[3] - x[0]  # positive before the next spoke strikes


@nb.njit(cache=True)
def rimless_jump(t, x, mode, p, k):
    x[0] = x[0] - 2.0 * np.pi / p[3]
    x[1] = p[1] * x[1]
    return 0


@nb.njit(cache=True)
def rimless_flow_jacobian(t, x, mode, p, J):
    J[0, 0] = 0.0
    J[0, 1] = 1.0
    J[1, 0] = p[0] * np.cos(x[0] + p[2])
    J[1, 1] = 0.0


@nb.njit(cache=True)
def rimless_guard_gradient(t, x, mode, p, k, hx):
    hx[0] = -1.0
    hx[1] = 0.0


@nb.njit(cache=True)
def rimless_jump_jacobian(t, x, mode, p, k, G):
    G[0, 0] = 1.0
    G[0, 1] = 0.0
    G[1, 0] = 0.0
    G[1, 1] = p[1]


def rimless_model(slope: float = 0.2, lam2: float = 2.0 / 3.0, mu: float = 2.0 / 3.0, spokes: int = 6,
                  analytic: bool = True) -> HybridModel:
    """Rimless wheel on slope ``slope`` (rad); lam2 = lambda^2 (1/s^2), mu: restitution of
    the angular velocity at a spoke strike, ``spokes`` = n."""
    p = np.array([lam2, mu, slope, float(spokes)])
    derivs = dict(flow_jacobian=rimless_flow_jacobian, guard_gradient=rimless_guard_gradient,
                  jump_jacobian=rimless_jump_jacobian) if analytic else {}
    return HybridModel(name="rimless", flow=rimless_flow, guards=rimless_guards, jump=rimless_jump, n_guards=1,
                       nx=2, p=p, state_names=("theta", "theta_dot"),
                       parameters={"slope": slope, "lambda2": lam2, "mu": mu, "spokes": spokes}, **derivs)


def rimless_section(model: HybridModel) -> Section:
    """Just after a spoke strike: z = (theta, theta_dot)."""
    return Section.full_state(0, [0], model.state_names, t_max=50.0)


def rimless_guesses(model: HybridModel) -> list[np.ndarray]:
    n = model.parameters["spokes"]
    return [np.array([-np.pi / n, 0.4])]


# ----------------------------------------------------------------------------- simplest walker
# Garcia, Chatterjee, Ruina & Coleman (1998), eqs. (3)-(5) with m/M -> 0, time in units of
# sqrt(l/g). theta: stance-leg angle from the slope normal, phi: angle between the legs.
#   theta'' = sin(theta - gamma)
#   phi''   = sin(theta - gamma) + sin(phi) (theta'^2 - cos(theta - gamma))
# Heel strike at phi - 2 theta = 0 (direction: phi - 2 theta from < 0 to > 0, i.e. our
# positive-inside guard h = 2 theta - phi falls through 0), with the published jump
#   theta+ = -theta-,  phi+ = -2 theta-,  theta'+ = cos(2 theta-) theta'-,
#   phi'+ = cos(2 theta-) (1 - cos(2 theta-)) theta'-.
# Foot scuffing: near mid-stance (theta ~ 0, phi ~ 0) the swing foot passes through the
# slope and h changes sign too; the paper ignores it. We do so with two modes: mode 0
# (first half of stance) has only the guard theta (mid-stance, theta falls through 0,
# identity jump to mode 1), mode 1 only the heel-strike guard h (its jump returns to
# mode 0). A heel strike is thus only possible once theta < 0, and within mode 1 a guard
# fires only when falling from > 0 (a scuff that is still to come is an upward crossing
# of h and only re-arms it). Inactive guards return -1 so that h, negative at the
# mid-stance switch, does not fire there (hybrid's arming rule). This also keeps the stride map well defined off the section
# (a finite-difference perturbation with h > 0 at the start cannot fire at once). The
# mid-stance event has f+ = f- and an identity jump, so its saltation matrix is I.
# p = [gamma]; mode[0] in {0, 1}


@nb.njit(cache=True)
def simplest_flow(t, x, mode, p, xdot):
    s = np.sin(x[0] - p[0])
    xdot[0] = x[1]
    xdot[1] = s
    xdot[2] = x[3]
    xdot[3] = s + np.sin(x[2]) * (x[1] * x[1] - np.cos(x[0] - p[0]))


@nb.njit(cache=True)
def simplest_guards(t, x, mode, p, g):
    off = -1.0 + 0.0 * x[0]  # inactive: stays disarmed (same type as x, float or complex)
    g[0] = x[0] if mode[0] == 0 else off  # mid-stance
    g[1] = 2.0 * x[0] - x[2] if mode[0] == 1 else off  # heel strike


@nb.njit(cache=True)
def simplest_jump(t, x, mode, p, k):
    if k == 0:
        mode[0] = 1
        return 0
    th, thd = x[0], x[1]
    c = np.cos(2.0 * th)
    x[0] = -th
    x[1] = c * thd
    x[2] = -2.0 * th
    x[3] = c * (1.0 - c) * thd
    mode[0] = 0
    return 0


@nb.njit(cache=True)
def simplest_flow_jacobian(t, x, mode, p, J):
    J[:, :] = 0.0
    s = np.sin(x[0] - p[0])
    c = np.cos(x[0] - p[0])
    J[0, 1] = 1.0
    J[1, 0] = c
    J[2, 3] = 1.0
    J[3, 0] = c + np.sin(x[2]) * s
    J[3, 1] = 2.0 * x[1] * np.sin(x[2])
    J[3, 2] = np.cos(x[2]) * (x[1] * x[1] - c)


@nb.njit(cache=True)
def simplest_guard_gradient(t, x, mode, p, k, hx):
    hx[:] = 0.0
    if k == 0:
        hx[0] = 1.0
    else:
        hx[0] = 2.0
        hx[2] = -1.0


@nb.njit(cache=True)
def simplest_jump_jacobian(t, x, mode, p, k, G):
    G[:, :] = 0.0
    if k == 0:
        for i in range(4):
            G[i, i] = 1.0
        return
    th, thd = x[0], x[1]
    c = np.cos(2.0 * th)
    dc = -2.0 * np.sin(2.0 * th)
    G[0, 0] = -1.0
    G[1, 0] = dc * thd
    G[1, 1] = c
    G[2, 0] = -2.0
    G[3, 0] = (1.0 - 2.0 * c) * dc * thd
    G[3, 1] = c * (1.0 - c)


def simplest_model(slope: float = 0.009, analytic: bool = True) -> HybridModel:
    """Garcia et al.'s simplest walker on slope ``slope`` (rad), dimensionless time."""
    derivs = dict(flow_jacobian=simplest_flow_jacobian, guard_gradient=simplest_guard_gradient,
                  jump_jacobian=simplest_jump_jacobian) if analytic else {}
    return HybridModel(name="simplest", flow=simplest_flow, guards=simplest_guards, jump=simplest_jump,
                       n_guards=2, nx=4, p=np.array([slope]),
                       state_names=("theta", "theta_dot", "phi", "phi_dot"),
                       parameters={"slope": slope}, **derivs)


def simplest_section(model: HybridModel) -> Section:
    """Just after heel strike (guard 1, mode 0): z = (theta, theta_dot, phi, phi_dot) as
    in Garcia et al."""
    return Section.full_state(1, [0], model.state_names, t_max=20.0)


def simplest_guesses(model: HybridModel) -> list[np.ndarray]:
    """Long-step (stable at 0.009) and short-step guesses: theta ~ 0.2 and 0.19, theta' ~ -0.2,
    phi = 2 theta, phi' = theta' (1 - cos 2 theta) (the post-strike relation)."""
    out = []
    for th, thd in ((0.2, -0.2), (0.19, -0.2)):
        out.append(np.array([th, thd, 2 * th, thd * (1 - np.cos(2 * th))]))
    return out


# ----------------------------------------------------------------------------- SLIP runner
# SimSect manual chapter 4: point mass on a massless linear spring leg; four charts in
# the order ascent -> descent -> compression -> decompression -> ascent, with boundary
# functions ydot (apex), y - l0 cos(theta_td) (touchdown), -r' (maximal compression),
# l0 - r (liftoff). The leg is swung to a FIXED touchdown angle theta_td from the
# vertical during flight (Seyfarth et al. 2002's angle of attack 90 deg - theta_td, as in
# thesis 2.5), not SimSect's "negative liftoff angle" rule, which makes every apex height
# neutrally stable. Guard k is active in chart k; the others return -1 (disarmed: e.g.
# an apex below the touchdown height never touches down, the runner falls).
# x = [x, y, vx, vy, foot_x] (m, m/s); mode[0] = chart; p = [m, k, l0, g, theta_td]
ASCENT, DESCENT, COMPRESSION, DECOMPRESSION = 0, 1, 2, 3


@nb.njit(cache=True)
def slip_flow(t, x, mode, p, xdot):
    xdot[0] = x[2]
    xdot[1] = x[3]
    xdot[4] = 0.0
    if mode[0] == ASCENT or mode[0] == DESCENT:
        xdot[2] = 0.0
        xdot[3] = -p[3]
    else:
        dx = x[0] - x[4]
        r = np.sqrt(dx * dx + x[1] * x[1])
        force = p[1] * (p[2] - r)  # spring force along the leg, N
        xdot[2] = force * dx / (p[0] * r)
        xdot[3] = force * x[1] / (p[0] * r) - p[3]


@nb.njit(cache=True)
def slip_guards(t, x, mode, p, g):
    dx = x[0] - x[4]
    r = np.sqrt(dx * dx + x[1] * x[1])
    off = -1.0 + 0.0 * x[0]  # inactive: stays disarmed (same type as x, float or complex)
    g[0] = x[3] if mode[0] == ASCENT else off
    g[1] = x[1] - p[2] * np.cos(p[4]) if mode[0] == DESCENT else off
    g[2] = -(dx * x[2] + x[1] * x[3]) / r if mode[0] == COMPRESSION else off
    g[3] = p[2] - r if mode[0] == DECOMPRESSION else off


@nb.njit(cache=True)
def slip_jump(t, x, mode, p, k):
    if k == 1:
        x[4] = x[0] + p[2] * np.sin(p[4])  # the foot lands at the touchdown angle
    mode[0] = (k + 1) % 4
    return 0


def slip_model(mass: float = 80.0, stiffness: float = 20000.0, rest_length: float = 1.0, gravity: float = 9.81,
               angle_of_attack_deg: float = 68.0, apex_height: float = 1.0, apex_speed: float = 5.0) -> HybridModel:
    """SLIP runner with thesis 2.5's parameters (Seyfarth et al. 2002): m = 80 kg,
    k = 20 kN/m, l0 = 1 m, angle of attack 68 deg from the ground; the energy is that of
    an apex at ``apex_height`` m with forward speed ``apex_speed`` m/s."""
    theta_td = np.deg2rad(90.0 - angle_of_attack_deg)
    p = np.array([mass, stiffness, rest_length, gravity, theta_td])
    return HybridModel(name="slip", flow=slip_flow, guards=slip_guards, jump=slip_jump, n_guards=4, nx=5, p=p,
                       state_names=("x", "y", "vx", "vy", "foot_x"),
                       parameters={"mass": mass, "stiffness": stiffness, "rest_length": rest_length,
                                   "gravity": gravity, "angle_of_attack_deg": angle_of_attack_deg,
                                   "specific_energy": gravity * apex_height + 0.5 * apex_speed**2})


def slip_energy(model: HybridModel, x, mode) -> float:
    """Total mechanical energy (J): kinetic + gravity + spring (in stance)."""
    m, k, l0, g, _ = model.p
    e = 0.5 * m * (x[2] ** 2 + x[3] ** 2) + m * g * x[1]
    if mode[0] in (COMPRESSION, DECOMPRESSION):
        r = np.hypot(x[0] - x[4], x[1])
        e += 0.5 * k * (l0 - r) ** 2
    return float(e)


def slip_section(model: HybridModel) -> Section:
    """The apex (post-jump state of the ascent -> descent boundary) at the model's energy:
    z = (apex height,); x = 0, vx from the energy, vy = 0, foot unused; mode DESCENT."""
    e, g = model.parameters["specific_energy"], model.p[3]

    def embed(z):
        y = float(z[0])
        return np.array([0.0, y, np.sqrt(2.0 * (e - g * y)), 0.0, 0.0]), np.array([DESCENT], dtype=np.int64)

    def embed_jacobian(z):
        vx = np.sqrt(2.0 * (e - g * float(z[0])))
        return np.array([[0.0], [1.0], [-g / vx], [0.0], [0.0]])

    return Section(guard=0, names=("apex_height",), embed=embed, embed_jacobian=embed_jacobian, project=(1,),
                   t_max=10.0)


def slip_guesses(model: HybridModel) -> list[np.ndarray]:
    return [np.array([1.0])]


# ----------------------------------------------------------------------------- registry
WALKERS = {
    "rimless": (rimless_model, rimless_section, rimless_guesses),
    "simplest": (simplest_model, simplest_section, simplest_guesses),
    "slip": (slip_model, slip_section, slip_guesses),
}
