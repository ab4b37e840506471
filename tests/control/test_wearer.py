"""The wearer-space law (codesign.control.wearer, issue 29) against independent truths:
the transmission against finite differences of the loop-closure IK, virtual power, the
G = I device against the human's own joint torques, saturation, the singular guard."""

from __future__ import annotations

import numpy as np
import pytest

from codesign.control import wearer as wr
from codesign.model.gait import nominal_gait
from codesign.screening.screen import close_loops_kernel
from codesign.walking import Design, WalkSettings
from codesign.walking.design import load_design
from codesign.walking.initial_state import close_wr_loops, gait_configuration
from codesign.walking.setup import build_setup, design_topology, passive_wr_joints

HUMAN_LAW = "docs/designs/human-capped-thesis-walking.json"
DEVICES = ("docs/designs/codesign-walking.json",          # topology 1 (a four-bar per joint)
           "studies/physical-stages/codesign-posture-study.json")    # topology 8


def wearer_design(device_file: str) -> Design:
    """The device's morphology and passive joints with the capped human's hip, knee and
    ankle law (the wearer-space layout)."""
    dev, human = load_design(device_file), load_design(HUMAN_LAW)
    own = tuple(f"j{a}." for a in dev.actuators) + ("ankle.",)
    params = {k: v for k, v in dev.params.items() if not k.startswith(own)}
    return Design({**params, **human.params}, dev.topology, dev.actuators)


@pytest.fixture(scope="module", params=DEVICES)
def setup(request):
    s, _, _ = build_setup(wearer_design(request.param), WalkSettings.from_dict({"max_time": 0.5}))
    assert s is not None
    return s


def drive_of(setup):
    wm = setup.p.model.walk
    return wm.drive, setup.p.data.walk.drive


def wr_coordinates(setup):
    d = drive_of(setup)[0]
    return sorted(int(c) for leg in range(2) for c in d.leg_added[leg, :d.leg_nadded[leg]])


def poses(setup, phases=(0.0, 0.2, 0.45, 0.7)):
    """Configurations of the nominal gait with the device's loops closed (q, qd admissible)."""
    model = setup.model
    out = []
    for phase in phases:
        q, qd = gait_configuration(model, nominal_gait(), 0.9, phase, 0.9)
        q, qd, err = close_wr_loops(model, q, qd, wr_coordinates(setup))
        assert err < 1e-10
        out.append((q, qd))
    return out


def closed(model, q, free):
    """q with the loops closed again by Newton from q on the coordinates ``free``."""
    a = model.arrays
    q = q.copy()
    r = 2 * model.n_loops
    err = close_loops_kernel(a.parent, a.joint_type, a.joint_xz, a.loop_body_a, a.loop_body_b,
                             a.loop_xz_a, a.loop_xz_b, q, np.asarray(free, dtype=np.int64), 1e-14,
                             100, 0.5, 1e-14, np.zeros((model.n, 3)), np.zeros(r), np.zeros((r, model.n)))
    assert err < 1e-13
    return q


def test_transmission_equals_finite_differences_of_the_loop_closure_ik(setup):
    """G = dh/da from the loop rows equals the inverse of da/dh by central differences of
    the IK (hip or knee moved, the device's loops re-closed, the actuated angles read
    from their rows), to 1e-6 relative, at four phases of the gait."""
    model = setup.model
    d, dd = drive_of(setup)
    free = wr_coordinates(setup)
    eps = 1e-6
    for q, qd in poses(setup):
        assert wr.transmissions(model.arrays, q, qd, d, dd)
        for leg in range(2):
            A = np.zeros((2, 2))
            for k in range(2):
                c = d.leg_human[leg, k]
                qp, qm = q.copy(), q.copy()
                qp[c] += eps
                qm[c] -= eps
                ap = d.rows[2 * leg: 2 * leg + 2] @ closed(model, qp, free)
                am = d.rows[2 * leg: 2 * leg + 2] @ closed(model, qm, free)
                A[:, k] = (ap - am) / (2 * eps)
            G_fd = np.linalg.inv(A)
            G = dd.G[leg]
            assert np.abs(G - G_fd).max() <= 1e-6 * np.abs(G_fd).max(), (G, G_fd)


