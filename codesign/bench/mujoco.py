"""`codesign bench mujoco`: MuJoCo's cross-simulation of a walking design next to the
soft-contact peer the report's robustness columns use (:mod:`codesign.report.robustness`),
in wall time and in agreement with the default rollout.

For each of the README's designs (the human-gait design, the walking co-design and
``make run``'s best, docs/designs), in the same process: the default time-stepping hard
contacts (``hard``, 1 ms), the soft penalty peer (``soft``, the robustness column's
re-evaluation) and MuJoCo (:mod:`codesign.walking.mujoco_rollout`, the export's 0.1-ms
steps), each for ``max_time`` (10 s; 1 s with ``--quick``) under the design's own
controller, measured by the same accumulators. Printed per run: time walked, speed, foot
slip (% of stance) and the ground-reaction peak -- the robustness columns' numbers --,
the speed's difference from ``hard``, and the rollout's wall time (compiled kernels
warmed up first; MuJoCo's rollout steps in Python around ``mj_step``). One core each
run, one after another: a quiet machine gives numbers worth quoting.
"""

from __future__ import annotations

import csv
import math
import os
import time
from pathlib import Path

from codesign.walking import WalkSettings, load_design
from codesign.walking.evaluation import evaluate_detailed
from codesign.walking.mujoco_model import export_setup
from codesign.walking.mujoco_rollout import run_mujoco

DESCRIPTION = ("a design's walk in MuJoCo (0.1-ms steps) vs the soft-contact peer of the report's robustness "
               "columns: wall time and agreement with the default hard-contact rollout")

DESIGNS = Path(__file__).resolve().parents[2] / "docs" / "designs"
CASES = ("human-thesis-walking.json", "codesign-walking.json", "wearer-demo.json")
QUICK_S = 1.0


def _row(case: str, model: str, walked: float, metrics: dict, wall_s: float, hard_speed: float) -> dict:
    speed = metrics.get("speed", math.nan)
    return {"design": case, "model": model, "walked_s": round(walked, 3), "speed_m_s": round(speed, 4),
            "speed_vs_hard_pct": round(100.0 * (speed - hard_speed) / hard_speed, 2)
            if math.isfinite(speed) and math.isfinite(hard_speed) else math.nan,
            "slip_pct_stance": round(100.0 * metrics.get("foot_slip_fraction", math.nan), 2),
            "grf_peak_bw": round(metrics.get("grf_peak_bw", math.nan), 3), "rollout_wall_s": round(wall_s, 2)}


def measure(case: str, max_time: float) -> list[dict]:
    """The three rows (hard, soft, mujoco) of one design."""
    design = load_design(DESIGNS / case)
    base = WalkSettings().with_rollout(max_time=max_time)
    evaluate_detailed(design, base.with_rollout(max_time=0.01))          # warm up (compile or load)
    record, timings, _, setup = evaluate_detailed(design, base)
    hard_speed = record.metrics.get("speed", math.nan)
    rows = [_row(case, "hard (1 ms)", record.metrics.get("time", math.nan), record.metrics,
                 timings["rollout_s"], hard_speed)]
    evaluate_detailed(design, base.with_rollout(max_time=0.01, contact_model="soft"))
    soft, soft_timings, _, _ = evaluate_detailed(design, base.with_rollout(contact_model="soft"))
    rows.append(_row(case, "soft (robustness)", soft.metrics.get("time", math.nan), soft.metrics,
                     soft_timings["rollout_s"], hard_speed))
    export = export_setup(setup, base)
    run_mujoco(export, 0.01)                                              # warm up
    mj = run_mujoco(export, max_time)
    rows.append(_row(case, "mujoco (0.1 ms)", mj.time, mj.metrics, mj.wall_s, hard_speed))
    return rows


def run(args) -> int:
    max_time = QUICK_S if args.quick else WalkSettings().rollout.max_time
    rows: list[dict] = []
    start = time.perf_counter()
    header = (f"{'design':<24}{'model':<20}{'walked [s]':>11}{'speed [m/s]':>12}{'vs hard':>9}"
              f"{'slip [% stance]':>16}{'GRF [BW]':>9}{'rollout [s]':>12}")
    print(f"{max_time:g} s simulated per run")
    print(header)
    for case in CASES:
        for r in measure(case, max_time):
            rows.append(r)
            print(f"{r['design']:<24}{r['model']:<20}{r['walked_s']:>11.2f}{r['speed_m_s']:>12.3f}"
                  f"{r['speed_vs_hard_pct']:>8.1f}%{r['slip_pct_stance']:>16.2f}{r['grf_peak_bw']:>9.2f}"
                  f"{r['rollout_wall_s']:>12.2f}", flush=True)
    print(f"bench mujoco: {time.perf_counter() - start:.0f} s in all")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / ".mujoco.csv.tmp"
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, out / "mujoco.csv")
    return 0
