"""Designs say what they are: a design file's "problem" (name and options) is what
simulate, compare, analyze, export and crosscheck evaluate it by; a file written before
says nothing and the one legacy loader guesses, in one line; motors are stored by name.

Truths: the problem's own search space (a design of the problem it names is a point of
that space: its encoded parameters are exactly a subspace group's and the common pool's),
the motor catalog (codesign/model/data/motors.toml, by name and order), and real
processes for bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import json

import pytest

from codesign.errors import UserError
from codesign.model.drivetrain import motor_at, motor_catalog
from codesign.problems import get_problem
from codesign.problems.identity import legacy_problem
from codesign.topology.catalog import REPOSITORY_CATALOG
from codesign.walking.design import Design, load_design
from tests.runtools import chosen, codesign, listing, one_line

ROOT = REPOSITORY_CATALOG.parents[1]
DESIGNS = sorted((ROOT / "docs/designs").glob("*.json"))


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.name)
def test_every_stored_design_names_the_problem_whose_space_holds_it(path, monkeypatch):
    monkeypatch.chdir(ROOT)                  # frozen designs are named from the repository
    doc = json.loads(path.read_text())
    assert set(doc["problem"]) >= {"name"} and list(doc)[0] == "problem"
    design = load_design(path)
    problem = get_problem(chosen(path).problem.name)
    # a preset by its name; a combination of options no preset spells by its key (name "walking")
    assert problem.name == doc["problem"]["name"] or (doc["problem"]["name"] == "walking"
                                                      and problem.name.startswith("walking("))
    names = {p.name for p in problem.parameters}
    if problem.pools:                         # a co-design: a point of one subspace and the common pool
        groups, params = problem.walking.encode(design)
        pools = {g.name: set(g.parameters) for g in problem.pools[0].groups}
        searched = pools[groups[0]] | set(problem.pools[1].groups[0].parameters)
        frozen = set(params) - names           # an active wearer's law: frozen, not searched
        assert set(params) - frozen == searched, path.name
        assert not frozen or problem.options.wearer == "active"
    elif problem.options.device == "ideal":   # an ideal device: its profile (and units) exactly, the wearer frozen
        assert set(problem.walking.encode(design)[1]) == names, path.name
    else:                                     # a law, or a muscle human's reflexes: the problem's parameters, exactly
        law = {k for k in design.params if not k.startswith("assist.") and "." in k and
               k.split(".")[0] in ("hip", "knee", "ankle")}
        reflexes = {k for k in design.params if k.startswith("reflex.")}
        assert (reflexes or law) == names, path.name


def test_a_file_written_before_is_guessed_once_and_says_so(tmp_path, capsys):
    doc = json.loads((ROOT / "docs/designs/drive-t02.json").read_text())
    assert chosen(ROOT / "docs/designs/drive-t02.json").problem.name == "exo_codesign_wearer_drive"
    assert capsys.readouterr().err == ""
    del doc["problem"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    pick = chosen(old)
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{old}: written before designs named their problem; read as exo_codesign_wearer_drive "
                   "(guessed from its parameter names; re-save it to say so)"]
    # what a command writes says it, with every option
    assert pick.design.to_json()["problem"] == {"name": "exo_codesign_wearer_drive", "device": "linkage",
                                                "control": "wearer", "torso_feedback": False,
                                                "drivetrains": "searched", "wearer": "passive",
                                                "search": "device"}
    assert legacy_problem({"hip.ref.y0": 0.0, "hip.torso.K.v1": 1.0}, None) == "human_gait_balance"
    assert legacy_problem({"j1.torso.K.v1": 1.0, "j1.motor": 1.0}, 1) == \
        'walking(torso_feedback=true, drivetrains="searched")'


def test_motors_are_stored_by_name_and_read_by_name_or_number():
    units = list(motor_catalog())
    doc = json.loads((ROOT / "docs/designs/drive-t02.json").read_text())
    assert doc["params"]["j2.motor"] in units
    design = Design.from_json(doc)
    assert units[int(design.params["j2.motor"])] == doc["params"]["j2.motor"]
    number = Design.from_json({**doc, "params": {**doc["params"], "j2.motor": 4.58}})
    assert motor_at(number.params["j2.motor"]).name == units[4]
    assert number.to_json()["params"]["j2.motor"] == units[4]
    with pytest.raises(UserError, match=r"^d\.params\.j2\.motor: 'AK99'; expected a motor of the catalog \(AK"):
        Design.from_json({**doc, "params": {**doc["params"], "j2.motor": "AK99"}}, "d")


@pytest.mark.parametrize("problem, message", [
    ({"name": "exo_codesing"}, r".*bad\.json\.problem\.name: \"exo_codesing\"; expected a walking problem: "
                               r"exo_codesign, .* or walking \(with options\), or anthropomorphic_baseline"),
    ({"name": "exo_codesign", "colour": "red"}, r".*bad\.json\.problem\.colour: unknown option; expected one of .*"),
    ({"name": "exo_assist", "search": "wearer"}, r".*bad\.json\.problem\.device_design: missing with wearer = "
                                                 r"\"active\" and search = \"wearer\"; .*"),
])
def test_a_design_whose_problem_does_not_read_is_one_line_and_nothing_written(tmp_path, problem, message):
    doc = json.loads((ROOT / "docs/designs/codesign-walking.json").read_text())
    (tmp_path / "bad.json").write_text(json.dumps({**doc, "problem": problem}))
    before = listing(tmp_path)
    done = codesign("simulate", "bad.json", "--out", "out", "--max-time", "0.1", cwd=tmp_path, timeout=300)
    one_line(done, 2, message)
    assert listing(tmp_path) == before


def test_a_design_file_carries_its_runs_stages_and_simulate_ranks_it_by_them(tmp_path, monkeypatch):
    """A run's best design file holds its spec's [[objectives]] (codesign report's
    best_design.json): a replay reports the stage of the run's order, not the problem's."""
    monkeypatch.chdir(ROOT)
    doc = json.loads((ROOT / "docs/designs/human-walking.json").read_text())
    stages = [{"metric": "time_fraction", "sense": "maximize", "until": 1.0}, {"metric": "speed", "sense": "maximize"}]
    (tmp_path / "staged.json").write_text(json.dumps({**doc, "objectives": stages}))
    own = chosen(tmp_path / "staged.json")
    assert [(o.metric, o.sense, o.until) for o in own.objectives] == [(s["metric"], s["sense"], s.get("until"))
                                                                     for s in stages]
    assert len(chosen(ROOT / "docs/designs/human-walking.json").objectives) == \
        len(get_problem(own.problem.name).objectives) > 2            # without them: the problem's
    assert Design.from_json(json.loads(json.dumps(own.design.to_json()))).objectives == tuple(stages)


def test_a_design_files_bad_stage_is_one_line_and_nothing_written(tmp_path):
    doc = json.loads((ROOT / "docs/designs/human-walking.json").read_text())
    (tmp_path / "bad.json").write_text(json.dumps({**doc, "objectives": [{"metric": "speed", "sense": "upward"}]}))
    before = listing(tmp_path)
    done = codesign("simulate", "bad.json", "--out", "out", "--max-time", "0.1", cwd=tmp_path, timeout=300)
    one_line(done, 2, r".*bad\.json: objectives\[0\]\.sense: .*upward.*; expected one of minimize, maximize.*")
    assert listing(tmp_path) == before
