"""The command line contract: subcommands listed, usage errors are one line + exit 2."""

import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "codesign.cli", *args], capture_output=True, text=True
    )


def test_help_lists_stage_commands():
    result = run_cli("--help")
    assert result.returncode == 0
    assert "bench" in result.stdout


def test_unknown_command_is_one_line_exit_2():
    result = run_cli("no-such-stage")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "no-such-stage" in result.stderr


def test_misuses_are_one_line_exit_2(tmp_path):
    """A user error is one line naming the culprit, exit 2, and no traceback."""
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    cases = [
        (("optimize", str(tmp_path / "none.toml")), "none.toml"),
        (("resume", str(tmp_path / "nosuchrun")), "nosuchrun"),
        (("report", str(tmp_path)), str(tmp_path)),
        (("freeze", str(tmp_path / "nosuchrun"), "--keep", "morphology", "-o",
          str(tmp_path / "x.toml")), "nosuchrun"),
        (("bench", "runner", "--quick", "--out", str(a_file / "sub")), "--out"),
    ]
    for args, culprit in cases:
        result = run_cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
        assert culprit in result.stderr, (args, result.stderr)
    assert not (tmp_path / "x.toml").exists()
