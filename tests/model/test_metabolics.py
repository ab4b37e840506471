"""Umberger's muscle energy rate (codesign/model/metabolics.py) against worked examples:
each term computed by hand here from the papers' formulas (Umberger et al. 2003, eqs. for
h_AM, h_SL, w_CE; Umberger 2010's change to alpha_L and negative work) for the soleus of
Geyer & Herr 2010 (F_max 4000 N, l_opt 0.04 m, v_max 6 l_opt/s) with 80.3 % slow fibres."""

from __future__ import annotations

import math

import pytest

from codesign.model import metabolics as E
from codesign.model.muscle_table import MUSCLES

SOL = MUSCLES[0]
R = 0.803                       # slow-twitch fraction (Uchida 2016 / Johnson 1973)
FT = 100 * (1 - R)              # %FT as Umberger 2003 writes it: 19.7
MASS = 4000 / 0.25e6 * 1059.7 * 0.04   # (F_max / sigma) rho l_opt = 0.6782... kg
S = 1.5                          # aerobic factor
ALPHA_ST = 100 / (6 / 2.5)       # 41.666... W/kg per (l_opt/s): v_max(ST) = v_max / 2.5
ALPHA_FT = 153 / 6               # 25.5


def test_muscle_mass_from_force_density_and_length():
    assert SOL.slow_twitch == R
    assert E.muscle_mass(4000.0, 0.04, 0.25e6, 1059.7) == pytest.approx(0.678208, rel=1e-12)
    assert MASS == pytest.approx(0.678208, rel=1e-12)


def test_shortening_at_short_length_worked_example():
    """u = 0.6 > a = 0.5 -> A = u = 0.6; l_ce = 0.9 l_opt (no f_iso scaling); shortening at
    v = -2 l_opt/s (v_ce = -0.08 m/s) with F_ce = 2000 N."""
    a_eff = 0.6
    h_am = (1.28 * FT + 25) * a_eff ** 0.6 * S                      # W/kg
    h_sl = -(ALPHA_ST * R + ALPHA_FT * (1 - R)) * (-2.0) * a_eff ** 2 * S
    w_ce = 2000 * 0.08                                             # W, shortening: positive work
    assert h_am == pytest.approx(55.44, abs=0.01)                  # 50.216 * 0.73602 * 1.5
    assert h_sl == pytest.approx(41.56, abs=0.01)                  # 2 * 38.482 * 0.36 * 1.5
    got = E.energy_rate(0.6, 0.5, 0.9, -2.0, 0.8, 2000.0, -0.08, MASS, R, 6.0, E.UMBERGER_2010)
    assert got[0] == pytest.approx(h_am * MASS, rel=1e-12)
    assert got[1] == pytest.approx(h_sl * MASS, rel=1e-12)
    assert got[2] == pytest.approx(w_ce, rel=1e-12)
    assert got[3] == pytest.approx((h_am + h_sl) * MASS + w_ce, rel=1e-12)
    # the 2003 model differs only while lengthening
    assert E.energy_rate(0.6, 0.5, 0.9, -2.0, 0.8, 2000.0, -0.08, MASS, R, 6.0, E.UMBERGER_2003) == pytest.approx(got)


