"""Floquet multipliers of the walking rollout's period map, against answers known
independently: a function with an analytic Jacobian (the finite differences and the
eigenvalue sorting), forced linear oscillators run through the real stroboscopic code
path -- settling, warm start, start-time rollout, reduced coordinates with the base x
dropped, a loop closure -- whose multipliers are the eigenvalues of the stepping's own
one-step matrix to the power N, and for walking humans: bit-for-bit reproducibility,
exact invariance under x translation, and a stable gait's multiplier against the decay
of the rollout's own periodicity residual."""

import json
import types

import numpy as np
import pytest

from codesign.analysis import gait_stability as gs
from codesign.analysis.returnmap import sort_eigenvalues
from codesign.cli import main
from codesign.commands import analyze
from codesign.commands.analyze import format_gait_report
from codesign.control import impedance as imp
from codesign.control import signals as sg
from codesign.dynamics.model import ModelBuilder
from codesign import walking as ev
from codesign.walking import rollout as ro


# ----------------------------------------------------------------------------- generic pieces
def test_central_jacobian_and_multipliers_on_a_known_map():
    A = np.array([[0.6, -0.5, 0.0, 0.1],
                  [0.4, 0.7, 0.2, 0.0],
                  [0.0, 0.1, -0.3, 0.0],
                  [0.05, 0.0, 0.0, 0.2]])
    b = np.array([0.3, -0.2, 0.5, 1.0])

    def F(z):
        return A @ z + b * z**3 + np.sin(z[0]) * np.array([0.0, 0.0, 0.0, 0.1])

    z0 = np.array([0.2, -0.4, 0.1, 0.3])
    exact = A + np.diag(3 * b * z0**2)
    exact[3, 0] += 0.1 * np.cos(z0[0])
    for eps in (1e-3, 1e-4):
        J = gs.central_jacobian(F, z0, eps)
        # truncation eps^2 |F'''| / 6: b z^3 gives eps^2 b exactly, sin(z) eps^2 / 6
        assert np.abs(J - exact).max() <= 1.01 * eps**2 + 1e-9
    lam = gs.multipliers(exact)
    assert np.allclose(np.sort_complex(lam), np.sort_complex(np.linalg.eigvals(exact)), atol=1e-14)
    assert np.all(np.diff(np.abs(lam)) <= 1e-15)   # decreasing modulus
    # a known spectrum: rotation-scaling block (0.9 e^{+-0.3 i}), 0.5, -0.2
    R = 0.9 * np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    M = np.zeros((4, 4))
    M[:2, :2], M[2, 2], M[3, 3] = R, -0.2, 0.5
    lam = gs.multipliers(M)
    assert np.allclose(lam, [0.9 * np.exp(0.3j), 0.9 * np.exp(-0.3j), 0.5, -0.2], atol=1e-14)
    assert gs.modulus_change(lam, lam[::-1]) == 0.0


# ----------------------------------------------------------------------------- forced oscillators
H, F = 1e-3, 1.25                   # step s, "gait" frequency Hz: N = 800 steps per period
M, I = 2.0, 0.1                     # kg, kg m^2 (at the joint: no Coriolis terms)
DX = 1.0                            # N s/m on the base x: its velocity decays
KZ, DZ, Z0 = 400.0, 4.0, 1.0        # base z spring / damper / rest
KT, DT, KC, DC = 5.0, 0.2, 20.0, 0.3  # pitch spring, damper and the controller's K, D
MB, KB, DB = 1.0, 200.0, 2.0        # second z body (loop-closure case)


