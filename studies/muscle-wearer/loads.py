"""Browning et al. 2007's leg and waist loads on the muscle-driven human (issue 45's
validation): docs/designs/human-muscles.json walked 10 s with each load
(``evaluation.loads``), its reflexes kept as searched unloaded; the rise of its net
metabolic power per kg of the person's body mass against the published rise.

    .venv/bin/python studies/muscle-wearer/loads.py        # ~1 min; writes loads.csv here

The published rises are secondary readings (Browning et al., Med Sci Sports Exerc
39(3):515-525, 2007; its figure could not be read here): linear fits of net metabolic rate
(W/kg) on the total added mass (kg) per location -- waist 0.045, thigh 0.075, shank 0.076
W/kg per kg (the fits in the code accompanying Khalilian-Motamed Bonab & Patoglu,
arXiv:2110.00062, which cite Browning) -- and the foot's ~8 % of the unloaded 2.35 W/kg per
kg (lecture notes reading Browning's figure; 7.5-8.5 %/kg in a 2021 paper citing it,
PMC8299804). /work/notes/browning-2007.md has the search.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from codesign.model.anthropometry import human_geometry
from codesign.walking import WalkSettings, evaluate, load_design

HERE = Path(__file__).resolve().parent
DESIGN = HERE.parents[1] / "docs" / "designs" / "human-muscles.json"
UNLOADED_W_PER_KG = 2.35          # Browning's unloaded net rate as read (see above)
# W/kg of net metabolic rate per kg of total added mass, by location (see above)
PUBLISHED_SLOPE = {"foot": 0.08 * UNLOADED_W_PER_KG, "shank": 0.076, "thigh": 0.075, "torso": 0.045}
# Browning's conditions: (segment, kg per segment); leg loads on both legs, the waist's a
# torso load at the hip (position 0)
CONDITIONS = (("foot", 2.0), ("foot", 4.0), ("shank", 2.0), ("shank", 4.0), ("thigh", 4.0), ("thigh", 8.0),
              ("torso", 4.0), ("torso", 8.0), ("torso", 16.0))


def walk(loads: list[dict]) -> dict[str, float]:
    """The design's metrics with ``loads`` (its own evaluation settings otherwise); a walk
    that falls before the window has only ``time`` of them."""
    design = load_design(DESIGN)
    settings = WalkSettings.from_dict({**design.evaluation, "wearer_model": "muscles", "loads": loads})
    return {"metabolic_power": math.nan, "speed": math.nan, **evaluate(design, settings).metrics}


def main() -> None:
    body_mass = human_geometry().mass_kg
    base = walk([])
    rows = []
    for segment, kg in CONDITIONS:
        load = {"segment": segment, "mass_kg": kg, **({"position": 0.0} if segment == "torso" else {})}
        m = walk([load])
        total = kg * (1 if segment == "torso" else 2)
        walked = m["time"] >= base["time"]         # a fall leaves the window unmeasured: NaN
        rise = (m["metabolic_power"] - base["metabolic_power"]) / body_mass if walked else math.nan
        published = PUBLISHED_SLOPE[segment] * total
        rows.append({"load": f"{kg:g} kg {'at the waist' if segment == 'torso' else 'per ' + segment}",
                     "total_kg": total, "walked_s": m["time"], "speed_m_s": round(m["speed"], 3),
                     "rise_W_per_kg": round(rise, 3), "published_W_per_kg": round(published, 3),
                     "ratio": round(rise / published, 2), "per_kg_W_per_kg2": round(rise / total, 4)})
    with open(HERE / "loads.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"unloaded: {base['time']:g} s, {base['speed']:.3f} m/s, net {base['metabolic_power']:.1f} W = "
          f"{base['metabolic_power'] / body_mass:.2f} W/kg ({base['metabolic_cost']:.2f} J/(kg m)), "
          f"body mass {body_mass:.1f} kg")
    print("| load | total kg | walked s | speed m/s | rise W/kg | published W/kg | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['load']} | {r['total_kg']:g} | {r['walked_s']:g} | {r['speed_m_s']} | {r['rise_W_per_kg']} | "
              f"{r['published_W_per_kg']} | {r['ratio']} |")


if __name__ == "__main__":
    main()
