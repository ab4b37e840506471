"""Muscle energy rate of Umberger et al. 2003, with Umberger 2010's modification (issue 45,
item 2: the foundations), and of Bhargava et al. 2004 (the setting ``metabolic_model``).

Sources: B.R. Umberger, K.G.M. Gerritsen, P.E. Martin, "A model of human muscle energy
expenditure", Comput. Methods Biomech. Biomed. Eng. 6(2):99-111, 2003; B.R. Umberger,
"Stance and swing phase costs in human walking", J. R. Soc. Interface 7:1329-1340, 2010.
The equations as written here follow their documentation in OpenSim's
``Umberger2010MuscleMetabolicsProbe.h`` (opensim-org/opensim-core) and the implementation
notes of Falisse et al.'s PredSim (antoinefalisse/3dpredictsim,
``MetabolicEnergy/getMetabolicEnergySmooth2010all.m``), read to learn; both cite the two
papers. Why Umberger rather than Bhargava 2004: it has fewer free constants (one per fibre
type instead of four activation/maintenance constants), its terms are written out in
OpenSim's public documentation, and it is the model PredSim and SCONE-based studies of
walking report; Koelewijn et al. 2019 find both track measured cost changes (docs/muscles.md).

Per muscle of mass m (kg), slow-twitch fraction r, at excitation u, activation a, CE length
l_ce, CE velocity v_ce (m/s, positive lengthening), v = v_ce / l_opt (l_opt/s), f_iso =
f_l(l_ce) (the isometric force-length factor), CE force F_ce (N), v_max the muscle's
maximum shortening velocity (l_opt/s), S the aerobic factor (1.5, walking):

    A      = u                  if u > a,  else (u + a) / 2
    h_am   = (128 (1 - r) + 25) A^0.6 S                           W/kg, l_ce <= l_opt
             times (0.4 + 0.6 f_iso)                              when l_ce > l_opt
    alpha_st = 100 / (v_max / 2.5),  alpha_ft = 153 / v_max,  alpha_l = k_l alpha_st
    h_sl   = -(alpha_st r + alpha_ft (1 - r)) v A^2 S             W/kg, v <= 0 (shortening)
           = alpha_l v A S                                        W/kg, v >  0 (lengthening)
             times f_iso                                          when l_ce > l_opt
    heat   = max(h_am + h_sl, 1.0)                                W/kg (Umberger 2003, p. 104)
    w_ce   = -F_ce v_ce / m                                       W/kg
    E_dot  = m (heat + w_ce)                                      W

Umberger 2003: k_l = 4, w_ce counts negative work. Umberger 2010: k_l = 0.3 and w_ce = 0
while lengthening (negative work is not credited). :data:`UMBERGER_2010` is the default,
:data:`UMBERGER_2003` the original. The muscle mass is m = (F_max / sigma) rho_m l_opt with
sigma = 0.25 MPa, rho_m = 1059.7 kg/m^3 (Umberger 2003; OpenSim's defaults).

Bhargava et al. 2004 (L.J. Bhargava, M.G. Pandy, F.C. Anderson, "A phenomenological model
for estimating metabolic energy consumption in muscle contraction", J. Biomech.
37:81-88), as OpenSim's ``Bhargava2004MuscleMetabolicsProbe`` documents it with the
paper's force-dependent shortening constant, read to learn; the model Koelewijn et al.
2019 (PLoS ONE 14(9):e0222037) found best correlated with measured cost across speeds and
slopes (r = 0.95, with Lichtwark & Wilson's). Per muscle, with the slow-twitch recruitment
u_st = r sin(pi u / 2) and fast-twitch u_ft = (1 - r)(1 - cos(pi u / 2)):

    A_dot  = m (40 u_st + 133 u_ft)                               W (decay factor 1)
    M_dot  = m L(l_ce / l_opt) (74 u_st + 111 u_ft)               W
             L: 0.5 up to 0.5, then linear to 1 at 1 and to 0 at 1.5, 0 beyond
    S_dot  = -alpha v_ce,  alpha = 0.16 F_iso + 0.18 F_ce         v_ce <= 0 (shortening)
                           alpha = 0.157 F_ce                     v_ce >  0 (lengthening)
             F_iso = a f_l(l_ce) F_max: the CE force isometric at this activation and length
    W_dot  = -F_ce v_ce                                           W (negative work counts)
    S_dot raised until A_dot + M_dot + S_dot + W_dot >= 0; the heat A_dot + M_dot + S_dot
    at least 1 W/kg (OpenSim's defaults); E_dot = heat + W_dot.

Whole body: E = B + sum over muscles, with the basal rate B = 1.2 W/kg x body mass
(OpenSim's default basal coefficient, as in Umberger 2010). "Net of standing" (the issue's
``metabolic_power``): measured net cost is gross walking minus gross quiet standing; the
model's counterpart is E_walk - E_stand with both computed by this model, so the basal rate
cancels and what remains is the muscles' rate walking minus their rate holding the standing
pose (:func:`net_of_standing`). Units: W, W/kg, kg, m, s.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit


UMBERGER = 0       # MetabolicConstants.model: Umberger et al. 2003 / 2010
BHARGAVA = 1       # Bhargava et al. 2004

# Bhargava et al. 2004's constants (W/kg; the shortening ones dimensionless)
ACTIVATION_SLOW, ACTIVATION_FAST = 40.0, 133.0
MAINTENANCE_SLOW, MAINTENANCE_FAST = 74.0, 111.0
SHORTENING_ISO, SHORTENING_FORCE, LENGTHENING_FORCE = 0.16, 0.18, 0.157


class MetabolicConstants(NamedTuple):
    """Constants of a muscle metabolic model (module docstring); the Bhargava model reads
    only ``model``, ``negative_work``, ``min_heat_rate`` and the mass and basal fields."""
    aerobic: float             # S: 1.5 for primarily aerobic work
    lengthening_factor: float  # k_l: alpha_l = k_l alpha_st (4.0 in 2003, 0.3 in 2010)
    negative_work: float       # 1.0: w_ce counts lengthening (2003); 0.0: not (2010)
    min_heat_rate: float       # W/kg: floor of h_am + h_sl (0 disables)
    specific_tension: float    # Pa
    density: float             # kg/m^3
    basal: float               # W/kg of body mass
    slow_speed_ratio: float    # v_max(slow) = v_max / this
    model: int = UMBERGER      # UMBERGER or BHARGAVA


UMBERGER_2010 = MetabolicConstants(aerobic=1.5, lengthening_factor=0.3, negative_work=0.0,
                                   min_heat_rate=1.0, specific_tension=0.25e6, density=1059.7,
                                   basal=1.2, slow_speed_ratio=2.5)
UMBERGER_2003 = UMBERGER_2010._replace(lengthening_factor=4.0, negative_work=1.0)
BHARGAVA_2004 = UMBERGER_2010._replace(negative_work=1.0, model=BHARGAVA)
# the setting evaluation.metabolic_model's values (the first the default)
METABOLIC_MODELS = {"umberger2010": UMBERGER_2010, "umberger2003": UMBERGER_2003, "bhargava2004": BHARGAVA_2004}


@njit(cache=True, _nrt=False)
def muscle_mass(f_max: float, l_opt: float, specific_tension: float, density: float) -> float:
    """kg: (F_max / sigma) rho l_opt."""
    return f_max / specific_tension * density * l_opt


@njit(cache=True, _nrt=False)
def energy_rate(u: float, a: float, l_ce_norm: float, v_norm: float, f_iso: float,
                f_ce: float, v_ce: float, mass: float, slow: float, v_max: float,
                cst: MetabolicConstants) -> tuple:
    """(h_am, h_sl, w_ce, total) in W for one muscle (module docstring): u excitation, a
    activation, l_ce_norm = l_ce/l_opt, v_norm = v_ce/l_opt (1/s, + lengthening), f_iso
    = f_l(l_ce), f_ce the CE force (N), v_ce (m/s), mass (kg), slow the slow-twitch
    fraction, v_max (l_opt/s)."""
    big_a = u if u > a else 0.5 * (u + a)
    if big_a < 0.0:
        big_a = 0.0
    stretched = l_ce_norm > 1.0
    h_am = (128.0 * (1.0 - slow) + 25.0) * big_a ** 0.6 * cst.aerobic
    if stretched:
        h_am *= 0.4 + 0.6 * f_iso
    alpha_st = 100.0 / (v_max / cst.slow_speed_ratio)
    alpha_ft = 153.0 / v_max
    if v_norm <= 0.0:
        h_sl = -(alpha_st * slow + alpha_ft * (1.0 - slow)) * v_norm * big_a * big_a * cst.aerobic
    else:
        h_sl = cst.lengthening_factor * alpha_st * v_norm * big_a * cst.aerobic
    if stretched:
        h_sl *= f_iso
    heat = h_am + h_sl
    if heat < cst.min_heat_rate:
        heat = cst.min_heat_rate
    work = ce_work_rate(f_ce, v_ce, cst)
    return h_am * mass, h_sl * mass, work, heat * mass + work


@njit(cache=True, _nrt=False)
def ce_work_rate(f_ce: float, v_ce: float, cst: MetabolicConstants) -> float:
    """W: the contractile element's mechanical work rate -F_CE v_CE (f_ce in N, v_ce in m/s,
    + lengthening), its negative work left out (0) unless ``cst.negative_work``."""
    if v_ce > 0.0 and cst.negative_work == 0.0:
        return 0.0
    return -f_ce * v_ce


@njit(cache=True, _nrt=False)
def maintenance_length_factor(l_ce_norm: float) -> float:
    """Bhargava 2004's L(l_ce/l_opt): 0.5 up to 0.5, l_ce/l_opt up to 1, then down to 0 at
    1.5 and 0 beyond (OpenSim's default piecewise-linear curve)."""
    if l_ce_norm <= 0.5:
        return 0.5
    if l_ce_norm <= 1.0:
        return l_ce_norm
    if l_ce_norm <= 1.5:
        return 3.0 - 2.0 * l_ce_norm
    return 0.0


@njit(cache=True, _nrt=False)
def bhargava_energy_rate(u: float, a: float, l_ce_norm: float, f_iso: float, f_ce: float, v_ce: float,
                         f_max: float, mass: float, slow: float, cst: MetabolicConstants) -> tuple:
    """(A_dot + M_dot, S_dot, W_dot, total) in W for one muscle by Bhargava et al. 2004
    (module docstring): u excitation, a activation, l_ce_norm = l_ce/l_opt, f_iso =
    f_l(l_ce), f_ce the CE force (N), v_ce (m/s, + lengthening), f_max (N), mass (kg),
    slow the slow-twitch fraction."""
    u = min(max(u, 0.0), 1.0)
    u_slow = slow * math.sin(0.5 * math.pi * u)
    u_fast = (1.0 - slow) * (1.0 - math.cos(0.5 * math.pi * u))
    h_act = mass * (ACTIVATION_SLOW * u_slow + ACTIVATION_FAST * u_fast)
    h_maint = mass * maintenance_length_factor(l_ce_norm) * (MAINTENANCE_SLOW * u_slow + MAINTENANCE_FAST * u_fast)
    if v_ce <= 0.0:
        alpha = SHORTENING_ISO * a * f_iso * f_max + SHORTENING_FORCE * f_ce
    else:
        alpha = LENGTHENING_FORCE * f_ce
    h_short = -alpha * v_ce
    work = ce_work_rate(f_ce, v_ce, cst)
    total = h_act + h_maint + h_short + work
    if total < 0.0:                       # no energy flows into the fibre
        h_short -= total
    heat = h_act + h_maint + h_short
    if heat < cst.min_heat_rate * mass:
        heat = cst.min_heat_rate * mass
    return h_act + h_maint, h_short, work, heat + work


@njit(cache=True, _nrt=False)
def metabolic_rate(u: float, a: float, l_ce_norm: float, v_norm: float, f_iso: float, f_ce: float,
                   v_ce: float, f_max: float, mass: float, slow: float, v_max: float,
                   cst: MetabolicConstants) -> float:
    """One muscle's metabolic rate (W) by the model ``cst.model`` (arguments as
    :func:`energy_rate`'s, with f_max in N)."""
    if cst.model == BHARGAVA:
        return bhargava_energy_rate(u, a, l_ce_norm, f_iso, f_ce, v_ce, f_max, mass, slow, cst)[3]
    return energy_rate(u, a, l_ce_norm, v_norm, f_iso, f_ce, v_ce, mass, slow, v_max, cst)[3]


def net_of_standing(walking_muscles_w: float, standing_muscles_w: float) -> float:
    """Net metabolic power (W): the muscles' mean rate walking minus their rate in quiet
    standing, both by this model (the basal rate cancels; module docstring)."""
    return walking_muscles_w - standing_muscles_w


def whole_body_rate(muscles_w: float, body_mass: float, cst: MetabolicConstants = UMBERGER_2010) -> float:
    """Gross metabolic power (W): basal (cst.basal W/kg x body_mass kg) + the muscles'."""
    return cst.basal * body_mass + muscles_w
