"""Screening of hand-made designs on the human along the nominal gait, and the command."""

import json

import numpy as np
import pytest

from codesign.cli import main
from codesign.model.anthropometry import human_geometry
from codesign.model.gait import nominal_gait
from codesign.model.morphology import build_morphology
from codesign.screening.screen import PASS, UNREACHABLE, ScreenSettings, gait_targets, screen
from codesign.screening.examples import TWO_FOUR_BARS, parallelogram_positions, params_from_positions

H = human_geometry()
KNEE = np.array([0.0, H.knee_height])


def _params(pos):
    return params_from_positions(TWO_FOUR_BARS, H, pos)


def parallelograms():
    return parallelogram_positions(H)


@pytest.mark.parametrize("pair", [(1, 3), (5, 6)])
def test_anthropomorphic_design_passes(pair):
    result = screen(build_morphology(TWO_FOUR_BARS, pair, _params(parallelograms())))
    assert result.ok and result.code == PASS and result.gait_point == -1
    assert result.margin > 0.1  # far from singular


def _knee_loop_reaching_full_extension(f_star_deg=25.0):
    """Knee four-bar K-B-W2-C with bars B-W2, W2-C summing to |BC| at knee flexion f*: the
    distance |BC| grows with flexion up to ~39 deg, so the loop is fully stretched at f* and
    cannot close beyond (until |BC| falls below the sum again)."""
    pos = parallelograms()
    B, C = KNEE + [0.08, 0.10], KNEE + [0.0, -0.15]
    d0 = np.linalg.norm(B - C)
    reach = _bc_distance(B, C, np.deg2rad(f_star_deg))
    mid, e = 0.5 * (B + C), (C - B) / d0
    W2 = mid - np.sqrt((reach / 2) ** 2 - (d0 / 2) ** 2) * np.array([-e[1], e[0]])
    pos.update({3: B, 4: C, 6: W2})
    return pos, np.linalg.norm(B - W2) + np.linalg.norm(W2 - C)


def _bc_distance(B, C, flexion):
    """|B - C| with the shank (carrying C) turned by the knee flexion about the knee."""
    th = -flexion  # engine knee angle
    c = C - KNEE
    rc = np.array([np.cos(th) * c[0] - np.sin(th) * c[1], np.sin(th) * c[0] + np.cos(th) * c[1]])
    return np.linalg.norm((B - KNEE) - rc)


def test_loop_at_full_extension_fails_at_the_predicted_gait_point():
    pos, total = _knee_loop_reaching_full_extension()
    settings = ScreenSettings()
    targets = gait_targets(nominal_gait(), settings)  # (N, 3 offsets, (hip, knee)) engine rad
    expected = next((k, o) for k in range(settings.n_points) for o in range(3)
                    if _bc_distance(pos[3], pos[4], -targets[k, o, 1]) > total)
    result = screen(build_morphology(TWO_FOUR_BARS, (1, 3), _params(pos)), settings=settings)
    assert not result.ok and result.code == UNREACHABLE and result.margin == 0.0
    assert (result.gait_point, result.offset_deg) == (expected[0], (0.0, 5.0, -5.0)[expected[1]])
    assert "unreachable" in result.reason and f"gait point {expected[0]}" in result.reason


# --------------------------------------------------------------------------- command


@pytest.fixture(scope="module")
def catalog_path(tmp_path_factory):
    from codesign.topology.catalog import CatalogSettings, save_catalog
    from codesign.topology.enumerate import build_catalog

    catalog = build_catalog(CatalogSettings())
    assert catalog.topology(1).joints == TWO_FOUR_BARS.joints  # the designs below use it
    path = tmp_path_factory.mktemp("cat") / "catalog.json"
    save_catalog(catalog, path)
    return path


def _design(tmp_path, pos, pair=(1, 3), **extra):
    path = tmp_path / "design.json"
    path.write_text(json.dumps({"topology": 1, "actuators": list(pair), "params": _params(pos), **extra}))
    return path


