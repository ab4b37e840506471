"""`codesign check SPEC` (issue 42): a spec judged by the optimizer's own checks, in a real
process, without running anything -- a good spec is one line saying what its run would be;
a bad one is one line naming the key and, for an unknown key, option or name, the nearest
valid one; exit 2; nothing written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.runtools import codesign, listing, one_line

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "designs" / "human-gentle-walking.json"


def spec(tmp_path: Path, body: str, problem: str = "human_gait") -> Path:
    path = tmp_path / "s.toml"
    path.write_text(f'name = "s"\n[problem]\nname = "{problem}"\n[optimizer]\nparticles = 3\niterations = 2\n'
                    f'[execution]\nmode = "serial"\n{body}')
    return path


def test_a_good_spec_is_one_line_and_runs_nothing(tmp_path):
    path = spec(tmp_path, f'[space]\nstart_design = "{DESIGN}"\n[evaluation]\nmax_time = 2.5\n')
    from codesign.problems import get_problem

    before = listing(tmp_path)
    done = codesign("check", path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    stages = len(get_problem("human_gait").objectives)      # the spec names none: the problem's
    assert done.stdout.splitlines() == [f"{path}: ok -- problem human_gait, 1 subspace, 3 particles x 2 iterations "
                                        f"(mmpso), 2.5 s per evaluation, {stages} objectives; run it with: codesign "
                                        f"optimize {path}"]
    assert listing(tmp_path) == before                  # no run folder, no results/
    # a product example checks too (the ones the Makefile and README name)
    done = codesign("check", ROOT / "studies" / "wearer-space" / "human-gentle.toml", cwd=ROOT)   # its paths: from the root
    assert done.returncode == 0 and done.stdout.startswith(f"{ROOT / 'studies' / 'wearer-space' / 'human-gentle.toml'}: ok -- ")


@pytest.mark.parametrize("problem, body, message", [
    # an unknown key of a table of the spec, of the [evaluation] settings, and a problem's name
    ("human_gait", "[optimizer.migration]\nexplortion = {}\n",
     r"optimizer\.migration\.explortion: unknown key \(did you mean exploration\?\); expected one of .*"),
    ("human_gait", "[evaluation]\nmax_tme = 3.0\n",
     r"evaluation\.max_tme: unknown key \(did you mean max_time\?\); expected one of .*, max_time, .*"),
    ("exo_codesign_waerer", "",
     r"problem\.name: 'exo_codesign_waerer' is not a registered problem \(did you mean exo_codesign_wearer\?\); "
     r"expected one of .*"),
    ("exo_codesign", '[evaluation]\nactuators = { motor = "AK80-9-v3", stage_ratio = 1.0 }\n',
     r"evaluation\.actuators\.motor: got 'AK80-9-v3', an unknown motor \(did you mean AK80-9-V3\?\); expected .*"),
    # nothing near: no guess, the valid names alone
    ("human_gait", "[evaluation]\nzzzz = 1\n", r"evaluation\.zzzz: unknown key; expected one of .*"),
    # a file the spec names, and a value
    ("human_gait", '[space]\nstart_design = "nowhere.json"\n', r"space\.start_design: .*nowhere\.json.*"),
    ("human_gait", "[evaluation]\nmax_time = -1\n", r"evaluation\.max_time: got -1; expected a duration > 0 s"),
])
def test_a_bad_spec_is_one_line_naming_the_nearest_valid_name(tmp_path, problem, body, message):
    path = spec(tmp_path, body, problem)
    before = listing(tmp_path)
    one_line(codesign("check", path, cwd=tmp_path), 2, rf"codesign check: error: {re.escape(str(path))}: {message}")
    assert listing(tmp_path) == before
