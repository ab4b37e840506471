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


def test_a_ctrl_c_while_the_command_loads_is_one_line_exit_130():
    """A real process: SIGINT while the command's module is being imported (a module that
    sleeps on import stands in for numpy, numba and dask, ~1-2 s)."""
    import os
    import signal
    import textwrap

    code = textwrap.dedent("""
        import os, signal, sys, threading, time, types
        from codesign import cli
        module = "codesign.commands.slow_import"
        class Slow:                      # a finder whose module takes 5 s to import
            def find_spec(self, name, path=None, target=None):
                if name != module:
                    return None
                import importlib.machinery as m
                return m.ModuleSpec(name, self)
            def create_module(self, spec):
                return None
            def exec_module(self, mod):
                time.sleep(5)
        sys.meta_path.insert(0, Slow())
        cli.COMMANDS["slow"] = module
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        sys.exit(cli.main(["slow"]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "codesign slow: interrupted\n"
