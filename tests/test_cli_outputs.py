"""Issue 17: output that cannot be written and input that cannot be read are one line on
stderr and exit status 2, checked before the work, and nothing is written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codesign.run.driver import start_run
from codesign.run.spec import parse_spec

REPO = Path(__file__).resolve().parents[1]
SPHERE = """
name = "small"
[problem]
name = "sphere"
[optimizer]
algorithm = "pso"
particles = 3
iterations = 2
[execution]
mode = "serial"
"""


def codesign(*args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "codesign.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=cwd or REPO, env=env)


def one_line(done, status: int, pattern: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == status and len(lines) == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert re.fullmatch(pattern, lines[0]), lines[0]


def files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if not p.is_dir()}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    return start_run(parse_spec(SPHERE), tmp_path_factory.mktemp("runs"), progress=False).parent


def impossible_paths(tmp_path: Path) -> list[tuple[Path, str]]:
    """(an output path that cannot be written, the reason the refusal gives)."""
    a_file = tmp_path / "a_file"
    a_file.write_text("in the way\n")
    cases = [(a_file / "out", re.escape(f"{a_file} is a file"))]
    if Path("/proc/self").exists():                      # a path no one can create files in
        cases.append((Path("/proc/codesign-out"), r"[A-Za-z ]+"))
    if os.geteuid() != 0:                                # permissions do not stop root
        ro = tmp_path / "read_only"
        ro.mkdir()
        ro.chmod(0o500)
        cases.append((ro / "out", "Permission denied"))
    return cases


def test_optimize_results_naming_a_file(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPHERE)
    a_file = tmp_path / "a_file"
    a_file.write_text("in the way\n")
    before = files(tmp_path)
    done = codesign("optimize", spec, "--results", a_file, "--quiet")
    one_line(done, 2, rf"codesign optimize: error: {re.escape(str(a_file / 'small'))}: cannot create the run "
                      rf"folder \({re.escape(str(a_file))}: a file is in the way\); expected --results to name "
                      rf"a writable folder")
    assert files(tmp_path) == before


def test_report_freeze_simulate_refuse_an_output_they_cannot_write(tmp_path, small_run):
    for target, reason in impossible_paths(tmp_path):
        before = files(tmp_path), files(small_run)
        report = target / "report"
        one_line(codesign("report", small_run, "-o", report, "--no-gait"), 2,
                 rf"codesign report: error: -o {re.escape(str(report))}: cannot write there \({reason}\); "
                 rf"expected a writable folder")
        spec = target / "frozen.toml"
        one_line(codesign("freeze", small_run, "--keep", "param:x", "-o", spec), 2,
                 rf"codesign freeze: error: -o {re.escape(str(spec))}: cannot write there \({reason}\); "
                 rf"expected a writable folder")
        one_line(codesign("simulate", "--human", "--max-time", "0.05", "--out", target), 2,
                 rf"codesign simulate: error: --out {re.escape(str(target))}: cannot write there "
                 rf"\({reason}\); expected a writable folder")
        assert (files(tmp_path), files(small_run)) == before, target


def test_simulate_refuses_too_many_samples_up_front(tmp_path):
    done = codesign("simulate", "--human", "--max-time", "1e9", "--sample", "1e-9", "--out", tmp_path / "sim")
    one_line(done, 2, r"codesign simulate: error: --sample: 1e-09 s over 1e\+09 s is 1e\+18 samples; "
                      r"expected at most 1,000,000 \(a larger --sample or a shorter --max-time\)")
    assert not (tmp_path / "sim").exists()


@pytest.mark.parametrize("command", [("simulate", "{design}", "--out", "{out}"),
                                     ("analyze", "gait", "{design}", "--out", "{out}/gait.json"),
                                     ("screen", "--design", "{design}")])
def test_a_binary_design_file_is_one_line(tmp_path, command):
    design = tmp_path / "design.json"
    design.write_bytes(b"\xff\xfe\x00{\"topology\": 1}" + bytes(range(256)))
    out = tmp_path / "out"
    args = [a.format(design=design, out=out) for a in command]
    done = codesign(*args)
    one_line(done, 2, rf"codesign {command[0]}: error: {re.escape(str(design))}: not UTF-8 text \(line 1, byte 0\); "
                      rf"expected a design JSON file")
    assert sorted(files(tmp_path)) == ["design.json"]


def test_a_catalog_given_that_cannot_be_read_is_one_line(tmp_path, small_run):
    """report and freeze take --catalog for co-design runs; one that cannot be read was
    once a note in the report (generic layout, figures dropped) and ignored by freeze."""
    readme = Path(__file__).resolve().parents[1] / "README.md"
    before = files(small_run)
    for catalog, reason in ((tmp_path / "nope.json", "cannot read"), (readme, "not valid JSON")):
        one_line(codesign("report", small_run, "-o", tmp_path / "report", "--no-gait", "--catalog", catalog), 2,
                 rf"codesign report: error: {re.escape(str(catalog))}: {reason} .*")
        one_line(codesign("freeze", small_run, "--keep", "param:x", "-o", tmp_path / "f.toml",
                          "--catalog", catalog), 2, rf"codesign freeze: error: {re.escape(str(catalog))}: {reason} .*")
    assert sorted(files(tmp_path)) == [] and files(small_run) == before



def user_file(path: Path, content: bytes | str | None) -> Path:
    """``path`` holding ``content`` (bytes), made a folder ("folder"), or left missing (None)."""
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    return path


NOT_UTF8 = b'{"topology": null,\n "params": {"hip": "\xe9"}}\n'      # Latin-1: line 2, byte 39


@pytest.mark.parametrize("content, reason", [
    (NOT_UTF8, r": not UTF-8 text \(line 2, byte 39\); expected a design JSON file"),
    (b'{"topology": null,\n "params": {"a": 1,}}', r": not valid JSON \(line 2, column 20: .*\); expected a design JSON file"),
    (b'{"topology": null, "actuators": null, "params": {}, "colour": 1}', r': unknown key "colour"; expected only .*'),
    (b'{"topology": "one", "actuators": null, "params": {}}', r"\.topology: 'one'; expected a topology id or null"),
    ("folder", r": cannot read \(a folder\); expected a design JSON file"),
    (None, r": cannot read \(No such file or directory\); expected a design JSON file"),
])
def test_a_design_file_that_is_not_a_design_is_one_line_naming_it(tmp_path, content, reason):
    """Issue 28: every file a user names is read by one reader (codesign.io.read_user_file);
    whatever keeps it from being a design is one line naming the file, exit 2, no traceback."""
    design = user_file(tmp_path / "design.json", content)
    one_line(codesign("simulate", design, "--out", tmp_path / "out"), 2,
             rf"codesign simulate: error: {re.escape(str(design))}{reason}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, reason", [
    (b'name = "caf\xe9"\n', r"not UTF-8 text \(line 1, byte 11\)"),
    (b'name = "x"\n[problem\n', r"not valid TOML \(line 2, column 9: Expected ']' .*\)"),
    ("folder", r"cannot read \(a folder\)"),
    (None, r"cannot read \(No such file or directory\)"),
])
def test_a_spec_that_cannot_be_read_is_one_line_naming_it(tmp_path, content, reason):
    spec = user_file(tmp_path / "spec.toml", content)
    one_line(codesign("optimize", spec, "--results", tmp_path / "results", "--quiet"), 2,
             rf"codesign optimize: error: {re.escape(str(spec))}: {reason}; expected a TOML job spec .*")
    assert not (tmp_path / "results").exists()


def test_a_catalog_that_is_not_utf8_or_not_a_catalog_is_one_line_in_every_command(tmp_path, small_run):
    """The held-back input of issue 28: a non-UTF-8 file given as a catalog was a traceback."""
    catalog = tmp_path / "catalog.json"
    catalog.write_bytes((REPO / "topologies" / "catalog.json").read_bytes() + b"\xff")
    lines = (REPO / "topologies" / "catalog.json").read_bytes().count(b"\n") + 1
    said = rf"{re.escape(str(catalog))}: not UTF-8 text \(line {lines}, byte \d+\); expected a topology catalog .*"
    human = REPO / "docs" / "designs" / "human-thesis-walking.json"
    before = files(small_run)
    for command in (("screen", "--catalog", catalog),
                    ("report", small_run, "-o", tmp_path / "report", "--no-gait", "--catalog", catalog),
                    ("freeze", small_run, "--keep", "param:x", "-o", tmp_path / "f.toml", "--catalog", catalog),
                    ("transfer", human, "--out", tmp_path / "t.json", "--catalog", catalog)):
        one_line(codesign(*command), 2, rf"codesign {command[0]}: error: {said}")
    catalog.write_text('{"settings": {}, "human": {}, "topologies": [], "notes": "mine"}')
    one_line(codesign("screen", "--catalog", catalog), 2,
             rf'codesign screen: error: {re.escape(str(catalog))}: unknown key "notes"; expected only .*')
    assert sorted(files(tmp_path)) == ["catalog.json"] and files(small_run) == before
