"""A walking problem is a set of typed options; a registered walking name is a preset.

Truths: the thesis's counts (Table 5.2: 19 parameters per actuated joint's step
impedance; the torso term adds 6 per joint that carries it, codesign_layout and
human_layout), the drivetrain's two parameters per actuated joint (issue 30), the
co-design's stages (Table 5.3 with issue 15's), and real processes for bad input (one
line, exit 2, nothing written)."""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest

from codesign.errors import UserError
from codesign.problems import get_problem
from codesign.problems import objectives as ob
from codesign.problems.compose import stages_before
from codesign.problems.options import (CHOICES, PRESETS, ProblemOptions, options_of_key, parse_options,
                                       problem_key)
from codesign.run.spec import parse_spec
from codesign.topology.catalog import REPOSITORY_CATALOG
from tests.runtools import codesign, listing, one_line

ROOT = REPOSITORY_CATALOG.parents[1]
TORSO = ("step.t1", "step.dt", "K.v1", "K.v2", "D.v1", "D.v2")


def valid_combinations() -> list[ProblemOptions]:
    """Every combination of the space's options that parse_options accepts (a frozen
    device named where one is needed)."""
    out = []
    space = {k: v for k, v in CHOICES.items() if v is not None}
    for values in itertools.product(*space.values()):
        options = ProblemOptions(**dict(zip(space, values)))
        if options.wearer == "active" and options.search == "wearer":
            options = dataclasses.replace(options, device_design="device.json")
        try:
            parse_options({"name": "walking", **{k: v for k, v in options.to_json().items()}})
        except UserError:
            continue
        out.append(options)
    return out


def test_every_key_names_its_options_and_every_preset_is_its_own_key():
    for name, options in PRESETS.items():
        assert problem_key(options) == name and options_of_key(name) == options
    combos = valid_combinations()
    keys = {problem_key(o) for o in combos}
    assert len(keys) == len(combos)            # one key per problem
    for options in combos:
        assert options_of_key(problem_key(options)) == options.space()
    # the six passive co-designs of the registry are 6 of the 8 (control x torso x drivetrains)
    passive = [o for o in combos if o.device == "linkage" and o.wearer == "passive"]
    assert len(passive) == 8
    assert sum(problem_key(o) in PRESETS for o in passive) == 6


def test_the_options_change_the_space_by_their_counts():
    """Each option against the one it differs from: the torso term 6 per actuated joint
    (thesis law) or 6 in the common pool (wearer-space law); the drivetrains 2 per actuated
    joint, in every group."""
    plain = get_problem("exo_codesign")
    for key, torso in ((problem_key(ProblemOptions(torso_feedback=True, drivetrains="searched")), True),
                       ("exo_codesign_drive", False)):
        problem = get_problem(key)
        for base, group in zip(plain.pools[0].groups, problem.pools[0].groups):
            extra = set(group.parameters) - set(base.parameters)
            tid, pair = int(group.name[1:3]), group.name.split("_a")[1].split("-")
            want = {f"t{tid:02d}.j{a}.{f}" for a in pair for f in ("motor", "stage_ratio")}
            if torso:
                want |= {f"t{tid:02d}.j{a}.torso.{f}" for a in pair for f in TORSO}
            assert extra == want
    wearer = get_problem("exo_codesign_wearer")
    wearer_torso = get_problem(problem_key(ProblemOptions(control="wearer", torso_feedback=True)))
    assert [g.parameters for g in wearer_torso.pools[0].groups] == [g.parameters for g in wearer.pools[0].groups]
    assert (set(wearer_torso.pools[1].groups[0].parameters) - set(wearer.pools[1].groups[0].parameters)
            == {f"hip.torso.{f}" for f in TORSO})
    assert len(get_problem("human_gait").parameters) == 45 and len(get_problem("human_gait_balance").parameters) == 51


def test_stages_are_joined_by_name():
    codesign = ob.codesign_stages()
    assist = get_problem("exo_assist").objectives
    physical = stages_before(codesign, "speed_assist_score")
    assert assist[:len(physical)] == physical
    assert [o.metric for o in assist[len(physical):]] == ["assist_fraction", "speed_change_abs", "effort_reduction",
                                                          "power_electrical"]
    adapt = get_problem("exo_assist_wearer").objectives
    assert adapt[:len(physical) + 2] == assist[:len(physical) + 2]
    assert adapt[-1].metric == "effort_reduction" and adapt[-1].until is None
    assert all(o.metric.startswith(("stride_r_", "ankle_")) for o in adapt[len(physical) + 2:-1])
    assert get_problem(problem_key(ProblemOptions(control="wearer", torso_feedback=True))).objectives == codesign
    assert "speed_change" not in get_problem("exo_codesign").metrics
    assert "effort_reduction_own" in get_problem("exo_assist_wearer").metrics


