"""The wearer's body the rollout walks: carried loads and the mass scale
(:mod:`codesign.model.wearer_body`, ``evaluation.loads`` and ``evaluation.wearer_mass_scale``).

Truths: masses summed by hand; the whole-body CoM from the unloaded engine's CoM and the
loads' places read off the engine's own landmarks (joint origins, the ball contact point),
not off the load code; a point mass's m d^2 about a joint in the mass matrix; the mass
matrix of a scaled wearer exactly k times its own; the static force that holds the body up
(inverse dynamics at rest) equal to the total weight, loads included."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from codesign.dynamics.crba import mass_matrix
from codesign.dynamics.kinematics import center_of_mass, forward_kinematics
from codesign.dynamics.model import make_workspace
from codesign.dynamics.rnea import inverse_dynamics
from codesign.errors import UserError
from codesign.model.anthropometry import human_geometry
from codesign.model.assemble import assemble
from codesign.model.human import build_human, upright_configuration
from codesign.model.morphology import build_morphology
from codesign.model.wearer_body import Load, WEARER_BODIES, carried_mass, with_wearer_body
from codesign.screening.examples import TWO_FOUR_BARS, params_from_positions
from codesign.walking.settings import WalkSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from runtools import codesign, listing, one_line  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HUMAN = human_geometry()
# Browning et al. 2007's heaviest loads: 4 kg per foot and shank, 8 kg per thigh, 16 kg at the waist
BROWNING = (Load("foot", 4.0), Load("shank", 4.0), Load("thigh", 8.0), Load("torso", 16.0, 0.0))


def bent_pose(model):
    """A pose with every joint away from zero (the loads must ride with their segments)."""
    q = upright_configuration(model, HUMAN)
    angles = {"torso": 0.1, "thigh_r": 0.5, "shank_r": -0.9, "foot_r": 0.2, "toe_r": 0.3,
              "thigh_l": -0.3, "shank_l": -0.2, "foot_l": -0.15, "toe_l": 0.0}
    for name, value in angles.items():
        q[model.body_id(name)] = value
    q[model.body_id("torso_x")] = 0.4
    return q


def kinematics(model, q):
    w = make_workspace(model)
    forward_kinematics(model.arrays, q, np.zeros(model.n), w)
    return w


def com(model, q):
    w = kinematics(model, q)
    out = np.zeros(4)
    center_of_mass(model.arrays, w, out)
    return out[:2]


def crba(model, q):
    w = kinematics(model, q)
    mass_matrix(model.arrays, w)
    return w.M.copy()


def test_loaded_model_total_mass_and_com_by_hand():
    """Total mass: 70 kg + 2 x (4 + 4 + 8) + 16 = 118 kg. CoM in a bent pose: the unloaded
    body's CoM and each load at a landmark the engine places itself (the foot's at the
    ball contact, position 1; the shank's at the ankle, position 1; the thigh's at the hip,
    position 0; the waist's at the hip)."""
    human = build_human()
    loads = (Load("foot", 4.0, 1.0), Load("shank", 4.0, 1.0), Load("thigh", 8.0, 0.0), Load("torso", 16.0, 0.0))
    loaded = with_wearer_body(human, HUMAN, loads)
    assert loaded.total_mass() == pytest.approx(70.0 + 2 * (4 + 4 + 8) + 16, rel=1e-13)
    assert carried_mass(loads) == 48.0
    q = bent_pose(human)
    w = kinematics(human, q)
    origin = {name: w.pose[human.body_id(name), :2] for name in human.body_names}
    ball = {}
    for s in "rl":
        k = human.contact_id(f"ball_{s}")
        body = human.contact_body[k]
        c, sn = np.cos(w.pose[body, 2]), np.sin(w.pose[body, 2])
        ball[s] = w.pose[body, :2] + np.array([[c, -sn], [sn, c]]) @ human.contact_xz[k]
    moment = 70.0 * com(human, q) + 16.0 * origin["torso"]
    for s in "rl":
        moment += 4.0 * ball[s] + 4.0 * origin[f"foot_{s}"] + 8.0 * origin[f"thigh_{s}"]
    assert com(loaded, q) == pytest.approx(moment / 118.0, abs=1e-12)


def test_a_point_mass_on_the_shank_adds_m_d_squared_about_the_knee_and_hip():
    """3 kg at 0.4 of the shank from the knee: the mass matrix's knee entry gains
    m d^2 (d = 0.4 x shank length) in any pose; upright, the hip's gains m (thigh + d)^2.
    The other leg's entries are unchanged."""
    human = build_human()
    m, s = 3.0, 0.4
    loaded = with_wearer_body(human, HUMAN, (Load("shank", m, s),))
    d = s * (HUMAN.knee_height - HUMAN.ankle_height)
    q = bent_pose(human)
    delta = crba(loaded, q) - crba(human, q)
    for side in "rl":
        knee = human.body_id(f"shank_{side}")
        assert delta[knee, knee] == pytest.approx(m * d ** 2, rel=1e-10)
    upright = upright_configuration(human, HUMAN)
    delta = crba(loaded, upright) - crba(human, upright)
    hip, other = human.body_id("thigh_r"), human.body_id("thigh_l")
    assert delta[hip, hip] == pytest.approx(m * (HUMAN.hip_height - HUMAN.knee_height + d) ** 2, rel=1e-10)
    assert delta[hip, other] == 0.0
    # the segment's own inertia about the knee (I_c + m_c |c|^2) gains m d^2 too
    k = human.body_id("shank_r")

    def about_knee(model):
        return model.inertia[k] + model.mass[k] * float(model.com_xz[k] @ model.com_xz[k])
    assert about_knee(loaded) - about_knee(human) == pytest.approx(m * d ** 2, rel=1e-10)


