"""The structure mass law (issue 46 item 1): tubes by hand for two materials, a whole
device by hand, the catalog's refusals, the default law unchanged, bad settings in words."""

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from codesign.errors import UserError
from codesign.model.anthropometry import human_geometry
from codesign.model.lumping import segment_loads
from codesign.model.morphology import build_morphology, mass_report
from codesign.model.structure import (THESIS, parts_law, read_catalog, structure_catalog, structure_law,
                                      tube_mass_per_m)
from codesign.screening.examples import TWO_FOUR_BARS, params_from_positions
from codesign.walking.settings import WalkSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from runtools import codesign, listing, one_line  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def positions(h):
    """TWO_FOUR_BARS joints around the hip (the morphology tests' parallelogram-like pose)."""
    hip = np.array([0.0, h.hip_height])
    return {1: hip + [-0.10, 0.10], 5: hip + [-0.10, -0.20], 2: hip + [0.0, -0.20],
            3: hip + [-0.05, -0.30], 6: hip + [-0.10, -0.55], 4: hip + [0.0, -0.60]}


def test_tube_kg_per_m_by_hand_for_two_materials():
    """kg/m = rho pi (D^2 - d^2) / 4, here with the numbers written out: carbon 1550 kg/m^3,
    25/23 mm; aluminium 6061 2700 kg/m^3, 25/22 mm; and a 0.4-m bar of each as built."""
    carbon = 1550.0 * 3.141592653589793 * (0.025 * 0.025 - 0.023 * 0.023) / 4.0
    aluminium = 2700.0 * 3.141592653589793 * (0.025 * 0.025 - 0.022 * 0.022) / 4.0
    assert carbon == pytest.approx(0.116867, abs=1e-6)        # 96 mm^2 x 1.55 g/cm^3
    assert aluminium == pytest.approx(0.299001, abs=1e-6)     # 141 mm^2 x 2.70 g/cm^3
    cat = structure_catalog()
    assert cat.sections["carbon_tube_25x1"].mass_per_m == pytest.approx(carbon, rel=1e-12)
    assert cat.sections["al6061_tube_25x1.5"].mass_per_m == pytest.approx(aluminium, rel=1e-12)
    assert tube_mass_per_m(2700.0, 0.01, 0.0) == pytest.approx(2700.0 * math.pi * 1e-4 / 4, rel=1e-12)
    # one WR link = one bar: wr4 joins joints 4 and 6 (0.05 m apart in z, 0.10 in x)
    h = human_geometry()
    params = params_from_positions(TWO_FOUR_BARS, h, positions(h))
    length = math.hypot(0.10, 0.05)
    for section, kg_m in (("carbon_tube_25x1", carbon), ("al6061_tube_25x1.5", aluminium)):
        law = parts_law(section, "thesis_joint", "no_cuff")
        wr4 = next(b for b in build_morphology(TWO_FOUR_BARS, (1, 3), params, h, structure=law).bodies
                   if b.name == "wr4")
        # wr4 owns its attachment joint 4 (passive, 0.5 kg); joint 6 (loop closure) is wr4's too
        assert wr4.mass == pytest.approx(kg_m * length + 0.5 + 0.5, rel=1e-12)


def test_passive_joint_by_parts():
    """Two 6001 bearings (0.022 kg each) + a 12 x 40 mm steel pin + a 40/28 x 20 mm
    aluminium housing, written out."""
    pin = 7850.0 * math.pi * 0.012**2 / 4 * 0.040
    housing = 2700.0 * math.pi * (0.040**2 - 0.028**2) / 4 * 0.020
    assert structure_catalog().joints["revolute_6001_pair"].mass == pytest.approx(2 * 0.022 + pin + housing, rel=1e-12)
    assert 0.10 < 2 * 0.022 + pin + housing < 0.13


def test_whole_device_by_hand():
    """TWO_FOUR_BARS (4 attachment joints: 1-4; actuators 1 and 3 at 2 kg; passive 2, 4,
    5, 6; one bar per WR link) under the parts law: per leg the bars' lengths x kg/m, two
    actuators, four passive joints and four cuffs; both legs; the lumped baseline agrees."""
    h = human_geometry()
    pos = positions(h)
    law = parts_law("carbon_tube_25x1", "revolute_6001_pair", "cuff_pp_strap")
    morph = build_morphology(TWO_FOUR_BARS, (1, 3), params_from_positions(TWO_FOUR_BARS, h, pos), h,
                             structure=law)
    bars = sum(float(np.linalg.norm(pos[a] - pos[b])) for a, b in ((1, 5), (2, 5), (3, 6), (4, 6)))
    per_leg = law.bar_mass_per_m * bars + 2 * 2.0 + 4 * law.passive_joint_mass + 4 * law.cuff_mass
    assert mass_report(morph)["added_mass_kg"] == pytest.approx(2 * per_leg, rel=1e-12)
    assert 2 * sum(p.mass for p in segment_loads(morph)) == pytest.approx(2 * per_leg, rel=1e-12)
    thesis = build_morphology(TWO_FOUR_BARS, (1, 3), params_from_positions(TWO_FOUR_BARS, h, pos), h)
    assert mass_report(thesis)["added_mass_kg"] == pytest.approx(2 * (0.7 * bars + 4.0 + 4 * 0.5), rel=1e-12)
    assert mass_report(morph)["added_mass_kg"] < mass_report(thesis)["added_mass_kg"] - 1.0