def test_screen_one_design_command(tmp_path, catalog_path, capsys):
    assert main(["screen", "--catalog", str(catalog_path), "--design", str(_design(tmp_path, parallelograms()))]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "added mass" in out
    assert "loads along" in out and "device" in out and "(both legs)" in out   # served by the catalog
    bad, _ = _knee_loop_reaching_full_extension()
    assert main(["screen", "--catalog", str(catalog_path), "--design", str(_design(tmp_path, bad))]) == 0
    assert "FAIL - unreachable" in capsys.readouterr().out
    out = tmp_path / "out"                      # --design writes nothing: an --out with it is a mistake
    assert main(["screen", "--catalog", str(catalog_path), "--design", str(_design(tmp_path, bad)),
                 "--out", str(out)]) == 2
    assert "--out" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("doc, key", [
    ({"topology": 99, "actuators": [1, 3], "params": {}}, "topology"),
    ({"topology": 1, "actuators": [1, 2], "params": None}, "params"),
    ({"topology": 1, "actuators": "1,3", "params": {}}, "actuators"),
    ({"topology": 1, "actuators": [1, 3], "params": {}, "height_m": "tall"}, "height_m"),
])
def test_bad_design_is_one_line_exit_2(tmp_path, catalog_path, capsys, doc, key):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc))
    assert main(["screen", "--catalog", str(catalog_path), "--design", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert key in err and len(err.splitlines()) == 1


def test_out_of_range_parameter_and_missing_file(tmp_path, catalog_path, capsys):
    pos = parallelograms()
    pos[6] = np.array([0.5, 0.4])  # x beyond the 0.15 m bound
    assert main(["screen", "--catalog", str(catalog_path), "--design", str(_design(tmp_path, pos))]) == 2
    assert "j6_x" in capsys.readouterr().err
    assert main(["screen", "--catalog", str(catalog_path), "--design", str(tmp_path / "nope.json")]) == 2
    assert main(["screen", "--catalog", str(tmp_path / "nope.json")]) == 2


def test_bad_sweep_settings_fail_before_screening(tmp_path, catalog_path, capsys):
    """A file as --out, a negative seed or a catalog of another mobility: one line, exit 2,
    refused before any design is screened (nothing written)."""
    from codesign.topology.catalog import CatalogSettings, save_catalog
    from codesign.topology.enumerate import build_catalog

    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    other = tmp_path / "mobility1.json"
    save_catalog(build_catalog(CatalogSettings(3, 5, 1)), other)
    empty = tmp_path / "empty.json"  # 2 WR links, 3 added joints: mobility 2, but no topology
    save_catalog(build_catalog(CatalogSettings(2, 3, 2)), empty)
    for argv, key in ((["--catalog", str(catalog_path), "--out", str(not_a_folder)], "--out"),
                      (["--catalog", str(catalog_path), "--seed", "-1", "--out", str(tmp_path / "o")], "--seed"),
                      (["--catalog", str(other), "--out", str(tmp_path / "o")], "mobility 1"),
                      (["--catalog", str(empty), "--out", str(tmp_path / "o")], "0 topologies")):
        assert main(["screen", "--samples", "1", "--workers", "1", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert key in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.integration
def test_sweep_is_deterministic_across_worker_counts(tmp_path, catalog_path):
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        assert main(["screen", "--catalog", str(catalog_path), "--samples", "3", "--seed", "7",
                     "--workers", str(workers), "--out", str(out)]) == 0
        outs.append([(out / name).read_text() for name in ("pass_rates.csv", "loads.csv", "loads_subspaces.csv")])
        assert (out / "pass_rates.png").stat().st_size > 10_000 and (out / "loads.png").stat().st_size > 10_000
    assert outs[0] == outs[1]
    loads = outs[0][1].splitlines()
    assert len(loads) > 1 and loads[0].startswith("subspace,topology,actuator_1,actuator_2,sample,served,reason")
    outs = [o[0] for o in outs]
    rows = outs[0].splitlines()
    assert len(rows) == 1 + 126 and rows[0].startswith("subspace,topology,actuator_1,actuator_2,samples,passed")


def test_one_leg_decides_for_both_legs():
    """The screen runs on one leg. Screening the full assembled model instead (floating base
    held, both legs, the left leg half a period later) must give the same verdict and, for
    passing designs, the same smallest margin: the legs' loops are independent (J and N
    are block diagonal) and the left leg visits the right leg's configurations."""
    from codesign.model.assemble import assemble
    from codesign.model.morphology import sample_parameters
    from codesign.screening.screen import screen_mechanism

    settings = ScreenSettings(n_points=20)
    gait = nominal_gait()
    right = gait_targets(gait, settings)
    left = np.roll(right, -settings.n_points // 2, axis=0)
    rng = np.random.default_rng(11)
    designs = [build_morphology(TWO_FOUR_BARS, (1, 3), _params(parallelograms()))]
    designs += [build_morphology(TWO_FOUR_BARS, (5, 6), sample_parameters(TWO_FOUR_BARS, rng)) for _ in range(8)]
    verdicts = []
    for morphology in designs:
        aug = assemble(morphology)
        m = aug.model
        base = [m.body_id(b) for b in ("torso_x", "torso_z", "torso")]
        human = [m.body_id(b) for b in ("thigh_r", "shank_r", "thigh_l", "shank_l")]
        targets = np.concatenate([np.zeros(right.shape[:2] + (3,)), right, left], axis=2)
        targets[:, :, 1] = H.hip_height
        code, info, _ = screen_mechanism(m, np.array(base + human), np.array(base), targets, np.array(human),
                                         np.array([j.index for j in aug.actuated if not j.loop], dtype=np.int64),
                                         np.array([j.index for j in aug.actuated if j.loop], dtype=np.int64), settings)
        one = screen(morphology, gait, settings)
        assert (code == PASS) == one.ok
        if one.ok:
            assert info[4] == pytest.approx(one.margin, rel=1e-9)
        verdicts.append(one.ok)
    assert any(verdicts) and not all(verdicts)  # both outcomes exercised