def test_lengthening_beyond_l_opt_worked_example():
    """u = 0.3 <= a = 0.5 -> A = (u + a)/2 = 0.4; l_ce = 1.2 l_opt: h_AM scaled by
    (0.4 + 0.6 f_iso), h_SL by f_iso; lengthening at v = +1.5 l_opt/s (v_ce = 0.06 m/s)
    with F_ce = 3000 N. 2010: alpha_L = 0.3 alpha_ST and no credit for negative work;
    2003: alpha_L = 4 alpha_ST and w_CE = -F v."""
    a_eff = 0.4
    f_iso = math.exp(math.log(0.05) * (0.2 / 0.56) ** 3)
    h_am = (1.28 * FT + 25) * (0.4 + 0.6 * f_iso) * a_eff ** 0.6 * S
    h_sl_2010 = 0.3 * ALPHA_ST * 1.5 * a_eff * S * f_iso
    h_sl_2003 = 4.0 * ALPHA_ST * 1.5 * a_eff * S * f_iso
    got = E.energy_rate(0.3, 0.5, 1.2, 1.5, f_iso, 3000.0, 0.06, MASS, R, 6.0, E.UMBERGER_2010)
    assert got == pytest.approx((h_am * MASS, h_sl_2010 * MASS, 0.0, (h_am + h_sl_2010) * MASS), rel=1e-12)
    got = E.energy_rate(0.3, 0.5, 1.2, 1.5, f_iso, 3000.0, 0.06, MASS, R, 6.0, E.UMBERGER_2003)
    assert got == pytest.approx((h_am * MASS, h_sl_2003 * MASS, -180.0, (h_am + h_sl_2003) * MASS - 180.0),
                                rel=1e-12)


def test_the_heat_rate_never_drops_below_one_watt_per_kg():
    """At rest (u = a = 0) no heat is modelled, but Umberger 2003 (p. 104) keeps the total
    heat rate at 1.0 W/kg or more; an isometric muscle at low activation is above it."""
    got = E.energy_rate(0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, MASS, R, 6.0, E.UMBERGER_2010)
    assert got[0] == 0.0 and got[1] == 0.0 and got[2] == 0.0
    assert got[3] == pytest.approx(1.0 * MASS)
    low = E.energy_rate(0.01, 0.01, 1.0, 0.0, 1.0, 100.0, 0.0, MASS, R, 6.0, E.UMBERGER_2010)
    assert low[3] == pytest.approx((1.28 * FT + 25) * 0.01 ** 0.6 * S * MASS, rel=1e-12)


def test_whole_body_and_net_of_standing():
    """Gross = 1.2 W/kg x body mass + muscles; net of standing = walking - standing, so
    the basal rate cancels."""
    walking, standing, body = 350.0, 60.0, 75.0
    assert E.whole_body_rate(walking, body) == pytest.approx(1.2 * 75.0 + 350.0)
    gross_walk, gross_stand = E.whole_body_rate(walking, body), E.whole_body_rate(standing, body)
    assert gross_walk - gross_stand == pytest.approx(E.net_of_standing(walking, standing))


# --------------------------------------------------------------------------- Bhargava 2004
U_SLOW_HALF = R * math.sin(math.pi / 4)          # slow-twitch recruitment at u = 0.5: 0.56781
U_FAST_HALF = (1 - R) * (1 - math.cos(math.pi / 4))   # fast-twitch: 0.05770


def test_bhargava_isometric_at_optimal_length_at_full_excitation():
    """u = a = 1, l_ce = l_opt, v = 0: A_dot = m (40 r + 133 (1 - r)), M_dot = m (74 r +
    111 (1 - r)) (Bhargava et al. 2004's constants), no shortening heat, no work."""
    got = E.bhargava_energy_rate(1.0, 1.0, 1.0, 1.0, 4000.0, 0.0, 4000.0, MASS, R, E.BHARGAVA_2004)
    activation = 40 * R + 133 * (1 - R)               # 58.32 W/kg
    maintenance = 74 * R + 111 * (1 - R)              # 81.29 W/kg
    assert activation + maintenance == pytest.approx(139.61, abs=0.01)
    assert got == pytest.approx(((activation + maintenance) * MASS, 0.0, 0.0, (activation + maintenance) * MASS),
                                rel=1e-12)


