"""Every problem declares the names of its metrics (issue 17, item 1): the names are those
real evaluations report, and a spec's objective naming any other metric is refused before
a run starts, in one line, exit status 2, nothing written.

Truths: real rollouts of the two stored walking designs (docs/designs/: a co-design with
motors and the unaugmented human), and the test functions' own formulas."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from codesign.problems import exo_codesign, get_problem, problem_names
from codesign.problems.baseline import Baseline
from codesign.problems.baseline import evaluate_lumped
from codesign.types import EvalContext
from codesign.walking import METRICS, WalkSettings, evaluate_detailed, load_design, metrics_of
from runtools import codesign, listing, one_line

DESIGNS = Path(__file__).resolve().parents[2] / "docs" / "designs"
PROFILES = Path(__file__).resolve().parents[2] / "codesign" / "bench" / "profiles"
SHORT = {"max_time": 0.3}
# a 0.15-s window: no step, no whole stride
SHORT_UNMEASURED = ("step_length", "scuffs_per_step", "stride_r_hip", "stride_r_knee", "stride_r_ankle",
                    "knee_flexion_stance_peak_deg", "knee_flexion_stance_peak_min_deg",   # no stance after a stride
                    "assist_phase_error",                    # a clock-timed assistance (issue 46)
                    "metabolic_power", "metabolic_cost")     # an impedance wearer (issue 45)


@pytest.fixture(scope="module")
def codesign_walk():
    """(record, every metric with the unmeasured ones as NaN) of the stored co-design, its
    names joined by those of a stored wearer-space co-design (the transmission) and of an
    active wearer (its effort, issue 32)."""
    record, _, rollout, setup = evaluate_detailed(load_design(DESIGNS / "codesign-walking.json"),
                                                  WalkSettings.from_dict(SHORT))
    _, _, wearer, wearer_setup = evaluate_detailed(load_design(DESIGNS.parents[1] / "studies/wearer-space/wearer-t02.json"),
                                                   WalkSettings.from_dict(SHORT))
    _, _, active, active_setup = evaluate_detailed(load_design(DESIGNS / "human-thesis-walking.json"),
                                                   WalkSettings.from_dict({**SHORT, "wearer": "active"}))
    walks = (metrics_of(rollout, setup), metrics_of(wearer, wearer_setup), metrics_of(active, active_setup))
    every = {name: value for walk in walks for name, value in walk.items() if math.isfinite(value)}
    for walk in walks:
        assert set(walk) == set(walks[0])               # each walk names every metric
        every.update({name: math.nan for name in walk if name not in every})
    return record, every


def test_walk_names_every_metric_a_rollout_of_a_design_with_motors_reports(codesign_walk):
    record, every = codesign_walk
    assert record.ok
    assert sorted(every) == sorted(METRICS)             # nothing undeclared
    # nothing declared in vain: NaN only what a 0.3-s walk cannot measure (every walk names
    # every metric, NaN where not measured)
    unmeasured = sorted(name for name, value in every.items() if not math.isfinite(value))
    assert unmeasured == sorted(SHORT_UNMEASURED)
    assert len(METRICS) == len(set(METRICS)) == 66


def test_the_walking_problems_records_use_only_declared_names(codesign_walk):
    design = load_design(DESIGNS / "codesign-walking.json")
    group, params = exo_codesign.encode(design)
    problem = get_problem("exo_codesign")
    record = problem.evaluate(params, EvalContext(subspace=(group,), settings=problem.parse_settings(SHORT)))
    assert record.ok and set(record.metrics) <= set(problem.metrics)
    assert {"time_fraction", "speed_assist_score", "power_electrical"} <= set(record.metrics)

    human = get_problem("human_gait")
    params = load_design(DESIGNS / "human-thesis-walking.json").params
    record = human.evaluate(params, EvalContext(settings=human.parse_settings(SHORT)))
    assert record.ok and set(record.metrics) <= set(human.metrics)
    assert "power_electrical" not in record.metrics            # the human has no motors

    baseline = get_problem("anthropomorphic_baseline")
    lumped = Baseline.from_loads(())
    record = evaluate_lumped(params, lumped, WalkSettings.from_dict(SHORT))
    assert record.ok and set(record.metrics) <= set(baseline.metrics)
    assert {"added_mass_torso", "added_mass_thigh", "added_mass_shank"} <= set(record.metrics)


@pytest.mark.parametrize("name", problem_names())
def test_every_problem_declares_metrics_that_cover_its_default_objectives(name):
    problem = get_problem(name)
    assert problem.metrics and len(set(problem.metrics)) == len(problem.metrics)
    assert {o.metric for o in problem.objectives} <= set(problem.metrics)


@pytest.mark.parametrize("name", problem_names())
def test_an_objective_on_an_unknown_metric_is_refused_before_any_worker(tmp_path, name):
    evaluation = {"anthropomorphic_baseline": f'baseline_of = "{DESIGNS / "codesign-walking.json"}"',
                  "replay": f'profile = "{PROFILES / "demo.json"}"',
                  # the wearer adapting needs its frozen device (refused without one, problems.options)
                  "exo_assist_wearer": f'device_design = "{DESIGNS / "assist-t02.json"}"'}.get(name, "")
    spec = tmp_path / "m.toml"
    spec.write_text(f'name = "m"\n[problem]\nname = "{name}"\n[optimizer]\nparticles = 2\niterations = 1\n'
                    f'[[objectives]]\nmetric = "no_such_metric"\n[evaluation]\n{evaluation}\n'
                    f'[execution]\nmode = "local"\nworkers = 2\n')
    done = codesign("optimize", spec, "--results", tmp_path / "results", "--quiet")
    names = ", ".join(get_problem(name).metrics)
    one_line(done, 2, re.escape(f"codesign optimize: error: {spec}: objectives[0].metric: 'no_such_metric' "
                                f"is not a metric of problem '{name}'; expected one of {names}"))
    assert sorted(listing(tmp_path)) == ["m.toml"]              # no results/, no run folder
