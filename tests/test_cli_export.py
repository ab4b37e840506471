"""`codesign export` and `codesign crosscheck` as real processes: bad input is one line,
exit 2, nothing written; the human alone exports and MuJoCo loads it."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from runtools import codesign, listing, one_line

REPO = Path(__file__).resolve().parents[1]
HUMAN = REPO / "docs/designs/human-thesis-walking.json"


ERROR = "codesign export: error: "


@pytest.mark.parametrize("args, pattern", [
    (["{design}", "--mjcf", "{tmp}/out.txt"], ERROR + r"--mjcf .*out\.txt: not a \.xml file; expected .*"),
    (["{design}", "--mjcf", "{tmp}/missing/out.xml"], ERROR + r"--mjcf .*out\.xml: cannot write there .*"),
    (["{tmp}/nope.json", "--mjcf", "{tmp}/out.xml"], ERROR + r".*nope\.json.*"),
    (["{tmp}/broken.json", "--mjcf", "{tmp}/out.xml"], ERROR + r".*broken\.json.*"),
    (["{design}", "--human", "--mjcf", "{tmp}/out.xml"], ERROR + r"design: give a design JSON file, --human or --run .*"),
    (["{design}", "--mjcf", "{tmp}/out.xml", "--png", "{tmp}/still.jpg"], ERROR + r"--png .*still\.jpg: not a \.png .*"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, args, pattern):
    (tmp_path / "broken.json").write_text("{not json")
    before = listing(tmp_path)
    filled = [a.format(design=HUMAN, tmp=tmp_path) for a in args]
    one_line(codesign("export", *filled, cwd=REPO), 2, pattern)
    assert listing(tmp_path) == before


def test_a_folder_as_mjcf_is_refused(tmp_path):
    before = listing(tmp_path)
    one_line(codesign("export", HUMAN, "--mjcf", tmp_path, cwd=REPO), 2, ERROR + r"--mjcf .*: is a folder; expected .*")
    assert listing(tmp_path) == before


def test_crosscheck_bad_seconds_or_step_is_one_line_exit_2():
    error = "codesign crosscheck: error: "
    one_line(codesign("crosscheck", HUMAN, "--seconds", "-1", cwd=REPO), 2, error + r"--max-time: -1.0; expected .*")
    one_line(codesign("crosscheck", HUMAN, "--step-ms", "0", cwd=REPO), 2, error + r"--step-ms: 0; expected .*")


def test_human_alone_exports_and_mujoco_loads_it(tmp_path):
    out = tmp_path / "human.xml"
    done = codesign("export", "--human", "--mjcf", out, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"wrote {out}" in done.stdout and "python -m mujoco.viewer" in done.stdout
    mj = mujoco.MjModel.from_xml_path(str(out))
    assert (mj.nq, mj.neq, mj.nkey) == (11, 0, 1)
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    mujoco.mj_forward(mj, data)
    assert data.qpos[1] > 0.8        # the hip at its walking height


def test_crosscheck_json_reports_both_walks_with_their_fields(tmp_path):
    """A short crosscheck of the human (0.3 s) as JSON: both simulators' records and the
    correlation; the engine's walk is the evaluation's."""
    done = codesign("crosscheck", HUMAN, "--seconds", "0.3", "--json", cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["seconds"] == 0.3
    for side in ("engine", "mujoco"):
        assert set(doc[side]) == {"status", "walked_s", "speed", "grf_peak_bw", "cuff_force_peak", "power", "wall_s"}
    assert doc["engine"]["walked_s"] == pytest.approx(0.3)
    assert len(doc["correlation"]) == 3 and all(r > 0.9 for r in doc["correlation"])


@pytest.mark.slow
def test_the_assisting_design_walks_in_mujoco_as_in_the_engine():
    """README (issue 32): docs/designs/assist-t02.json -- an active wearer, its law and the
    device's assistance profile -- walks the 10 s in MuJoCo too, at the engine's speed
    (1.260 m/s both, within 1 %), its 30-ms ground reaction within 5 %, the same joint
    motion (r >= 0.99); MuJoCo's soft loop equalities make its cuff peaks larger (table)."""
    done = codesign("crosscheck", REPO / "docs/designs/assist-t02.json", "--json", cwd=REPO, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    engine, other = doc["engine"], doc["mujoco"]
    assert engine["walked_s"] == pytest.approx(10.0) and other["walked_s"] == pytest.approx(10.0)
    assert other["speed"] == pytest.approx(engine["speed"], rel=0.01)
    assert other["grf_peak_bw"] == pytest.approx(engine["grf_peak_bw"], rel=0.05)
    assert min(doc["correlation"]) >= 0.99


def test_png_without_opengl_is_one_line_exit_2_and_nothing_written(tmp_path):
    """MUJOCO_GL=glfw without a display: MuJoCo has no OpenGL context; neither file is written."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"} | {"MUJOCO_GL": "glfw"}
    done = subprocess.run([sys.executable, "-m", "codesign.cli", "export", str(HUMAN), "--mjcf",
                           str(tmp_path / "h.xml"), "--png", str(tmp_path / "h.png")],
                          capture_output=True, text=True, timeout=180, cwd=REPO, env=env)
    one_line(done, 2, r"codesign export: error: --png .*h\.png: MuJoCo cannot render here .*")
    assert listing(tmp_path) == {}


def test_png_still_of_the_keyframe(tmp_path):
    """Headless (EGL asked for): a 640 x 480 still that is not blank."""
    import os
    import subprocess
    import sys

    from PIL import Image

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MUJOCO_GL")}
    done = subprocess.run([sys.executable, "-m", "codesign.cli", "export", str(HUMAN), "--mjcf",
                           str(tmp_path / "h.xml"), "--png", str(tmp_path / "h.png")],
                          capture_output=True, text=True, timeout=180, cwd=REPO, env=env)
    if done.returncode == 2 and "cannot render" in done.stderr:
        pytest.skip("no headless OpenGL (EGL) on this machine")
    assert done.returncode == 0, done.stderr[-2000:]
    image = Image.open(tmp_path / "h.png")
    assert image.size == (640, 480)
    pixels = {tuple(p) for p in np.asarray(image.convert("RGB")).reshape(-1, 3)}
    assert len(pixels) > 20          # the figure, the floor and the sky, shaded
