"""The pipelined MMPSO ([optimizer] pipeline = true): whatever order evaluations finish
in, the same iterations are completed with the same states; particle i's move to k+1
reads only its own evaluations and the swarm's through k-1; at most two iterations are
in flight; a state stored after iteration k continues to the same run; the driver
stores what the optimizer completes, whole iterations in order."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from codesign.objectives import Objective, better, fitness_key
from codesign.optimize.pipeline import PipelinedMMPSO
from codesign.optimize.pso import PSOSettings
from codesign.optimize.schedule import Migration, constant
from codesign.optimize.space import single_group_space
from codesign.problems import get_problem
from codesign.run import driver
from codesign.run.executors import SerialExecutor, SerialStream
from codesign.run.spec import build_space, parse_spec

TOY = """
seed = 9
[problem]
name = "mmpso_toy"
[optimizer]
particles = 9
iterations = 7
pipeline = true
[optimizer.migration]
exploration = 0.3
local = 0.2
global = 0.2
"""

TOY_SPEC = parse_spec(TOY, source="toy")
TOY_EXECUTOR = SerialExecutor("mmpso_toy", None, get_problem("mmpso_toy").objectives)


def toy_optimizer() -> PipelinedMMPSO:
    space = build_space(TOY_SPEC, get_problem("mmpso_toy"))
    return PipelinedMMPSO(space, TOY_SPEC.pso, TOY_SPEC.migration, TOY_SPEC.seed)


def run_in_order(optimizer: PipelinedMMPSO, order_seed: int | None, evaluate=None, log=None):
    """Evaluate whatever is ready, picking the next to finish at random (``order_seed``)
    or first in first out (None); the completed iterations."""
    evaluate = evaluate or (lambda c: TOY_EXECUTOR.evaluate([c])[0])
    rng = random.Random(order_seed)
    pool, completed = list(optimizer.ready()), []
    while not optimizer.done:
        if log is not None:
            log.append(sorted({c.iteration for c in pool}))
        candidate = pool.pop(rng.randrange(len(pool)) if order_seed is not None else 0)
        completed += optimizer.tell_one(candidate, evaluate(candidate))
        pool += optimizer.ready()
    return completed


def assert_same_completions(a, b):
    assert [c.iteration for c in a] == [c.iteration for c in b] == list(range(a[0].iteration, 7))
    for x, y in zip(a, b):
        assert x.best == y.best and x.candidates == y.candidates
        assert [r.metrics for r in x.records] == [r.metrics for r in y.records]
        assert x.state.keys() == y.state.keys()
        assert all(np.array_equal(x.state[k], y.state[k]) for k in x.state), x.iteration


def test_the_finishing_order_changes_nothing_and_at_most_two_iterations_are_in_flight():
    log: list = []
    reference = run_in_order(toy_optimizer(), None)
    for order_seed in range(4):
        assert_same_completions(reference, run_in_order(toy_optimizer(), order_seed, log=log))
    assert all(len(in_flight) <= 2 and in_flight[-1] - in_flight[0] <= 1 for in_flight in log if in_flight)
    assert any(len(in_flight) == 2 for in_flight in log)       # the pipeline does overlap iterations
    assert {c.subspace_id for done in reference for c in done.candidates} == {1, 2}   # migration ran


def test_the_stored_best_is_the_best_evaluation_so_far_computed_from_the_records():
    completed = run_in_order(toy_optimizer(), 3)
    keys = []
    for done in completed:
        keys += [(fitness_key(r), c.subspace_id) for c, r in zip(done.candidates, done.records)]
        best = keys[0]
        for key in keys[1:]:                        # the first of equal keys stays
            best = key if better(key[0], best[0]) else best
        assert done.best == (tuple(best[0]), best[1])


def test_a_move_reads_its_own_evaluations_and_the_swarms_through_the_iteration_before():
    """Change one evaluation (j, k): particle j's candidates from k+1 on change, every
    other particle's candidate at k+1 does not (it sees (j, k) only through S_k, from
    k+2 on)."""
    space = single_group_space(get_problem("sphere").parameters)
    sphere = SerialExecutor("sphere", None, (Objective("f"),))

    def run(changed=None):
        optimizer = PipelinedMMPSO(space, PSOSettings(6, 5, pipeline=True), Migration(), seed=2)

        def evaluate(c):
            record = sphere.evaluate([c])[0]
            if (c.iteration, c.particle) == changed:
                record = replace(record, stage_value=-1.0)           # the best by far
            return record
        completed = run_in_order(optimizer, 5, evaluate)
        return {(c.iteration, c.particle): c.params for done in completed for c in done.candidates}

    base, changed = run(), run(changed=(1, 4))
    differs = {key for key in base if base[key] != changed[key]}
    assert (2, 4) in differs and (3, 4) in differs                    # its own next moves
    assert not {key for key in differs if key[0] <= 2 and key[1] != 4}   # nobody else's at k+1
    assert {key for key in differs if key[0] == 3} > {(3, 4)}         # the others' at k+2 (S_k)


def test_a_stored_state_continues_to_the_same_run():
    reference = run_in_order(toy_optimizer(), None)
    space = build_space(TOY_SPEC, get_problem("mmpso_toy"))
    for stop in (0, 3):
        resumed = PipelinedMMPSO.from_state(space, TOY_SPEC.pso, TOY_SPEC.migration, reference[stop].state)
        assert resumed.iteration == stop + 1
        assert_same_completions(reference[stop + 1:], run_in_order(resumed, 7))


class ShuffledStream(SerialStream):
    """Evaluates one of the added candidates, chosen at random, per ``next``."""

    def __init__(self, executor, seed):
        super().__init__(executor)
        self.rng = random.Random(seed)

    def next(self):
        self.queue.rotate(-self.rng.randrange(len(self.queue)))
        return super().next()


class ShuffledExecutor(SerialExecutor):
    def __init__(self, seed):
        super().__init__("mmpso_toy", None, get_problem("mmpso_toy").objectives)
        self.seed = seed

    def stream(self):
        return ShuffledStream(self, self.seed)


class MemoryStore:
    def __init__(self):
        self.path, self.written, self.status = Path("x/run.sqlite"), [], None

    def write_iteration(self, run_id, iteration, candidates, records, best, state):
        self.written.append((iteration, [c.params for c in candidates], best, state))

    def set_status(self, run_id, status):
        self.status = status

    def close(self):
        pass


def test_the_driver_stores_whole_iterations_in_order_whatever_the_finishing_order():
    stores = []
    for seed in (None, 1, 2):
        store = MemoryStore()
        executor = TOY_EXECUTOR if seed is None else ShuffledExecutor(seed)
        driver._drive(store, 1, toy_optimizer(), executor, False, {})
        assert store.status == "finished" and [w[0] for w in store.written] == list(range(7))
        stores.append(store.written)
    for other in stores[1:]:
        for a, b in zip(stores[0], other):
            assert a[:3] == b[:3] and all(np.array_equal(a[3][k], b[3][k]) for k in a[3])


def test_the_pipelined_optimizer_is_driven_one_evaluation_at_a_time():
    optimizer = toy_optimizer()
    with pytest.raises(TypeError, match="ready"):
        optimizer.ask()
    first = optimizer.ready()
    assert [c.particle for c in first] == list(range(9)) and optimizer.ready() == []   # each once
    record = TOY_EXECUTOR.evaluate([first[0]])[0]
    optimizer.tell_one(first[0], record)
    with pytest.raises(ValueError, match="particle 0 at iteration 0"):
        optimizer.tell_one(first[0], record)                                  # told twice
    second = optimizer.ready()                      # (0, 1) needs its own (0, 0) and iteration -1
    assert [(c.iteration, c.particle) for c in second] == [(1, 0)]
    optimizer.tell_one(second[0], TOY_EXECUTOR.evaluate(second)[0])
    assert optimizer.ready() == [] and optimizer.iteration == 0     # (0, 2) waits for iteration 0
