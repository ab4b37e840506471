"""Human model: anthropometry against Winter's and the thesis's tables, frames, gait."""

import csv

import numpy as np
import pytest

from codesign.errors import UserError
from codesign.model.anthropometry import HUMAN_DIR, human_geometry
from codesign.model.gait import ANKLE_MARKER_OFFSET_DEG, anatomical_to_engine, engine_to_anatomical, nominal_gait
from codesign.model.human import build_human, upright_configuration
from codesign.screening.kinematics import forward_kinematics, world_point


def test_masses_sum_to_body_mass_and_scale():
    for H, M in ((1.80, 70.0), (1.55, 52.0), (2.0, 110.0)):
        g = human_geometry(H, M)
        total = g.torso.mass + 2 * (g.thigh.mass + g.shank.mass + g.foot.mass + g.toe.mass)
        assert total == pytest.approx(M, rel=1e-12)
    a, b = human_geometry(1.8, 70.0), human_geometry(0.9, 35.0)
    assert b.thigh.length == pytest.approx(a.thigh.length / 2, rel=1e-12)
    assert b.thigh.inertia == pytest.approx(a.thigh.inertia / 8, rel=1e-12)  # I ~ M H^2


def test_against_thesis_fig_4_1_table_within_its_rounding():
    """Thesis Fig. 4.1 table (fractions of H and M; legible rows), printed to 2-3 digits."""
    H, M = 1.80, 70.0
    g = human_geometry(H, M)
    # up leg: l 0.25, CoM_z -0.108, m 0.100, rg 0.32
    assert g.thigh.length / H == pytest.approx(0.25, abs=0.0051)
    assert g.thigh.com_xz[1] / H == pytest.approx(-0.108, abs=0.0025)
    assert g.thigh.mass / M == pytest.approx(0.100, abs=5e-4)
    assert np.sqrt(g.thigh.inertia / g.thigh.mass) / g.thigh.length == pytest.approx(0.32, abs=0.005)
    # low leg: l 0.25, CoM_z -0.108, m 0.047, rg 0.30
    assert g.shank.length / H == pytest.approx(0.25, abs=0.0051)
    assert g.shank.com_xz[1] / H == pytest.approx(-0.108, abs=0.0025)
    assert g.shank.mass / M == pytest.approx(0.047, abs=5e-4 + 1e-12)  # Winter 0.0465
    assert np.sqrt(g.shank.inertia / g.shank.mass) / g.shank.length == pytest.approx(0.30, abs=0.005)
    # ankle (foot): l 0.04 (ankle height), rg 0.48, CoM read as (0.040, -0.020)
    assert g.ankle_height / H == pytest.approx(0.04, abs=0.0011)
    assert np.sqrt(g.foot.inertia / g.foot.mass) / g.foot.length == pytest.approx(0.48, abs=0.006)
    assert g.foot.com_xz / H == pytest.approx([0.040, -0.020], abs=0.003)
    # toe: l 0.03, m 0.003
    assert g.toe.length / H == pytest.approx(0.03, abs=1e-12)
    assert g.toe.mass / M == pytest.approx(0.003, abs=1e-12)


def test_winter_radius_of_gyration_about_proximal_joint_parallel_axis():
    """Winter Table 4.1 also gives rg about the proximal end: our I_com + m d^2 must match."""
    rows = {r["segment"]: r for r in csv.DictReader(open(HUMAN_DIR / "winter_segment_parameters.csv"))}
    g = human_geometry()
    for seg, row in ((g.thigh, rows["thigh"]), (g.shank, rows["leg_shank"]), (g.torso, rows["hat"])):
        i_prox = seg.inertia + seg.mass * float(seg.com_xz @ seg.com_xz)
        expected = seg.mass * (float(row["rg_about_proximal_fraction_of_length"]) * seg.length) ** 2
        assert i_prox == pytest.approx(expected, rel=0.01)


def test_bad_subject_is_a_user_error():
    with pytest.raises(UserError, match="height_m"):
        human_geometry(-1.0, 70.0)
    with pytest.raises(UserError, match="mass_kg"):
        human_geometry(1.8, 0.0)
    with pytest.raises(UserError, match='height_m: got "tall"'):
        human_geometry("tall", 70.0)
    with pytest.raises(UserError, match="mass_kg"):
        human_geometry(1.8, float("nan"))


def _poses(model, q):
    a = model.arrays
    pose = np.zeros((model.n, 3))
    forward_kinematics(a.parent, a.joint_type, a.joint_xz, q, pose)
    return pose


def _contact(model, pose, name):
    out = np.zeros(2)
    k = model.contact_id(name)
    world_point(pose, model.contact_body[k], model.contact_xz[k], out)
    return out


