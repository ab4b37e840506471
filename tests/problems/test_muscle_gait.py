"""The muscle-driven human's searched reflexes (issue 45, item 4;
codesign/problems/muscle_gait.py): the space, the stages, bad input, and the stored walk."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from codesign.control import reflex as R
from codesign.errors import UserError
from codesign.problems import muscle_gait as mg
from codesign.problems.compose import walking_problem
from codesign.problems.options import parse_options
from codesign.walking import WalkSettings
from codesign.walking.design import Design
from codesign.walking.setup import check_design

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "designs" / "human-muscles.json"


def muscle_problem():
    return walking_problem(parse_options({"name": "human_gait", "wearer_model": "muscles"})[1])


def test_the_search_starts_around_the_published_reflexes_inside_their_ranges():
    published = {row.name: row.value for row in R.PARAMETER_SOURCES}
    parameters = mg.reflex_parameters()
    assert [p.name for p in parameters] == [R.REFLEX_PREFIX + n for n in R.REFLEX_RANGES]
    for p in parameters:
        value = published[p.name.removeprefix(R.REFLEX_PREFIX)]
        lo, hi = p.init_range
        assert p.low <= lo <= value <= hi <= p.high, p.name
        assert hi - lo <= 2 * mg.START_SPREAD * max(abs(value), 0.1 * (p.high - p.low)) + 1e-12, p.name


def test_the_muscle_problem_searches_the_reflexes_and_prices_metabolic_cost():
    problem = muscle_problem()
    assert {p.name for p in problem.parameters} == {R.REFLEX_PREFIX + n for n in R.REFLEX_RANGES}
    assert problem.objectives[-1].metric == "metabolic_cost" and problem.objectives[-1].sense == "minimize"
    knee = [(o.metric, o.sense, o.until) for o in problem.objectives if o.metric.startswith("knee_flexion_stance_peak")]
    assert knee == [("knee_flexion_stance_peak_min_deg", "maximize", mg.KNEE_STANCE_PEAK_MIN_DEG),
                    ("knee_flexion_stance_peak_deg", "minimize", mg.KNEE_STANCE_PEAK_MAX_DEG)]
    # the impedance human's problem is untouched: its law searched, its torque stage last
    human = walking_problem(parse_options({"name": "human_gait"})[1])
    assert human.objectives[-1].metric == "torque_rms" and not any(p.name.startswith("reflex.") for p in human.parameters)


def test_a_decoded_candidate_is_a_complete_design_and_a_bad_one_names_its_parameter():
    problem = muscle_problem()
    middle = {p.name: 0.5 * sum(p.init_range) for p in problem.parameters}
    settings = problem.parse_settings({})
    design = problem.walking.decode((), middle, settings)
    check_design(design, settings.walk)                      # the law's slots filled, the reflexes known
    assert {k: v for k, v in design.params.items() if k.startswith("reflex.")} == middle
    with pytest.raises(ValueError, match="reflex.g_sol"):
        problem.walking.decode((), {**middle, "reflex.g_sol": -0.5}, settings)


def test_reflexes_are_known_only_to_the_muscle_wearer():
    design = Design(json.loads(DESIGN.read_text())["params"])
    check_design(design, WalkSettings.from_dict({"wearer_model": "muscles"}))
    with pytest.raises(UserError, match="unknown"):
        check_design(design, WalkSettings.from_dict({}))


@pytest.mark.parametrize("name, value", [("g_sol", -0.1), ("k_p", 10.5), ("phi_k_off", 3.3), ("stance_load", 0.0)])
def test_a_reflex_outside_its_physical_range_is_one_line(name, value):
    with pytest.raises(UserError) as err:
        R.reflex_params(80.0, **{name: value})
    message = str(err.value)
    assert "\n" not in message and name in message and "physical range" in message


def test_a_check_changes_the_muscle_wearers_contact_model():
    """A report's or a study's soft-contact check changes a parsed setting (with_rollout);
    the muscle wearer runs under every contact model."""
    walk = WalkSettings.from_dict({"wearer_model": "muscles"})
    assert walk.with_rollout(h=5e-4).rollout.h == 5e-4
    soft = walk.with_rollout(contact_model="soft")
    assert soft.rollout.contact_model == "soft" and soft.wearer_model == "muscles"


def test_simulate_refuses_a_reflex_out_of_range_with_exit_2_and_writes_nothing(tmp_path):
    doc = json.loads(DESIGN.read_text())
    doc["params"]["reflex.g_vas"] = 7.0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "codesign.cli", "simulate", str(path), "--out", str(out),
                          "--no-animation", "--max-time", "0.05"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "g_vas" in lines[0] and "physical range" in lines[0]
    assert not out.exists()


def walked(path: Path, **change) -> dict[str, float]:
    """The metrics of the stored muscle-driven design at PATH walked under its own
    evaluation settings (its search's robust checks left out), CHANGE applied (e.g.
    ``h=0.5e-3``, ``contact_model="hard"``)."""
    from codesign.problems.robust import read_robust_checks
    from codesign.walking.design import load_design
    from codesign.walking.evaluation import evaluate
    design = load_design(path)
    evaluation = dict(design.evaluation)
    read_robust_checks(evaluation)
    return evaluate(design, WalkSettings.from_dict({**evaluation, "wearer_model": "muscles", **change})).metrics


def test_the_stored_muscle_driven_human_walks():
    """docs/designs/human-muscles.json (the device's 16-worker search, studies/muscle-wearer)
    replays here: 10 s, 1.2-1.4 m/s, the pitch assist unused, per-stride r against Winter's
    hip and knee >= 0.95 (issue 45's gait-lab bounds)."""
    m = walked(DESIGN)
    assert m["time"] == 10.0 and 1.2 <= m["speed"] <= 1.4 and m["assist_fraction"] == 0.0
    assert m["stride_r_hip"] >= 0.95 and m["stride_r_knee"] >= 0.95
    assert m["ankle_plantarflexion_peak_deg"] >= 10.0


@pytest.mark.peers
def test_the_stored_walk_under_the_event_driven_hard_contacts_is_the_stepping_walk():
    """The same rigid feet integrated two ways: the event-driven rollout (DOPRI5, exact
    impacts and mode switches; a point an impact lifts slower than the rest speed, 0.1
    mm/s by default, stays on the ground, docs/contacts.md) walks human-muscles.json the
    whole 10 s as the 1-ms time-stepping rollout does (measured: speed -1.4 %, cost +1.2 %,
    heel strikes -2 %). Before the rest speed it stopped at 4.24 s: such a point sank, its
    guard unarmed; with the rest speed after guards too it fell at 3.34 s."""
    stepped = walked(DESIGN)
    event = walked(DESIGN, contact_model="hard_event")
    assert event["time"] == 10.0
    assert event["speed"] == pytest.approx(stepped["speed"], rel=0.02)
    assert event["metabolic_cost"] == pytest.approx(stepped["metabolic_cost"], rel=0.02)
    for joint in ("hip", "knee", "ankle"):
        assert abs(event[f"stride_r_{joint}"] - stepped[f"stride_r_{joint}"]) <= 0.015, joint
    assert event["ankle_plantarflexion_peak_deg"] == pytest.approx(stepped["ankle_plantarflexion_peak_deg"], abs=1.0)
    # the heel strikes, impacts counted by their impulse in both (2.19 against 2.24 BW)
    assert event["grf_peak_bw"] == pytest.approx(stepped["grf_peak_bw"], rel=0.05)


HEEL_PAD_WALK = ROOT / "studies" / "muscle-wearer" / "human-muscles-heelpad-grf.json"
# SCONE's Human0916.osim heel under Simbody's HuntCrossleyForce: a sphere of R = 0.04 m on a
# platform, each of stiffness 2e6: E = (E1^(2/3) / 2)^(3/2), f = (4/3) sqrt(R) E x^1.5 (1 + 1.5 c v)
SCONE_HEEL_E = (0.5 * 2e6 ** (2 / 3)) ** 1.5            # Pa
SCONE_HEEL_K = 4 / 3 * 0.04 ** 0.5 * SCONE_HEEL_E       # N/m^1.5


def test_the_heel_pad_is_scones_heel_linearised_at_one_body_weight():
    """The heel pad of studies/muscle-wearer (docs/muscles.md, "On a heel pad"): SCONE's
    Human0916.osim heel, a Hunt-Crossley sphere (R 0.04 m, stiffness 2e6, dissipation
    1 s/m) on a platform of the same, under Simbody's law f = (4/3) sqrt(R) E x^1.5
    (1 + 1.5 c v), E = (E1^(2/3) / 2)^(3/2): its tangent stiffness 1.5 f / x and damping
    1.5 c f at this person's weight, against the pad the stored walk carries (within 15 %)."""
    from codesign.model.anthropometry import human_geometry
    from codesign.walking.design import load_design
    f = human_geometry().mass_kg * 9.81
    x = (f / SCONE_HEEL_K) ** (2 / 3)
    assert x == pytest.approx(0.0237, abs=5e-4)               # m: 24 mm, as docs/muscles.md says
    pad = load_design(HEEL_PAD_WALK).evaluation
    assert pad["contact_model"] == "soft_step"
    assert pad["soft_stiffness"] == pytest.approx(1.5 * f / x, rel=0.15)
    assert pad["soft_damping"] == pytest.approx(1.5 * 1.0 * f, rel=0.15)


def test_the_heel_pad_walk_lands_within_the_gait_labs_ground_reaction():
    """studies/muscle-wearer/human-muscles-heelpad-grf.json: on its heel pad it walks 10 s
    with the ground reaction within Keller et al. 1996's 1.3 BW after the start (issue 45),
    and within 1.35 BW at the start and at a quarter of the time step (the stepped law's
    convergence; the event-driven peer, 1.33 BW, takes ~1 min and is in docs/muscles.md);
    its reflexes on the rigid heel (hard contacts) land at more than 2 BW in the first
    seconds, before they fall."""
    on_pad = walked(HEEL_PAD_WALK)
    for m in (on_pad, walked(HEEL_PAD_WALK, h=0.25e-3)):
        assert m["time"] == 10.0 and 1.2 <= m["speed"] <= 1.4 and m["assist_fraction"] == 0.0
        assert m["grf_peak_bw"] <= 1.35 and m["grf_peak_bw_start"] <= 1.35
    assert on_pad["grf_peak_bw"] <= 1.3
    assert walked(HEEL_PAD_WALK, contact_model="hard")["grf_peak_bw_start"] > 2.0


def test_the_heel_pad_walk_at_peoples_cost():
    """studies/muscle-wearer/human-muscles-heelpad.json (the README's ground-reaction row):
    on its heel pad it walks 10 s within Keller et al. 1996's 1.3 BW (start included) at a
    net metabolic cost within 30 % of people's 2.2-2.4 J/(kg m), per stride r against Winter's
    hip and knee >= 0.95 / 0.90 (issue 45); at half and a quarter of the step within 1.5 BW
    (1.31-1.45: docs/muscles.md)."""
    from codesign.walking.design import load_design
    path = ROOT / "studies" / "muscle-wearer" / "human-muscles-heelpad.json"
    assert load_design(path).evaluation == load_design(HEEL_PAD_WALK).evaluation      # the same pad
    walks = [walked(path, h=h) for h in (1e-3, 0.5e-3, 0.25e-3)]
    m = walks[0]
    assert m["time"] == 10.0 and 1.2 <= m["speed"] <= 1.4 and m["assist_fraction"] == 0.0
    assert m["grf_peak_bw"] <= 1.3 and m["grf_peak_bw_start"] <= 1.3
    assert m["metabolic_cost"] <= 1.3 * 2.3 and m["stride_r_hip"] >= 0.95 and m["stride_r_knee"] >= 0.90
    assert all(w["time"] == 10.0 and max(w["grf_peak_bw"], w["grf_peak_bw_start"]) <= 1.5 for w in walks)


def test_the_heel_pad_walk_on_scones_nonlinear_heel():
    """docs/muscles.md ("On a heel pad"): human-muscles-heelpad.json, searched on the linear
    pad, walks on SCONE's heel itself -- a Hertz sphere with Hunt-Crossley dissipation,
    k = (4/3) sqrt(R) E for R = 0.04 m and E = 7.07e5 Pa, c = 1.5 x 1 s/m, no linear damper
    -- within 1.3 BW in steady walking, its start's landing higher (1.49 BW, within 1.6),
    faster (1.38 m/s) and slipping more than on the pad it was searched on."""
    path = ROOT / "studies" / "muscle-wearer" / "human-muscles-heelpad.json"
    m = walked(path, soft_stiffness=SCONE_HEEL_K, soft_exponent=1.5, soft_dissipation=1.5, soft_damping=0.0)
    assert m["time"] == 10.0 and 1.3 <= m["speed"] <= 1.45 and m["assist_fraction"] == 0.0
    assert m["grf_peak_bw"] <= 1.3 < m["grf_peak_bw_start"] <= 1.6
    assert m["foot_slip_fraction"] > walked(path)["foot_slip_fraction"]


YIELD_WALK = ROOT / "docs" / "designs" / "human-muscles-yield.json"


def test_the_walk_on_the_papers_soft_limits_meets_the_gait_labs_stages():
    """docs/designs/human-muscles-yield.json (issue 45's validation; the README's table):
    with Geyer & Herr's soft joint limits on the heel pad it walks 10 s with the ground
    reaction within Keller et al. 1996's 1.3 BW (start included), each leg's stance knee
    yielding 10-25 deg, per stride r against Winter's hip / knee / ankle >= 0.95 / 0.90 /
    0.75, push-off >= 10 deg, at a net metabolic cost within 30 % of people's 2.2-2.4
    J/(kg m); at half the step the same within 1.35 BW; without the soft limits the same
    reflexes lock the stance knee on the ligament (the yield is the stops')."""
    m = walked(YIELD_WALK)
    assert m["time"] == 10.0 and 1.2 <= m["speed"] <= 1.4 and m["assist_fraction"] == 0.0
    assert m["grf_peak_bw"] <= 1.3 and m["grf_peak_bw_start"] <= 1.3
    assert 10.0 <= m["knee_flexion_stance_peak_min_deg"] <= m["knee_flexion_stance_peak_deg"] <= 25.0
    assert m["stride_r_hip"] >= 0.95 and m["stride_r_knee"] >= 0.90 and m["stride_r_ankle"] >= 0.75
    assert m["ankle_plantarflexion_peak_deg"] >= 10.0 and m["metabolic_cost"] <= 1.3 * 2.3
    half = walked(YIELD_WALK, h=0.5e-3)
    assert half["time"] == 10.0 and max(half["grf_peak_bw"], half["grf_peak_bw_start"]) <= 1.35
    assert half["knee_flexion_stance_peak_min_deg"] >= 10.0 and half["stride_r_ankle"] >= 0.74
    assert walked(YIELD_WALK, soft_joint_limits=False)["knee_flexion_stance_peak_deg"] < 0.0


LAB_WALK = ROOT / "docs" / "designs" / "human-muscles-lab.json"


@pytest.mark.peers
def test_the_gait_lab_walk_costs_what_people_pay_at_every_step_and_on_the_event_driven_law():
    """docs/designs/human-muscles-lab.json (issue 45's validation; the README's table): the
    yield search's every stage (studies/muscle-wearer/search-lab.toml) from the loads
    study's gait-lab walkers. At the 1-ms step, at 0.5 and 0.25 ms and under the
    event-driven soft law it walks 10 s with the ground reaction within Keller et al.
    1996's 1.3 BW (start included), each leg's stance knee yielding 10-25 deg, per stride r
    against Winter's hip / knee / ankle >= 0.95 / 0.90 / 0.75, push-off >= 10 deg, at a net
    metabolic cost within 30 % of every value of people's 2.0-2.4 J/(kg m) (issue 45) --
    measured 2.32-2.33, resolved by the step to 1 % (the yield walk: 2.61)."""
    costs = []
    for change in ({}, {"h": 0.5e-3}, {"h": 0.25e-3}, {"contact_model": "soft"}):
        m = walked(LAB_WALK, **change)
        assert m["time"] == 10.0 and 1.2 <= m["speed"] <= 1.4 and m["assist_fraction"] == 0.0, change
        assert m["grf_peak_bw"] <= 1.3 and m["grf_peak_bw_start"] <= 1.3, change
        assert 10.0 <= m["knee_flexion_stance_peak_min_deg"] <= m["knee_flexion_stance_peak_deg"] <= 25.0, change
        assert m["stride_r_hip"] >= 0.95 and m["stride_r_knee"] >= 0.90 and m["stride_r_ankle"] >= 0.75, change
        assert m["ankle_plantarflexion_peak_deg"] >= 10.0, change
        assert 0.7 * 2.4 <= m["metabolic_cost"] <= 1.3 * 2.0, change
        costs.append(m["metabolic_cost"])
    assert max(costs) - min(costs) <= 0.01 * min(costs)


PERSON_WALK = ROOT / "studies" / "muscle-wearer" / "human-muscles-person.json"


@pytest.mark.peers
def test_priced_as_a_persons_the_gait_lab_walk_costs_within_30_percent_of_what_people_pay():
    """studies/muscle-wearer/human-muscles-person.json (search-person-lab.toml, -2 to -5:
    every gait-lab stage of human-muscles-lab.json's search, each walk priced by Bhargava
    et al. 2004 net of the paper's standing, docs/muscles.md "Net of whose standing"): it
    walks 10 s meeting every stage -- 1.3 BW start included, the knee yielding 10-25 deg,
    r >= 0.95 / 0.90 / 0.75, push-off >= 10 deg -- at 3.089 J/(kg m) so priced: within 30 %
    of the top of people's 2.0-2.4 (issue 45), +29 % of 2.4, not of 2.0. At 0.5 and 0.25 ms
    and under the event-driven soft law the landings and the knee keep their stages and the
    price moves by under 1 %; the ankle's stride shape there is r 0.742-0.747. Priced as
    the lab walk was (Umberger 2010 net of its own standing) the same walk costs 2.22
    (net of the paper's standing 3.88)."""
    changes = ({}, {"h": 0.5e-3}, {"h": 0.25e-3}, {"contact_model": "soft"})
    walks = [walked(PERSON_WALK, **change) for change in changes]
    for change, m in zip(changes, walks):
        assert m["time"] == 10.0 and 1.2 <= m["speed"] <= 1.4 and m["assist_fraction"] == 0.0, change
        assert m["grf_peak_bw"] <= 1.3 and m["grf_peak_bw_start"] <= 1.3, change
        assert 10.0 <= m["knee_flexion_stance_peak_min_deg"] <= m["knee_flexion_stance_peak_deg"] <= 25.0, change
        assert m["stride_r_hip"] >= 0.95 and m["stride_r_knee"] >= 0.90 and m["stride_r_ankle"] >= 0.74, change
        assert m["ankle_plantarflexion_peak_deg"] >= 10.0, change
        assert m["metabolic_cost"] <= 1.3 * 2.4, change
    costs = [m["metabolic_cost"] for m in walks]
    assert costs[0] == pytest.approx(3.089, abs=0.001) and costs[0] > 1.3 * 2.0
    assert max(costs) - min(costs) <= 0.01 * min(costs)
    assert walks[0]["stride_r_ankle"] >= 0.75
    umberger_own = walked(PERSON_WALK, metabolic_model="umberger2010", standing_reference="walker")
    assert umberger_own["metabolic_cost"] < 2.4


TRAIL_WALK = ROOT / "studies" / "muscle-wearer" / "human-muscles-person-trail.json"


@pytest.mark.peers
def test_the_trailing_leg_off_the_balance_reflexes_walks_every_stage_for_less():
    """studies/muscle-wearer/human-muscles-person-trail.json (search-person-lab-trail.toml,
    -2, -3: the person-priced gait-lab search with evaluation.trailing_balance = false, the
    trailing leg of double support under Delta_S alone as in SCONE's adaptation): at 1, 0.5
    and 0.25 ms it walks 10 s meeting every gait-lab stage of issue 45 (1.3 BW start
    included, the knee yielding 10-25 deg, r >= 0.95 / 0.90 / 0.75, push-off >= 10 deg) at
    2.979 J/(kg m) by Bhargava 2004 net of a person's standing, the price moving by under
    1 % with the step: 0.10 below the paper's law's stored walk (3.089) and its plateau
    (3.077), still above 1.3 x 2.0. The same reflexes with the paper's trailing leg (its
    hamstrings under the trunk PD against its hip flexors) pay 3.190, 0.21 more, and land
    at 1.46 BW at the start."""
    walks = [walked(TRAIL_WALK, **change) for change in ({}, {"h": 0.5e-3}, {"h": 0.25e-3})]
    for m in walks:
        assert m["time"] == 10.0 and 1.2 <= m["speed"] <= 1.4 and m["assist_fraction"] == 0.0
        assert m["grf_peak_bw"] <= 1.3 and m["grf_peak_bw_start"] <= 1.3
        assert 10.0 <= m["knee_flexion_stance_peak_min_deg"] <= m["knee_flexion_stance_peak_deg"] <= 25.0
        assert m["stride_r_hip"] >= 0.95 and m["stride_r_knee"] >= 0.90 and m["stride_r_ankle"] >= 0.75
        assert m["ankle_plantarflexion_peak_deg"] >= 10.0
    costs = [m["metabolic_cost"] for m in walks]
    assert costs[0] == pytest.approx(2.979, abs=0.001) and 1.3 * 2.0 < costs[0] < 1.3 * 2.4
    assert max(costs) - min(costs) <= 0.01 * min(costs)
    paper = walked(TRAIL_WALK, trailing_balance=True)
    assert paper["time"] == 10.0 and paper["metabolic_cost"] - costs[0] == pytest.approx(0.21, abs=0.01)
    assert paper["grf_peak_bw_start"] > 1.3