def test_no_load_at_scale_one_is_the_same_model():
    human = build_human()
    assert with_wearer_body(human, HUMAN, (), 1.0) is human
    zero = with_wearer_body(human, HUMAN, (Load("thigh", 0.0),))
    for field in ("mass", "com_xz", "inertia"):
        assert np.array_equal(getattr(zero, field), getattr(human, field))


def test_mass_scale_scales_the_wearer_and_not_the_device():
    """k = 1.1: the wearer alone weighs 77 kg and its mass matrix is 1.1 times its own in a
    bent pose; on an augmented model the device's bodies keep their masses."""
    human = build_human()
    scaled = with_wearer_body(human, HUMAN, (), 1.1)
    assert scaled.total_mass() == pytest.approx(1.1 * 70.0, rel=1e-13)
    q = bent_pose(human)
    assert crba(scaled, q) == pytest.approx(1.1 * crba(human, q), rel=1e-12, abs=1e-12)
    hip = np.array([0.0, HUMAN.hip_height])
    positions = {1: hip + [-0.10, 0.10], 5: hip + [-0.10, -0.20], 2: hip + [0.0, -0.20],
                 3: hip + [-0.05, -0.30], 6: hip + [-0.10, -0.55], 4: hip + [0.0, -0.60]}
    morph = build_morphology(TWO_FOUR_BARS, (1, 3), params_from_positions(TWO_FOUR_BARS, HUMAN, positions), HUMAN)
    aug = assemble(morph).model
    both = with_wearer_body(aug, HUMAN, (Load("torso", 5.0),), 1.1)
    wearer = [aug.body_id(name) for name in WEARER_BODIES]
    device = [i for i, name in enumerate(aug.body_names) if name.startswith("wr")]
    assert device and np.array_equal(both.mass[device], aug.mass[device])
    assert np.array_equal(both.inertia[device], aug.inertia[device])
    assert both.mass[wearer].sum() == pytest.approx(1.1 * 70.0 + 5.0, rel=1e-13)


def test_the_static_force_holding_the_body_is_its_weight_with_the_loads():
    """At rest, inverse dynamics gives the force the ground must supply: along z the
    total weight (person and loads), along x none, and about the hip the weight's moment
    arm to the loaded CoM."""
    loaded = with_wearer_body(build_human(), HUMAN, BROWNING)
    q = bent_pose(loaded)
    w = kinematics(loaded, q)
    tau = np.zeros(loaded.n)
    inverse_dynamics(loaded.arrays, w, np.zeros(loaded.n), tau)
    weight = 118.0 * loaded.gravity
    assert tau[loaded.body_id("torso_z")] == pytest.approx(weight, rel=1e-12)
    assert tau[loaded.body_id("torso_x")] == pytest.approx(0.0, abs=1e-9)
    arm = com(loaded, q)[0] - w.pose[loaded.body_id("torso"), 0]
    assert tau[loaded.body_id("torso")] == pytest.approx(weight * arm, rel=1e-10)


def test_the_settings_reach_the_walking_model():
    """``build_setup`` walks the loaded, scaled wearer: the model's total mass is the
    person's (k x 70 kg) plus the device's and the loads', and the per-kg metrics' mass
    is the person's only."""
    from codesign.walking.design import load_design
    from codesign.walking.setup import build_setup
    design = load_design(REPO / "docs" / "designs" / "human-walking.json")
    plain, _, _ = build_setup(design, WalkSettings.from_dict({}))
    settings = WalkSettings.from_dict({"loads": [{"segment": "foot", "mass_kg": 2}, {"segment": "torso", "mass_kg": 8,
                                                                                   "position": 0}],
                                       "wearer_mass_scale": 0.9})
    setup, failed, _ = build_setup(design, settings)
    assert failed is None and plain.wearer_mass == 70.0
    assert setup.wearer_mass == pytest.approx(63.0, rel=1e-14)
    assert setup.model.total_mass() == pytest.approx(63.0 + 2 * 2 + 8, rel=1e-13)


