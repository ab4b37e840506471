"""The engine's algorithms against Pinocchio on random planar models (to <= 1e-9).

Models are converted by codesign.dynamics.testing.peers.to_pinocchio: revolute axis (0, -1, 0)
(our counter-clockwise angle), prismatic PX/PZ, bodies in depth-first order.
"""

import numpy as np
import pytest

from codesign.dynamics.testing import examples as E
from codesign.dynamics import make_workspace
from codesign.dynamics.aba import aba
from codesign.dynamics.kinematics import (
    center_of_mass, com_jacobian, forward_kinematics, point_jacobian, point_kinematics,
)
from codesign.dynamics.loops import (
    constraint_impulse, forward_dynamics, loop_constraints, prepare_mass, project_velocities,
)
from codesign.dynamics.testing.peers import to_pinocchio
from codesign.dynamics.rnea import inverse_dynamics

pin = pytest.importorskip("pinocchio")

TOL = 1e-9
SEEDS = range(6)
LWA = None if pin is None else pin.LOCAL_WORLD_ALIGNED


def random_case(seed, n=9, n_loops=0, closed=False):
    rng = np.random.default_rng(seed)
    model = E.random_tree(rng, n, floating=bool(seed % 2), n_loops=n_loops)
    q = rng.normal(size=model.n)
    qd = rng.normal(size=model.n)
    tau = rng.normal(size=model.n) * 5
    if closed:  # loops hold at q; velocities projected onto K qd = 0
        model = E.close_loops_at(model, q)
    w = make_workspace(model, n_extra_rows=4)
    if closed:
        project_velocities(model.arrays, q, qd, w, 1e-12)
    pm, order = to_pinocchio(model)
    return model, w, q, qd, tau, pm, order


def full_rank_closed_case(seed, n, n_loops):
    """The first random closed model (seeds seed, seed + 1000, ...) whose loop constraints
    are independent at q (random loops between bodies with too little relative mobility
    are redundant; that case is tested in test_engine_loops.py)."""
    for attempt in range(50):
        case = random_case(seed + 1000 * attempt, n=n, n_loops=n_loops, closed=True)
        model, w, q, qd, tau = case[:5]
        if forward_dynamics(model.arrays, q, qd, tau, w, 0.0, 0.0, 1e-12) == 0:
            return case
    raise AssertionError("no full-rank random closed model found")


def sym(M):
    return np.triu(M) + np.triu(M, 1).T


def pin_point_frame(pm, order, body, xz, name):
    inv = np.argsort(order)
    placement = pin.SE3(np.eye(3), np.array([xz[0], 0.0, xz[1]]))
    return pm.addFrame(pin.Frame(name, int(inv[body]) + 1, 0, placement, pin.FrameType.OP_FRAME))


@pytest.mark.parametrize("seed", SEEDS)
def test_mass_matrix_bias_and_dynamics_match_pinocchio(seed):
    model, w, q, qd, tau, pm, o = random_case(seed)
    pd = pm.createData()
    m = model.arrays
    forward_kinematics(m, q, qd, w)
    prepare_mass(m, w)
    assert np.abs(sym(pin.crba(pm, pd, q[o])) - w.M[o][:, o]).max() <= TOL
    assert np.abs(pin.nonLinearEffects(pm, pd, q[o], qd[o]) - w.h[o]).max() <= TOL
    qdd = np.empty(model.n)
    assert aba(m, w, tau, w.f, False, qdd) == 0
    assert np.abs(pin.aba(pm, pd, q[o], qd[o], tau[o]) - qdd[o]).max() <= TOL
    tau_id = np.empty(model.n)
    inverse_dynamics(m, w, qdd, tau_id)
    assert np.abs(tau_id - tau).max() <= 1e-9 * max(1.0, np.abs(tau).max())
    assert np.abs(pin.rnea(pm, pd, q[o], qd[o], qdd[o]) - tau_id[o]).max() <= TOL


