"""Stick figures of engine models (gait snapshots) against closed-form geometry."""

from __future__ import annotations

import numpy as np

from codesign.dynamics.examples import four_bar, four_bar_q0
from codesign.report.designs import _stick_segments


def test_four_bar_stick_figure_closes_on_the_ground_pin():
    crank, coupler, rocker, ground = 0.2, 0.5, 0.3, 0.5
    angle = np.pi / 3
    q = four_bar_q0(ground, crank, coupler, rocker, crank_angle=angle)
    segments = _stick_segments(four_bar(ground, crank, coupler, rocker), q)
    p1 = crank * np.array([np.cos(angle), np.sin(angle)])
    ends = [tuple(np.round(s.ravel(), 9)) for s in segments]
    assert len(segments) == 3
    # crank end = coupler joint, coupler length, and the rocker's end on the ground pin
    assert np.allclose(segments[0], [[0.0, 0.0], p1])
    assert np.isclose(np.linalg.norm(segments[1][1] - segments[1][0]), coupler)
    assert np.allclose(segments[2][1], [ground, 0.0], atol=1e-9)
    assert np.isclose(np.linalg.norm(segments[2][1] - segments[2][0]), rocker)
    assert len(set(ends)) == 3