def test_simulate_refuses_a_non_positive_mass_scale(tmp_path):
    """A real ``codesign simulate`` process with --settings: one line naming the setting
    and what was expected, exit 2, nothing written."""
    out = tmp_path / "out"
    done = codesign("simulate", REPO / "docs" / "designs" / "human-walking.json", "--out", out,
                    "--settings", json.dumps({"wearer_mass_scale": 0}), cwd=tmp_path)
    one_line(done, 2, r".*evaluation\.wearer_mass_scale: got 0; expected a finite factor > 0 .*")
    assert not out.exists() and listing(tmp_path) == {}


def test_optimize_refuses_a_load_on_an_unknown_segment(tmp_path):
    """A real ``codesign optimize`` process, the loads as the spec's TOML array of tables:
    one line naming the entry, exit 2, no run folder."""
    spec = tmp_path / "v.toml"
    spec.write_text('name = "v"\n[problem]\nname = "human_gait"\n[optimizer]\nparticles = 2\niterations = 1\n'
                    '[execution]\nmode = "serial"\n[[evaluation.loads]]\nsegment = "foot"\nmass_kg = 2.0\n'
                    '[[evaluation.loads]]\nsegment = "hand"\nmass_kg = 1.0\n')
    done = codesign("optimize", spec, "--results", tmp_path / "results", "--quiet")
    one_line(done, 2, r".*evaluation\.loads\[1\]\.segment: got \"hand\"; expected one of torso, thigh, shank, foot")
    assert sorted(listing(tmp_path)) == ["v.toml"]


@pytest.mark.parametrize("table, pattern", [
    ({"loads": {"segment": "foot", "mass_kg": 1}}, r"evaluation\.loads: got .*; expected a list of tables .*"),
    ({"loads": [{"mass_kg": 1}]}, r"evaluation\.loads\[0\]\.segment: missing; expected one of torso, thigh, shank, foot"),
    ({"loads": [3]}, r"evaluation\.loads\[0\]: got 3; expected a table .*"),
    ({"loads": [{"segment": "foot", "mass": 1}]}, r"evaluation\.loads\[0\]\.mass: unknown key \(did you mean mass_kg\?\); .*"),
    ({"loads": [{"segment": "foot"}]}, r"evaluation\.loads\[0\]\.mass_kg: missing; expected a finite mass >= 0 kg"),
    ({"loads": [{"segment": "foot", "mass_kg": True}]}, r"evaluation\.loads\[0\]\.mass_kg: got true; expected .*"),
    ({"loads": [{"segment": "foot", "mass_kg": 1, "position": -0.1}]}, r"evaluation\.loads\[0\]\.position: got -0\.1; .*"),
    ({"loads": [{"segment": "foot", "mass_kg": 2}, {"segment": "shank", "mass_kg": -1}]},
     r"evaluation\.loads\[1\]\.mass_kg: got -1; expected a finite mass >= 0 kg \(per leg on a leg segment\)"),
    ({"loads": [{"segment": "thigh", "mass_kg": 4, "position": 1.5}]},
     r"evaluation\.loads\[0\]\.position: got 1\.5; expected a fraction in \[0, 1\] along the segment .*"),
    ({"loads": [{"segment": "hand", "mass_kg": 1}]},
     r"evaluation\.loads\[0\]\.segment: got \"hand\"; expected one of torso, thigh, shank, foot"),
    ({"wearer_mass_scale": 0.0}, r"evaluation\.wearer_mass_scale: got 0\.0; .*"),
    ({"wearer_mass_scale": float("inf")}, r"evaluation\.wearer_mass_scale: got inf; .*"),
    ({"wearer_mass_scale": -1.1}, r"evaluation\.wearer_mass_scale: got -1\.1; .*"),
    ({"wearer_mass_scale": "big"}, r"evaluation\.wearer_mass_scale: got \"big\"; .*"),
])
def test_bad_settings_are_one_line(table, pattern):
    import re
    with pytest.raises(UserError) as info:
        WalkSettings.from_dict(table)
    assert re.fullmatch(pattern, str(info.value)), str(info.value)


def test_settings_parse_into_records():
    s = WalkSettings.from_dict({"loads": [{"segment": "shank", "mass_kg": 2, "position": 0.5},
                                          {"segment": "torso", "mass_kg": 4}], "wearer_mass_scale": 1.1})
    assert s.loads == (Load("shank", 2.0, 0.5), Load("torso", 4.0, None)) and s.wearer_mass_scale == 1.1
    default = WalkSettings.from_dict({})
    assert default.loads == () and default.wearer_mass_scale == 1.0
    hash(s)     # the settings key caches (the unassisted wearer's)


def test_the_anthropomorphic_baseline_refuses_a_mass_scale():
    """The baseline's segments hold the device's lumped mass, which a wearer scale would
    scale too: refused in one line (its loads are accepted)."""
    from codesign.problems.baseline import parse_baseline_settings
    with pytest.raises(UserError, match=r"^evaluation\.wearer_mass_scale: got 1\.1 with the anthropomorphic "
                                        r"baseline, .*; expected 1$"):
        parse_baseline_settings({"baseline_of": "design.json", "wearer_mass_scale": 1.1})
