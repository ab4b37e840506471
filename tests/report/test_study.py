"""`codesign study`: a global round, focused rounds per topology, each best verified -- one
command that resumes to the same files wherever it is killed (real processes), and that
refuses a study spec it cannot run in one line before writing anything."""

from __future__ import annotations

import math
import os
import signal
from pathlib import Path

import pytest

from codesign.errors import UserError
from codesign.report.study import GLOBAL, focus_choices
from codesign.run.spec import parse_spec
from runtools import assert_same_run, codesign, iterations_done, one_line, start_cli, wait_for

ROOT = Path(__file__).resolve().parents[2]

STUDY = f"""
name = "small-study"
seed = 5
[problem]
name = "exo_codesign_wearer"
[optimizer]
algorithm = "mmpso"
particles = 4
iterations = 4
[space]
start_design = "{ROOT / 'docs/designs/human-gentle-walking.json'}"
[evaluation]
max_time = 0.3
[execution]
mode = "serial"
[study]
focus = 2
focus_particles = 3
focus_iterations = 3
warm_start = 3
verify = ["half_step"]
focus_rounds = 2
"""


@pytest.mark.parametrize("table, message", [
    ("topologies = []", r"study\.topologies: got \[\]; expected at least one topology number"),
    ("focus = 0", r"study\.focus: got 0; expected an integer >= 1"),
    ('verify = ["slow"]', r'study\.verify: got \["slow"\]; expected a list of distinct checks among '
                          r'half_step, soft, mujoco, wearer_light, wearer_heavy \(unknown: "slow"\)'),
    ('verify = ["wearer_light", "wearer_light"]', r"study\.verify: got .*; expected a list of distinct checks"),
    ("focuss = 2", r"study\.focuss: unknown key \(did you mean focus\?\)"),
    ("focus_rounds = 0", r"study\.focus_rounds: got 0; expected an integer in \[1, 100\]"),
    ("focus_pairs = 0", r"study\.focus_pairs: got 0; expected an integer in \[1, 100\]"),
    ('search_checks = ["mujoco"]', r'study\.search_checks: got \["mujoco"\]; expected a list of distinct checks among '
                                   r'half_step, soft'),
    ("verify_candidates = 1.5", r"study\.verify_candidates: got 1\.5; expected an integer in \[1, 1000\]"),
    ("transfer = 1", r"study\.transfer: got 1; expected true or false"),
    ("transfer = true\nwarm_start = 0", r"study\.transfer: got true; expected warm_start >= 1 with it"),
])
def test_a_study_table_it_cannot_run_is_one_line(table, message):
    import re

    with pytest.raises(UserError, match=message) as caught:
        parse_spec(f'[problem]\nname = "exo_codesign_wearer"\n[study]\n{table}\n')
    assert "\n" not in str(caught.value)
    assert re.search(message, str(caught.value))