def test_virtual_power_holds_while_unsaturated(setup):
    """tau_a . a_dot = tau_h . h_dot on loop-admissible velocities (the actuators do the
    law's work), to 1e-9 relative, with the actuators unbounded."""
    model = setup.model
    d, dd = drive_of(setup)
    unbounded = d._replace(kind=np.zeros_like(d.kind))
    rng = np.random.default_rng(3)
    for q, qd in poses(setup):
        tau = np.zeros(model.n)
        joint_tau = rng.normal(0.0, 40.0, setup.ctrl.act_rows.shape[0])
        gain = np.ones((joint_tau.shape[0], 2))
        assert wr.drive_torques(0.0, model.arrays, q, qd, unbounded, dd, tau, joint_tau, gain, np.zeros(6))
        for leg in range(2):
            tau_h = joint_tau[d.leg_law[leg]]
            h_dot = qd[d.leg_human[leg]]
            power_h = float(tau_h @ h_dot)
            power_a = float(dd.tau[2 * leg: 2 * leg + 2] @ dd.rate[2 * leg: 2 * leg + 2])
            assert abs(power_a - power_h) <= 1e-9 * max(abs(power_h), np.abs(tau_h).max() * np.abs(h_dot).max())
        # and the generalized forces equal the rows' sum: the actuated rows' transposes
        assert np.allclose(tau, d.rows.T @ dd.tau, rtol=0, atol=1e-12)
        assert (gain == 1.0).all()        # nothing saturated: the implicit gains stay


def test_saturation_delivers_exactly_the_limit(setup):
    """A law torque beyond the envelope: each actuator delivers exactly +-tau_lim at its
    rate, the commanded torque is G^T tau_h, and the leg's implicit gains are dropped."""
    model = setup.model
    d, dd = drive_of(setup)
    q, qd = poses(setup)[1]
    tau = np.zeros(model.n)
    joint_tau = np.full(setup.ctrl.act_rows.shape[0], 5000.0)
    gain = np.ones((joint_tau.shape[0], 2))
    assert wr.drive_torques(0.0, model.arrays, q, qd, d, dd, tau, joint_tau, gain, np.zeros(6))
    from codesign.model.actuators import torque_limit
    for i in range(4):
        leg, k = divmod(i, 2)
        cmd = dd.G[leg][:, k] @ joint_tau[d.leg_law[leg]]
        assert dd.cmd[i] == pytest.approx(cmd, rel=1e-12)
        assert abs(dd.tau[i]) == torque_limit(dd.rate[i], d.limit[i])
        assert np.sign(dd.tau[i]) == np.sign(cmd)
    for leg in range(2):
        assert (gain[d.leg_law[leg]] == 0.0).all()


def test_singular_guard_trips_on_a_singular_linkage(setup):
    """Actuated rows that cannot tell hip from knee (both rows the same joint: A singular)
    and a bound below the real transmission both trip the guard: no torque, the flag set."""
    model = setup.model
    d, dd = drive_of(setup)
    q, qd = poses(setup)[0]
    same = d.rows.copy()
    same[1] = same[0]
    same[3] = same[2]
    for bad in (d._replace(rows=same), d._replace(max_transmission=np.array([1e-3]))):
        data = wr.make_drive_data(bad, model)
        tau = np.zeros(model.n)
        ok = wr.drive_torques(0.0, model.arrays, q, qd, bad, data, tau, np.full(6, 30.0), np.ones((6, 2)),
                                 np.zeros(6))
        assert not ok and data.singular[0] == 1
        assert not tau.any() and not data.tau.any()