@pytest.mark.parametrize("table, message", [
    ({"name": "exo_codesign", "contol": "wearer"}, r"problem\.contol: unknown option \(did you mean control\?\); expected one of name, .*control, .*"),
    ({"name": "exo_codesign", "torso_feedback": "yes"}, r"problem\.torso_feedback: got \"yes\"; expected true or false"),
    ({"name": "exo_codesign", "drivetrains": "best"}, r"problem\.drivetrains: got \"best\"; expected one of "
                                                      r"\"rating\", \"searched\""),
    ({"name": "exo_assist", "search": "wearer"}, r"problem\.device_design: missing with wearer = \"active\" and "
                                                 r"search = \"wearer\"; .*"),
    ({"name": "exo_codesign", "wearer": "active"}, r"problem\.control: \"actuator\" with wearer = \"active\"; .*"),
    ({"name": "human_gait", "drivetrains": "searched"}, r"problem\.drivetrains: \"searched\" with device = "
                                                        r"\"none\"; .*"),
    ({"name": "exo_codesign", "search": "wearer"}, r"problem\.search: \"wearer\" with wearer = \"passive\"; .*"),
    ({"name": "exo_assist", "search": "wearer_assist"}, r"problem\.device_design: missing with wearer = \"active\" "
                                                        r"and search = \"wearer_assist\"; .*"),
    ({"name": "exo_assist", "search": "wearer_assist", "device_design": "d.json", "wearer_design": "w.json"},
     r"problem\.wearer_design: given with search = \"wearer_assist\"; expected none .*"),
    ({"name": "exo_codesign_x"}, r"problem\.name: \"exo_codesign_x\"; expected a walking problem .*"),
])
def test_bad_options_are_one_line_naming_them(table, message):
    with pytest.raises(UserError, match="^" + message + "$"):
        parse_options(table)


def test_a_spec_reads_its_options_once_into_the_problems_key():
    spec = parse_spec('[problem]\nname = "exo_codesign"\ncontrol = "wearer"\ndrivetrains = "searched"\n')
    assert spec.problem == "exo_codesign_wearer_drive" and spec.options == PRESETS["exo_codesign_wearer_drive"]
    spec = parse_spec('[problem]\nname = "exo_assist_wearer"\ndevice_design = "d.json"\n[evaluation]\nmax_time = 2\n')
    assert spec.problem == "exo_assist_wearer" and spec.evaluation == {"max_time": 2, "device_design": "d.json"}
    # the spelling before the options: the frozen device in [evaluation]
    spec = parse_spec('[problem]\nname = "exo_assist_wearer"\n[evaluation]\ndevice_design = "d.json"\n')
    assert spec.options.device_design == "d.json" and spec.evaluation == {"device_design": "d.json"}
    with pytest.raises(UserError, match=r"evaluation\.device_design: \"d\.json\" and problem\.device_design \"e\.json\""):
        parse_spec('[problem]\nname = "exo_assist_wearer"\ndevice_design = "e.json"\n[evaluation]\ndevice_design = "d.json"\n')
    assert parse_spec('[problem]\nname = "sphere"\n').options is None
    with pytest.raises(UserError, match=r"problem\.control: unknown key for problem \"sphere\""):
        parse_spec('[problem]\nname = "sphere"\ncontrol = "wearer"\n')


@pytest.mark.parametrize("problem, message", [
    ('name = "exo_codesign"\ncontroll = "wearer"', r".*problem\.controll: unknown option \(did you mean control\?\); expected one of name, .*"),
    ('name = "exo_assist"\nsearch = "wearer"', r".*problem\.device_design: missing with wearer = \"active\" and "
                                               r"search = \"wearer\"; expected the path of the frozen device .*"),
])
def test_a_bad_problem_option_stops_the_run_before_anything_is_written(tmp_path, problem, message):
    (tmp_path / "spec.toml").write_text(f"[problem]\n{problem}\n[optimizer]\niterations = 1\nparticles = 2\n"
                                        "[execution]\nmode = \"serial\"\n")
    before = listing(tmp_path)
    done = codesign("optimize", "spec.toml", cwd=tmp_path, timeout=300)
    one_line(done, 2, message)
    assert listing(tmp_path) == before


def test_a_combination_no_preset_spells_runs_stores_its_key_and_replays(tmp_path):
    """A real run of ``walking`` with the thesis's law, its torso term and drivetrains (one of
    the two passive co-designs no registered name spelled): the stored spec names its
    options, and the replayed best's record says what it is."""
    (tmp_path / "spec.toml").write_text('name = "comp"\n[problem]\nname = "walking"\ntorso_feedback = true\n'
                                        'drivetrains = "searched"\n[optimizer]\nparticles = 2\niterations = 1\n'
                                        '[evaluation]\nmax_time = 0.2\n[execution]\nmode = "serial"\n')
    done = codesign("optimize", "spec.toml", "--results", "results", "--quiet", cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    done = codesign("simulate", "--run", "results/comp", "--best", "--no-animation", "--out", "sim", cwd=tmp_path,
                    timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    problem = json.loads((tmp_path / "sim/record.json").read_text())["design"]["problem"]
    assert problem == {"name": "walking", **ProblemOptions(torso_feedback=True, drivetrains="searched").to_json()}
    key = problem_key(ProblemOptions(torso_feedback=True, drivetrains="searched"))
    assert key not in PRESETS and get_problem(key).options == ProblemOptions(torso_feedback=True,
                                                                             drivetrains="searched")


def test_the_verdict_reads_an_assisted_wearer_from_the_options_not_the_metrics():
    from codesign.problems.verdict import assists, walking_verdict

    assert assists(get_problem("exo_assist")) and assists(get_problem("exo_assist_wearer"))
    assert assists(get_problem("exo_codesign")) is False and assists(get_problem("human_gait")) is False
    assert assists(get_problem("anthropomorphic_baseline")) is None
    # a walk at 1.0 m/s that keeps the unassisted walk's speed: an assisted wearer walks,
    # a passive one (target 1.3 m/s) does not -- the same metrics, the problem decides
    metrics = {"time_fraction": 1.0, "time": 10.0, "speed": 1.0, "speed_match": 0.77, "assist_fraction": 0.0,
               "speed_change": 0.01, "speed_unassisted": 0.99}
    assert walking_verdict(metrics, 10.0, assisted=True).walks
    assert not walking_verdict(metrics, 10.0, assisted=False).walks
    assert walking_verdict(metrics, 10.0).walks            # no problem: the record's speed_change says it
