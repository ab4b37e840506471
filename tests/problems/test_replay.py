"""The replay problem (codesign bench scaling's stand-in evaluation): it sleeps for the
recorded cost of (iteration, particle), reads and writes cost profiles exactly to their
0.1-ms unit, and refuses bad settings in one line."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from codesign.errors import UserError
from codesign.problems import get_problem
from codesign.problems.replay import UNIT_S, CostProfile, read_profile, write_profile
from codesign.types import EvalContext


def profile_file(tmp_path, costs, metrics=5):
    path = tmp_path / "profile.json"
    write_profile(path, CostProfile(np.asarray(costs, float), "test", metrics))
    return path


def test_profile_round_trip_within_half_a_unit(tmp_path):
    costs = np.random.default_rng(0).uniform(0.0, 0.5, (3, 7))
    back = read_profile(profile_file(tmp_path, costs))
    assert back.costs.shape == (3, 7) and back.metrics == 5 and back.provenance == "test"
    assert np.max(np.abs(back.costs - costs)) <= UNIT_S / 2 + 1e-12


def test_a_gz_profile_is_gzipped_reproducibly_and_reads_back_like_the_plain_one(tmp_path):
    import gzip

    costs = np.random.default_rng(1).uniform(0.0, 0.5, (40, 9))
    plain, packed = tmp_path / "p.json", tmp_path / "p.json.gz"
    write_profile(plain, CostProfile(costs, "test", 3))
    write_profile(packed, CostProfile(costs, "test", 3))
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    first = packed.read_bytes()
    write_profile(packed, CostProfile(costs, "test", 3))
    assert packed.read_bytes() == first                        # no timestamp inside
    np.testing.assert_array_equal(read_profile(packed).costs, read_profile(plain).costs)
    packed.write_bytes(first[:40])                             # a truncated download: one line
    with pytest.raises(UserError, match="cannot read the cost profile"):
        read_profile(packed)


def test_evaluation_sleeps_the_recorded_cost_of_its_iteration_and_particle(tmp_path):
    costs = [[0.001, 0.002], [0.060, 0.004]]
    problem = get_problem("replay")
    settings = problem.parse_settings({"profile": str(profile_file(tmp_path, costs))})
    params = {"t00.j1_s": 0.5, "ankle.K.v1": 2.0}
    start = time.perf_counter()
    record = problem.evaluate(params, EvalContext(iteration=1, particle=0, settings=settings))
    slept = time.perf_counter() - start
    assert record.ok and 0.060 <= slept < 0.060 + 0.05
    assert record.metrics["cost_s"] == pytest.approx(0.060, abs=1e-12)
    assert record.metrics["f"] == pytest.approx(0.25 + 4.0)
    assert len(record.metrics) == 5          # as many metrics as the recorded run's
    beyond = problem.evaluate(params, EvalContext(iteration=2, particle=0, settings=settings))
    assert not beyond.ok and "iteration 2" in beyond.message


def test_space_is_the_codesign_problems(tmp_path):
    replay, codesign = get_problem("replay"), get_problem("exo_codesign")
    assert replay.parameters == codesign.parameters and replay.pools == codesign.pools


@pytest.mark.parametrize("settings, message", [
    ({}, "evaluation.profile"),
    ({"profile": 3}, "evaluation.profile"),
    ({"profile": "x", "sleep_s": 1}, "evaluation.sleep_s"),
    ({"profile": "/no/such/profile.json"}, "/no/such/profile.json"),
])
def test_bad_settings_are_one_line(settings, message):
    with pytest.raises(UserError, match=message.replace(".", r"\.")) as error:
        get_problem("replay").parse_settings(settings)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(format="other"), "not a cost profile"),
    (lambda d: d.update(iterations=5), "expected iterations x particles"),
    (lambda d: d["costs"][0].__setitem__(0, -1), "costs >= 0"),
    (lambda d: d["costs"].append([1]), "equally long"),
])
def test_damaged_profiles_are_refused_in_one_line(tmp_path, edit, message):
    path = profile_file(tmp_path, [[0.01, 0.02], [0.03, 0.04]])
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match=message) as error:
        read_profile(path)
    assert "\n" not in str(error.value) and str(path) in str(error.value)
