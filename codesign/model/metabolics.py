"""Muscle energy rate of Umberger et al. 2003, with Umberger 2010's modification (issue 45,
item 2: the foundations).

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

Whole body: E = B + sum over muscles, with the basal rate B = 1.2 W/kg x body mass
(OpenSim's default basal coefficient, as in Umberger 2010). "Net of standing" (the issue's
``metabolic_power``): measured net cost is gross walking minus gross quiet standing; the
model's counterpart is E_walk - E_stand with both computed by this model, so the basal rate
cancels and what remains is the muscles' rate walking minus their rate holding the standing
pose (:func:`net_of_standing`). Units: W, W/kg, kg, m, s.
"""

from __future__ import annotations

from typing import NamedTuple

from numba import njit


class MetabolicConstants(NamedTuple):
    """Constants of the Umberger model (module docstring)."""
    aerobic: float             # S: 1.5 for primarily aerobic work
    lengthening_factor: float  # k_l: alpha_l = k_l alpha_st (4.0 in 2003, 0.3 in 2010)
    negative_work: float       # 1.0: w_ce counts lengthening (2003); 0.0: not (2010)
    min_heat_rate: float       # W/kg: floor of h_am + h_sl (0 disables)
    specific_tension: float    # Pa
    density: float             # kg/m^3
    basal: float               # W/kg of body mass
    slow_speed_ratio: float    # v_max(slow) = v_max / this


UMBERGER_2010 = MetabolicConstants(aerobic=1.5, lengthening_factor=0.3, negative_work=0.0,
                                   min_heat_rate=1.0, specific_tension=0.25e6, density=1059.7,
                                   basal=1.2, slow_speed_ratio=2.5)
UMBERGER_2003 = UMBERGER_2010._replace(lengthening_factor=4.0, negative_work=1.0)


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
    work = -f_ce * v_ce
    if v_ce > 0.0 and cst.negative_work == 0.0:
        work = 0.0
    return h_am * mass, h_sl * mass, work, heat * mass + work


def net_of_standing(walking_muscles_w: float, standing_muscles_w: float) -> float:
    """Net metabolic power (W): the muscles' mean rate walking minus their rate in quiet
    standing, both by this model (the basal rate cancels; module docstring)."""
    return walking_muscles_w - standing_muscles_w


def whole_body_rate(muscles_w: float, body_mass: float, cst: MetabolicConstants = UMBERGER_2010) -> float:
    """Gross metabolic power (W): basal (cst.basal W/kg x body_mass kg) + the muscles'."""
    return cst.basal * body_mass + muscles_w
