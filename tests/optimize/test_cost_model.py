"""The cost predictor against analytic truths: on a two-mode Markov chain of evaluation
costs (screened out or simulated) it learns the conditional means E[next | previous],
follows a change of the chain within its window, and on the thesis-scale run's recorded
costs it predicts better, in least squares, than the previous cost itself."""

from __future__ import annotations

import numpy as np
import pytest

from codesign.bench.scaling import PROFILES
from codesign.problems.replay import read_profile
from codesign.run.cost_model import MIN_SAMPLES, WINDOW, CostPredictor, octave, predicted_table

SCREENED, SIMULATED = 0.002, 0.05      # s: the two modes


def markov_costs(rng, n: int, to_simulated: float, to_screened: float, start: float = SCREENED) -> list[float]:
    """n + 1 costs of one particle switching screened -> simulated with probability
    ``to_simulated`` and simulated -> screened with ``to_screened``."""
    costs = [start]
    for _ in range(n):
        p_switch = to_simulated if costs[-1] == SCREENED else to_screened
        switch = rng.random() < p_switch
        costs.append((SIMULATED if costs[-1] == SCREENED else SCREENED) if switch else costs[-1])
    return costs


def train(predictor: CostPredictor, costs: list[float]) -> None:
    for previous, cost in zip(costs, costs[1:]):
        predictor.observe(previous, cost)


def test_octaves_of_the_previous_cost():
    assert [octave(c) for c in (0.0, 0.0015, 0.002, 0.0039, 0.004, 0.05, 4.2, 100.0)] == [0, 0, 1, 1, 2, 5, 12, 12]


def test_it_learns_the_conditional_means_of_a_two_mode_chain():
    predictor = CostPredictor()
    train(predictor, markov_costs(np.random.default_rng(5), 40_000, to_simulated=0.15, to_screened=0.19))
    # E[next | screened] = 0.85 x 2 ms + 0.15 x 50 ms = 9.2 ms; E[next | simulated] = 40.9 ms.
    # The weighted mean spans ~2 WINDOW transitions: standard errors ~7 % and ~2 %
    assert predictor.predict(SCREENED) == pytest.approx(0.85 * SCREENED + 0.15 * SIMULATED, rel=0.2)
    assert predictor.predict(SIMULATED) == pytest.approx(0.19 * SCREENED + 0.81 * SIMULATED, rel=0.06)
    assert predictor.predict(0.3) == 0.3                  # an octave never seen: the previous cost


def test_too_few_transitions_predict_the_previous_cost():
    predictor = CostPredictor()
    for _ in range(MIN_SAMPLES - 1):
        predictor.observe(SCREENED, SIMULATED)
    assert predictor.predict(SCREENED) == SCREENED
    predictor.observe(SCREENED, SIMULATED)
    assert predictor.predict(SCREENED) == pytest.approx(SIMULATED)


def test_it_follows_a_change_of_the_chain_within_its_window():
    """Early in a run most designs are screened out, late most are simulated: after a
    change, a few windows of transitions from screened-out designs bring the prediction to
    the new conditional mean. (A plain mean over all transitions would stay near the old
    one: ~18 000 of them against ~2 300 after the change.)"""
    rng = np.random.default_rng(6)
    predictor = CostPredictor()
    train(predictor, markov_costs(rng, 20_000, to_simulated=0.05, to_screened=0.5))
    assert predictor.predict(SCREENED) == pytest.approx(0.95 * SCREENED + 0.05 * SIMULATED, rel=0.25)
    # 14 % of the new chain's transitions start screened out: ~5.6 windows of them
    train(predictor, markov_costs(rng, 40 * WINDOW, to_simulated=0.6, to_screened=0.1))
    assert predictor.predict(SCREENED) == pytest.approx(0.4 * SCREENED + 0.6 * SIMULATED, rel=0.1)


def test_on_the_thesis_scale_run_it_predicts_better_than_the_previous_cost():
    """The bundled profile: every evaluation cost of `pipelines/codesign.toml` (800 x 200).
    Root mean square error of the next cost: 18.3 ms for the predictor, 22.1 ms for the
    previous cost (the evaluations are bimodal: screened out or simulated)."""
    costs = read_profile(PROFILES / "codesign.json.gz").costs
    predicted = predicted_table(costs)
    assert predicted.shape == costs.shape and np.isnan(predicted[0]).all()
    rms_predictor = np.sqrt(np.mean((predicted[1:] - costs[1:]) ** 2))
    rms_previous = np.sqrt(np.mean((costs[:-1] - costs[1:]) ** 2))
    assert rms_predictor < 0.9 * rms_previous
    # screened-out particles: the previous cost (2.2 ms) says a third of what comes next
    screened = costs[:-1] < 0.006
    assert costs[1:][screened].mean() > 3 * costs[:-1][screened].mean()
    assert predicted[1:][screened].mean() == pytest.approx(costs[1:][screened].mean(), rel=0.15)
