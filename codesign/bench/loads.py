"""`codesign bench loads`: the load screening's prediction against closed loop (issue 44).

For every co-design under ``docs/designs/`` (``index.toml``; a design with a topology),
the load screening along the reference gait (:func:`codesign.screening.loads.screen_loads`,
``human/reference_gait.csv``) predicts each actuator's RMS torque and peak speed; the peer
is the design's own 10-s walk (its file's problem and settings, as ``codesign simulate``
replays it), whose delivered actuator torques and rates (both legs, the second half: the
metrics' window, :func:`codesign.walking.trajectory.actuator_table`) give the same two
figures. Prints the table with the ratio predicted / simulated and writes
``<out>/loads.csv``. ``--quick``: the first two designs that do not assist. An assisting design
(``exo_assist*``) delivers an assistance profile, not the wearer's whole law, so its row is
shown but left out of the agreement count.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import numpy as np

DESCRIPTION = ("load screening's predicted actuator RMS torque and peak speed against the 10-s closed-loop walk "
               "of every co-design under docs/designs")
DESIGNS = Path(__file__).resolve().parents[2] / "docs" / "designs"
AGREEMENT = 0.25        # the target: prediction within 25 % of closed loop
SAMPLE_S = 0.01         # s, the recording step of the walks


def codesign_files(assisting: bool = True) -> list[Path]:
    """The design files of ``docs/designs/index.toml`` that carry a topology (index order);
    without the assisting ones (an index entry's problem naming "assist") unless
    ``assisting``."""
    import json

    index = tomllib.loads((DESIGNS / "index.toml").read_text())
    out = []
    for entry in index["design"]:
        path = DESIGNS / entry["file"]
        if json.loads(path.read_text()).get("topology") is not None and (assisting or "assist" not in entry["problem"]):
            out.append(path)
    return out


def design_file(path: Path):
    """(problem, design, settings) of a stored design file: its ``"problem"`` and its
    ``evaluation`` settings, as ``codesign simulate FILE`` replays it."""
    from codesign.problems import get_problem
    from codesign.problems.identity import design_problem
    from codesign.run.stored import inline_run_reference
    from codesign.walking import load_design

    design = load_design(path)
    said = design_problem(design.problem, design.params, design.topology, design.evaluation, str(path),
                          lambda: [])
    problem = get_problem(said.key)
    settings = problem.parse_settings(inline_run_reference(dict(said.table), problem.run_reference))
    problem.walking.check_design(design, settings, str(path))
    return problem, design, settings


def compare(path: Path) -> list[dict]:
    """One row per actuator of the design ``path``: predicted and simulated RMS torque
    (N m) and peak speed (rad/s), the walk's verdict and the prediction's drivetrains."""
    from codesign.model.drivetrain import motor_catalog, stage_law
    from codesign.model.morphology import build_morphology, parameter_space
    from codesign.screening.loads import read_reference_gait, screen_loads
    from codesign.topology.catalog import cached_catalog
    from codesign.walking.trajectory import actuator_table

    problem, design, settings = design_file(path)
    topology = cached_catalog().topology(design.topology)
    names = {p.name for p in parameter_space(topology)}
    morphology = build_morphology(topology, design.actuators, {k: v for k, v in design.params.items() if k in names})
    screened = screen_loads(morphology, read_reference_gait(), list(motor_catalog().values()), stage_law())
    t_end = settings.walk.rollout.max_time
    times = np.arange(0.0, t_end + 0.5 * SAMPLE_S, SAMPLE_S)
    replay = problem.walking.replay(design, settings, times[times <= t_end])
    table = actuator_table(replay.rollout, replay.setup)
    t = times[:len(table)]
    half = t >= 0.5 * t_end
    assists = "assist" in problem.name
    rows = []
    for i, a in enumerate(design.actuators):
        tau = np.concatenate([table[f"tau_j{a}_{s}_Nm"].to_numpy()[half] for s in "rl"])
        rate = np.concatenate([table[f"rate_j{a}_{s}_rad_s"].to_numpy()[half] for s in "rl"])
        choice = screened.drivetrains[i].drivetrain if screened.drivetrains else None
        rows.append({"design": path.stem, "problem": problem.name,
                     "assists": int(assists), "actuator": f"j{a}", "walked_s": float(t[-1]),
                     "rms_predicted_Nm": float(screened.loads.rms_torque[i]), "rms_simulated_Nm": float(np.sqrt(np.mean(tau ** 2))),
                     "speed_predicted_rad_s": float(screened.loads.peak_speed[i]),
                     "speed_simulated_rad_s": float(np.max(np.abs(rate))),
                     "load_scale": screened.load_scale,
                     "drivetrain": f"{choice.motor.name} x {choice.stage_ratio:g}" if choice else "none"})
    return rows


def run(args: argparse.Namespace) -> int:
    from codesign.io import write_csv_atomic

    files = codesign_files(assisting=False)[:2] if args.quick else codesign_files()
    rows = [row for path in files for row in compare(path)]
    print(f"{'design':26s} {'act':4s} {'RMS pred':>9s} {'RMS sim':>8s} {'ratio':>6s} {'speed pred':>10s} "
          f"{'speed sim':>9s} {'ratio':>6s}  drivetrain")
    within = [0, 0]
    counted = 0
    for r in rows:
        rr = r["rms_predicted_Nm"] / r["rms_simulated_Nm"]
        sr = r["speed_predicted_rad_s"] / r["speed_simulated_rad_s"]
        r["rms_ratio"], r["speed_ratio"] = rr, sr
        if not r["assists"]:
            counted += 1
            within[0] += abs(rr - 1.0) <= AGREEMENT
            within[1] += abs(sr - 1.0) <= AGREEMENT
        print(f"{r['design']:26s} {r['actuator']:4s} {r['rms_predicted_Nm']:9.1f} {r['rms_simulated_Nm']:8.1f} "
              f"{rr:6.2f} {r['speed_predicted_rad_s']:10.2f} {r['speed_simulated_rad_s']:9.2f} {sr:6.2f}  "
              f"{r['drivetrain']}{'  (assists: not counted)' if r['assists'] else ''}")
    print(f"within {100 * AGREEMENT:.0f} % of closed loop: RMS torque {within[0]} of {counted} actuators, "
          f"peak speed {within[1]} of {counted} (assisting designs left out)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(out / "loads.csv", rows)
    print(f"wrote {out / 'loads.csv'}")
    return 0
