"""`codesign simulate` input errors: one line, exit 2, nothing written (no rollout needed)."""

import json

from codesign.cli import main


def test_simulate_needs_exactly_one_design(tmp_path, capsys):
    assert main(["simulate", "--out", str(tmp_path / "o")]) == 2
    assert "exactly one" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_simulate_bad_inputs_exit_2(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["simulate", str(tmp_path / "missing.json"), "--out", str(out)]) == 2
    assert "missing.json" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"params": {"a": "x"}, "topology": None, "actuators": None}))
    assert main(["simulate", str(bad), "--out", str(out)]) == 2
    assert "params.a" in capsys.readouterr().err
    assert main(["simulate", "--human", "--settings", "[1]", "--out", str(out)]) == 2
    assert main(["simulate", "--human", "--settings", '{"max_tim": 1}', "--out", str(out)]) == 2
    assert "evaluation.max_tim" in capsys.readouterr().err
    assert not out.exists()