@pytest.mark.parametrize("seed", SEEDS)
def test_point_and_com_jacobians_match_pinocchio(seed):
    model, w, q, qd, tau, pm, o = random_case(seed)
    rng = np.random.default_rng(100 + seed)
    body = int(rng.integers(model.n))
    xz = rng.uniform(-0.5, 0.5, 2)
    fid = pin_point_frame(pm, o, body, xz, "pt")
    pd = pm.createData()
    m = model.arrays
    forward_kinematics(m, q, qd, w)
    J = np.zeros((2, model.n))
    point_jacobian(m, w, body, xz[0], xz[1], J)
    out = np.empty(6)
    point_kinematics(w, body, xz[0], xz[1], out)
    pin.forwardKinematics(pm, pd, q[o], qd[o], np.zeros(model.n))
    pin.computeJointJacobians(pm, pd, q[o])
    pin.updateFramePlacements(pm, pd)
    Jp = pin.getFrameJacobian(pm, pd, fid, LWA)[[0, 2]]
    assert np.abs(Jp - J[:, o]).max() <= TOL
    assert np.abs(pd.oMf[fid].translation[[0, 2]] - out[:2]).max() <= TOL
    assert np.abs(Jp @ qd[o] - out[2:4]).max() <= TOL
    acc = pin.getFrameClassicalAcceleration(pm, pd, fid, LWA).linear[[0, 2]]
    assert np.abs(acc - out[4:6]).max() <= TOL  # Jdot qd
    com = np.empty(4)
    center_of_mass(m, w, com)
    Jc = np.zeros((2, model.n))
    com_jacobian(m, w, Jc)
    assert np.abs(pin.centerOfMass(pm, pd, q[o], qd[o])[[0, 2]] - com[:2]).max() <= TOL
    assert np.abs(pd.vcom[0][[0, 2]] - com[2:]).max() <= TOL
    assert np.abs(pin.jacobianCenterOfMass(pm, pd, q[o])[[0, 2]] - Jc[:, o]).max() <= TOL


def pin_loop_constraints(model, pm, o, kind):
    inv = np.argsort(o)
    models = pin.StdVec_RigidConstraintModel()
    for k in range(model.n_loops):
        a, b = int(model.loop_body_a[k]), int(model.loop_body_b[k])
        pa = pin.SE3(np.eye(3), np.array([model.loop_xz_a[k, 0], 0.0, model.loop_xz_a[k, 1]]))
        pb = pin.SE3(np.eye(3), np.array([model.loop_xz_b[k, 0], 0.0, model.loop_xz_b[k, 1]]))
        ja = 0 if a < 0 else int(inv[a]) + 1
        jb = 0 if b < 0 else int(inv[b]) + 1
        models.append(pin.RigidConstraintModel(kind, pm, ja, pa, jb, pb, LWA))
    datas = pin.StdVec_RigidConstraintData()
    for cm in models:
        datas.append(cm.createData())
    return models, datas


@pytest.mark.parametrize("seed", SEEDS)
def test_loop_closure_multipliers_match_constraint_dynamics(seed):
    """pinocchio.constraintDynamics with CONTACT_3D point-to-point constraints expressed
    LOCAL_WORLD_ALIGNED: its (x, z) forces are our lambda (same sign: the force on the
    first body); its y rows are identically zero in a planar model (handled by its
    proximal solver, mu small)."""
    model, w, q, qd, tau, pm, o = full_rank_closed_case(seed, n=9, n_loops=1 + seed % 2)
    m = model.arrays
    assert forward_dynamics(m, q, qd, tau, w, 0.0, 0.0, 1e-12) == 0
    pd = pm.createData()
    cms, cds = pin_loop_constraints(model, pm, o, pin.ContactType.CONTACT_3D)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    prox = pin.ProximalSettings(1e-15, 1e-14, 1000)
    ddq = pin.constraintDynamics(pm, pd, q[o], qd[o], tau[o], cms, cds, prox)
    lam = np.array(pd.lambda_c).reshape(-1, 3)[:, [0, 2]].reshape(-1)
    r = 2 * model.n_loops
    scale = max(1.0, np.abs(lam).max())
    assert np.abs(lam - w.lam[:r]).max() <= TOL * scale
    assert np.abs(ddq - w.qdd[o]).max() <= TOL * scale


def contact_rows(model, w, q, qd, bodies, points):
    """Loop rows, then two rows per contact point; returns (row count, J of contacts,
    world positions of the points)."""
    m = model.arrays
    forward_kinematics(m, q, qd, w)
    prepare_mass(m, w)
    r = loop_constraints(m, w, 0.0, 0.0)
    Js, pos = [], []
    for body, xz in zip(bodies, points):
        J = np.zeros((2, model.n))
        point_jacobian(m, w, body, xz[0], xz[1], J)
        out = np.empty(6)
        point_kinematics(w, body, xz[0], xz[1], out)
        w.rows[r:r + 2] = J
        r += 2
        Js.append(J)
        pos.append(out[:2].copy())
    return r, np.vstack(Js), pos


