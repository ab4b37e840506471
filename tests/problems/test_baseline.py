"""The anthropomorphic baseline (thesis 5.6): mass lumping, evaluation, bad input.

Truths: hand-computed composites (parallel-axis theorem), MODEL's mass model and
``mass_report`` (total added mass), MODEL's ``compose_inertia`` (an independent
implementation of the same composite) and the ``human_gait`` problem's evaluation of the
same controller (an independent path to the same rollout).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from codesign.errors import UserError
from codesign.objectives import score
from codesign.model.anthropometry import human_geometry
from codesign.model.human import build_human
from codesign.model.morphology import (BAR_MASS_PER_M, build_morphology, compose_inertia,
                                       mass_report, sample_parameters)
from codesign.types import EvalContext
from codesign.model import lumping as lp
from codesign.problems import baseline as bl
from codesign.run.stored import inline_run_reference
from codesign.problems import get_problem
from codesign.problems.walking import WalkingProblemSettings
from codesign.topology.catalog import cached_catalog
from codesign.walking import WalkSettings, typical_codesign_design, typical_human_design
from codesign.walking.setup import morphology_params


@pytest.fixture(scope="module")
def parallelogram():
    """MODEL's parallelogram design of topology 1 (joints 1, 3 actuated) as a Morphology."""
    design = typical_codesign_design()
    topology = cached_catalog().topology(1)
    return build_morphology(topology, design.actuators, morphology_params(topology, design.params),
                            human_geometry()), design


def test_add_point_masses_against_hand_computed_composites():
    mass = np.array([2.0, 0.0, 3.0])
    com = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, -1.0]])
    inertia = np.array([1.0, 0.0, 0.5])
    before = (mass.copy(), com.copy(), inertia.copy())
    m, c, i = lp.add_point_masses(mass, com, inertia, [0, 2, 2],
                                  [1.0, 1.0, 2.0], [[3.0, 0.0], [0.0, 1.0], [1.0, -1.0]],
                                  [0.5, 0.0, 0.1])
    # body 0: 2 kg at (0, 0), I 1, plus 1 kg at (3, 0), I 0.5 -> 3 kg at (1, 0);
    # I = 1 + 2 * 1^2 + 0.5 + 1 * 2^2 = 7.5 kg m^2
    assert m[0] == 3.0 and np.allclose(c[0], [1.0, 0.0], atol=1e-15) and i[0] == pytest.approx(7.5, abs=1e-12)
    # body 2: 3 kg at (0, -1), I 0.5, plus 1 kg at (0, 1) and 2 kg (I 0.1) at (1, -1):
    # 6 kg at (0, -1) + (1 (0, 2) + 2 (1, 0)) / 6 = (1/3, -2/3); about the origin
    # I_O = 0.5 + 3 * 1 + 1 * 1 + 0.1 + 2 * 2 = 8.6, so I = 8.6 - 6 (1/9 + 4/9) = 79/15
    assert m[2] == 6.0 and np.allclose(c[2], [1 / 3, -2 / 3], atol=1e-15)
    assert i[2] == pytest.approx(79 / 15, abs=1e-12)
    # body 1 (massless, no parts) untouched; mass conserved; inputs not modified
    assert m[1] == 0.0 and np.all(c[1] == 0.0) and i[1] == 0.0
    assert abs(m.sum() - (mass.sum() + 4.0)) <= 1e-12
    for a, b in zip(before, (mass, com, inertia)):
        assert np.array_equal(a, b)
    # zero-mass parts leave every number bit for bit (the shift form)
    m0, c0, i0 = lp.add_point_masses(mass, com, inertia, [0, 2], [0.0, 0.0], [[0.3, 0.1], [-0.2, 5.0]], [0.0, 0.0])
    assert np.array_equal(m0, mass) and np.array_equal(c0, com) and np.array_equal(i0, inertia)
    with pytest.raises(ValueError):
        lp.add_point_masses(mass, com, inertia, [3], [1.0], [[0.0, 0.0]], [0.0])
    with pytest.raises(ValueError):
        lp.add_point_masses(mass, com, inertia, [0], [-1.0], [[0.0, 0.0]], [0.0])


