"""`codesign bench evaluate`: wall time of one walking evaluation, time stepping vs peers.

Cases: the unaugmented human tracking the nominal gait, and a typical augmented design
(topology 1, anthropomorphic four-bars, actuators 1 and 3), both with constant-impedance
"typical" controllers (:func:`codesign.walking.typical_human_design`,
:func:`~codesign.walking.typical_codesign_design`). Each is evaluated for
``max_time`` (10 s; 2 s with ``--quick``) with the default time-stepping hard contacts
(``hard``, h = 1 ms) and, as peers in the same process, the event-driven hard contacts
of the thesis's simulator (``hard_event``: DOPRI5 with located contact events) and the
soft penalty model (``soft``). Printed per run: simulated time (a typical design may fall
or stop early: the table says so), wall time split into screening / setup / rollout,
steps, events (contact-mode changes of single points for stepping; located events for
the peers), events per wall second, simulated seconds per wall second. Each model is
warmed up first (compiled or loaded from the on-disk cache); the first-call time of the
whole bench is printed. Then the step-size convergence of the stepping rollout: the
metrics of the human-gait study's walking design (docs/designs/human-walking.json) at
h = 2, 1, 0.5 and 0.25 ms. One core: run it on a quiet
machine for numbers worth quoting.
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

DESCRIPTION = "one walking evaluation (screening + setup + rollout) of the human and an augmented design: time-stepping hard contacts vs event-driven hard and soft contacts"


def add_arguments(parser) -> None:  # pragma: no cover - the bench table takes .out/.quick
    pass


def _row(case, contact, record, timings, rollout, max_time):
    wall = sum(timings.values())
    sim = record.metrics.get("time", 0.0)
    steps = rollout.n_steps if rollout else 0
    events = rollout.n_events if rollout else 0
    return {
        "case": case, "contact": contact, "max_time_s": max_time, "simulated_s": round(sim, 4),
        "status": (rollout.status if rollout else record.status),
        "screen_s": round(timings["screen_s"], 4), "setup_s": round(timings["setup_s"], 4),
        "rollout_s": round(timings["rollout_s"], 4), "total_s": round(wall, 4),
        "steps": steps, "events": events,
        "events_per_s": round(events / timings["rollout_s"], 1) if timings["rollout_s"] > 0 else 0.0,
        "realtime_factor": round(sim / wall, 2) if wall > 0 else 0.0,
    }


def step_convergence(design, max_time: float, steps_ms=(2.0, 1.0, 0.5, 0.25)) -> list[dict]:
    """One row per time step h (ms): the design's status and metrics, and the rollout's
    wall time -- how far the first-order stepping is from converged at the default 1 ms."""
    from codesign import walking as ev

    rows = []
    for h_ms in steps_ms:
        settings = ev.WalkSettings.from_dict({"max_time": max_time, "objectives": "table_4_2",
                                              "h": h_ms * 1e-3})
        record, timings, rollout, _setup = ev.evaluate_detailed(design, settings)
        m = record.metrics
        rows.append({"h_ms": h_ms, "status": rollout.status if rollout else record.status,
                     "time_s": round(m.get("time", 0.0), 3),
                     **{k: round(m.get(k, float("nan")), 4) for k in
                        ("speed", "assist_fraction", "power", "torque_rms", "step_length",
                         "hip_r_force_rms", "hip_r_force_peak")},
                     "rollout_s": round(timings["rollout_s"], 3)})
    return rows


def run(args) -> int:
    from codesign import walking as ev

    max_time = 2.0 if getattr(args, "quick", False) else 10.0
    cases = []
    t0 = time.perf_counter()
    base = ev.WalkSettings.from_dict({"max_time": max_time})
    human = ev.typical_human_design(base)
    augmented = ev.typical_codesign_design(base)
    design_s = time.perf_counter() - t0
    # first call: compiles the rollout for this process (and fills the cache otherwise)
    t0 = time.perf_counter()
    ev.evaluate_detailed(human, ev.WalkSettings.from_dict({"max_time": 0.01, "objectives": "table_4_2"}))
    compile_s = time.perf_counter() - t0
    for case, design, objectives in (("human", human, "table_4_2"), ("augmented", augmented, "table_5_3")):
        for contact in ("hard", "hard_event", "soft"):
            settings = ev.WalkSettings.from_dict({"max_time": max_time, "contact_model": contact,
                                                  "objectives": objectives})
            ev.evaluate_detailed(design, ev.WalkSettings.from_dict(
                {"max_time": 0.01, "contact_model": contact, "objectives": objectives}))  # warm
            record, timings, rollout, _setup = ev.evaluate_detailed(design, settings)
            cases.append(_row(case, contact, record, timings, rollout, max_time))
    keys = list(cases[0])
    widths = {k: max(len(k), *(len(str(c[k])) for c in cases)) for k in keys}
    print("  ".join(k.rjust(widths[k]) for k in keys))
    for c in cases:
        print("  ".join(str(c[k]).rjust(widths[k]) for k in keys))
    print(f"first call (compile or cache load of the stepping rollout, this process): {compile_s:.1f} s; "
          f"building the typical designs: {design_s:.1f} s; target: <= 0.25 s per 10-s evaluation")
    walking = ev.load_design(str(Path(__file__).resolve().parents[2] / "docs/designs/human-walking.json"))
    convergence = step_convergence(walking, max_time)
    keys_h = list(convergence[0])
    widths_h = {k: max(len(k), *(len(str(c[k])) for c in convergence)) for k in keys_h}
    print("\nstep-size convergence, docs/designs/human-walking.json (first-order stepping; metrics over the second half):")
    print("  ".join(k.rjust(widths_h[k]) for k in keys_h))
    for c in convergence:
        print("  ".join(str(c[k]).rjust(widths_h[k]) for k in keys_h))
    out = Path(getattr(args, "out", "results/bench"))
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / ".evaluate.csv.tmp"
    with open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys + ["compile_s"])
        writer.writeheader()
        for c in cases:
            writer.writerow({**c, "compile_s": round(compile_s, 2)})
    os.replace(tmp, out / "evaluate.csv")
    return 0
