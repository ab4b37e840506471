"""What `make run` ends on: the README's sentence is the one docs/make-run.json gives, and
`codesign designs make-run RUN` rewrites both from a finished run's best.

Truths: the committed README and record; for the command, a real one-iteration run whose
best the store's ranking and `codesign simulate --run RUN --best` (a separate process)
report independently of the record's code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codesign.errors import UserError
from codesign.report.make_run import (MARKER_BEGIN, MARKER_END, make_run_sentence, parse_make_run,
                                      readme_sentence, write_make_run)

ROOT = Path(__file__).resolve().parents[2]
TINY_DEMO = """name = "tinydemo"
seed = 3
[problem]
name = "human_gait"
[optimizer]
algorithm = "pso"
particles = 2
iterations = 1
[evaluation]
max_time = 0.4
"""


def codesign(*args, cwd):
    return subprocess.run([sys.executable, "-m", "codesign.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=600, cwd=cwd)


def test_the_readme_says_what_the_stored_record_says():
    record = parse_make_run(ROOT / "docs" / "make-run.json")
    readme = (ROOT / "README.md").read_text()
    assert readme_sentence(readme, "README.md") == make_run_sentence(record)
    assert record.evaluation in readme and record.verdict in readme


def test_a_readme_without_its_markers_is_refused_and_nothing_is_written(tmp_path):
    record = parse_make_run(ROOT / "docs" / "make-run.json")
    readme = tmp_path / "README.md"
    readme.write_text("# a README\n\nno markers here\n")
    target = tmp_path / "make-run.json"
    with pytest.raises(UserError, match="no make-run markers"):
        write_make_run(record, target, readme)
    assert not target.exists() and readme.read_text() == "# a README\n\nno markers here\n"


def test_a_record_with_a_missing_field_is_one_line(tmp_path):
    doc = json.loads((ROOT / "docs" / "make-run.json").read_text())
    del doc["machine"]
    path = tmp_path / "make-run.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=r"make-run\.json: keys .*; expected exactly evaluation, stage, verdict"):
        parse_make_run(path)


@pytest.mark.slow
def test_the_command_records_a_finished_runs_best_and_rewrites_the_sentence(tmp_path):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "README.md").write_text(f"# x\n\n{MARKER_BEGIN}\nold sentence\n{MARKER_END}\n\nrest\n")
    spec = tmp_path / "tinydemo.toml"
    spec.write_text(TINY_DEMO)
    done = codesign("optimize", spec, "--workers", 0, "--quiet", "--results", repo / "results", cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    run = repo / "results" / "tinydemo"
    done = codesign("designs", "make-run", run, "--date", "2026-01-02", "--machine", "a test box", cwd=repo)
    assert done.returncode == 0, done.stderr[-2000:]
    record = parse_make_run(repo / "docs" / "make-run.json")
    simulated = codesign("simulate", "--run", run, "--best", "--no-animation", "--out", tmp_path / "sim", cwd=repo)
    assert simulated.returncode == 0, simulated.stderr[-2000:]
    said = simulated.stdout + simulated.stderr          # simulate says which evaluation it replays on stderr
    replaying = re.search(r"replaying \S+ evaluation (\d+:\d+) \(stored: (stage \d+ of \d+)", said)
    assert replaying, said
    assert (record.evaluation, record.stage) == replaying.groups()
    assert record.verdict in simulated.stdout
    assert (record.date, record.machine, record.run) == ("2026-01-02", "a test box", str(run))
    text = (repo / "README.md").read_text()
    assert text == f"# x\n\n{MARKER_BEGIN}\n{make_run_sentence(record)}\n{MARKER_END}\n\nrest\n"
