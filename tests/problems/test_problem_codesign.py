"""The co-design and human-gait problems: search space, decoding, screening path, records.

Truths: the catalog (subspaces and their order), MODEL's parameter space, WALK's control
layout and the thesis's counts (Table 5.2: 19 parameters per step-impedance joint with a
5-point reference; Table 4.3 "step": 45 parameters for hip, knee and ankle).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from codesign.control.parameters import codesign_layout
from codesign.model.morphology import build_morphology, parameter_space
from codesign.run.evaluation import evaluate_candidate
from codesign.optimize.space import Space
from codesign.screening.screen import screen
from codesign.run.spec import build_space, load_spec
from codesign.types import Candidate, EvalContext
from codesign.problems import exo_codesign as pr
from codesign.problems import get_problem
from codesign.errors import UserError
from codesign.topology.catalog import REPOSITORY_CATALOG, cached_catalog

ROOT = REPOSITORY_CATALOG.parents[1]


@pytest.fixture(scope="module")
def catalog():
    return cached_catalog()


@pytest.fixture(scope="module")
def problem():
    return get_problem("exo_codesign")


@pytest.fixture(scope="module")
def bounds(problem):
    return {p.name: p for p in problem.parameters}


def sample(group, problem, bounds, rng) -> dict[str, float]:
    names = list(group.parameters) + list(problem.pools[1].groups[0].parameters)
    return {n: float(rng.uniform(bounds[n].low, bounds[n].high)) for n in names}


def test_one_group_per_catalog_subspace_in_order(problem, catalog):
    subspaces = catalog.subspaces()
    groups = problem.pools[0].groups
    assert len(subspaces) == 126 and len(groups) == 126
    for (sid, tid, pair), group in zip(subspaces, groups):
        assert group.name == f"t{tid:02d}_a{pair[0]}-{pair[1]}"
        assert pr.parse_group_name(group.name) == (tid, tuple(pair))
    assert [g.name for g in problem.pools[1].groups] == ["common"]
    # OPT's subspace ids of the 126 x 1 space are the catalog's ids
    space = Space(problem.parameters, problem.pools)
    assert space.subspace_ids.tolist() == [sid for sid, _, _ in subspaces]
    for row, (sid, tid, pair) in enumerate(subspaces):
        assert space.group_names(space.subspaces[row])[0] == pr.group_name(tid, pair)


def test_group_holds_exactly_its_morphology_and_wr_control(problem, catalog, bounds):
    for (_sid, tid, pair), group in zip(catalog.subspaces(), problem.pools[0].groups):
        topology = catalog.topology(tid)
        prefix = f"t{tid:02d}."
        morph = {prefix + p.name for p in parameter_space(topology)}
        active = {prefix + n for a in pair for n in codesign_layout((f"j{a}",), ()).parameter_names()
                  if n.startswith(f"j{a}.")}
        passive = {f"{prefix}j{j.id}.{f}" for j in topology.joints if j.id not in pair
                   for f in ("k", "rest", "d")}
        assert set(group.parameters) == morph | active | passive
        assert len(group.parameters) == len(set(group.parameters))
        # Table 5.2: 2 per added joint; 19 per actuated joint (6 dx + 5 y + 4 K + 4 D);
        # eq. 5.12: 3 per passive joint
        n_joints = len(topology.joints)
        assert len(group.parameters) == 2 * n_joints + 2 * 19 + 3 * (n_joints - 2)
        for name in morph:
            p = next(q for q in parameter_space(topology) if prefix + q.name == name)
            assert (bounds[name].low, bounds[name].high) == (p.low, p.high)
    common = problem.pools[1].groups[0].parameters
    assert len(common) == 19 and all(n.startswith("ankle.") for n in common)


def test_sharing_is_by_meaning(problem, catalog):
    """Morphology shared within a topology; an actuated joint's control shared by the
    pairs that actuate it; nothing shared across topologies."""
    groups = {pr.parse_group_name(g.name): set(g.parameters) for g in problem.pools[0].groups}
    for (t1, p1), a in groups.items():
        for (t2, p2), b in groups.items():
            if (t1, p1) >= (t2, p2):
                continue
            shared = a & b
            if t1 != t2:
                assert not shared
                continue
            expected = {n for n in a if "." in n and n.split(".")[1].endswith(("_s", "_dx", "_x", "_z"))
                        and n.count(".") == 1}
            for j in set(p1) & set(p2):
                expected |= {n for n in a if n.startswith(f"t{t1:02d}.j{j}.")}
            for j in {jj.id for jj in catalog.topology(t1).joints} - set(p1) - set(p2):
                expected |= {n for n in a if n.startswith(f"t{t1:02d}.j{j}.")}
            assert shared == expected


def test_decode_round_trips(problem, bounds, catalog):
    rng = np.random.default_rng(7)
    for group in problem.pools[0].groups[::5]:
        x = sample(group, problem, bounds, rng)
        design = pr.decode_group(group.name, x, catalog)
        assert (design.topology, design.actuators) == pr.parse_group_name(group.name)
        assert pr.encode(design) == (group.name, x)
        morph_names = {p.name for p in parameter_space(catalog.topology(design.topology))}
        assert morph_names <= set(design.params)
        assert any(k.startswith("ankle.") for k in design.params)


def test_every_subspace_builds_and_screens(problem, bounds, catalog):
    """A sampled candidate of every subspace decodes into MODEL's morphology (the same as
    built from the unprefixed sample) and screens without raising."""
    rng = np.random.default_rng(11)
    verdicts = []
    for group in problem.pools[0].groups:
        x = sample(group, problem, bounds, rng)
        design = pr.decode_group(group.name, x, catalog)
        topology = catalog.topology(design.topology)
        prefix = pr.topology_prefix(design.topology)
        direct = {p.name: x[prefix + p.name] for p in parameter_space(topology)}
        morph = build_morphology(topology, design.actuators,
                                 {k: v for k, v in design.params.items() if k in direct})
        assert morph.params == direct
        verdict = screen(morph)
        assert verdict.ok == (verdict.code == 0)
        verdicts.append(verdict.ok)
    assert 0 < sum(verdicts) < len(verdicts)   # random designs: some pass, most do not


@pytest.mark.parametrize("change, needle", [
    (lambda x: x.pop(next(iter(x))), "missing"),
    (lambda x: x.__setitem__(next(iter(x)), math.nan), "not a finite number"),
    (lambda x: x.__setitem__(next(iter(x)), 1e9), "outside"),
    (lambda x: x.__setitem__(next(iter(x)), "0.5"), "not a finite number"),
    (lambda x: x.__setitem__(next(iter(x)), True), "not a finite number"),
])
def test_bad_candidates_are_failed_records(problem, bounds, change, needle):
    group = problem.pools[0].groups[3]
    x = sample(group, problem, bounds, np.random.default_rng(3))
    change(x)
    record = problem.evaluate(x, EvalContext(subspace=(group.name, "common")))
    assert record.status == "failed" and needle in record.message and record.message.startswith("decode")


def test_bad_groups_and_settings_are_failed_records(problem, bounds):
    group = problem.pools[0].groups[0]
    x = sample(group, problem, bounds, np.random.default_rng(5))
    for subspace in [(), ("t99_a1-2", "common"), ("nonsense", "common"), ("t01_a5-6", "common")]:
        record = problem.evaluate(x, EvalContext(subspace=subspace))
        assert record.status == "failed", subspace
    for bad, parse in (({"max_tme": 1.0}, problem.parse_settings),
                       ({"optimize_frequency": True}, problem.parse_settings),
                       ({"human_control": "ppoly"}, get_problem("human_gait").parse_settings)):
        with pytest.raises(UserError, match=next(iter(bad))):     # one line, before any evaluation
            parse(bad)
    record = get_problem("human_gait").evaluate({"hip.ref.y0": 0.1}, EvalContext())
    assert record.status == "failed" and "hip.ref.dx0" in record.message


def test_human_gait_space_is_table_4_3_step():
    names = [p.name for p in get_problem("human_gait").parameters]
    assert len(names) == 45 and len(set(names)) == 45      # Table 4.3, "step" column
    for joint in ("hip", "knee", "ankle"):
        own = [n for n in names if n.startswith(joint + ".")]
        assert len(own) == 15   # 5 dx + 4 y + shared t1, dt + K v1, v2 + D v1, v2
    assert [o.metric for o in get_problem("human_gait").objectives] == [
        "time_fraction", "speed_match", "speed_std", "assist_fraction", "non_contact_time",
        "foot_slip_fraction", "grf_peak_bw", "knee_hyperextension_peak_deg", "torso_pitch_rms_deg",
        "knee_flexion_stance_mean_deg", "stride_r_hip", "stride_r_knee", "stride_r_ankle",
        "ankle_plantarflexion_peak_deg", "grf_peak_bw", "grf_peak_bw_start", "torque_rms"]
    assert [o.metric for o in get_problem("exo_codesign").objectives] == [
        "time_fraction", "longest_segment", "singularity", "foot_slip_fraction", "non_contact_time",
        "grf_peak_bw", "knee_hyperextension_peak_deg", "actuator_speed_ratio_peak", "actuator_thermal_ratio",
        "interaction_force_peak_bw", "cuff_force_peak", "torso_pitch_rms_deg",
        "knee_flexion_stance_mean_deg", "speed_assist_score", "power"]


@pytest.mark.parametrize("spec", ["pipelines/human-gait.toml", "pipelines/codesign.toml",
                                  "studies/physical-stages/demo-thesis.toml"])
def test_pipelines_validate(spec):
    from codesign.problems import get_problem

    loaded = load_spec(ROOT / spec)
    space = build_space(loaded, get_problem(loaded.problem))
    expected = 1 if loaded.problem == "human_gait" else 126
    assert space.n_subspaces == expected


def test_the_demo_starts_from_the_gait_and_the_screening(tmp_path, monkeypatch):
    """`make run`'s demo (pipelines/demo.toml) reads the load screening's starts and its
    per-subspace table that `make run` writes just before (here a small screening of its
    own) and the shipped walking gait: every particle starts within 2 % of the gait's
    values, each served subspace's particles within 2 % of its screened morphology and
    sized drivetrains, and the subspaces no drivetrain serves are not in the space."""
    import json

    from codesign.commands.screen import SUBSPACE_LOAD_FIELDS, screen_catalog, write_dict_rows
    from codesign.run.spec import parse_spec
    from codesign.screening.loads import read_reference_gait
    from codesign.screening.screen import ScreenSettings

    rows = screen_catalog(cached_catalog(), 4, 0, ScreenSettings(n_points=8), workers=1,
                          reference=read_reference_gait())
    sized = [r["sized"] for r in rows if r["sized"] is not None]
    unserved = {(r["topology"], (r["actuator_1"], r["actuator_2"])) for r in rows if r["served"] == 0}
    assert sized and unserved
    starts, table = tmp_path / "load_designs.json", tmp_path / "loads_subspaces.csv"
    starts.write_text(json.dumps(sized))
    write_dict_rows(rows, SUBSPACE_LOAD_FIELDS, table)
    monkeypatch.chdir(ROOT)              # the spec names docs/designs/... from the repository
    text = (ROOT / "pipelines" / "demo.toml").read_text()
    assert "results/screen/load_designs.json" in text and "results/screen/loads_subspaces.csv" in text
    spec = parse_spec(text.replace("results/screen/load_designs.json", str(starts))
                      .replace("results/screen/loads_subspaces.csv", str(table)), "demo.toml")
    problem = get_problem(spec.problem)
    space = build_space(spec, problem)
    assert spec.problem == "exo_codesign_wearer_drive" and space.n_subspaces == 126 - len(unserved)
    groups = {name for combo in space.subspaces for name in space.group_names(combo)}
    assert not groups & {pr.group_name(t, pair) for t, pair in unserved}
    gait = json.loads((ROOT / "docs/designs/human-gentle-walking.json").read_text())["params"]
    for name, value in gait.items():
        i = space.index[name]
        p = space.parameters[i]
        assert space.sub_init_low[0, i] == pytest.approx(max(p.low, value - 0.02 * (p.high - p.low)))
        assert space.sub_init_high[0, i] == pytest.approx(min(p.high, value + 0.02 * (p.high - p.low)))
    design = sized[0]
    group = pr.group_name(design["topology"], tuple(design["actuators"]))
    s = next(k for k, combo in enumerate(space.subspaces) if group in space.group_names(combo))
    assert any(name.endswith(".motor") for name in design["params"])     # its drivetrains start it too
    for name, value in design["params"].items():
        i = space.index[pr.topology_prefix(design["topology"]) + name]
        assert space.sub_init_low[s, i] <= value <= space.sub_init_high[s, i]
        assert space.sub_init_high[s, i] - space.sub_init_low[s, i] <= 0.04 * (space.parameters[i].high
                                                                              - space.parameters[i].low) + 1e-12


@pytest.mark.slow
def test_real_evaluation_end_to_end(problem, bounds, catalog):
    """Through OPT's worker path: a design that passes screening is simulated; one that
    does not is recorded with time 0 and singularity 1 (not simulated)."""
    rng = np.random.default_rng(2)
    settings = problem.parse_settings({"max_time": 0.3})
    seen = set()
    for _ in range(400):
        group = problem.pools[0].groups[int(rng.integers(126))]
        x = sample(group, problem, bounds, rng)
        design = pr.decode_group(group.name, x, catalog)
        ok = screen(build_morphology(catalog.topology(design.topology), design.actuators,
                                     {k: v for k, v in design.params.items() if "." not in k})).ok
        if ok in seen:
            continue
        seen.add(ok)
        sid = next(s for s, t, p in catalog.subspaces() if pr.group_name(t, p) == group.name)
        cand = Candidate(0, 0, sid, (group.name, "common"), x, 0)
        record = evaluate_candidate("exo_codesign", cand, settings, problem.objectives, worker="test")
        assert record.status == "ok", record.message
        m = record.metrics
        assert m["time_fraction"] == pytest.approx(m["time"] / 0.3, rel=1e-12)
        assert m["singularity"] == (0.0 if ok else 1.0)
        assert m["longest_segment"] == pytest.approx(
            build_morphology(catalog.topology(design.topology), design.actuators,
                             {k: v for k, v in design.params.items() if "." not in k}).longest_link)
        if ok:
            assert 0.0 < m["time"] <= 0.3
        else:
            assert m["time"] == 0.0 and record.stage == 0 and record.stage_value == 0.0
        if len(seen) == 2:
            break
    assert seen == {True, False}


@pytest.mark.slow
def test_human_gait_evaluation_end_to_end():
    mid = {p.name: 0.5 * (p.low + p.high) for p in get_problem("human_gait").parameters}
    cand = Candidate(0, 0, 1, ("all",), mid, 0)
    settings = get_problem("human_gait").parse_settings({"max_time": 0.3})
    record = evaluate_candidate("human_gait", cand, settings, get_problem("human_gait").objectives,
                                worker="test")
    assert record.status == "ok", record.message
    assert 0.0 < record.metrics["time"] <= 0.3
    assert record.metrics["added_mass"] == 0.0


def test_balance_problem_adds_the_pairs_torso_terms_and_decodes_by_them(problem, catalog):
    # exo_codesign_balance = exo_codesign + six torso-feedback parameters per actuated WR
    # joint (codesign_layout(torso_feedback=True)); decode reads the law from the problem's
    # options (torso_feedback), never from the parameters' names
    balance = get_problem("exo_codesign_balance")
    plain_groups = {g.name: set(g.parameters) for g in problem.pools[0].groups}
    for (_sid, tid, pair), group in zip(catalog.subspaces(), balance.pools[0].groups):
        extra = set(group.parameters) - plain_groups[group.name]
        assert extra == {f"t{tid:02d}.j{a}.torso.{f}" for a in pair
                         for f in ("step.t1", "step.dt", "K.v1", "K.v2", "D.v1", "D.v2")}
    assert balance.objectives == problem.objectives
    rng = np.random.default_rng(3)
    bounds = {p.name: p for p in balance.parameters}
    group = balance.pools[0].groups[7]
    params = sample(group, balance, bounds, rng)
    design = pr.decode_group(group.name, params, catalog, balance.options)
    torso = {k for k in design.params if ".torso." in k}
    assert len(torso) == 12
    plain = pr.decode_group(group.name, params, catalog, problem.options)    # the same values, thesis law
    assert not any(".torso." in k for k in plain.params)
    assert plain.params == {k: v for k, v in design.params.items() if ".torso." not in k}
    one_missing = next(k for k in params if k.endswith("torso.K.v2"))
    with pytest.raises(ValueError, match=one_missing.replace(".", r"\.")):
        pr.decode_group(group.name, {k: v for k, v in params.items() if k != one_missing}, catalog, balance.options)


def test_thesis_drive_problem_adds_the_pairs_drivetrains_and_decodes_by_them(problem, catalog):
    # exo_codesign_drive = exo_codesign + each actuated joint's motor and extra reduction
    # (issue 30, the thesis's law); decode reads them by the problem's options
    from codesign.model.drivetrain import STAGE_RATIO_BOUNDS, motor_catalog

    drive = get_problem("exo_codesign_drive")
    plain_groups = {g.name: set(g.parameters) for g in problem.pools[0].groups}
    for (_sid, tid, pair), group in zip(catalog.subspaces(), drive.pools[0].groups):
        extra = set(group.parameters) - plain_groups[group.name]
        assert extra == {f"t{tid:02d}.j{a}.{f}" for a in pair for f in ("motor", "stage_ratio")}
    bounds = {p.name: p for p in drive.parameters}
    assert (bounds["t01.j1.motor"].low, bounds["t01.j1.motor"].high) == (0.0, len(motor_catalog()))
    assert (bounds["t01.j3.stage_ratio"].low, bounds["t01.j3.stage_ratio"].high) == STAGE_RATIO_BOUNDS
    assert drive.objectives == problem.objectives
    group = drive.pools[0].groups[7]
    params = sample(group, drive, bounds, np.random.default_rng(5))
    design = pr.decode_group(group.name, params, catalog, drive.options)
    assert sum(k.endswith((".motor", ".stage_ratio")) for k in design.params) == 4
    assert not any(k.startswith("hip.") for k in design.params)     # the thesis's law, not the wearer's
    groups, candidate = drive.walking.encode(design)
    assert drive.walking.decode(groups, candidate, drive.parse_settings({})) == design


def test_wearer_balance_drive_problem_adds_the_hip_torso_term_to_the_wearer_s_law(catalog):
    # exo_codesign_wearer_balance_drive = exo_codesign_wearer_drive with human_gait_balance's
    # law (issue 31): the common pool is a human-like gait design's 51 parameters, and a
    # design carrying them decodes and encodes by them
    plain, balance = get_problem("exo_codesign_wearer_drive"), get_problem("exo_codesign_wearer_balance_drive")
    common_plain = set(plain.pools[1].groups[0].parameters)
    common = set(balance.pools[1].groups[0].parameters)
    assert common - common_plain == {f"hip.torso.{n}" for n in ("step.t1", "step.dt", "K.v1", "K.v2", "D.v1", "D.v2")}
    assert [g.parameters for g in balance.pools[0].groups] == [g.parameters for g in plain.pools[0].groups]
    bounds = {p.name: p for p in balance.parameters}
    group = balance.pools[0].groups[7]
    params = {**sample(group, balance, bounds, np.random.default_rng(6)),
              **{n: 0.5 * (bounds[n].low + bounds[n].high) for n in common}}
    design = pr.decode_group(group.name, params, catalog, balance.options)
    assert sum(k.startswith("hip.torso.") for k in design.params) == 6
    groups, candidate = balance.walking.encode(design)
    assert balance.walking.decode(groups, candidate, balance.parse_settings({})) == design
