"""The rollout's model and data records (MuJoCo's MjModel / MjData split): a second run of
one set-up leaves the first result as it was and replays it bit for bit; a reset data
record is a fresh one."""

import math

import numpy as np
import pytest


from codesign import walking as ev
from codesign.walking import rollout as ro
from codesign.walking import stepping
from codesign.walking.evaluation import metrics_of
from codesign.walking.setup import build_setup

pytestmark = pytest.mark.slow


def human_setup(max_time, **settings):
    settings = ev.WalkSettings.from_dict({"max_time": max_time, **settings})
    setup, early, _ = build_setup(ev.typical_human_design(settings), settings)
    assert early is None
    return setup, settings


def same_bits(a, b):
    """Equal as float64 bits (NaN included)."""
    return np.array_equal(np.asarray(a, float).view(np.int64), np.asarray(b, float).view(np.int64))


def deep_copy(record):
    """A copy of a NamedTuple of arrays, numbers and nested NamedTuples."""
    return type(record)(*(deep_copy(v) if isinstance(v, tuple) else np.copy(v) if isinstance(v, np.ndarray) else v
                          for v in record))


def same_leaf(u, v):
    """Two arrays or numbers equal: float arrays bit for bit (a NaN marker included)."""
    if isinstance(u, np.ndarray) and u.dtype.kind == "f":
        return u.dtype == v.dtype and same_bits(u, v)
    return np.array_equal(u, v)


def same_tree(a, b):
    """Two such records equal field by field (arrays bit for bit, numbers equal)."""
    return all(same_tree(u, v) if isinstance(u, tuple) else same_leaf(u, v) for u, v in zip(a, b))


def assert_same_metrics(m1, m2):
    assert m1.keys() == m2.keys()
    for key in m1:
        assert same_bits(m1[key], m2[key]), (key, m1[key], m2[key])


@pytest.mark.parametrize("contact_model, max_time", [("hard", 3.0), pytest.param("soft", 0.3, marks=pytest.mark.peers)])
def test_a_second_run_leaves_the_first_result_and_replays_it(contact_model, max_time):
    """Run one set-up twice: the first Rollout keeps its accumulator, state and records
    (the runs write the set-up's data record, the results own copies), and the second
    run, from a reset data record, gives the same numbers bit for bit (before the split
    the second run overwrote the first's accumulator and accumulated on top of it)."""
    setup, settings = human_setup(max_time, contact_model=contact_model)
    times = np.linspace(0.0, max_time, 7)
    first = ro.run(setup.x0.copy(), setup.mode0, setup.p, settings.rollout, times)
    assert first.status == "ok"
    acc, x, records = first.acc.copy(), first.x.copy(), first.records.copy()
    metrics = metrics_of(first, setup)
    assert metrics["time"] == max_time and math.isfinite(metrics["speed"])
    second = ro.run(setup.x0.copy(), setup.mode0, setup.p, settings.rollout, times)
    # the first result is untouched
    assert same_bits(first.acc, acc) and same_bits(first.x, x) and same_bits(first.records, records)
    assert_same_metrics(metrics_of(first, setup), metrics)
    assert first.acc is not setup.p.data.walk.acc
    # and the second is a replay of the first
    assert same_bits(second.acc, acc) and same_bits(second.records, records)
    assert second.n_steps == first.n_steps and second.n_events == first.n_events
    assert_same_metrics(metrics_of(second, setup), metrics)


def test_reset_data_is_a_fresh_data_record():
    """After a run, stepping.reset_data puts every array of the data record back as
    make_params made it: a field added to a workspace that a reset misses fails here."""
    setup, settings = human_setup(1.0)
    fresh = stepping.clone_data(setup.p.data)
    stepping.run(setup.x0.copy(), setup.p, settings.rollout)
    assert setup.p.data.walk.counts[0] > 0 and setup.p.data.step_work.stats.any()
    stepping.reset_data(setup.p)
    def assert_same(a, b, where):
        for name, u, v in zip(a._fields, a, b):
            if isinstance(u, tuple):          # a nested record (the drive's data)
                assert_same(u, v, f"{where}.{name}")
            else:
                assert u.dtype == v.dtype and same_leaf(u, v), (where, name)

    for part in ("work", "step_work", "walk"):
        assert_same(getattr(setup.p.data, part), getattr(fresh, part), part)


def test_copy_data_replays_a_run_from_a_saved_data_record():
    """A run continued from a saved data record (clone_data, copy_data: the contact
    solver's warm start, the feet, the accumulator) ends in the same state as the first
    continuation, bit for bit; the model record is never written."""
    setup, settings = human_setup(2.0)
    p = setup.p
    empty = stepping.no_records(setup.x0.shape[0], setup.model.n_contacts)
    model_before = deep_copy(p.model.walk._replace(ctrl=()))   # arrays and numbers (the muscles', the phase's)
    stepping.reset_data(p)
    x = setup.x0.copy()
    stepping.walk(x, 1.0, p, *empty, 0.0)
    saved = stepping.clone_data(p.data)
    ends = []
    for _ in range(2):
        stepping.copy_data(saved, p.data)
        xx = x.copy()
        code, t, _ = stepping.walk(xx, 2.0, p, *empty, 1.0)
        assert code == 0 and t == pytest.approx(2.0)
        ends.append((xx, p.data.walk.acc.copy()))
    assert same_bits(ends[0][0], ends[1][0]) and same_bits(ends[0][1], ends[1][1])
    for name, u, v in zip(model_before._fields, model_before, p.model.walk):
        if name != "ctrl":
            assert same_tree(u, v) if isinstance(u, tuple) else same_leaf(u, v), name