def test_a_parallelogram_device_delivers_the_wearer_torques_unchanged():
    """Topology 1 with parallelogram joint positions (the device's links stay parallel to
    thigh and shank; MODEL's screening example): G = I along the gait to 1e-9, so each
    actuator delivers exactly its joint's law torque (the thesis's law on the same joint)."""
    from codesign.walking.examples import typical_codesign_design

    device = typical_codesign_design()
    human = load_design(HUMAN_LAW)
    params = {k: v for k, v in device.params.items() if k.split(".")[0] in
              passive_wr_joints(design_topology(device, WalkSettings()), device.actuators)
              or "." not in k}
    s, _, _ = build_setup(Design({**params, **human.params}, 1, device.actuators),
                          WalkSettings.from_dict({"max_time": 0.5}))
    model = s.model
    d, dd = drive_of(s)
    for q, qd in poses(s):
        tau = np.zeros(model.n)
        joint_tau = np.array([31.0, -12.0, 57.0, 4.0, 0.0, 0.0])
        assert wr.drive_torques(0.0, model.arrays, q, qd, d._replace(kind=np.zeros_like(d.kind)), dd, tau,
                                joint_tau, np.ones((6, 2)), np.zeros(6))
        for leg in range(2):
            assert np.abs(dd.G[leg] - np.eye(2)).max() <= 1e-9
            assert np.allclose(dd.tau[2 * leg: 2 * leg + 2], joint_tau[d.leg_law[leg]], rtol=1e-9)
            assert np.allclose(dd.rate[2 * leg: 2 * leg + 2], qd[d.leg_human[leg]], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device_file", DEVICES)
def test_screening_transmission_equals_the_drives_along_the_gait(device_file):
    """The screening's transmission (null-space projector algebra, G = N_HH T^-1, one leg)
    and the drive's (the loop rows solved for the added joints) agree on the largest |G|
    and |G^-1| entries along the nominal gait (screened without offsets), to 1e-6."""
    from codesign.model.anthropometry import human_geometry
    from codesign.model.morphology import build_morphology
    from codesign.screening.screen import ScreenSettings, screen
    from codesign.walking.setup import morphology_params

    design = wearer_design(device_file)
    settings = WalkSettings.from_dict({"max_time": 0.5})
    topology = design_topology(design, settings)
    morph = build_morphology(topology, design.actuators, morphology_params(topology, design.params),
                             human_geometry(), settings.actuators.mass())
    n_points = 20
    result = screen(morph, nominal_gait(), ScreenSettings(n_points=n_points, offset_deg=0.0))
    assert result.ok
    s, _, _ = build_setup(design, settings)
    d, dd = drive_of(s)
    g_peak = a_peak = 0.0
    for q, qd in poses(s, phases=np.arange(n_points) / n_points):
        assert wr.transmissions(s.model.arrays, q, qd, d, dd)
        g_peak = max(g_peak, np.abs(dd.G[0]).max())
        a_peak = max(a_peak, np.abs(np.linalg.inv(dd.G[0])).max())
    assert result.transmission_peak == pytest.approx(g_peak, rel=1e-6)
    assert result.inverse_transmission_peak == pytest.approx(a_peak, rel=1e-6)


@pytest.mark.peers
def test_the_event_driven_and_soft_peers_run_the_same_law():
    """The wearer-space law in the three rollouts (the report's robustness replays and
    the contact-agreement tests use the peers): each walks the first 0.6 s of a walking
    wearer-space co-design (topology 2), its actuators deliver torque, and the
    transmission each meets is the linkage's (peaks within 5 % of the time-stepping
    rollout's)."""
    from codesign.walking.evaluation import evaluate

    design = load_design("studies/wearer-space/wearer-t02.json")
    peaks = {}
    for contact in ("hard", "hard_event", "soft"):
        record = evaluate(design, WalkSettings.from_dict({"max_time": 0.6, "contact_model": contact}))
        assert record.ok and record.metrics["time"] == pytest.approx(0.6), (contact, record.message)
        assert record.metrics["power"] > 10.0, contact
        peaks[contact] = record.metrics["transmission_peak"]
    assert 1.0 < peaks["hard"] < 2.0
    for contact in ("hard_event", "soft"):
        assert peaks[contact] == pytest.approx(peaks["hard"], rel=0.05), peaks


@pytest.mark.parametrize("design_file", ["docs/designs/wearer-demo.json",     # actuated tree joints
                                         "studies/wearer-space/wearer-t01.json"])     # j6 a loop joint
def test_a_catalog_drivetrain_reflects_its_rotor_on_the_actuated_joints(design_file):
    """Issue 30: a catalog unit (an AK80-64: 64:1, J = 5.645e-5 kg m^2) adds N^2 J r r^T
    to the mass matrix for each actuated joint's row r (the drive's rows: a tree
    coordinate, or a loop joint's relative angle), nothing else; the spec's fixed rating
    adds nothing (its results stay bit for bit)."""
    from codesign.model.drivetrain import motor_catalog

    design = load_design(design_file)
    base, _, _ = build_setup(design, WalkSettings.from_dict({"max_time": 0.5}))
    geared, _, _ = build_setup(design, WalkSettings.from_dict({"max_time": 0.5, "actuators": {"motor": "AK80-64"}}))
    assert not base.model.armature.any()
    unit = motor_catalog()["AK80-64"]
    rows = drive_of(geared)[0].rows
    expected = sum(unit.builtin_gear_ratio ** 2 * unit.rotor_inertia * np.outer(r, r) for r in rows)
    assert np.abs(geared.model.armature - expected).max() < 1e-15
    loops = any(np.count_nonzero(r) > 1 for r in rows)
    assert loops == design_file.endswith("t01.json")      # the loop case is exercised


def test_each_actuated_joint_gets_the_drivetrain_its_design_chooses():
    """A design choosing an AK10-9 with a 3:1 stage on j1 and an AK80-64 on j4: each
    joint's envelope in the drive, its reflected inertia on its row, the actuators' mass
    in the metric; the wearer-drive problem decodes the same design from its candidate."""
    from codesign.model.drivetrain import Drivetrain, drivetrain_actuator, motor_catalog
    from codesign.problems import get_problem

    base = load_design("docs/designs/wearer-demo.json")
    names = list(motor_catalog())
    params = {**base.params, "j1.motor": names.index("AK10-9") + 0.3, "j1.stage_ratio": 3.0,
              "j4.motor": names.index("AK80-64") + 0.9, "j4.stage_ratio": 1.0}
    design = Design(params, base.topology, base.actuators)
    s, _, _ = build_setup(design, WalkSettings.from_dict({"max_time": 0.5}))
    a1 = drivetrain_actuator(Drivetrain(motor_catalog()["AK10-9"], 3.0))
    a4 = drivetrain_actuator(Drivetrain(motor_catalog()["AK80-64"], 1.0))
    drive = drive_of(s)[0]
    assert np.array_equal(drive.limit, np.stack([a1.limit_row(), a4.limit_row()] * 2))
    expected = sum(a.armature() * np.outer(r, r) for a, r in zip((a1, a4, a1, a4), drive.rows))
    assert np.abs(s.model.armature - expected).max() < 1e-15
    assert s.design_metrics["actuator_mass"] == pytest.approx(2 * (a1.mass() + a4.mass()), rel=1e-12)
    assert [(n, a.drivetrain) for n, a in s.actuators] == [("j1", "AK10-9 x 3"), ("j4", "AK80-64 x 1")]
    problem = get_problem("exo_codesign_wearer_drive")
    groups, candidate = problem.walking.encode(design)
    assert problem.walking.decode(groups, candidate, problem.parse_settings({})) == design
