"""`codesign fit-gait` (issue 31): a human-gait design whose references are Winter's gait
fitted, as a real process. Truth: Winter's angles (human/, the published table the
nominal gait interpolates) against the written design's reference signals; the
impedances unchanged; bad input one line, exit 2, nothing written."""

import math
from pathlib import Path

import numpy as np

from codesign.control.bounds import human_reference_angle
from codesign.model.gait import GAIT_JOINTS, nominal_gait
from codesign.walking import load_design
from codesign.walking.setup import human_control_layout
from codesign.walking import WalkSettings
from tests.runtools import codesign, one_line

ROOT = Path(__file__).resolve().parents[2]
HUMAN = ROOT / "docs/designs/human-thesis-walking.json"


def test_the_written_references_follow_winter_and_the_impedances_stay(tmp_path):
    out = tmp_path / "start.json"
    done = codesign("fit-gait", HUMAN, "--out", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("reference fit RMS") == 3
    fitted, original = load_design(out), load_design(HUMAN)
    law = human_control_layout(WalkSettings()).decode(fitted.params)
    phases = np.arange(100) / 100
    winter = nominal_gait().angles(phases)
    for j, (joint, limit_deg) in enumerate(zip(GAIT_JOINTS, (1.0, 1.0, 2.0))):
        error = law.active[j].reference(phases) - winter[:, j]
        assert math.degrees(np.sqrt(np.mean(error ** 2))) < limit_deg, joint
        low, high = human_reference_angle(joint)
        assert all(low <= fitted.params[f"{joint}.ref.y{i}"] <= high for i in range(4))
    kept = {k: v for k, v in original.params.items() if ".ref." not in k}
    assert {k: fitted.params[k] for k in kept} == kept
    assert set(fitted.params) == set(original.params)


def test_a_co_design_is_refused_in_one_line_and_nothing_is_written(tmp_path):
    out = tmp_path / "start.json"
    done = codesign("fit-gait", ROOT / "docs/designs/codesign-walking.json", "--out", out)
    one_line(done, 2, r".*a co-design \(topology 1\); expected a human-gait design.*")
    assert not out.exists()
