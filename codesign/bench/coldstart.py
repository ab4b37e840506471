"""`codesign bench coldstart`: what a fresh process pays before its first evaluation.

Each row is a new Python process (``sys.executable``), timed from the outside (wall time
from start to exit, interpreter start included) and from the inside (import, first
evaluation). Cases:

* ``python -c pass``: the interpreter alone (peer);
* ``mujoco``: import MuJoCo, load the thesis's 20-link chain (MJCF written by this process
  with :func:`codesign.dynamics.testing.peers.to_mjcf`) and step it for the same
  ``max_time`` at 1 ms (peer: a fresh process of a compiled simulator);
* ``codesign warm``: import :mod:`codesign.walking` and evaluate the demo's best design
  (docs/designs/codesign-walking.json) for ``max_time``, with the kernels on numba's disk
  cache (``codesign warmup`` runs first, in its own process, and is a row too);
* ``codesign cold`` (not with ``--quick``): the same into an empty temporary
  ``NUMBA_CACHE_DIR``, i.e. the first compile (~40 s of CPU).

The codesign processes run with ``NUMBA_DEBUG_CACHE=1``: the table counts the compiled
functions numba saved and the ones it loaded (numba's own log, not an estimate). Rows are
the fastest of :data:`REPEATS` processes (the cold case: one). Target (issue 16): a fresh
process with a warm cache evaluates its first design in <= 10 s.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from codesign.io import write_csv_atomic

DESCRIPTION = ("a fresh process: import + first 10-s evaluation of the demo's best design, warm and cold "
               "numba cache, vs python -c pass and MuJoCo's 20-link chain in a fresh process")

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "designs" / "codesign-walking.json"
REPEATS = 3
TARGET_S = 10.0     # import + first evaluation, warm cache

EVALUATE = """
import json, time
t0 = time.perf_counter()
from codesign import walking
t1 = time.perf_counter()
record = walking.evaluate(walking.load_design({design!r}), {{"max_time": {max_time!r}}})
t2 = time.perf_counter()
print("RESULT", json.dumps({{"import_s": t1 - t0, "first_s": t2 - t1, "status": record.status,
                            "simulated_s": record.metrics.get("time", 0.0)}}))
"""

MUJOCO = """
import json, time
t0 = time.perf_counter()
import mujoco
t1 = time.perf_counter()
model = mujoco.MjModel.from_xml_path({mjcf!r})
data = mujoco.MjData(model)
data.qpos[:] = 0.3
mujoco.mj_step(model, data, {steps!r})
t2 = time.perf_counter()
print("RESULT", json.dumps({{"import_s": t1 - t0, "first_s": t2 - t1, "status": "ok",
                            "simulated_s": data.time}}))
"""


class Process(NamedTuple):
    """One fresh process: wall time from outside, its own figures, numba's cache log."""
    case: str
    wall_s: float          # start to exit, interpreter included
    cpu_s: float           # its CPU time (user + system; steadier than wall on a loaded machine)
    import_s: float        # import of the library (nan: none)
    first_s: float         # first evaluation / simulation (nan: none)
    compiled: int          # functions numba compiled and saved to the cache
    loaded: int            # functions numba loaded from the cache
    status: str


def add_arguments(parser) -> None:  # pragma: no cover - the bench table takes .out/.quick
    pass


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DEBUG_CACHE")}
    env.update(extra)
    return env


def fresh_process(case: str, argv: list[str], env: dict[str, str]) -> Process:
    """Run ``argv`` in a new process and read its RESULT line and numba's cache log."""
    t0, c0 = time.perf_counter(), _children_cpu_s()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _children_cpu_s() - c0
    lines = done.stdout.splitlines()
    result = next((json.loads(line[7:]) for line in lines if line.startswith("RESULT ")), {})
    nan = float("nan")
    status = result.get("status", "ok" if done.returncode == 0 else f"exit {done.returncode}")
    return Process(case, wall, cpu, result.get("import_s", nan), result.get("first_s", nan),
                   sum(line.startswith("[cache] data saved") for line in lines),
                   sum(line.startswith("[cache] data loaded") for line in lines), status)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _best(runs: list[Process]) -> Process:
    return min(runs, key=lambda r: r.wall_s)


def run(args) -> int:
    from codesign.dynamics.testing import examples as E
    from codesign.dynamics.testing.peers import to_mjcf

    quick = bool(getattr(args, "quick", False))
    max_time = 2.0 if quick else 10.0
    python = sys.executable
    rows: list[Process] = []
    with tempfile.TemporaryDirectory(prefix="codesign-coldstart-") as tmp:
        mjcf = Path(tmp) / "chain20.xml"
        mjcf.write_text(to_mjcf(E.serial_chain(20), 1e-3, "Euler"))
        evaluate = [python, "-c", EVALUATE.format(design=str(DESIGN), max_time=max_time)]
        debug = {"NUMBA_DEBUG_CACHE": "1"}
        if not quick:   # first: the cold process, so its compile is not helped by a warm page cache
            rows.append(fresh_process("codesign cold (empty cache)", evaluate,
                                      _env(NUMBA_CACHE_DIR=str(Path(tmp) / "numba"), **debug)))
        rows.append(fresh_process("codesign warmup", [python, "-m", "codesign.cli", "warmup"], _env(**debug)))
        peers = {"python -c pass": [python, "-c", "pass"],
                 "mujoco 20-link chain": [python, "-c", MUJOCO.format(mjcf=str(mjcf),
                                                                      steps=int(round(max_time / 1e-3)))]}
        runs: dict[str, list[Process]] = {case: [] for case in (*peers, "codesign warm")}
        for _ in range(REPEATS):   # alternate, so that all see the same load
            for case, argv in peers.items():
                runs[case].append(fresh_process(case, argv, _env()))
            runs["codesign warm"].append(fresh_process("codesign warm", evaluate, _env(**debug)))
        rows += [_best(r) for r in runs.values()]
    print(f"fresh processes: import + first {max_time:g}-s evaluation of {DESIGN.name} (codesign) or "
          f"{max_time:g} s of the 20-link chain at 1 ms (MuJoCo); best of {REPEATS} (cold: one); "
          "compiled/loaded: numba's cache log")
    print(f"{'case':<28}{'wall (s)':>10}{'CPU (s)':>9}{'import (s)':>12}{'first (s)':>11}{'compiled':>10}{'loaded':>8}  status")
    for r in rows:
        print(f"{r.case:<28}{r.wall_s:>10.2f}{r.cpu_s:>9.2f}{r.import_s:>12.2f}{r.first_s:>11.2f}{r.compiled:>10}"
              f"{r.loaded:>8}  {r.status}")
    warm = runs["codesign warm"]
    chain = _best(runs["mujoco 20-link chain"])
    best = _best(warm)
    print(f"warm: {best.wall_s:.2f} s (median {statistics.median(r.wall_s for r in warm):.2f} s) = "
          f"{best.wall_s / chain.wall_s:.1f}x MuJoCo's fresh process; target <= {TARGET_S:g} s: "
          + ("met" if best.wall_s <= TARGET_S else "not met")
          + ("" if all(r.compiled == 0 for r in warm) else "; WARNING: a warm process compiled"))
    out = Path(getattr(args, "out", "results/bench")) / "coldstart.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(out, [r._asdict() | {"max_time_s": max_time} for r in rows])
    print(f"wrote {out}")
    return 0