def test_mass_rule_on_the_parallelogram_design(parallelogram):
    morph, _design = parallelogram
    pos, human = morph.joint_positions, morph.human
    loads = lp.segment_loads(morph)

    def bar(a, b):
        return BAR_MASS_PER_M * float(np.linalg.norm(pos[a] - pos[b]))

    per = {s: sum(ld.mass for ld in loads if ld.segment == s) for s in lp.SEGMENTS}
    # topology 1: wr1 = torso-j1 (actuated) + bar 1-5; wr2 = thigh-j2 + j5 (its loop joint) +
    # bar 2-5; wr3 = thigh-j3 (actuated) + bar 3-6; wr4 = shank-j4 + j6 + bar 4-6
    assert per["torso"] == pytest.approx(2.0 + bar(1, 5), abs=1e-12)
    assert per["thigh"] == pytest.approx(0.5 + 0.5 + bar(2, 5) + 2.0 + bar(3, 6), abs=1e-12)
    assert per["shank"] == pytest.approx(0.5 + 0.5 + bar(4, 6), abs=1e-12)
    total = 2.0 * sum(ld.mass for ld in loads)
    assert abs(total - mass_report(morph)["added_mass_kg"]) <= 1e-12
    for ld in loads:   # at the attachment point, in the segment's frame
        jid = int(ld.source.split("joint ")[1].split()[0])
        expect = pos[jid] - np.array([0.0, human.joint_height(ld.segment)])
        assert np.allclose(ld.xz, expect, atol=1e-15)

    model = lp.lumped_model(loads)
    human = build_human()
    assert abs(model.total_mass() - (human.total_mass() + total)) <= 1e-12
    for body, segment, legs in (("torso", "torso", 2), ("thigh_r", "thigh", 1), ("shank_l", "shank", 1)):
        k = human.body_id(body)
        mine = [ld for ld in loads if ld.segment == segment] * legs
        m, c, i = compose_inertia([human.mass[k]] + [ld.mass for ld in mine],
                                  [human.com_xz[k]] + [ld.xz for ld in mine],
                                  [human.inertia[k]] + [ld.inertia for ld in mine])
        assert model.mass[k] == pytest.approx(m, abs=1e-12)
        assert np.allclose(model.com_xz[k], c, atol=1e-12)
        assert model.inertia[k] == pytest.approx(i, abs=1e-12)
    untouched = [human.body_id(n) for n in ("foot_r", "toe_r", "foot_l", "toe_l", "torso_x", "torso_z")]
    assert np.array_equal(model.mass[untouched], human.mass[untouched])
    # segment_com: only the masses change
    com_model = lp.lumped_model(lp.segment_loads(morph, "segment_com"))
    assert abs(com_model.total_mass() - model.total_mass()) <= 1e-12
    assert np.allclose(com_model.com_xz, human.com_xz, atol=1e-15)
    assert np.allclose(com_model.inertia, human.inertia, atol=1e-15)


def test_a_link_without_attachment_is_shared_by_its_nearest_ends():
    # topology 10: wr4 (ternary) joins wr1 (torso), wr2 (thigh) and wr3 (shank) only
    topology = cached_catalog().topology(10)
    morph = build_morphology(topology, topology.actuator_pairs[0],
                             sample_parameters(topology, np.random.default_rng(4)), human_geometry())
    loads = lp.segment_loads(morph)
    shares = [ld for ld in loads if ld.source.startswith("wr4")]
    assert sorted(ld.segment for ld in shares) == ["shank", "thigh", "torso"]
    wr4 = next(b for b in morph.bodies if b.name == "wr4")
    assert all(ld.mass == shares[0].mass for ld in shares)
    assert sum(ld.mass for ld in shares) == pytest.approx(wr4.mass, abs=1e-12)
    assert abs(2.0 * sum(ld.mass for ld in loads) - mass_report(morph)["added_mass_kg"]) <= 1e-12


def test_zero_added_mass_equals_the_human_gait_evaluation(parallelogram):
    params = typical_human_design().params
    settings = WalkSettings.from_dict({"max_time": 1.0})
    zero = bl.Baseline.from_loads([lp.PointMass(s, 0.0, (0.1, -0.2), 0.0, "nothing") for s in lp.SEGMENTS])
    human = build_human()
    for name in ("mass", "com_xz", "inertia"):
        assert np.array_equal(getattr(zero.model, name), getattr(human, name))
    mine = bl.evaluate_lumped(params, zero, settings)
    theirs = get_problem("human_gait").evaluate(params, EvalContext(settings=WalkingProblemSettings(settings)))
    assert mine.ok and theirs.ok
    for name in ("time_fraction", "longest_segment", "singularity", "speed_assist_score", "power"):
        assert name in mine.metrics
    assert {k: mine.metrics[k] for k in theirs.metrics} == theirs.metrics      # bit for bit
    assert set(mine.metrics) - set(theirs.metrics) == {"added_mass_torso", "added_mass_thigh",
                                                       "added_mass_shank"}
    stages = bl.problem().objectives
    a, b = score(mine, stages), score(theirs, stages)
    assert (a.status, a.stage, a.stage_value) == (b.status, b.stage, b.stage_value)
    # the design's masses change the walk and are reported
    morph, _ = parallelogram
    loaded = bl.Baseline.from_loads(lp.segment_loads(morph))
    heavy = bl.evaluate_lumped(params, loaded, settings)
    assert heavy.ok and heavy.metrics["added_mass"] == pytest.approx(mass_report(morph)["added_mass_kg"], abs=1e-12)
    assert heavy.metrics["power"] != mine.metrics["power"]
    assert heavy.metrics["longest_segment"] == 0.0 and heavy.metrics["singularity"] == 0.0
    # a bad candidate is a failed record, not an exception
    bad = dict(params)
    bad.pop("hip.K.v1")
    assert bl.evaluate_lumped(bad, loaded, settings).status == "failed"
    assert bl.evaluate_lumped({**params, "knee.K.v1": 1e9}, loaded, settings).status == "failed"


