"""The published EMG timing (codesign/model/emg_timing.py) and the share of an activation
inside it, against activations whose share is known."""

from __future__ import annotations

import numpy as np
import pytest

from codesign.model.emg_timing import PERRY, on_share
from codesign.model.muscle_table import NAMES

CYCLE = (np.arange(1000) + 0.5) / 10      # % of the gait cycle, bin centres


def test_every_muscle_group_has_its_published_timing_in_the_tables_order():
    assert tuple(e.group for e in PERRY) == NAMES
    for e in PERRY:
        assert all(0.0 <= a < b <= 100.0 for a, b in e.on), e.group


@pytest.mark.parametrize("timing", PERRY, ids=lambda e: e.group)
def test_an_activation_on_only_inside_the_intervals_has_share_one_and_a_constant_their_fraction(timing):
    inside = timing.mask(CYCLE).astype(float)
    assert on_share(timing, CYCLE, 0.3 * inside) == pytest.approx(1.0, abs=1e-12)
    assert on_share(timing, CYCLE, 0.3 * (1.0 - inside)) == 0.0
    assert on_share(timing, CYCLE, np.full(CYCLE.shape, 0.4)) == pytest.approx(timing.on_fraction(), abs=2e-3)


def test_soleus_on_from_3_to_52_percent():
    sol = PERRY[0]
    assert sol.on_fraction() == pytest.approx(0.49)
    assert list(sol.mask(np.array([2.9, 3.0, 30.0, 52.0, 52.1]))) == [False, True, True, True, False]