@pytest.mark.parametrize("seed", SEEDS)
def test_post_impact_velocity_matches_impulse_dynamics(seed):
    """Two body points hit fixed points (restitution 0 and 0.5) on a random tree:
    pinocchio.impulseDynamics with CONTACT_3D point constraints to the world against
    constraint_impulse on the contacts' rows."""
    for attempt in range(50):  # contacts on bodies with >= 2 DOF to the world (else redundant)
        model, w, q, qd, tau, pm, o = random_case(seed + 1000 * attempt, n=8)
        rng = np.random.default_rng(200 + seed)
        bodies = [model.n - 1, model.n - 3]
        points = [rng.uniform(-0.4, 0.4, 2), rng.uniform(-0.4, 0.4, 2)]
        r, J, pos = contact_rows(model, w, q, qd, bodies, points)
        if np.linalg.matrix_rank(J) == 4:
            break
    inv = np.argsort(o)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for body, xz, p in zip(bodies, points, pos):
        cm = pin.RigidConstraintModel(
            pin.ContactType.CONTACT_3D, pm, int(inv[body]) + 1, pin.SE3(np.eye(3), np.array([xz[0], 0, xz[1]])),
            0, pin.SE3(np.eye(3), np.array([p[0], 0.0, p[1]])), LWA)
        cms.append(cm)
        cds.append(cm.createData())
    for e in (0.0, 0.5):
        target = -e * (J @ qd)
        qd_plus = np.empty(model.n)
        assert constraint_impulse(model.arrays, w, r, target, qd, qd_plus, 1e-12) == 0
        pd = pm.createData()
        pin.initConstraintDynamics(pm, pd, cms, cds)
        v_after = pin.impulseDynamics(pm, pd, q[o], qd[o], cms, cds, e, pin.ProximalSettings(1e-15, 1e-14, 1000))
        scale = max(1.0, np.abs(qd).max())
        assert np.abs(v_after - qd_plus[o]).max() <= TOL * scale
        assert np.abs(J @ qd_plus - target).max() <= TOL * scale


@pytest.mark.parametrize("seed", [1, 3, 5])
def test_impact_with_closed_loop_matches_dense_solve_on_pinocchio_quantities(seed):
    """Impact of a point on a model with a closed loop. pinocchio.impulseDynamics (4.1)
    does not return the impulse-consistent velocity for two-body (loop) constraints in
    our checks, so the reference here is the dense dynamically consistent inverse
    qd+ = qd- - M^-1 G^T (G M^-1 G^T)^-1 G qd- built from Pinocchio's crba and frame
    Jacobians (G = [J_A - J_B; J_contact])."""
    model, w, q, qd, tau, pm, o = full_rank_closed_case(seed, n=8, n_loops=1)
    rng = np.random.default_rng(300 + seed)
    body, xz = model.n - 1, rng.uniform(-0.4, 0.4, 2)
    r, J, pos = contact_rows(model, w, q, qd, [body], [xz])
    qd_plus = np.empty(model.n)
    assert constraint_impulse(model.arrays, w, r, np.zeros(r), qd, qd_plus, 1e-12) == 0
    fa = pin_point_frame(pm, o, int(model.loop_body_a[0]), model.loop_xz_a[0], "A")
    fb = pin_point_frame(pm, o, int(model.loop_body_b[0]), model.loop_xz_b[0], "B")
    fc = pin_point_frame(pm, o, body, xz, "C")
    pd = pm.createData()
    pin.computeJointJacobians(pm, pd, q[o])
    pin.updateFramePlacements(pm, pd)

    def jac(f):
        return pin.getFrameJacobian(pm, pd, f, LWA)[[0, 2]]

    G = np.vstack([jac(fa) - jac(fb), jac(fc)])
    M = sym(pin.crba(pm, pd, q[o]))
    Minv_Gt = np.linalg.solve(M, G.T)
    v = qd[o]
    v_after = v - Minv_Gt @ np.linalg.solve(G @ Minv_Gt, G @ v)
    assert np.abs(v_after - qd_plus[o]).max() <= TOL * max(1.0, np.abs(qd).max())
