"""Browning et al. 2007's loads at their treadmill speed on the heel-pad muscle walk
(issue 45; studies/muscle-wearer/loads.py --hold-speed): the lean reference scanned so the
loaded and unloaded walks keep 1.25 m/s, the rise of net metabolic rate against the
published one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEELPAD = ROOT / "studies" / "muscle-wearer" / "human-muscles-heelpad.json"


def loads_study():
    spec = importlib.util.spec_from_file_location("loads_study", ROOT / "studies" / "muscle-wearer" / "loads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_at_browning_speed_a_foot_load_costs_as_published_and_more_per_kg_than_a_waist_load():
    study = loads_study()
    design = study.load_design(HEELPAD)
    base = study.speed_held(study.lean_walks(design, []))
    foot = study.speed_held(study.lean_walks(design, [{"segment": "foot", "mass_kg": 4.0}]))
    waist = study.speed_held(study.lean_walks(design, [{"segment": "torso", "mass_kg": 16.0, "position": 0.0}]))
    for m in (base, foot, waist):                       # each held 1.25 m/s +-3 % for the 10 s
        assert m["held"] >= 1 and abs(m["speed"] - 1.25) <= 0.0375 + 1e-9
    foot_rise = study.rise_per_kg(foot, base, True, 70.0)     # W/kg, 8 kg in all
    waist_rise = study.rise_per_kg(waist, base, True, 70.0)   # W/kg, 16 kg
    published_foot = study.PUBLISHED_SLOPE["foot"] * 8.0      # 1.50 W/kg
    assert abs(foot_rise / published_foot - 1.0) <= 0.30
    # Browning's per-kg order: a kilogram at the foot costs ~4 times one at the waist
    assert foot_rise / 8.0 > 2.0 * waist_rise / 16.0 > 0.0
