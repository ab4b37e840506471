"""Metamorphic PSO against independent truths: known optima, eq. 3.6/3.7 by hand, the
stationary distribution of the migration Markov chain, bit-exact state round trips."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from codesign.run.evaluation import evaluate_batch
from codesign.objectives import Objective, lexicographic
from codesign.optimize.mmpso import MMPSO, migration_probabilities
from codesign.problems import get_problem
from codesign.problems.test_functions import six_hump_parts
from codesign.optimize.pso import PSOSettings, pso_step
from codesign.optimize.schedule import Migration, Schedule, constant, thesis_migration
from codesign.types import Group, Parameter, Pool
from codesign.optimize.space import Space, single_group_space


def run(optimizer: MMPSO, problem, objectives=None, each=None):
    objectives = problem.objectives if objectives is None else objectives
    while not optimizer.done:
        candidates = optimizer.ask()
        records = evaluate_batch(problem.name, candidates, None, objectives)
        optimizer.tell(records)
        if each is not None:
            each(optimizer, candidates, records)
    return optimizer


def test_six_hump_camel_pso_reaches_a_global_minimum():
    problem = get_problem("six_hump_camel")
    optimizer = run(MMPSO(single_group_space(problem.parameters), PSOSettings(30, 200), Migration(), seed=7),
                    problem)
    key, _, params = optimizer.best()
    # the two global minima of eq. 3.5 (known to 4 decimals): f = -1.0316 at +-(0.0898, -0.7126)
    assert key[2] == pytest.approx(-1.0316, abs=1e-4)
    sign = math.copysign(1.0, params["x"])
    assert params["x"] == pytest.approx(sign * 0.0898, abs=1e-3)
    assert params["y"] == pytest.approx(-sign * 0.7126, abs=1e-3)


def test_eq_3_6_matches_eq_3_7_and_is_a_distribution():
    # pool B of Fig. 3.5: current group 1 (index 0), local best group 2, global best group 3
    p_e, p_l, p_g = 0.3, 0.2, 0.1
    probs = migration_probabilities(0, (0, 1, 2), 1, 2, p_e, p_l, p_g)
    assert probs[1] == pytest.approx(1 - (1 - p_e / 2) * (1 - p_l))          # eq. 3.7 first line
    assert probs[2] == pytest.approx(1 - (1 - p_e / 2) * (1 - p_g))          # eq. 3.7 second line
    assert probs[0] == pytest.approx(1 - probs[1] - probs[2])
    # local and global in the same group: both factors; no pull when unknown
    both = migration_probabilities(0, (0, 1, 2), 2, 2, p_e, p_l, p_g)
    assert both[2] == pytest.approx(1 - (1 - p_e / 2) * (1 - p_l) * (1 - p_g))
    assert both[1] == pytest.approx(p_e / 2)
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 9))
        a = rng.dirichlet(np.ones(4))[:3]       # P_e + P_l + P_g <= 1
        p = migration_probabilities(int(rng.integers(n)), tuple(range(n)), int(rng.integers(n)),
                                    int(rng.integers(n)), *a)
        assert np.all(p >= -1e-15) and p.sum() == pytest.approx(1.0)
    # P_e = 0.5 alone: a particle leaves its group with probability 0.5 (the thesis's reading)
    assert 1 - migration_probabilities(0, (0, 1, 2, 3), None, None, 0.5, 0, 0)[0] == pytest.approx(0.5)


def toy_optimizer(iterations: int, seed: int) -> tuple[MMPSO, object]:
    problem = get_problem("mmpso_toy")
    params = tuple(replace(p, init_low=0.0, init_high=0.25) for p in problem.parameters)
    space = Space(params, problem.pools)
    migration = Migration(constant(0.01), constant(0.05), constant(0.05))
    return MMPSO(space, PSOSettings(40, iterations), migration, seed), problem


@pytest.mark.slow
def test_mmpso_toy_finds_both_maxima_and_the_stationary_occupancy():
    optimizer, problem = toy_optimizer(2000, seed=11)
    occupancy, conditions = [], []
    burn_in = 300

    def record(opt, candidates, records):
        if opt.iteration > burn_in:
            occupancy.append(int(np.sum(opt.sub == 0)))
            conditions.append(bool(np.all(opt.best_sub == 1) and opt.gbest_sub == 1))

    run(optimizer, problem, each=record)
    # both maxima: x = 1 in {(x)}, (0.5, 0.5) in {(x, y)} (keys are negated: maximized)
    assert -optimizer.sbest_key[0, 2] == pytest.approx(1.0, abs=1e-3)
    assert optimizer.sbest_x[0, 0] == pytest.approx(1.0, abs=1e-3)
    assert -optimizer.sbest_key[1, 2] == pytest.approx(2.0, abs=1e-3)
    np.testing.assert_allclose(optimizer.sbest_x[1], [0.5, 0.5], atol=1e-3)
    # The stationary distribution (eq. 3.8, derived): once every particle's best and the
    # global best lie in {(x, y)} (f >= 1 there, f <= 1 in {(x)}), each particle is an
    # independent two-state Markov chain with, from eq. 3.6 (N = 2),
    #   a = P(s1 -> s2) = 1 - (1 - P_e)(1 - P_l)(1 - P_g),   b = P(s2 -> s1) = P_e.
    assert all(conditions)
    p_e, p_l, p_g = 0.01, 0.05, 0.05
    a, b = 1 - (1 - p_e) * (1 - p_l) * (1 - p_g), p_e
    pi1 = b / (a + b)
    expected = 40 * pi1                                   # 3.43 (the thesis rounds a to 0.1: 3.6)
    # standard error of the time average: 40 independent chains, each with variance
    # pi1 (1 - pi1) and integrated autocorrelation (1 + lam) / (1 - lam), lam = 1 - a - b
    lam = 1 - a - b
    sem = math.sqrt(40 * pi1 * (1 - pi1) * (1 + lam) / (1 - lam) / len(occupancy))
    assert abs(np.mean(occupancy) - expected) < 4 * sem, (np.mean(occupancy), expected, sem)
    # and the expected counts are indeed distinguishable from a uniform split
    assert 4 * sem < 1.0


def test_lexicographic_six_hump_satisfies_stages_in_order():
    problem = get_problem("lexicographic_six_hump")
    history = []

    def record(opt, candidates, records):
        for c, r in zip(candidates, records):
            fx, fy, fxy = six_hump_parts(c.params["x"], c.params["y"])
            f = fx + fy + fxy
            # stage recomputed independently from Table 3.2
            expected_stage = 0 if not fx <= 0.5 else (1 if not fy <= -0.9 else 2)
            assert r.stage == expected_stage
            assert r.stage_value == pytest.approx((fx, fy, f)[expected_stage])
        history.append((opt.iteration, int(-opt.gbest_key[1]), float(opt.gbest_key[2]),
                        float(np.median([r.stage for r in records]))))

    optimizer = MMPSO(single_group_space(problem.parameters), PSOSettings(30, 150), Migration(), seed=3)
    first = optimizer.ask()
    seen_stage0 = [c for c in first if not six_hump_parts(c.params["x"], c.params["y"])[0] <= 0.5]
    assert seen_stage0, "the random start must include particles still in stage 0"
    run(optimizer, problem, each=record)
    stages = [h[1] for h in history]
    assert stages == sorted(stages)                       # the best's stage never goes back
    assert stages[-1] == 2
    medians = [h[3] for h in history]
    assert medians[0] < 2 and medians[-1] == 2            # the swarm moves through the stages
    first_at = {s: next(h[0] for h in history if h[1] >= s) for s in (1, 2)}
    assert first_at[1] <= first_at[2]
    assert history[-1][2] == pytest.approx(-1.0316, abs=1e-4)


def test_lexicographic_ranking_of_failures_and_sense():
    objectives = (Objective("a", until=1.0), Objective("b", sense="maximize"))
    assert lexicographic({"a": 2.0, "b": 5.0}, objectives) == (0, 2.0)
    assert lexicographic({"a": 0.5, "b": 5.0}, objectives) == (1, -5.0)
    with pytest.raises(KeyError):
        lexicographic({"b": 1.0}, objectives)


def test_pso_step_reflects_and_clamps():
    settings = PSOSettings()
    rng = np.random.default_rng(0)
    low, high = np.array([0.0]), np.array([1.0])
    x = np.array([[0.95]])
    v = np.array([[0.5]])
    p = g = np.array([[1.0]])
    x1, v1 = pso_step(x, v, p, g[0], low, high, settings, np.random.default_rng(0))
    r1, r2 = rng.random((1, 1)), rng.random((1, 1))
    raw = 0.729 * (0.5 + 2.05 * r1 * 0.05 + 2.05 * r2 * 0.05)
    assert v1[0, 0] == pytest.approx(-min(raw[0, 0], 0.6))             # reflected velocity
    assert x1[0, 0] == pytest.approx(2 * 1.0 - (0.95 + min(raw[0, 0], 0.6)))
    big = pso_step(np.array([[0.5]]), np.array([[10.0]]), np.array([[0.5]]), np.array([0.5]),
                   low, high, settings, np.random.default_rng(1))
    assert abs(big[1][0, 0]) <= 0.6 + 1e-12                             # clamp 0.6 of the range


def overlapping_space(**kwargs) -> Space:
    params = tuple(Parameter(f"p{k}", 0.0, 1.0) for k in range(1, 8))
    pools = (Pool("A", (Group("a1", ("p1",)), Group("a2", ("p2", "p3")))),
             Pool("B", (Group("b1", ("p4", "p5")), Group("b2", ("p5", "p6")), Group("b3", ("p6", "p7")))))
    return Space(params, pools, **kwargs)


def sphere_records(candidates):
    return evaluate_batch("sphere", candidates, None, (Objective("f"),))


def test_space_ids_exclusion_and_migration_respect_validity():
    space = overlapping_space(exclude=(("A.a1", "B.b3"),))
    # Fig. 3.3-like: 2 x 3 = 6 combinations, one excluded; ids are mixed-radix + 1
    assert space.n_subspaces == 5
    assert list(space.subspace_ids) == [1, 2, 4, 5, 6]
    migration = Migration(constant(0.3), constant(0.3), constant(0.3))
    optimizer = MMPSO(space, PSOSettings(12, 40), migration, seed=5)
    visited = set()
    while not optimizer.done:
        candidates = optimizer.ask()
        for c in candidates:
            assert c.subspace_id != 3 and set(c.groups) != {"a1", "b3"}
            visited.add(c.subspace_id)
        optimizer.tell(sphere_records(candidates))
    assert visited == {1, 2, 4, 5, 6}            # heavy migration reaches every valid subspace


def test_entering_a_group_keeps_shared_parameters():
    space = overlapping_space()
    optimizer = MMPSO(space, PSOSettings(4, 2), Migration(), seed=1)
    optimizer.tell(sphere_records(optimizer.ask()))
    i = 0
    optimizer.sub[i] = space.subspace_index((0, 0))          # {(p1), (p4, p5)}
    kept = optimizer.x[i].copy()
    optimizer._enter(i, space.subspace_index((0, 1)))        # -> {(p1), (p5, p6)}
    d = space.index
    assert optimizer.x[i, d["p5"]] == kept[d["p5"]] and optimizer.x[i, d["p1"]] == kept[d["p1"]]
    assert optimizer.x[i, d["p6"]] != kept[d["p6"]]          # newly active: re-drawn


def test_freeze_pool_and_parameter():
    space = overlapping_space(frozen_pools={"B": "b2"}, frozen_parameters={"p5": 0.25})
    assert space.n_subspaces == 2 and set(space.subspace_ids) == {2, 5}
    optimizer = MMPSO(space, PSOSettings(10, 30), Migration(constant(0.4), constant(0.3), constant(0.3)),
                      seed=2)
    while not optimizer.done:
        candidates = optimizer.ask()
        for c in candidates:
            assert c.groups[1] == "b2" and c.params["p5"] == 0.25
        optimizer.tell(sphere_records(candidates))
    assert not space.active[:, space.index["p5"]].any()       # never moved by PSO


def test_state_round_trip_is_bit_exact():
    space = overlapping_space()
    migration = thesis_migration(30)
    reference = MMPSO(space, PSOSettings(9, 30), migration, seed=4)
    resumed = MMPSO(space, PSOSettings(9, 30), migration, seed=4)
    for _ in range(12):
        resumed.tell(sphere_records(resumed.ask()))
    from codesign.run.state_archive import state_from_bytes, state_to_bytes
    state = state_from_bytes(state_to_bytes(resumed.state()))
    resumed = MMPSO.from_state(space, PSOSettings(9, 30), migration, state)
    while not resumed.done:
        resumed.tell(sphere_records(resumed.ask()))
    while not reference.done:
        reference.tell(sphere_records(reference.ask()))
    for name, value in reference.state().items():
        np.testing.assert_array_equal(resumed.state()[name], value, err_msg=name)


def test_schedules_have_the_thesis_shapes():
    m = thesis_migration(800)
    p = np.array([m.at(t) for t in range(800)])
    assert p[0, 0] == pytest.approx(0.05, abs=1e-3) and p[-1, 0] < 1e-3        # P_e falls
    assert np.argmax(p[:, 1]) == pytest.approx(360, abs=2) and p[0, 1] < 0.01   # P_l bump
    assert p[400, 2] < 0.01 and p[-1, 2] > 0.09                                # P_g late
    assert np.all(np.diff(p[:, 0]) <= 0) and np.all(np.diff(p[:, 2]) >= 0)
    assert Schedule("sigmoid", start=0.0, end=1.0, center=10, width=2).value(10) == pytest.approx(0.5)