def oscillator(loop: bool = False):
    """Base x (damped), z (spring), pitch (spring + impedance controller tracking a
    periodic reference: the forcing), no gravity, no contacts; with ``loop`` a second z
    body on the base x glued to the pitch body's origin by a loop closure (its x row is
    identically zero: a redundant row). All linear: one step of the stepping is the 2 x 2
    matrix of :func:`step_matrix` per coordinate."""
    b = ModelBuilder(gravity=0.0)
    b.add_body("torso_x", None, "prismatic_x", (0, 0), 0.0, (0, 0), 0.0, damping=DX)
    b.add_body("torso_z", "torso_x", "prismatic_z", (0, 0), 0.0, (0, 0), 0.0,
               spring_k=KZ, spring_rest=Z0, damping=DZ)
    b.add_body("torso", "torso_z", "revolute", (0, 0), M, (0, 0), I, spring_k=KT, damping=DT)
    if loop:
        b.add_body("b_z", "torso_x", "prismatic_z", (0, 0), MB, (0, 0), 0.0,
                   spring_k=KB, spring_rest=Z0, damping=DB)
        b.add_loop_closure("glue", "torso", (0, 0), "b_z", (0, 0))
    model = b.build()
    n = model.n
    ref = sg.ppoly([1.0] * 5, [0.0, 0.2, 0.0, -0.2])
    ctrl = imp.compile_controller(
        imp.Controller(active=(imp.ActiveJoint("pitch", ref, sg.constant(KC), sg.constant(DC)),),
                       frequency=F, assist=imp.Assist(enabled=False)),
        n, {"pitch": (imp.tree_joint_row(n, model.body_id("torso")),)}, {}, model.body_id("torso"))
    settings = ro.RolloutSettings(h=H, max_airborne_time=1e9)   # no feet: never "airborne"
    p = ro.make_params(model, ctrl, settings, standing_hip_height=Z0)
    x0 = np.zeros(2 * n)
    x0[model.body_id("torso_z")] = Z0 + 0.05
    if loop:
        x0[model.body_id("b_z")] = Z0 + 0.05
    x0[n + model.body_id("torso_x")] = 0.3
    return types.SimpleNamespace(model=model, p=p, x0=x0, ctrl=ctrl)


def step_matrix(mu, k, d, h=H):
    """(q, v) -> (q+, v+) of one step with mass mu, stiffness k and damping d treated
    implicitly: M~ = mu + h d + h^2 k, v+ = v + (h (-k q - d v) - h^2 k v) / M~,
    q+ = q + h v+ (timestep module docstring)."""
    c = 1.0 / (mu + h * d + h * h * k)
    return np.array([[1.0 - c * h * h * k, h * mu * c], [-c * h * k, mu * c]])


def oscillator_multipliers(loop: bool) -> np.ndarray:
    N = round(1.0 / F / H)
    mass = M + (MB if loop else 0.0)
    lam = [(mass / (mass + H * DX)) ** N]                      # base x velocity
    z = step_matrix(mass, KZ + (KB if loop else 0.0), DZ + (DB if loop else 0.0))
    pitch = step_matrix(I, KT + KC, DT + DC)
    for S in (z, pitch):
        lam += list(np.linalg.eigvals(np.linalg.matrix_power(S, N)))
    return sort_eigenvalues(lam)


@pytest.mark.parametrize("loop", [False, True])
def test_forced_oscillator_multipliers_are_the_discrete_steps(loop):
    setup = oscillator(loop)
    r = gs.floquet_setup(setup, max_time=30 / F, periods_settle=30)
    truth = oscillator_multipliers(loop)
    assert r.status == "ok" and r.verdict == "stable"
    assert r.h_s == H and r.settle_periods == 30 and r.t0_s == pytest.approx(24.0, abs=1e-12)
    assert len(r.eigenvalues) == 5                           # 2 n - 1 - rank Cq - rank Cv
    assert np.abs(r.eigenvalues - truth).max() <= 1e-8     # linear: round-off / eps only
    assert r.step_change <= 1e-8 and r.chart_leak <= 1e-9
    assert r.residual <= 1e-4                                 # settled on the forced orbit
    assert r.loaded_contacts == () and "q_torso_x_m" not in r.state_names
    if loop:   # one of the glued z coordinates is dependent (the zero x row is redundant)
        assert len(r.dependent_coordinates) == 2
        assert {n.split("_", 1)[1] for n in r.dependent_coordinates} <= {"torso_z_m", "torso_z_m_s",
                                                                          "b_z_m", "b_z_m_s"}
    else:
        assert r.state_names == ("q_torso_z_m", "q_torso_rad", "qd_torso_x_m_s", "qd_torso_z_m_s",
                                 "qd_torso_rad_s")
    # same inputs, same bits
    again = gs.floquet_setup(oscillator(loop), max_time=30 / F, periods_settle=30)
    assert np.array_equal(again.jacobian, r.jacobian) and np.array_equal(again.eigenvalues, r.eigenvalues)


