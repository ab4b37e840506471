"""The human-like gait of docs/designs/human-walking.json (issue 31), replayed as
`codesign simulate` replays it (its file's evaluation settings, the human-gait problem):
the issue's bounds, which are a person's (Winter's gait per stride, a push-off, a ground
reaction near body weight over the whole walk), and the capped human's the same.

Truth: Winter's published angles (human/, the stride correlations' reference) and body
weight; the bounds are the issue's, not this design's own numbers."""

from pathlib import Path

import pytest

from codesign.problems import get_problem
from codesign.types import EvalContext
from codesign.walking import load_design

ROOT = Path(__file__).resolve().parents[2]


def _replay(name: str, **extra):
    design = load_design(ROOT / "docs/designs" / name)
    problem = get_problem("human_gait")
    settings = problem.parse_settings({**design.evaluation, **extra})
    return problem.evaluate(design.params, EvalContext(settings=settings))


@pytest.mark.parametrize("name", ["human-walking.json", "human-capped-walking.json"])
def test_the_human_like_gait_meets_a_person_s_bounds(name):
    record = _replay(name)
    m = record.metrics
    assert record.ok and m["time"] == 10.0 and m["assist_fraction"] == 0.0
    assert 1.2 <= m["speed"] <= 1.4
    assert m["stride_r_hip"] >= 0.96 and m["stride_r_knee"] >= 0.90 and m["stride_r_ankle"] >= 0.70
    assert m["ankle_plantarflexion_peak_deg"] >= 10.0
    assert m["grf_peak_bw"] <= 1.5 and m["grf_peak_bw_start"] <= 1.5      # the whole walk
    assert m["foot_slip_fraction"] <= 0.05
    assert m["knee_hyperextension_peak_deg"] <= 5.0 and m["torso_pitch_rms_deg"] <= 5.0
