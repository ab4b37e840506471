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