def resolve(settings):
    """The baseline as a run resolves it: the run layer reads a run named by baseline_of
    into the table, the problem parses it (and lumps its design)."""
    return bl.resolve_baseline(bl.parse_baseline_settings(inline_run_reference(settings, bl.problem().run_reference)))


def _one_line_error(settings) -> str:
    with pytest.raises(UserError) as info:
        resolve(settings)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_bad_input_is_one_line_user_error_and_failed_records(tmp_path, parallelogram):
    _morph, design = parallelogram
    good = tmp_path / "design.json"
    good.write_text(json.dumps(design.to_json()))
    human = tmp_path / "human.json"
    human.write_text(json.dumps({"topology": None, "actuators": None, "params": {}}))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**design.to_json(), "topology": 99}))
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({**design.to_json(), "params": {"j1_s": 0.1}}))
    assert "baseline_of: missing" in _one_line_error({})
    assert "no run found" in _one_line_error({"baseline_of": str(tmp_path / "nowhere")})
    assert "cannot read" in _one_line_error({"baseline_of": str(tmp_path / "missing.json")})
    assert "unaugmented human" in _one_line_error({"baseline_of": str(human)})
    assert "topology 99" in _one_line_error({"baseline_of": str(other)})
    assert "missing" in _one_line_error({"baseline_of": str(partial)})
    assert "baseline_mass_at" in _one_line_error({"baseline_of": str(good), "baseline_mass_at": "feet"})
    assert "baseline_off" in _one_line_error({"baseline_of": str(good), "baseline_off": 1})
    assert "baseline_eval" in _one_line_error({"baseline_of": str(good), "baseline_eval": "1:2"})
    assert "baseline_of" in _one_line_error({"baseline_of": 3})
    ok = resolve({"baseline_of": str(good)})
    assert ok.design.topology == 1 and str(good) in ok.source
    # the problem's evaluate never raises: a baseline that cannot be built is a failed record
    unparsed = bl.BaselineSettings(WalkSettings(), str(human))
    record = get_problem("anthropomorphic_baseline").evaluate(typical_human_design().params,
                                                              EvalContext(settings=unparsed))
    assert record.status == "failed" and "unaugmented human" in record.message