@pytest.mark.integration
def test_a_round_that_names_no_topology_stops_the_study_before_any_file(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text(STUDY.replace("focus = 2", "topologies = []"))
    done = codesign("study", spec, "--results", tmp_path / "results", "--quiet")
    one_line(done, 2, r".*bad\.toml: study\.topologies: got \[\]; expected at least one topology number.*")
    assert not (tmp_path / "results").exists()


@pytest.mark.integration
def test_a_study_killed_in_each_round_resumes_to_the_same_result(tmp_path):
    spec = tmp_path / "study.toml"
    spec.write_text(STUDY)
    reference = tmp_path / "reference"
    done = codesign("study", spec, "--results", reference, "--quiet", timeout=600)
    assert done.returncode == 0, done.stderr
    ref = reference / "small-study"
    rounds = sorted(p.name for p in ref.iterdir() if (p / "run.sqlite").exists())
    # the focused topologies are the global round's two best, one per topology; none holds
    # (0.3-s walks), so each gets its second focused round, continued from its first
    chosen = focus_choices(ref / GLOBAL / "run.sqlite", 2, ())
    firsts = sorted(f"focus-t{t:02d}" for t, _ in chosen)
    assert rounds == sorted([GLOBAL, *firsts, *(f"{r}-2" for r in firsts)])

    results = tmp_path / "results"
    study = results / "small-study"
    focus = study / rounds[0] / "run.sqlite"
    kills = [lambda: iterations_done(study / GLOBAL / "run.sqlite") >= 2,      # in the global round
             lambda: focus.exists() and iterations_done(focus) >= 1,          # in a focused round
             lambda: (study / "verify" / f"{GLOBAL}.json").exists()]         # in the verification
    for condition in kills:
        driver = start_cli("study", spec, "--results", results, "--quiet", start_new_session=True)
        wait_for(lambda: condition() or driver.poll() is not None, timeout=300)
        assert driver.poll() is None, "the study ended before it could be killed there"
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(30)
    done = codesign("study", spec, "--results", results, "--quiet", timeout=600)
    assert done.returncode == 0, done.stderr
    for name in rounds:
        assert_same_run(ref / name / "run.sqlite", study / name / "run.sqlite")
    for name in ("study.csv", "study.md", *(f"best-{r}.json" for r in rounds),
                 *(f"verify/{r}.json" for r in rounds), *(f"{r}.toml" for r in rounds if r != GLOBAL)):
        assert (study / name).read_text() == (ref / name).read_text(), name
    # the lineage is in the store: each focused round names the global round as its parent
    from runtools import query

    for name in rounds:
        parent = query(study / name / "run.sqlite", "SELECT parent_run_id FROM runs")
        assert parent == (None if name == GLOBAL else GLOBAL if name.count("-") == 1 else name[:-2])


def test_the_study_knows_every_check_the_report_can_replay():
    """The run layer's list of check names (it may not import the report) is the report's
    checks and MuJoCo's."""
    from codesign.report.robustness import CHECKS
    from codesign.report.study import CHECK_LABELS
    from codesign.run.study_spec import VERIFY_CHECKS

    from codesign.problems.robust import CONTACT_CHECKS
    from codesign.run.study_spec import SEARCH_CHECKS

    assert set(VERIFY_CHECKS) == {*CHECKS, "mujoco"}
    assert set(CHECK_LABELS) == {*VERIFY_CHECKS, "searched"}
    assert SEARCH_CHECKS == tuple(CONTACT_CHECKS)


def test_an_unknown_study_check_stops_the_command_in_one_line(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text(STUDY.replace('verify = ["half_step"]', 'verify = ["half_step", "wearer_lite"]'))
    done = codesign("study", spec, "--results", tmp_path / "results", "--quiet")
    one_line(done, 2, r'.*bad\.toml: study\.verify: got .*; expected a list of distinct checks among half_step, '
                      r'soft, mujoco, wearer_light, wearer_heavy \(unknown: "wearer_lite"\)')
    assert not (tmp_path / "results").exists()


def test_a_wearer_check_replays_the_stored_design_on_the_scaled_wearer(tmp_path):
    """``wearer_light`` / ``wearer_heavy`` replay a stored evaluation on a wearer whose every
    segment mass is x0.9 / x1.1: exactly the walk of that design with
    ``evaluation.wearer_mass_scale`` spelled out, whose body weighs k x the subject's (the
    human alone: the model's total mass), and not the walk as searched."""
    from codesign.model.anthropometry import human_geometry
    from codesign.problems.walking import walk
    from codesign.report.study import replay_checks
    from codesign.run.driver import start_run
    from codesign.run.stored import stored_candidate
    from codesign.walking import WalkSettings
    from codesign.walking.setup import build_setup

    run = start_run(parse_spec(
        'name = "scaled"\nseed = 3\n[problem]\nname = "human_gait"\n[optimizer]\nalgorithm = "pso"\n'
        'particles = 1\niterations = 1\n[evaluation]\nmax_time = 0.3\n[execution]\nmode = "serial"\n'),
        results=tmp_path, progress=False)
    checks = replay_checks(run, "0:0", ("searched", "wearer_light", "wearer_heavy"), tmp_path / "best.json")
    assert [c.name for c in checks] == ["searched", "wearer_light", "wearer_heavy"]
    design = stored_candidate(str(run), False, "0:0").design
    subject = human_geometry().mass_kg
    for check, scale in zip(checks[1:], (0.9, 1.1)):
        settings = WalkSettings.from_dict({"max_time": 0.3, "wearer_mass_scale": scale})
        setup, _, _ = build_setup(design, settings)
        assert setup.model.total_mass() == pytest.approx(scale * subject, rel=1e-12)
        direct = walk(design, settings).metrics
        assert check.metrics == {k: float(v) for k, v in direct.items() if math.isfinite(v)}
        assert check.metrics != checks[0].metrics


@pytest.mark.parametrize("holding", [3, None])
def test_the_verification_keeps_the_first_candidate_that_holds_under_every_check(tmp_path, monkeypatch, holding):
    """verify_candidates = 5: the round's best five are replayed in the run's order until one
    walks under every check made (a check not made does not count against it); its design
    file is written. When none holds, the round's best is kept, with its own design file."""
    from codesign.objectives import ranked
    from codesign.report import study as st
    from codesign.report.rundata import load_run
    from codesign.run.driver import start_run

    run = start_run(parse_spec(
        'name = "candidates"\nseed = 3\n[problem]\nname = "human_gait"\n[optimizer]\nalgorithm = "pso"\n'
        'particles = 4\niterations = 2\n[evaluation]\nmax_time = 0.2\n[execution]\nmode = "serial"\n'),
        results=tmp_path, progress=False)
    order = [f"{int(r.iteration)}:{int(r.particle)}" for r in ranked(load_run(run).evaluations).head(5).itertuples()]
    replayed = []

    def fake_replay(run_path, evaluation, checks, design_path, stop_on_failure=False):
        st.write_design_file(run_path, evaluation, design_path)
        assert stop_on_failure == bool(replayed)      # the first candidate gets every check
        replayed.append(evaluation)
        walks = holding is not None and evaluation == order[holding - 1]
        return (st.Check("searched", walks, "", {}), st.Check("half_step", walks, "", {}),
                st.Check("mujoco", False, "not checked: loop armature", {}, made=False))

    monkeypatch.setattr(st, "replay_checks", fake_replay)
    best = st.verify_round(tmp_path, "global", run, ("half_step", "mujoco"), candidates=5)
    expected = holding or 1
    assert replayed == order[:holding or 5]
    assert best.rank == expected and best.evaluation == order[expected - 1] and best.holds == (holding is not None)
    st.write_design_file(run, order[expected - 1], tmp_path / "expected.json")
    assert (tmp_path / best.design).read_text() == (tmp_path / "expected.json").read_text()
    assert st._read_round_best(tmp_path / "verify" / "global.json") == best


def test_a_topology_is_shown_by_the_round_whose_best_holds_under_more_checks():
    """Per topology the focused round's best, unless the global round's best of that
    topology walks under more of the checks (the focused round's may fail soft contacts
    where the global one's holds)."""
    from codesign.report.study import Check, RoundBest, ranked_bests

    def best(round_name, topology, soft, fitness):
        checks = (Check("searched", True, "", {}), Check("soft", soft, "", {}),
                  Check("mujoco", False, "not checked", {}, made=False))
        return RoundBest(round_name, "1:1", topology, "1-3", "stage 15 of 15", fitness, "x.json", checks)

    glob7, focus7 = best(GLOBAL, 7, True, (14, 2.0)), best("focus-t07", 7, False, (14, 1.0))
    glob1, focus1 = best(GLOBAL, 1, True, (14, 3.0)), best("focus-t01", 1, True, (14, 2.5))
    assert ranked_bests([glob7, glob1, focus7, focus1]) == [glob7, focus1]   # then by stage value
    assert ranked_bests([glob7, focus7]) == [glob7] and ranked_bests([focus7]) == [focus7]


def test_a_transfer_seed_is_the_parent_start_with_the_donors_shared_parameters(tmp_path):
    """[study] transfer: a focused round's seed is its start (the parent's best) with every
    parameter it shares with another topology's design that holds (the common control
    law's) taken from that design, and its own topology's (morphology, drivetrains) kept;
    the donors are the other topologies' kept bests that hold, read from their runs."""
    from codesign.objectives import ranked
    from codesign.report import study as st
    from codesign.report.freeze import choose_solution
    from codesign.report.rundata import load_run
    from codesign.run.driver import new_optimizer, start_run

    spec = parse_spec(STUDY.replace("particles = 4\niterations = 4", "particles = 6\niterations = 1")
                      .replace('name = "small-study"', 'name = "global"'))
    run = start_run(spec, results=tmp_path, progress=False)
    data = load_run(run)
    ok = ranked(data.evaluations[data.evaluations["status"] == "ok"])
    topology = {sid: t for sid, (t, _) in st._subspace_topologies(data).items()}
    rows = ok.assign(topology=ok["subspace_id"].map(lambda sid: topology[int(sid)])).drop_duplicates("topology")
    (parent, donor, other) = [(int(r.topology), f"{int(r.iteration)}:{int(r.particle)}") for r in rows.head(3).itertuples()]

    def best(entry, holds):
        checks = (st.Check("searched", holds, "", {}), st.Check("half_step", holds, "", {}))
        return st.RoundBest(GLOBAL, entry[1], entry[0], "1-3", "stage 1 of 15", (1, 0.0), "x.json", checks)

    bests = [best(parent, True), best(donor, True), best(other, False)]
    donors = st.transfer_donors(tmp_path, bests, parent[0])
    values = choose_solution(data, donor[1]).params
    assert donors == ((f"topology {donor[0]}'s global {donor[1]}", values),)

    child = parse_spec(st.focus_spec_text(run, parent[0], parent[1], spec, 0, 2, donors))
    (seed,) = child.seeds
    shared = {name for name in child.start if name in values}
    assert set(seed) == set(child.start) and shared and shared != set(seed)
    assert all(seed[name] == (values[name] if name in shared else child.start[name]) for name in seed)
    assert all(name.startswith(f"t{parent[0]:02d}.") for name in set(seed) - shared)
    assert new_optimizer(child).ask()[1].params == seed


def test_a_topology_s_next_pair_is_its_second_best_subspace_of_the_global_round(tmp_path):
    """[study] focus_pairs: the P-th pair of a topology is the subspace of its P-th best
    evaluation among its subspaces' bests in the global round (read here with plain SQL
    from the store), and that round's spec keeps that pair and warm-starts from it."""
    import json
    import sqlite3

    from codesign.report import study as st
    from codesign.run.driver import start_run

    spec = parse_spec(STUDY.replace("particles = 4\niterations = 4", "particles = 16\niterations = 2")
                      .replace('name = "small-study"', 'name = "global"'))
    run = start_run(spec, results=tmp_path, progress=False)
    with sqlite3.connect(run) as db:
        names = {sid: json.loads(g)["subspace"] for sid, g in db.execute("SELECT subspace_id, groups_json FROM subspaces")}
        rows = db.execute("SELECT subspace_id, stage, stage_value, iteration, particle FROM evaluations "
                          "WHERE status = 'ok' ORDER BY -stage, stage_value, iteration, particle").fetchall()
    by_topology: dict[int, list[tuple[str, str]]] = {}
    seen = set()
    for sid, _stage, _value, iteration, particle in rows:
        if sid not in seen:
            seen.add(sid)
            group = names[sid]
            by_topology.setdefault(int(group[1:3]), []).append((group, f"{iteration}:{particle}"))
    several = [t for t, pairs in by_topology.items() if len(pairs) >= 2]
    assert several, "the global round evaluated no topology in two actuator pairs"
    for topology, pairs in by_topology.items():
        for rank, (_group, evaluation) in enumerate(pairs, start=1):
            assert st.pair_choice(run, topology, rank) == evaluation
        assert st.pair_choice(run, topology, len(pairs) + 1) is None
    topology = several[0]
    group, evaluation = by_topology[topology][1]
    text = st.focus_spec_text(run, topology, evaluation, spec, 0, 1, pair_rank=2)
    child = parse_spec(text)
    assert child.name == st.focus_name(topology, 1, 2) == f"focus-t{topology:02d}-p2"
    assert f"actuator pair no. 2" in text and child.freeze.pools["subspace"] == group


def test_a_chain_on_the_next_pair_starts_only_for_a_topology_whose_rounds_ended_without_a_walker(tmp_path, monkeypatch):
    """focus_pairs = 2, focus_rounds = 2: topology 7 holds in its first round (one round);
    topology 3 never holds: two rounds on its best pair, then two on its second; topology 5
    holds in the second pair's first round; topology 9 has one pair only."""
    from codesign.report import study as st

    holds_in = {"focus-t07", "focus-t05-p2"}
    ran = []

    def fake_spec(folder, parent_run, topology, evaluation, spec, index, round_number, bests, pair_rank):
        name = st.focus_name(topology, round_number, pair_rank)
        ran.append((name, str(parent_run), evaluation, index))
        return type("Child", (), {"name": name})()

    def fake_verify(folder, name, run, checks, candidates=1):
        holds = name in holds_in
        topology = None if name == GLOBAL else int(name[7:9])
        return st.RoundBest(name, f"{name}-best", topology, "1-2", "stage 1 of 15", (1, 0.0), "x.json",
                            (st.Check("searched", holds, "", {}),))

    monkeypatch.setattr(st, "run_round", lambda spec, folder, name, execution, progress: Path(name))
    monkeypatch.setattr(st, "verify_round", fake_verify)
    monkeypatch.setattr(st, "_focus_spec", fake_spec)
    monkeypatch.setattr(st, "write_study_table", lambda folder, bests: None)
    monkeypatch.setattr(st, "focus_choices", lambda run, focus, topologies: [(7, "1:1"), (3, "1:2"), (5, "1:3"),
                                                                              (9, "1:4")])
    monkeypatch.setattr(st, "pair_choice", lambda run, topology, rank: None if topology == 9 else f"2:{topology}")
    spec = parse_spec(STUDY.replace("focus_rounds = 2", "focus_rounds = 2\nfocus_pairs = 2"))
    st.run_study(spec, tmp_path, progress=False)
    assert ran == [("focus-t07", GLOBAL, "1:1", 0), ("focus-t03", GLOBAL, "1:2", 1), ("focus-t05", GLOBAL, "1:3", 2),
                   ("focus-t09", GLOBAL, "1:4", 3),
                   ("focus-t03-2", "focus-t03", "focus-t03-best", 4), ("focus-t05-2", "focus-t05", "focus-t05-best", 5),
                   ("focus-t09-2", "focus-t09", "focus-t09-best", 6),
                   ("focus-t03-p2", GLOBAL, "2:3", 7), ("focus-t05-p2", GLOBAL, "2:5", 8),
                   ("focus-t03-p2-2", "focus-t03-p2", "focus-t03-p2-best", 9)]


def test_a_focused_round_with_search_checks_prices_them_before_its_last_stage(tmp_path):
    """[study] search_checks: the focused round's spec replays its walkers under the checks
    (evaluation.robust_checks) and adds the robust stage before the problem's last stage,
    once: a round continued from such a round keeps one."""
    from codesign.problems import get_problem
    from codesign.problems.robust import ROBUST_STAGE
    from codesign.report import study as st
    from codesign.run.driver import start_run

    spec = parse_spec(STUDY.replace("particles = 4\niterations = 4", "particles = 4\niterations = 1")
                      .replace('name = "small-study"', 'name = "global"')
                      .replace("focus_rounds = 2", 'focus_rounds = 2\nsearch_checks = ["soft"]'))
    run = start_run(spec, results=tmp_path, progress=False)
    (topology, evaluation), = focus_choices(run, 1, ())
    child = parse_spec(st.focus_spec_text(run, topology, evaluation, spec, 0))
    stages = get_problem(spec.problem).objectives
    assert child.objectives == (*stages[:-1], ROBUST_STAGE, stages[-1])
    assert child.evaluation["robust_checks"] == ["soft"]
    first = start_run(child, results=tmp_path, progress=False)
    second = parse_spec(st.focus_spec_text(first, topology, "0:0", spec, 1, 2))
    assert second.objectives == child.objectives and second.evaluation == child.evaluation
