"""The thesis-scale study's stored bests (issue 44 item 5: docs/designs/study-tNN.json,
written by `codesign study pipelines/codesign-study.toml`) replay as the study measured
them: the design file alone (its problem and evaluation settings) gives, bit for bit, the
metrics the study's verification recorded under the run's settings
(studies/codesign-study/verify/ROUND.json, the round study.csv names for the topology) --
the store, the study and a replay from the file agree -- for each of the nine that meet
every default stage of their problem (and, for those searched with robustness priced, the
robust stage) and walk under every check made. Bit for bit where NumPy's BLAS runs the
study's kernels; on a CPU whose BLAS kernels differ, within a bound measured here."""

from __future__ import annotations

import csv
import ctypes
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from codesign.objectives import unmet_conditions
from codesign.problems import get_problem
from codesign.problems.robust import ROBUST_STAGE
from codesign.walking import load_design

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "studies" / "codesign-study"
# recorded as means over the 1-ms samples, time means (trapezoid) since the event-driven
# models' uneven steps were found to bias them (issue 46): up to 1e-4 apart on these walks
TIME_MEANS = ("actuator_thermal_ratio", "actuator_demand_ratio")
# The walk's start takes its rates from NumPy's least squares (initial_state.py), whose BLAS
# kernels OpenBLAS picks by CPU: the study's (AVX-512, "SkylakeX") give its bits; a CI
# machine without AVX-512 failed this test on 1e-12 (2026-12-02). Measured on the nine
# walks under OPENBLAS_CORETYPE = Haswell, Sandybridge and Prescott: every metric within
# 1.4e-9 relative (grf_peak_bw, topology 3), and topology 6's contact_energy_error_steps
# 0 where the study counted 1 (a step at the bound). The bound: 1e-7 relative, 70 times
# that, a count within one step.
OTHER_KERNELS_REL = 1e-7
COUNTS = ("contact_energy_error_steps",)
STUDY_KERNELS = "SkylakeX"


def blas_kernels() -> str:
    """The kernels NumPy's OpenBLAS runs in this process (its core name), or "" where
    NumPy's BLAS is not the bundled OpenBLAS."""
    libs = sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("libscipy_openblas*"))
    if not libs:
        return ""
    corename = ctypes.CDLL(str(libs[0])).scipy_openblas_get_corename64_
    corename.restype = ctypes.c_char_p
    return corename().decode()


def replay_metrics(topology: int) -> dict[str, float]:
    """The metrics of the topology's stored best replayed from its design file alone."""
    design = load_design(ROOT / "docs" / "designs" / f"study-t{topology:02d}.json")
    problem = get_problem(design.problem["name"])         # the study's problem, a preset
    return problem.walking.replay(design, problem.parse_settings(design.evaluation)).record.metrics


def assert_as_recorded(got: dict[str, float], recorded: dict[str, float], rel: float) -> None:
    """Every recorded metric replayed: time means within 2e-4, the rest within ``rel``
    (0: bit for bit), counts within ``rel`` > 0 ? one : none."""
    for name, value in recorded.items():
        if name in TIME_MEANS:
            assert got[name] == pytest.approx(value, rel=2e-4), name
        elif math.isnan(value):
            assert math.isnan(got[name]), name
        elif name in COUNTS:
            assert abs(got[name] - value) <= (1 if rel else 0), name
        else:
            assert got[name] == pytest.approx(value, rel=rel, abs=0), name


def verification(topology: int) -> dict:
    """The verification record of the topology's best, as the study's table names it."""
    with open(STUDY / "study.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if int(r["topology"]) == topology)
    return json.loads((STUDY / "verify" / f"{row['round']}.json").read_text())


def test_every_topology_has_its_best_stored_with_its_verification():
    for t in range(1, 11):
        design = json.loads((ROOT / "docs" / "designs" / f"study-t{t:02d}.json").read_text())
        verify = verification(t)
        assert design["topology"] == verify["topology"] == t
        assert "-".join(map(str, design["actuators"])) == verify["actuators"]
        assert [c["name"] for c in verify["checks"]] == ["searched", "half_step", "soft", "mujoco"]


def holding_topologies() -> list[int]:
    """The topologies whose stored best walks under every check made (its verification)."""
    return [t for t in range(1, 11)
            if all(c["walks"] for c in verification(t)["checks"] if c.get("made", True))]


def test_nine_topologies_hold_under_every_check_made():
    """The study's answer as the README states it (issue 44 item 5: 9 of 10 hold)."""
    assert sorted(holding_topologies()) == [1, 2, 3, 4, 5, 6, 7, 8, 10]


@pytest.mark.slow
@pytest.mark.parametrize("topology", holding_topologies())
def test_each_best_that_holds_replays_its_recorded_metrics_and_meets_every_stage(topology):
    path = ROOT / "docs" / "designs" / f"study-t{topology:02d}.json"
    verify = verification(topology)
    assert all(c["walks"] for c in verify["checks"] if c.get("made", True))
    metrics = replay_metrics(topology)
    assert_as_recorded(metrics, verify["checks"][0]["metrics"], 0.0 if blas_kernels() == STUDY_KERNELS else OTHER_KERNELS_REL)
    design = load_design(path)
    assert not unmet_conditions(metrics, get_problem(design.problem["name"]).objectives)
    assert metrics["time"] == 10.0
    if design.evaluation.get("robust_checks"):          # searched with robustness priced
        assert metrics[ROBUST_STAGE.metric] >= ROBUST_STAGE.until


@pytest.mark.slow
def test_a_replay_on_another_cpu_s_blas_kernels_stays_within_the_bound(tmp_path):
    """The bound above, on any machine: topology 3's best (the largest deviation measured)
    replayed by `codesign simulate` in a process whose OpenBLAS runs the kernels of a CPU
    without AVX-512 ("Haswell"), against the study's record."""
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}
    subprocess.run([sys.executable, "-m", "codesign.cli", "simulate", str(ROOT / "docs" / "designs" / "study-t03.json"),
                    "--out", str(tmp_path), "--no-animation"], env=env, check=True, capture_output=True, timeout=600)
    metrics = json.loads((tmp_path / "record.json").read_text())["metrics"]
    assert_as_recorded(metrics, verification(3)["checks"][0]["metrics"], OTHER_KERNELS_REL)