def test_fixed_point_names_label_the_full_state():
    """Every stored value of the fixed point has a name, and the names sit on the right
    values: after 30 periods of 800 steps the base x velocity is 0.3 a^k (a = M / (M + h
    DX), the implicit damping per step), the base x position the sum of h v over the
    steps, and the z spring has come to rest at Z0 (no gravity)."""
    setup = oscillator()
    n = setup.model.n
    r = gs.floquet_setup(setup, max_time=30 / F, periods_settle=30, check_step=False)
    assert len(r.fixed_point_names) == len(r.fixed_point) == 2 * n
    assert set(r.state_names) < set(r.fixed_point_names)        # z: some of the coordinates
    x = dict(zip(r.fixed_point_names, r.fixed_point))
    a, k = M / (M + H * DX), 30 * 800
    assert x["qd_torso_x_m_s"] == pytest.approx(0.3 * a**k, rel=1e-9)
    assert x["q_torso_x_m"] == pytest.approx(H * 0.3 * a * (1 - a**k) / (1 - a), rel=1e-9)
    assert x["q_torso_z_m"] == pytest.approx(Z0, abs=1e-6)
    assert json.loads(json.dumps(r.to_json()))["fixed_point_names"][0] == "q_torso_x_m"
    # no fixed point stored (a fall while settling): no names either
    fell = gs.GaitStability("fell", "", None)
    assert fell.to_json()["fixed_point_names"] == fell.to_json()["fixed_point"] == []


def test_settling_periods_default_needs_room_explicit_zero_is_the_initial_state():
    setup = oscillator()
    T = 1 / F
    # 1.9 periods: no room for a settling period before the map's own
    with pytest.raises(gs.EvaluationTooShort) as info:
        gs.floquet_setup(setup, max_time=1.9 * T)
    assert info.value.minimum_s == pytest.approx(2 * T) and info.value.held == 1
    with pytest.raises(gs.EvaluationTooShort) as info:     # a section phase needs one more
        gs.floquet_setup(setup, max_time=2.5 * T, section_phase=0.5)
    assert info.value.minimum_s == pytest.approx(3 * T)
    r = gs.floquet_setup(setup, max_time=2 * T, check_step=False)
    assert r.settle_periods == 1 and r.t0_s == pytest.approx(T)
    # an explicit K is taken as asked: 0 analyses the map from the initial state ...
    fresh = oscillator()
    r = gs.floquet_setup(fresh, max_time=0.5 * T, periods_settle=0, check_step=False)
    assert r.settle_periods == 0 and r.t0_s == 0.0 and np.array_equal(r.fixed_point, fresh.x0)
    # ... and with a section phase the section is at (K + phase) T
    r = gs.floquet_setup(oscillator(), max_time=T, periods_settle=2, section_phase=0.5, check_step=False)
    assert r.settle_periods == 2 and r.t0_s == pytest.approx(2.5 * T)


def test_step_must_divide_the_period():
    setup = oscillator()
    setup.ctrl.timing[0] = 0.9                               # T = 1.111 s, h = 1 ms
    with pytest.raises(ValueError, match="does not divide"):
        gs.StroboscopicMap(setup, 1)
    s = gs.gait_settings(ev.WalkSettings(), 0.9)
    assert s.rollout.h == pytest.approx(1 / 0.9 / 1111, rel=1e-15)


# ----------------------------------------------------------------------------- walking humans
@pytest.fixture(scope="module")
def human_map():
    settings = ev.WalkSettings.from_dict({})
    setup, message, s2 = gs.gait_setup(ev.typical_human_design(settings), settings)
    assert setup is not None, message
    return gs.StroboscopicMap(setup, gs.default_settle_periods(10.0, 0.9)), s2


def test_human_map_is_invariant_under_x_translation(human_map):
    smap, settings = human_map
    assert smap.settle_status == ("ok", "") and smap.settle_periods == 8
    assert smap.h == settings.rollout.h and smap.steps_per_period == 1111
    ix = smap.ix
    base = smap(smap.x_star)
    for dx in (0.37, -2.5):
        x = smap.x_star.copy()
        x[ix] += dx
        moved = smap(x)
        assert moved[ix] - base[ix] == pytest.approx(dx, abs=1e-12)
        other = np.delete(np.arange(2 * smap.n), ix)
        assert np.abs(moved[other] - base[other]).max() <= 1e-10
        assert np.abs(smap.coords(moved) - smap.coords(base)).max() <= 1e-10
    # and the map itself is deterministic: same state, same warm start, same bits
    assert np.array_equal(smap(smap.x_star), base)


def test_typical_human_is_reproducible_bit_for_bit_and_not_period_one():
    settings = ev.WalkSettings.from_dict({})
    design = ev.typical_human_design(settings)
    a = gs.floquet(design, settings, check_step=False)
    b = gs.floquet(design.to_json(), {}, check_step=False)
    assert a.status == b.status == "ok"
    assert np.array_equal(a.jacobian, b.jacobian) and np.array_equal(a.eigenvalues, b.eigenvalues)
    assert np.array_equal(a.fixed_point, b.fixed_point) and a.residual == b.residual
    # this hand-set gait is not period-one (it wanders near a period-3 orbit)
    assert a.verdict == "not_periodic" and a.residual > 1.0
    assert len(a.state_names) == 2 * 11 - 1 - len(a.dependent_coordinates)
    json.dumps(a.to_json())


