"""Stick figures of engine models (gait snapshots) against closed-form geometry."""

from __future__ import annotations

import numpy as np

from codesign.dynamics.examples import four_bar, four_bar_q0
from codesign.report.designs import _stick_segments


def test_four_bar_stick_figure_closes_on_the_ground_pin():
    crank, coupler, rocker, ground = 0.2, 0.5, 0.3, 0.5
    angle = np.pi / 3
    q = four_bar_q0(ground, crank, coupler, rocker, crank_angle=angle)
    segments = [seg for seg, wr in _stick_segments(four_bar(ground, crank, coupler, rocker), q)]
    # closed-form joints: crank pivot, crank tip p1, coupler tip p2 (from the rocker length)
    p0, p1, pin = np.zeros(2), crank * np.array([np.cos(angle), np.sin(angle)]), np.array([ground, 0.0])
    links = {frozenset(map(tuple, np.round(s, 9))) for s in segments}
    assert len(links) == 3                       # rods through the CoMs coincide with the links
    p2 = next(np.array(e) for link in links for e in link
              if not np.allclose(e, p0) and not np.allclose(e, p1) and not np.allclose(e, pin))
    assert links == {frozenset({tuple(np.round(a, 9)), tuple(np.round(b, 9))})
                     for a, b in ((p0, p1), (p1, p2), (p2, pin))}
    assert np.isclose(np.linalg.norm(p2 - p1), coupler) and np.isclose(np.linalg.norm(pin - p2), rocker)