def test_bhargava_shortening_at_short_length_worked_example():
    """u = 0.5, a = 0.5, l_ce = 0.9 l_opt (maintenance factor 0.9), f_l = 0.8, shortening at
    v_ce = -0.08 m/s with F_ce = 2000 N: alpha = 0.16 x (0.5 x 0.8 x 4000) + 0.18 x 2000 =
    616 N, S_dot = 49.28 W, W_dot = 160 W."""
    a_dot = MASS * (40 * U_SLOW_HALF + 133 * U_FAST_HALF)
    m_dot = MASS * 0.9 * (74 * U_SLOW_HALF + 111 * U_FAST_HALF)
    assert a_dot / MASS == pytest.approx(30.39, abs=0.01) and m_dot / MASS == pytest.approx(43.58, abs=0.01)
    got = E.bhargava_energy_rate(0.5, 0.5, 0.9, 0.8, 2000.0, -0.08, 4000.0, MASS, R, E.BHARGAVA_2004)
    assert got == pytest.approx((a_dot + m_dot, 616 * 0.08, 160.0, a_dot + m_dot + 49.28 + 160.0), rel=1e-12)


def test_bhargava_maintenance_heat_follows_the_fibre_length():
    """OpenSim's default curve: 0.5 up to l_opt/2, rising to 1 at l_opt, 0 at 1.5 l_opt and
    beyond."""
    assert [E.maintenance_length_factor(x) for x in (0.3, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)] == \
        pytest.approx([0.5, 0.5, 0.75, 1.0, 0.5, 0.0, 0.0], abs=1e-15)


def test_bhargava_lengthening_never_puts_energy_back_and_keeps_one_watt_per_kg():
    """Lengthening at v_ce = +0.06 m/s under F_ce = 3000 N at u = a = 0.1: W_dot = -180 W
    and S_dot = -0.157 x 3000 x 0.06 = -28.26 W outweigh the activation and maintenance
    heat, so S_dot rises until the muscle's rate is 0 (no energy flows into the fibre);
    at rest the heat is the 1 W/kg floor."""
    u_slow, u_fast = R * math.sin(0.05 * math.pi), (1 - R) * (1 - math.cos(0.05 * math.pi))
    a_dot = MASS * (40 * u_slow + 133 * u_fast)
    m_dot = MASS * (74 * u_slow + 111 * u_fast)
    assert a_dot + m_dot - 28.26 - 180.0 < 0
    got = E.bhargava_energy_rate(0.1, 0.1, 1.0, 1.0, 3000.0, 0.06, 4000.0, MASS, R, E.BHARGAVA_2004)
    assert got[0] == pytest.approx(a_dot + m_dot, rel=1e-12) and got[2] == pytest.approx(-180.0, rel=1e-12)
    assert got[1] == pytest.approx(180.0 - a_dot - m_dot, rel=1e-12) and got[3] == pytest.approx(0.0, abs=1e-12)
    rest = E.bhargava_energy_rate(0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 4000.0, MASS, R, E.BHARGAVA_2004)
    assert rest == pytest.approx((0.0, 0.0, 0.0, 1.0 * MASS), abs=1e-15)


def test_the_rate_follows_the_model_the_constants_name():
    """metabolic_rate is Umberger's rate bit for bit under UMBERGER_2010 (the default walks
    keep their price) and Bhargava's under BHARGAVA_2004; the settings' names map to them."""
    args = (0.6, 0.5, 0.9, -2.0, 0.8, 2000.0, -0.08)
    assert E.metabolic_rate(*args, 4000.0, MASS, R, 6.0, E.UMBERGER_2010) == \
        E.energy_rate(*args, MASS, R, 6.0, E.UMBERGER_2010)[3]
    assert E.metabolic_rate(*args, 4000.0, MASS, R, 6.0, E.BHARGAVA_2004) == \
        E.bhargava_energy_rate(0.6, 0.5, 0.9, 0.8, 2000.0, -0.08, 4000.0, MASS, R, E.BHARGAVA_2004)[3]
    assert list(E.METABOLIC_MODELS) == ["umberger2010", "umberger2003", "bhargava2004"]
    assert E.METABOLIC_MODELS["bhargava2004"].model == E.BHARGAVA