def test_stable_human_gait_multiplier_matches_the_rollouts_convergence():
    """A softer, heavily damped human (K = 1500 N m/rad, D = 200 N m s/rad) walks a
    period-one gait; the rollout's periodicity residual r_k = |z(x((k+1)T)) - z(x(kT))|
    decays like max |lambda|^k, measured without any finite differences."""
    settings = ev.WalkSettings.from_dict({"max_time": 20.0})
    design = ev.typical_human_design(settings, 1500.0, 200.0)
    r = gs.floquet(design, settings)
    assert r.status == "ok" and r.verdict == "stable", (r.verdict, r.residual, r.step_change)
    assert r.residual <= 1e-4 and r.step_change <= 1e-4
    assert abs(r.eigenvalues[0]) == pytest.approx(abs(r.eigenvalues[1]))   # a complex pair
    assert abs(r.eigenvalues[0].imag) > 0.1
    setup, _, s2 = gs.gait_setup(design, settings)
    N = round(1 / 0.9 / settings.rollout.h)
    times = np.arange(19) * N * s2.rollout.h
    rollout = ro.run(setup.x0, setup.mode0, setup.p, s2.rollout, times)
    X = np.delete(rollout.records, setup.model.body_id("torso_x"), axis=1)
    res = np.array([np.abs(X[k + 1] - X[k]).max() for k in range(18)])
    k = np.arange(6, 18)
    rate = float(np.exp(np.polyfit(k, np.log(res[6:]), 1)[0]))
    assert rate == pytest.approx(r.max_modulus, abs=0.03)


def test_a_falling_design_is_a_status_not_an_exception():
    settings = ev.WalkSettings.from_dict({"max_time": 3.0})
    r = gs.floquet(ev.typical_human_design(settings, 20.0, 1.0), settings)
    assert r.status == "fell" and r.verdict is None and "settling" in r.message
    assert r.eigenvalues.size == 0
    assert json.loads(json.dumps(r.to_json()))["status"] == "fell"
    bad = gs.floquet({"params": {}, "topology": None, "actuators": None}, settings)
    assert bad.status == "not_simulated" and "missing parameter" in bad.message


