"""Browning et al. 2007's loads priced in pairs: each walker walked with and without each
load, its reflexes kept, and the rise its own (issue 45's validation; loads.py's protocols
price each load from the cheapest of many searches' minima, whose basins differ by as much
as a waist load costs).

    .venv/bin/python studies/muscle-wearer/paired.py --pool-walkers A-designs.json ... \
        [--design FILE] [--price JSON]

Every walker of the ``-designs.json`` files (as ``loads.py --pool-walkers`` reads them) walks
10 s unloaded and under each of Browning's loads with its reflexes as they are, its lean
too. A walker counts for a load when both walks are a person's under the gait lab's stages
(loads.py ``--gait-lab``: Winter's stride shapes, the knee's yield, landings within 1.3 of
the carried weight; :func:`loads.stages_met`, :func:`loads.walks_alone`), the speed within
10 % of 1.25 m/s; its rise is the rise of its net metabolic power per kg of body mass (each
walk at its own speed: these walkers' power is nearly flat in speed). The load's rise is the
median over the walkers that count (Browning's is the mean of his subjects' paired rises),
with its quartiles. Browning's subjects kept their kinematics, stance moments and EMG under
waist, thigh and shank loads (and drove the swing harder under foot loads): a walker that
keeps its reflexes is his protocol for all but the feet. Writes
loads-paired-<stem>[-<price>].csv beside this file, and the walkers counted under any load
(``-designs.json``, to replay).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import loads  # noqa: E402  (the protocols' walks, stages and published rises)

from codesign.errors import UserError  # noqa: E402
from codesign.walking import Design  # noqa: E402


SPEED_BAND = 0.10   # fraction of 1.25 m/s: a walk's speed with or without the load (the lean kept)


def person_at_speed(m: dict[str, float], stages: tuple[dict, ...]) -> bool:
    """Whether walk ``m`` is a person's under ``stages`` (the gait lab's), its speed's own
    stages widened to ``SPEED_BAND`` of 1.25 m/s."""
    kept = tuple(s for s in stages if s["metric"] != "speed")
    return (loads.walks_alone(m, 10.0) and loads.stages_met(m, kept)
            and abs(m["speed"] - loads.TREADMILL_SPEED) <= SPEED_BAND * loads.TREADMILL_SPEED)


def paired_rises(walkers: dict[str, Design], body_mass: float) -> dict[str, dict[str, float]]:
    """The rise of net metabolic rate (W per kg of body mass) under each load of
    ``loads.CONDITIONS`` (by its slug), by walker, of every walker of ``walkers`` whose walks
    with and without it are a person's (:func:`person_at_speed`): the rise of its measured
    power, each walk at its own speed (these walkers' power is nearly flat in speed:
    docs/muscles.md, "The price does not follow the speed")."""
    rises: dict[str, dict[str, float]] = {}
    for name, walker in walkers.items():
        base = loads.walk(walker, [])
        if not person_at_speed(base, loads.gait_lab_stages(0.0, body_mass)):
            continue
        for segment, kg in loads.CONDITIONS:
            load = {"segment": segment, "mass_kg": kg, **({"position": 0.0} if segment == "torso" else {})}
            m = loads.walk(walker, [load])
            if person_at_speed(m, loads.gait_lab_stages(kg * (1 if segment == "torso" else 2), body_mass)):
                rises.setdefault(f"{segment}-{kg:g}kg", {})[name] = loads.rise_per_kg(m, base, False, body_mass)
    return rises


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool-walkers", nargs="+", type=Path, required=True, metavar="DESIGNS_JSON",
                        help="the walkers: loads.py's -designs.json files")
    parser.add_argument("--design", type=Path, default=loads.DESIGN, help="names the table (its stem)")
    parser.add_argument("--price", type=json.loads, default={}, metavar="JSON",
                        help='evaluation settings every walk is priced under, e.g. {"metabolic_model": "bhargava2004"}')
    args = parser.parse_args()
    for f in args.pool_walkers:
        if not f.is_file():
            parser.error(f"--pool-walkers: no file {f}; expected a -designs.json that loads.py wrote")
    try:
        loads.WalkSettings.from_dict({"wearer_model": "muscles", **args.price})
    except UserError as error:
        parser.error(f"--price: {error}")
    loads.PRICE.update(args.price)
    walkers = {f"{f.stem}:{slug}": Design.from_json(doc, str(f))
               for f in args.pool_walkers for slug, doc in json.loads(f.read_text()).items()}
    distinct = {json.dumps(w.params, sort_keys=True): name for name, w in walkers.items()}   # one walk each
    walkers = {name: walkers[name] for name in distinct.values()}
    body_mass = loads.human_geometry().mass_kg
    rises = paired_rises(walkers, body_mass)
    rows = []
    for segment, kg in loads.CONDITIONS:
        values = list(rises.get(f"{segment}-{kg:g}kg", {}).values())
        total = kg * (1 if segment == "torso" else 2)
        published = loads.PUBLISHED_SLOPE[segment] * total
        q25, median, q75 = np.percentile(values, [25, 50, 75]) if values else (np.nan,) * 3
        rows.append({"load": f"{kg:g} kg {'at the waist' if segment == 'torso' else 'per ' + segment}",
                     "total_kg": total, "walkers": len(values), "rise_W_per_kg": round(float(median), 3),
                     "rise_q25_W_per_kg": round(float(q25), 3), "rise_q75_W_per_kg": round(float(q75), 3),
                     "published_W_per_kg": round(published, 3), "ratio": round(float(median) / published, 2)})
    out = loads.HERE / f"loads-paired-{args.design.stem}{''.join(f'-{v}' for v in args.price.values())}.csv"
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    counted = sorted({name for by_walker in rises.values() for name in by_walker})   # to replay (tests)
    out.with_name(f"{out.stem}-designs.json").write_text(json.dumps(
        {name: walkers[name].to_json() for name in counted}, indent=1) + "\n")
    print(f"{len(walkers)} distinct walkers, {len(counted)} paired under a load; wrote {out}")
    print("| load | total kg | walkers | rise W/kg (median) | quartiles | published W/kg | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['load']} | {r['total_kg']:g} | {r['walkers']} | {r['rise_W_per_kg']} | "
              f"{r['rise_q25_W_per_kg']} - {r['rise_q75_W_per_kg']} | {r['published_W_per_kg']} | {r['ratio']} |")


if __name__ == "__main__":
    main()
