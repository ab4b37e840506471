"""`codesign bench scaling` through the real driver, executor and store: its ideal time per
iteration is the one computed here from the profile, no schedule beats it (efficiency <= 1),
the workers are never more than all busy, a stored run's costs are its evaluations' wall
times, and misuse is one line with exit 2."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from codesign.bench.scaling import (bundled_profile, ideal_per_iteration, known_per_iteration, pipelined_critical_path,
                                    pipelined_makespan, planned_per_iteration, profile_from_run, window)
from codesign.problems.replay import CostProfile, read_profile, write_profile

pytestmark = pytest.mark.integration


def codesign(*args):
    return subprocess.run([sys.executable, "-m", "codesign.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_replayed_costs_give_the_ideal_computed_here_and_no_schedule_beats_it(tmp_path):
    costs = np.random.default_rng(1).choice([0.003, 0.004, 0.08, 0.15], size=(4, 12))
    path = tmp_path / "p.json"
    write_profile(path, CostProfile(costs, "test", 4))
    done = codesign("bench", "scaling", "--profile", path, "--workers", "1,3", "--iterations", 4, "--json",
                    "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout)["rows"]                       # stdout is the JSON alone
    assert [r["workers"] for r in rows] == [1, 3] and all(r["iterations"] == 3 for r in rows)
    counted = np.round(costs[1:] / 1e-4) * 1e-4        # the profile's 0.1-ms unit; first not counted
    for row in rows:
        w = row["workers"]
        ideal = np.mean([max(c.sum() / w, c.max()) for c in counted])
        assert row["ideal_s"] == pytest.approx(ideal, abs=1e-3)
        assert 0.0 < row["efficiency"] <= 1.0 + 1e-3           # sleeps never end early
        assert row["achieved_s"] >= ideal - 1e-3
        assert row["planned_s"] >= row["ideal_s"] - 1e-9                # nor does the plan
        # busy: the workers' evaluation time in the counted window; at least the replayed
        # costs (sleeps never end early), at most all of it (the one store write at the
        # window's start that overlaps the next iteration: a few ms in ~0.4 s per worker)
        work = counted.sum() / (w * row["achieved_s"] * row["iterations"])
        assert work - 1e-6 <= row["busy"] <= 1.02
    assert (tmp_path / "out/scaling.csv").is_file()


def test_a_stored_runs_profile_is_its_evaluations_wall_times(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('seed = 3\n[problem]\nname = "sphere"\n[optimizer]\nparticles = 5\niterations = 3\n'
                    '[evaluation]\nsleep_s = 0.002\n')
    assert codesign("optimize", spec, "--name", "r", "--workers", 0, "--quiet", "--results", tmp_path).returncode == 0
    profile = profile_from_run(tmp_path / "r")
    with sqlite3.connect(tmp_path / "r/run.sqlite") as c:
        wall = np.array(c.execute("SELECT wall_s FROM evaluations ORDER BY iteration, particle").fetchall())
    assert profile.costs.shape == (3, 5)
    np.testing.assert_array_equal(profile.costs.ravel(), wall.ravel())
    assert profile.metrics == 2          # sphere reports f only; a profile counts at least f and cost_s


def test_planned_lists_the_executors_tasks_on_previous_costs_computed_by_hand():
    costs = np.array([[0.0, 0.0, 1.0, 0.5],      # predicts particle 2 longest, then 3
                      [1.0, 0.5, 0.5, 0.5]])     # but particle 0 is the long one
    # 2 workers take 2 (0.5) and 3 (0.5); at 0.5 one takes 0 (1.0 -> 1.5), the other 1 (-> 1.0)
    # (4 ms of dispatch against 0.75 s of work per worker: no shared task)
    assert planned_per_iteration(costs, 2) == pytest.approx([1.5])
    # 41 evaluations on 64 workers (41 ms of dispatch > 16 ms of work per worker): the 40
    # predicted at 0 s share one task, and their actual 30 ms each add up to 1.2 s there
    many = np.array([[1.0] + [0.0] * 40, [1.0] + [0.03] * 40])
    assert planned_per_iteration(many, 64) == pytest.approx([1.2])
    assert ideal_per_iteration(costs[1:], 2) == pytest.approx([1.25])    # max(2.5 / 2, 1.0)


def test_the_known_cost_plan_computed_by_hand():
    # predicted short, particle 2 is the long one: the previous-cost plan starts it last
    # (0.5 + 1.0), knowing the costs starts it first (1.0, beside 0.5 + 0.5)
    costs = np.array([[1.0, 1.0, 0.0],
                      [0.5, 0.5, 1.0]])
    assert planned_per_iteration(costs, 2) == pytest.approx([1.5])
    assert known_per_iteration(costs, 2) == pytest.approx([1.0])
    assert ideal_per_iteration(costs[1:], 2) == pytest.approx([1.0])
    # pipelined, the same costs: at 1 s iteration 0 is done and (1, 0), (1, 1), (1, 2) are
    # ready; predicted, (1, 2) (0 s before) runs last, 1.5 -> 2.5; known, it runs first,
    # beside (1, 0) and then (1, 1): 2.0 = sum / 2
    assert pipelined_makespan(costs, 2) == pytest.approx(2.5)
    assert pipelined_makespan(costs, 2, known=True) == pytest.approx(2.0)
    assert pipelined_makespan(costs, 1, known=True) == pytest.approx(4.0)   # one worker: all the work


@pytest.mark.parametrize("workers", [2, 16, 64])
def test_no_plan_beats_the_ideal_on_the_bundled_profile(workers):
    profile = read_profile(bundled_profile("codesign"))
    costs = profile.costs[window(profile.iterations, 10)]
    ideal = ideal_per_iteration(costs[1:], workers)
    assert np.all(known_per_iteration(costs, workers) >= ideal - 1e-12)
    assert np.all(planned_per_iteration(costs, workers) >= ideal - 1e-12)
    bound = max(costs.sum() / workers, pipelined_critical_path(costs))
    assert pipelined_makespan(costs, workers, known=True) >= bound - 1e-12
    assert pipelined_makespan(costs, workers) >= bound - 1e-12


def test_the_pipelined_ideal_and_plan_computed_by_hand():
    costs = np.array([[1.0, 0.0],
                      [0.0, 1.0],
                      [1.0, 0.0]])
    # (0, 2) waits for (0, 1) (done at 1) and all of iteration 0 (done at 1): ends at 2;
    # the synchronous iterations need 1 + 1 + 1
    assert pipelined_critical_path(costs) == pytest.approx(2.0)
    assert ideal_per_iteration(costs, 2).sum() == pytest.approx(3.0)
    assert pipelined_makespan(costs, 2) == pytest.approx(2.0)
    assert pipelined_makespan(costs, 1) == pytest.approx(3.0)          # one worker: all the work
    # a long first evaluation holds iteration 0 open: particle 0 runs (0, 1) but not (0, 2)
    costs = np.array([[0.0, 3.0], [0.5, 0.0], [0.5, 0.0]])
    assert pipelined_critical_path(costs) == pytest.approx(3.5)
    assert pipelined_makespan(costs, 2) == pytest.approx(3.5)


def test_pipelined_replay_reaches_at_most_its_ideal(tmp_path):
    costs = np.random.default_rng(2).choice([0.003, 0.004, 0.08, 0.15], size=(4, 12))
    path = tmp_path / "p.json"
    write_profile(path, CostProfile(costs, "test", 4))
    done = codesign("bench", "scaling", "--profile", path, "--workers", "3", "--iterations", 4, "--pipeline",
                    "--json", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr[-2000:]
    row, = json.loads(done.stdout)["rows"]
    assert row["mode"] == "pipeline" and row["iterations"] == 4            # every iteration counted
    rounded = np.round(costs / 1e-4) * 1e-4
    ideal = max(rounded.sum() / 3, pipelined_critical_path(rounded)) / 4
    assert row["ideal_s"] == pytest.approx(ideal, abs=1e-6)
    assert 0.0 < row["efficiency"] <= 1.0 and row["achieved_s"] >= ideal
    # every evaluation lies inside the counted window: busy is at most 1
    assert rounded.sum() / (3 * row["achieved_s"] * 4) - 1e-6 <= row["busy"] <= 1.0 + 1e-9
    assert row["planned_s"] >= row["ideal_s"] - 1e-9


def test_window_takes_consecutive_blocks_spread_over_the_profile():
    assert window(32, 4) == [14, 15, 16, 17]
    assert window(300, 10) == [74, 75, 76, 77, 78, 221, 222, 223, 224, 225]
    assert window(6, 10) == list(range(6))
    assert window(32, 31) == list(range(31))


@pytest.mark.parametrize("args, culprit", [
    (("scaling", "--workers", "2,x"), "--workers"),
    (("scaling", "--workers", "0"), "--workers"),
    (("scaling", "--iterations", "1"), "--iterations"),
    (("scaling", "--processes", "0"), "--processes"),
    (("scaling", "--profile", "nosuch"), "nosuch"),
    (("scaling", "--profile", "demo", "--run", "x"), "--profile"),
    (("runner", "--workers", "2"), "--workers"),
])
def test_misuse_is_one_line_exit_2(tmp_path, args, culprit):
    done = codesign("bench", *args, "--out", tmp_path)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and culprit in done.stderr
    assert done.stdout == ""                    # not even the benchmark's header before the error


def test_the_help_states_the_defaults_the_bench_uses(capsys):
    from codesign.bench import scaling
    from codesign.cli import main

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"default {','.join(map(str, scaling.WORKERS))}; --quick: {','.join(map(str, scaling.QUICK_WORKERS))}" in text
    assert f"default {scaling.ITERATIONS}; --quick: {scaling.QUICK_ITERATIONS}" in text