# ----------------------------------------------------------------------------- CLI
def test_cli_gait_json_from_a_design_file(tmp_path, capsys):
    settings = ev.WalkSettings.from_dict({})
    path = tmp_path / "human.json"
    path.write_text(json.dumps(ev.typical_human_design(settings).to_json()))
    out = tmp_path / "a" / "gait.json"
    assert main(["analyze", "gait", str(path), "--max-time", "3", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads(out.read_text())
    assert printed == stored and stored["source"] == str(path)
    assert stored["settle_periods"] == 1 and stored["status"] == "ok"
    assert len(stored["eigenvalues"]) == len(stored["moduli"]) == len(stored["state_names"])
    assert stored["moduli"] == sorted(stored["moduli"], reverse=True)
    # the full state x* (22 values), one name each, against a plain rollout's state at T
    assert len(stored["fixed_point"]) == len(stored["fixed_point_names"]) == 2 * 11
    assert set(stored["state_names"]) < set(stored["fixed_point_names"])
    x = dict(zip(stored["fixed_point_names"], stored["fixed_point"]))
    s3 = ev.WalkSettings.from_dict({"max_time": 3.0})
    setup, _, s2 = gs.gait_setup(ev.typical_human_design(s3), s3)
    (record,) = ro.run(setup.x0, setup.mode0, setup.p, s2.rollout, np.array([1111 * s2.rollout.h])).records
    n, body = setup.model.n, setup.model.body_id
    assert 0.5 < x["q_torso_x_m"] == pytest.approx(record[body("torso_x")], abs=1e-12)   # walked forward
    assert x["q_torso_rad"] == pytest.approx(record[body("torso")], abs=1e-12)
    assert x["qd_shank_l_rad_s"] == pytest.approx(record[n + body("shank_l")], abs=1e-12)
    assert "settled 1 period(s) (x* at t = 1.1111 s)" in format_gait_report(stored)
    # a chart that leaks past the accuracy tolerance is flagged (a section at a contact event:
    # human-walking.json at phase 0 leaks 0.11, at phase 0.3 6e-4; this shuffling human 0.49)
    def warned(report):
        return any(line.startswith("warning: chart leak") and "--section-phase" in line
                   for line in report.splitlines())

    assert warned(format_gait_report(stored)) == (stored["chart_leak"] > stored["accuracy_tol"])
    assert warned(format_gait_report({**stored, "chart_leak": 0.11}))
    assert not warned(format_gait_report({**stored, "chart_leak": 6e-4}))
    # the walking verdict of the same design and settings (issue 34): the typical human with
    # constant impedance does not keep the speed, so its multipliers are not called walking's
    from codesign.problems import get_problem
    from codesign.problems.verdict import walking_verdict

    human = get_problem("human_gait")
    replayed = human.walking.replay(ev.typical_human_design(s3), human.parse_settings({"max_time": 3.0}))
    assert stored["walking"] == json.loads(json.dumps(walking_verdict(replayed.record.metrics, 3.0,
                                                                                replayed.record.message)._asdict()))
    assert stored["walking"]["walks"] is False and format_gait_report(stored).splitlines()[1] == stored["walking"]["text"]
    assert format_gait_report(stored).endswith("of a design that does not walk: the stability of the motion it "
                                               "settles into, not of walking")
    # --settle 0 is taken as asked and the report says what was analysed
    assert main(["analyze", "gait", "--human", "--max-time", "3", "--settle", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Floquet multipliers" in text and "verdict:" in text and "|lambda|" in text
    assert "not settled: x* is the design's initial state (t = 0 s)" in text
    assert json.loads(out.read_text())["settle_periods"] == 0


def test_cli_gait_bad_input_one_line_exit_2(tmp_path, capsys):
    out = tmp_path / "o" / "gait.json"
    cases = [
        ([], "exactly one"),
        (["--human", str(tmp_path / "d.json")], "exactly one"),
        ([str(tmp_path / "missing.json")], "missing.json"),
        (["--human", "--best"], "--run"),
        (["--human", "--settings", "[1]"], "--settings"),
        (["--human", "--settings", '{"contact_model": "soft"}'], "contact_model"),
        (["--human", "--periods", "0"], "--periods: 0; expected"),
        (["--human", "--eps", "-1"], "--eps: -1; expected"),
        (["--human", "--eps", "nan"], "--eps: nan; expected"),
        (["--human", "--settle", "-1"], "--settle: -1; expected a number of gait periods >= 0"),
        (["--human", "--section-phase", "1.0"], "--section-phase: 1; expected a fraction of a period in [0, 1)"),
        (["--human", "--periodic-tol", "-1"], "--periodic-tol: -1; expected a tolerance > 0"),
        (["--human", "--stiffness", "nan"], "--stiffness: nan; expected"),
        (["--human", "--damping", "-5"], "--damping: -5; expected"),
        ([str(tmp_path / "d.json"), "--stiffness", "100"], "--stiffness: applies to --human only"),
        (["--human", "--max-time", "0"], "--max-time"),
        # 0.5 s holds no gait period (0.9 Hz): 1 settling + the map's 1 need 2 T = 2.22 s
        (["--human", "--max-time", "0.5"], "--max-time: 0.5 s; it holds 0 whole gait period(s) of "
                                           "1.111 s (0.9 Hz); expected at least 2.23 s"),
        (["--human", "--max-time", "3", "--section-phase", "0.5"], "expected at least 3.34 s"),
        (["--human", "--out", str(tmp_path / "g.txt")], "--out"),
        (["--run", str(tmp_path / "nowhere"), "--best"], "nowhere: no run found"),
    ]
    for args, text in cases:
        argv = ["analyze", "gait", *args]
        if "--out" not in args:
            argv += ["--out", str(out)]
        assert main(argv) == 2, args
        err = capsys.readouterr().err
        assert text in err and len(err.strip().splitlines()) == 1, (args, err)
        assert not any(key in err for key in ("periods_settle", "section_phase", "periodic_tol")), err
    assert not out.parent.exists()


def test_cli_gait_help_states_the_defaults(capsys):
    with pytest.raises(SystemExit) as info:
        main(["analyze", "gait", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())      # argparse wraps lines
    from codesign.walking.examples import HUMAN_DAMPING, HUMAN_STIFFNESS    # the values used

    for shown in (f"joint stiffness in N m/rad (default {HUMAN_STIFFNESS:g})",
                  f"damping in N m s/rad (default {HUMAN_DAMPING:g})",
                  "(default results/analysis/gait.json)", "(default {})", "F in [0, 1) (default 0)",
                  "period-M gait (default 1)", "SI units (default 1e-06)", "SI units (default 0.001)",
                  "(default: from --max-time)", "else 10)"):
        assert shown in text, shown
    assert "%(" not in text and "None" not in text
    # the parser's defaults are the analysis's (written twice so the parser stays light)
    assert (analyze.EPS, analyze.PERIODIC_TOL) == (gs.EPS, gs.PERIODIC_TOL)
