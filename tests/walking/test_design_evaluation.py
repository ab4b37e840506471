"""A design file's own evaluation settings ("evaluation", issues 31 and 32: the file holds
everything a replay needs): read by the problem's parser where a command replays the
file, under --settings; written back by to_json; bad input one line."""

import argparse
import json
from pathlib import Path

import pytest

from codesign.commands.options import add_design_arguments, chosen_design
from codesign.errors import UserError
from codesign.walking import Design, load_design

ROOT = Path(__file__).resolve().parents[2]


def _chosen(*argv):
    parser = argparse.ArgumentParser()
    add_design_arguments(parser)
    return chosen_design(parser.parse_args([str(a) for a in argv]))


def _with_evaluation(tmp_path, evaluation) -> Path:
    doc = json.loads((ROOT / "docs/designs/human-thesis-walking.json").read_text())
    doc["evaluation"] = evaluation
    path = tmp_path / "design.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_file_s_settings_are_read_and_settings_override_them(tmp_path):
    path = _with_evaluation(tmp_path, {"initial_state": "gait", "phase0": 0.1})
    chosen = _chosen(path)
    assert chosen.settings.walk.initial_state == "gait"
    assert chosen.settings.walk.rollout.phase0 == 0.1
    assert _chosen(path, "--settings", '{"phase0": 0.2}').settings.walk.rollout.phase0 == 0.2
    plain = _chosen(ROOT / "docs/designs/human-thesis-walking.json")
    assert plain.settings.walk.initial_state == "lowest_point" and plain.settings.walk.rollout.phase0 == 0.0


def test_to_json_round_trips_the_settings_and_leaves_out_none():
    design = Design({"a": 1.0}, evaluation={"initial_state": "gait"})
    assert Design.from_json(design.to_json()) == design
    assert "evaluation" not in Design({"a": 1.0}).to_json()


def test_bad_settings_in_a_file_are_one_line(tmp_path):
    with pytest.raises(UserError, match=r"design.json.evaluation: 3; expected an object"):
        load_design(_with_evaluation(tmp_path, 3))
    with pytest.raises(UserError, match=r"initial_state.*'jump'|initial_state.*jump"):
        _chosen(_with_evaluation(tmp_path, {"initial_state": "jump"}))