def test_default_law_is_the_thesis_bit_for_bit():
    """The default, an explicit THESIS and the settings' default build the same bodies,
    and a stored design weighs what it weighed before the law became an option
    (13.128186387676351 kg: assist-t02 under main f249a65, before this change; its README
    row says 13.1 kg)."""
    from codesign.walking.design import load_design
    from codesign.walking.setup import design_topology, joint_actuators, morphology_params
    assert WalkSettings.from_dict({}).structure == THESIS == structure_law("thesis")
    assert (THESIS.bar_mass_per_m, THESIS.passive_joint_mass, THESIS.cuff_mass) == (0.7, 0.5, 0.0)
    path = REPO / "docs" / "designs" / "assist-t02.json"
    design = load_design(path)
    settings = WalkSettings.from_dict(json.loads(path.read_text())["evaluation"])
    topology = design_topology(design, settings)
    masses = tuple(a.mass() for _, a in joint_actuators(design, settings))
    args = (topology, design.actuators, morphology_params(topology, design.params), human_geometry(), masses)
    default, explicit = build_morphology(*args), build_morphology(*args, settings.structure)
    for a, b in zip(default.bodies, explicit.bodies):
        assert (a.mass, a.inertia, tuple(a.com_xz)) == (b.mass, b.inertia, tuple(b.com_xz))
    assert mass_report(default)["added_mass_kg"] == 13.128186387676351
    light = build_morphology(*args, parts_law())
    assert mass_report(light)["added_mass_kg"] < mass_report(default)["added_mass_kg"]


def test_catalog_refuses_a_number_without_source(tmp_path):
    text = (REPO / "codesign" / "model" / "data" / "structure.toml").read_text()
    bad = tmp_path / "structure.toml"
    bad.write_text(text.replace('density_kg_m3_source = "Flex', 'density_kg_m3_note = "Flex', 1))
    with pytest.raises(ValueError, match="cfrp_rollwrapped: density_kg_m3 has no density_kg_m3_source"):
        read_catalog(bad)
    assert read_catalog().default_section == "carbon_tube_25x1"


@pytest.mark.parametrize("table, pattern", [
    ({"structure": "parts", "link_section": "unobtainium"},
     r"evaluation\.link_section: got \"unobtainium\"; expected a section of the structure catalog: .*carbon_tube_25x1.*"),
    ({"structure": "parts", "passive_joint": "hinge"},
     r"evaluation\.passive_joint: got \"hinge\"; expected a joint of the structure catalog: .*revolute_6001_pair.*"),
    ({"structure": "parts", "cuff": 3}, r"evaluation\.cuff: got 3; expected a cuff of the structure catalog: .*"),
    ({"structure": "steel"}, r"evaluation\.structure: got \"steel\"; expected one of thesis, parts"),
    ({"link_section": "carbon_tube_25x1"}, r"evaluation\.link_section: given with the thesis's structure law; .*"),
])
def test_bad_structure_settings_are_one_line(table, pattern):
    import re
    with pytest.raises(UserError) as info:
        WalkSettings.from_dict(table)
    assert re.fullmatch(pattern, str(info.value)), str(info.value)


def test_simulate_refuses_a_material_not_in_the_catalog(tmp_path):
    """A real ``codesign simulate`` process, a design file and --settings: one line naming
    the key and the catalog's entries, exit 2, nothing written."""
    out = tmp_path / "out"
    done = codesign("simulate", REPO / "docs" / "designs" / "codesign-walking.json", "--out", out,
                    "--settings", json.dumps({"structure": "parts", "link_section": "balsa_tube"}), cwd=tmp_path)
    one_line(done, 2, r".*evaluation\.link_section: got \"balsa_tube\"; expected a section of the structure "
                      r"catalog: al6061_tube_25x1\.5, carbon_tube_20x1, carbon_tube_25x1 .*")
    assert not out.exists() and listing(tmp_path) == {}
    done = codesign("simulate", REPO / "docs" / "designs" / "codesign-walking.json", "--out", out,
                    "--settings", json.dumps({"structure": "parts", "passive_joint": "hinge"}), cwd=tmp_path)
    one_line(done, 2, r".*evaluation\.passive_joint: got \"hinge\"; expected a joint of the structure catalog: .*")
    assert not out.exists() and listing(tmp_path) == {}


def test_the_setting_reaches_the_walking_model():
    """``evaluation.structure = "parts"`` is what the walking evaluation builds: the
    design metric ``added_mass`` and the engine model's total mass follow the parts law
    (codesign-walking.json: 12.78 kg under the thesis, 10.12 kg of carbon parts)."""
    from codesign.walking.design import load_design
    from codesign.walking.setup import build_setup, design_topology, joint_actuators, morphology_params
    path = REPO / "docs" / "designs" / "codesign-walking.json"
    design = load_design(path)
    table = json.loads(path.read_text()).get("evaluation", {})
    added = {}
    for law in ("thesis", "parts"):
        settings = WalkSettings.from_dict({**table, "structure": law})
        setup, failed, _ = build_setup(design, settings)
        topology = design_topology(design, settings)
        morph = build_morphology(topology, design.actuators, morphology_params(topology, design.params),
                                 human_geometry(), tuple(a.mass() for _, a in joint_actuators(design, settings)),
                                 settings.structure)
        expected = mass_report(morph)
        assert failed is None
        assert setup.design_metrics["added_mass"] == pytest.approx(expected["added_mass_kg"], rel=1e-12)
        assert float(setup.model.mass.sum()) == pytest.approx(expected["total_mass_kg"], rel=1e-12)
        added[law] = setup.design_metrics["added_mass"]
    assert added["thesis"] - added["parts"] > 2.0