def test_optimize_refuses_a_bad_baseline_with_exit_2(tmp_path, capsys):
    from codesign.cli import main

    spec = tmp_path / "b.toml"
    spec.write_text('[problem]\nname = "anthropomorphic_baseline"\n[optimizer]\nalgorithm = "pso"\n'
                    'particles = 2\niterations = 1\n[evaluation]\nbaseline_of = "results/no-such-run"\n')
    capsys.readouterr()
    assert main(["optimize", str(spec), "--results", str(tmp_path / "runs"), "--workers", "0", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "evaluation.baseline_of" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_baseline_of_a_run_end_to_end(tmp_path, capsys):
    """A tiny co-design run (serial, 4 x 1, 50-ms evaluations), then a tiny baseline run of
    its best: the stored best is lumped, a pinned evaluation too, a running run is refused."""
    from codesign.run.driver import start_run
    from codesign.run.spec import parse_spec
    from codesign.run.store import open_run

    runs = tmp_path / "runs"
    codesign = start_run(parse_spec(
        'name = "co"\nseed = 5\n[problem]\nname = "exo_codesign"\n[optimizer]\nparticles = 4\n'
        'iterations = 1\n[evaluation]\nmax_time = 0.05\n[execution]\nmode = "serial"\n'),
        results=runs, progress=False).parent
    baseline = resolve({"baseline_of": str(codesign)})
    assert "evaluation 0:" in baseline.source and baseline.design.topology is not None
    assert baseline.metrics["added_mass"] > 12.0            # 12 kg of joints + bars
    pinned = resolve({"baseline_of": str(codesign), "baseline_eval": "0:2"})
    assert "evaluation 0:2" in pinned.source
    assert "baseline_eval" in _one_line_error({"baseline_of": str(codesign), "baseline_eval": "7:0"})
    path = start_run(parse_spec(
        f'name = "base"\n[problem]\nname = "anthropomorphic_baseline"\n[optimizer]\nalgorithm = "pso"\n'
        f'particles = 2\niterations = 1\n[evaluation]\nmax_time = 0.3\nbaseline_of = "{codesign}"\n'
        f'[execution]\nmode = "serial"\n'), results=runs, progress=False)
    assert "baseline of" in capsys.readouterr().err
    with open_run(path, readonly=True) as store:
        evaluations = store.evaluations()
        metrics = store.metrics(wide=True)
    assert len(evaluations) == 2 and (evaluations["status"] == "ok").all()
    assert (metrics["added_mass"] == baseline.metrics["added_mass"]).all()
    # `codesign simulate --run` replays a baseline candidate on the same lumped model
    from codesign.cli import main

    out = tmp_path / "replay"
    assert main(["simulate", "--run", str(path.parent), "--eval", "0:1", "--out", str(out),
                 "--sample", "0.01"]) == 0
    replay = json.loads((out / "record.json").read_text())["metrics"]
    stored = metrics[(metrics["iteration"] == 0) & (metrics["particle"] == 1)].iloc[0]
    names = [k for k in replay if k in stored and stored[k] == stored[k]]
    assert {"power", "added_mass", "added_mass_torso", "time"} <= set(names)
    assert all(replay[k] == stored[k] for k in names)                    # bit for bit
    with open_run(codesign) as store:
        store.set_status(int(store.runs()["run_id"].iloc[-1]), "running")
    assert "still running" in _one_line_error({"baseline_of": str(codesign), "baseline_mass_at": "segment_com"})


def test_lumped_actuators_weigh_what_the_source_design_s_weigh(tmp_path, parallelogram):
    # issue 15: a design file lumps with this spec's actuator model; the thesis's rule
    # (2 kg) and the bounded default's mass law (0.25 + 120 / 70 kg) differ by 4 actuators
    morph, design = parallelogram
    good = tmp_path / "design.json"
    good.write_text(json.dumps(design.to_json()))
    thesis = resolve({"baseline_of": str(good), "actuator_model": "thesis"})
    bounded = resolve({"baseline_of": str(good)})
    strong = resolve({"baseline_of": str(good), "actuators": {"peak_torque": 240.0}})
    assert thesis.metrics["added_mass"] == pytest.approx(mass_report(morph)["added_mass_kg"], abs=1e-12)
    m = 0.25 + 120.0 / 70.0
    assert bounded.metrics["added_mass"] - thesis.metrics["added_mass"] == pytest.approx(4 * (m - 2.0), abs=1e-12)
    assert strong.metrics["added_mass"] - bounded.metrics["added_mass"] == pytest.approx(4 * 120.0 / 70.0, abs=1e-12)
    assert "actuators.peak_torque" in _one_line_error({"baseline_of": str(good),
                                                       "actuators": {"peak_torque": -1.0}})



def test_lumped_drivetrains_weigh_what_the_design_s_chosen_units_weigh(tmp_path):
    # issue 30: a design that chooses each actuated joint's drivetrain lumps those units
    # (catalog mass + the stage law), the same added mass as its own evaluation reports;
    # without its drivetrains, the default rating's 0.25 + 120 / 70 kg per actuator
    from pathlib import Path

    from codesign.model.drivetrain import design_drivetrain, drivetrain_actuator
    from codesign.walking import Design, evaluate, load_design

    design = load_design(Path(__file__).resolve().parents[2] / "docs/designs/drive-t05-amplify.json")
    plain = Design({k: v for k, v in design.params.items() if not k.endswith((".motor", ".stage_ratio"))},
                   design.topology, design.actuators)
    files = {}
    for name, d in (("drive", design), ("plain", plain)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(d.to_json()))
    lumped, lumped_plain = (resolve({"baseline_of": str(files[n])}) for n in ("drive", "plain"))
    assert lumped.metrics["added_mass"] == pytest.approx(evaluate(design, {"max_time": 0.05}).metrics["added_mass"],
                                                         abs=1e-12)
    units = [drivetrain_actuator(design_drivetrain(design.params, a)).mass() for a in design.actuators]
    assert all(2.5 < m < 3.5 for m in units)         # kg: an AK10-9 (0.96 kg) behind a ~5:1 stage
    assert lumped.metrics["added_mass"] - lumped_plain.metrics["added_mass"] == pytest.approx(
        2 * sum(units) - 4 * (0.25 + 120.0 / 70.0), abs=1e-9)