def test_human_model_upright_feet_on_ground():
    model = build_human()
    g = human_geometry()
    assert model.n == 11 and model.total_mass() == pytest.approx(70.0, rel=1e-12)
    pose = _poses(model, upright_configuration(model, g))
    for side in "rl":
        heel, ball, tip = (_contact(model, pose, f"{c}_{side}") for c in ("heel", "ball", "toe_tip"))
        assert [heel[1], ball[1], tip[1]] == pytest.approx([0, 0, 0], abs=1e-12)
        assert tip[0] - heel[0] == pytest.approx(0.152 * 1.80, abs=1e-12)  # Winter Fig. 4.1 foot length
    assert pose[model.body_id("thigh_r"), 1] == pytest.approx(0.530 * 1.80)  # hip height
    assert pose[model.body_id("shank_r"), 1] == pytest.approx(0.285 * 1.80)  # knee height
    toe = model.body_id("toe_r")
    i_joint = model.inertia[toe] + model.mass[toe] * float(model.com_xz[toe] @ model.com_xz[toe])
    assert model.spring_k[toe] == 122.0
    assert model.damping[toe] == pytest.approx(2 * np.sqrt(122.0 * i_joint))  # critical damping


def test_angle_convention_moves_the_body_the_anatomical_way():
    model = build_human()
    g = human_geometry()
    q0 = upright_configuration(model, g)
    ids = [model.body_id(b) for b in ("thigh_r", "shank_r", "foot_r")]

    def pose_with(anat_deg):
        q = q0.copy()
        q[ids] = anatomical_to_engine(np.deg2rad(anat_deg))
        return _poses(model, q)

    hip = pose_with([30, 0, 0])
    assert hip[ids[1], 0] > 0.1  # hip flexion: the knee moves forward
    knee = pose_with([0, 40, 0])
    ankle_x = knee[ids[2], 0]
    assert ankle_x < -0.1  # knee flexion: the ankle moves behind the knee
    df = pose_with([0, 0, 15])
    assert _contact(model, df, "toe_tip_r")[1] > _contact(model, df, "heel_r")[1] + 0.05  # dorsiflexion: toes up
    x = np.deg2rad([12.0, -7.0, 3.0])
    assert engine_to_anatomical(anatomical_to_engine(x)) == pytest.approx(x)


def _csv_engine():
    rows = list(csv.DictReader(open(HUMAN_DIR / "winter_walking_sagittal_joint_angles.csv")))
    s = np.array([float(r["gait_cycle_percent"]) for r in rows]) / 100
    deg = np.array([[float(r[c]) for c in ("hip_flexion_deg", "knee_flexion_deg", "ankle_dorsiflexion_deg")] for r in rows])
    deg[:, 2] += ANKLE_MARKER_OFFSET_DEG
    return s, np.deg2rad(deg) * np.array([1, -1, 1])


def test_gait_is_periodic_and_reproduces_the_csv_up_to_the_documented_drift():
    gait = nominal_gait()
    s, engine = _csv_engine()
    drift = engine[-1] - engine[0]
    assert np.rad2deg(np.abs(drift)) == pytest.approx([0.99, 0.25, 1.38], abs=0.01)
    # at every CSV sample: value minus the linear drift, exactly
    assert gait.angles(s[:-1]) == pytest.approx(engine[:-1] - np.outer(s[:-1], drift), abs=1e-12)
    assert gait.angles(0.0) == pytest.approx(engine[0], abs=1e-12)
    # periodic in value and slope; left leg = half a period later
    assert gait.angles(1.0) == pytest.approx(gait.angles(0.0), abs=1e-12)
    assert gait.rates(1.0 - 1e-9) == pytest.approx(gait.rates(1e-9), abs=1e-5)
    assert gait.angles(1.37) == pytest.approx(gait.angles(0.37), abs=1e-12)
    # published extrema (gait SOURCE.md): knee flexion max 66.6 deg near 70 %
    fine = gait.angles(np.linspace(0, 1, 2001))
    assert (-np.rad2deg(fine[:, 1])).max() == pytest.approx(66.6, abs=0.5)


def test_foot_is_flat_in_mid_stance_with_the_ankle_offset():
    """Upright trunk: foot angle = hip + knee + ankle (engine). In Winter's foot-flat phase
    (about 15-30 %) the sole must be level within 1 degree."""
    gait = nominal_gait()
    for s in (0.18, 0.22, 0.26):
        assert abs(np.rad2deg(gait.angles(s).sum())) < 1.0


def test_nominal_gait_is_fitted_once_per_file_version(tmp_path):
    """Every evaluation asks for the gait: one fit per process and file version (issue
    16); an edited file is fitted again, with its new data."""
    import os
    import shutil

    from codesign.model.gait import GAIT_CSV

    path = tmp_path / "gait.csv"
    shutil.copy(GAIT_CSV, path)
    first = nominal_gait(path)
    assert nominal_gait(path) is first
    np.testing.assert_array_equal(first.sample(10), nominal_gait().sample(10))
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    col = header.index("knee_flexion_deg")
    rows = [line.split(",") for line in lines[1:]]
    for r in rows:
        r[col] = str(float(r[col]) + 10.0)
    path.write_text("\n".join([lines[0]] + [",".join(r) for r in rows]) + "\n")
    ns = os.stat(path).st_mtime_ns
    os.utime(path, ns=(ns, ns + 10**9))         # a later version, also on a coarse clock
    edited = nominal_gait(path)
    assert edited is not first
    np.testing.assert_allclose(edited.sample(10)[:, 1], first.sample(10)[:, 1] - np.deg2rad(10.0),
                               atol=1e-12)
