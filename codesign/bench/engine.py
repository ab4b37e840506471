"""`codesign bench engine`: the thesis's chain benchmark (2.7.4) against MuJoCo and Pinocchio.

A serial chain of N revolute joints (1 m, 1 kg rods hanging from the world, started at
q = 0.3 rad per joint, at rest), and the same N degrees of freedom spread over 5 branches,
simulated for 30 s at a fixed 1 ms step with semi-implicit Euler and with RK4:

* this engine, two compiled paths: ``kernel`` = codesign.dynamics.testing.rollouts.tree_rollout
  (the fixed-step loop and ABA in one compiled function) and ``hybrid`` = the generic
  event-driven integrator codesign.dynamics.hybrid.integrate with
  codesign.dynamics.testing.flows.multibody_flow and no guards (what rollouts with contacts use);
* MuJoCo: the same model as MJCF (contacts and constraints disabled, no damping or
  armature), the whole loop in C via ``mujoco.mj_step(model, data, nstep)``; integrator
  "Euler" (MuJoCo's is semi-implicit) or "RK4";
* Pinocchio: ``pinocchio.aba`` in a Python loop with the same integrator.

Seconds per simulation, the ratio to MuJoCo, and (same physics) the largest difference of
the joint angles from MuJoCo's after 1 s and after the whole run are printed and written to
``<out>/engine.csv`` (chains of 10+ links are chaotic: after 30 s the trajectories of any
two correct simulators have separated; the 1 s figure is the physics check).
Closed-loop case: the pantographic leg (thesis Fig. 2.15, 2 loop rows) with this engine
against Pinocchio's ``constraintDynamics`` in a Python loop (MuJoCo's soft equality
constraints are different physics, so it is left out there).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from codesign.io import write_csv_atomic

DESCRIPTION = "N-link chain (thesis 2.7.4), 30 s at 1 ms, Euler + RK4: engine vs MuJoCo vs Pinocchio"

SIZES = (5, 10, 20, 30, 40, 50)
QUICK_SIZES = (5, 10)
BRANCHES = 5
STEP = 1e-3
Q0 = 0.3


def add_arguments(parser: argparse.ArgumentParser) -> None:  # pragma: no cover - bench CLI
    pass


def _engine_rollout(model, method: str, t_end: float, q0: np.ndarray):
    from codesign.dynamics import hybrid
    from codesign.dynamics.testing.flows import flow_params, multibody_flow

    n = model.n
    p = flow_params(model)
    x0 = np.concatenate([q0, np.zeros(n)])
    s = hybrid.settings(method, h=STEP, n_pos=n, max_steps=10**9)
    rec = np.array([t_end])
    t0 = time.perf_counter()
    out = hybrid.integrate(multibody_flow, hybrid.no_guards, hybrid.no_jump, hybrid.observe_nothing,
                           x0, np.zeros(1, dtype=np.int64), 0.0, t_end, p, rec,
                           np.zeros(0, dtype=np.int64), s)
    elapsed = time.perf_counter() - t0
    status, x = out.status, out.x
    q = x[:n].copy()
    if status != hybrid.SUCCESS:  # e.g. NONFINITE: the explicit scheme went unstable
        q[:] = np.nan
    return elapsed, q


def _kernel_rollout(model, method: str, t_end: float, q0: np.ndarray):
    from codesign.dynamics import make_workspace
    from codesign.dynamics.testing.rollouts import RK4, SYMPLECTIC_EULER, closed_loop_rollout, tree_rollout

    n = model.n
    w = make_workspace(model)
    q, qd = q0.copy(), np.zeros(n)
    scratch = np.zeros((5, n)), np.zeros((5, n))
    code = SYMPLECTIC_EULER if method == "symplectic_euler" else RK4
    t0 = time.perf_counter()
    n_steps = int(round(t_end / STEP))
    if model.n_loops:
        status = closed_loop_rollout(model.arrays, w, np.zeros(n), q, qd, STEP, n_steps, code, 0.0, 0.0,
                                     1e-12, *scratch)
    else:
        status = tree_rollout(model.arrays, w, np.zeros(n), q, qd, STEP, n_steps, code, *scratch)
    elapsed = time.perf_counter() - t0
    if status != 0:
        q[:] = np.nan
    return elapsed, q


def mujoco_rollout(model, method: str, t_end: float, q0: np.ndarray) -> tuple[float, np.ndarray]:
    """(seconds of ``mj_step`` for t_end s at :data:`STEP`, final joint angles rad) of
    ``model`` as MJCF in MuJoCo; the model is built outside the timer."""
    import mujoco

    from codesign.dynamics.testing.peers import to_mjcf

    mj = mujoco.MjModel.from_xml_string(to_mjcf(model, STEP, "Euler" if method == "symplectic_euler" else "RK4"))
    data = mujoco.MjData(mj)
    data.qpos[:] = q0
    data.qvel[:] = 0.0
    nstep = int(round(t_end / STEP))
    t0 = time.perf_counter()
    mujoco.mj_step(mj, data, nstep)
    elapsed = time.perf_counter() - t0
    q = data.qpos.copy()
    if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0:  # MuJoCo reset after a blow-up
        q[:] = np.nan
    return elapsed, q


def mujoco_chain_s(t_end: float, n_links: int = 20) -> float:
    """Seconds MuJoCo takes to step the thesis's chain of ``n_links`` 1-m, 1-kg rods (from
    0.3 rad per joint, at rest) for ``t_end`` s at 1 ms with semi-implicit Euler: the fixed
    peer workload other benchmarks quote their times against (a ratio to it holds across
    machines better than seconds do)."""
    from codesign.dynamics.testing import examples as E

    return mujoco_rollout(E.serial_chain(n_links), "symplectic_euler", t_end, np.full(n_links, Q0))[0]


def _pinocchio_rollout(model, method: str, t_end: float, q0: np.ndarray):
    import pinocchio as pin

    from codesign.dynamics.testing.peers import to_pinocchio

    pm, order = to_pinocchio(model)
    pd = pm.createData()
    q = q0[order].copy()
    v = np.zeros(model.n)
    tau = np.zeros(model.n)
    h = STEP
    nstep = int(round(t_end / STEP))
    aba = pin.aba
    t0 = time.perf_counter()
    if method == "symplectic_euler":
        for _ in range(nstep):
            v = v + h * aba(pm, pd, q, v, tau)
            q = q + h * v
    else:
        for _ in range(nstep):
            a1 = aba(pm, pd, q, v, tau)
            q2, v2 = q + 0.5 * h * v, v + 0.5 * h * a1
            a2 = aba(pm, pd, q2, v2, tau)
            q3, v3 = q + 0.5 * h * v2, v + 0.5 * h * a2
            a3 = aba(pm, pd, q3, v3, tau)
            q4, v4 = q + h * v3, v + h * a3
            a4 = aba(pm, pd, q4, v4, tau)
            q = q + h / 6 * (v + 2 * v2 + 2 * v3 + v4)
            v = v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
    elapsed = time.perf_counter() - t0
    out = np.empty(model.n)
    out[order] = q
    return elapsed, out


def _pinocchio_loop_rollout(model, t_end: float, q0: np.ndarray):
    """Pantographic leg with pinocchio.constraintDynamics, RK4 in a Python loop (passive
    elements added as generalized forces as in our flow)."""
    import pinocchio as pin

    from codesign.dynamics.testing.peers import to_pinocchio

    pm, order = to_pinocchio(model)
    assert np.all(order == np.arange(model.n))
    pd = pm.createData()
    inv = np.argsort(order)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for k in range(model.n_loops):
        a, b = int(model.loop_body_a[k]), int(model.loop_body_b[k])
        pa = pin.SE3(np.eye(3), np.array([model.loop_xz_a[k, 0], 0, model.loop_xz_a[k, 1]]))
        pb = pin.SE3(np.eye(3), np.array([model.loop_xz_b[k, 0], 0, model.loop_xz_b[k, 1]]))
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, int(inv[a]) + 1, pa,
                                      int(inv[b]) + 1 if b >= 0 else 0, pb, pin.LOCAL_WORLD_ALIGNED)
        cms.append(cm)
        cds.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, cms, cds)
    prox = pin.ProximalSettings(1e-12, 1e-10, 20)
    k_s, rest, damp = model.spring_k, model.spring_rest, model.damping

    def acc(q, v):
        tau = -k_s * (q - rest) - damp * v
        return pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, prox)

    h = STEP
    q, v = q0.copy(), np.zeros(model.n)
    t0 = time.perf_counter()
    for _ in range(int(round(t_end / STEP))):
        a1 = acc(q, v)
        q2, v2 = q + 0.5 * h * v, v + 0.5 * h * a1
        a2 = acc(q2, v2)
        q3, v3 = q + 0.5 * h * v2, v + 0.5 * h * a2
        a3 = acc(q3, v3)
        q4, v4 = q + h * v3, v + h * a3
        a4 = acc(q4, v4)
        q = q + h / 6 * (v + 2 * v2 + 2 * v3 + v4)
        v = v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
    return time.perf_counter() - t0, q


def _write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(path, rows)


def run(args) -> int:
    from codesign.dynamics.testing import examples as E

    quick = bool(getattr(args, "quick", False))
    sizes = QUICK_SIZES if quick else SIZES
    t_end = 1.0 if quick else 30.0
    methods = ("symplectic_euler", "rk4")

    chain3 = E.serial_chain(3)
    compile_s = {}
    for name, fn in (("kernel", _kernel_rollout), ("hybrid", _engine_rollout)):
        for method in methods:
            t0 = time.perf_counter()
            fn(chain3, method, 0.01, np.full(3, Q0))
            compile_s[(name, method)] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _engine_rollout(E.serial_chain(4), "rk4", 0.01, np.full(4, Q0))
    warm = time.perf_counter() - t0
    print("first call in this process (load cached kernels or compile, s): "
          + ", ".join(f"{k[0]}/{k[1]} {v:.2f}" for k, v in compile_s.items())
          + f"; warm call (new model, same types): {warm * 1e3:.1f} ms")

    rows = []
    print(f"{t_end:g} s simulated at {STEP * 1e3:g} ms per run; seconds per simulation")
    print(f"{'case':<10}{'N':>4}  {'integrator':<10}{'kernel':>9}{'hybrid':>9}{'mujoco':>9}{'pinocchio':>10}"
          f"{'kernel/mj':>10}{'hybrid/mj':>10}{'|dq| 1 s':>10}{'|dq| end':>10}")
    for case, branches in (("chain", 1), ("5branches", BRANCHES)):
        for n in sizes:
            model = E.serial_chain(n, branches=branches)
            q0 = np.full(n, Q0)
            for method in methods:
                tk, qk = _kernel_rollout(model, method, t_end, q0)
                th, qh = _engine_rollout(model, method, t_end, q0)
                tm, qm = mujoco_rollout(model, method, t_end, q0)
                tp, qp = _pinocchio_rollout(model, method, t_end, q0)
                diff_end = float(np.abs(qk - qm).max())
                diff_1s = float(np.abs(_kernel_rollout(model, method, 1.0, q0)[1]
                                       - mujoco_rollout(model, method, 1.0, q0)[1]).max())
                label = "Euler" if method == "symplectic_euler" else "RK4"
                blew_up = not np.all(np.isfinite(qk))  # stopped early: its time is not comparable
                ratios = (f"{'blew up':>10}{'blew up':>10}" if blew_up
                          else f"{tk / tm:>10.2f}{th / tm:>10.2f}")
                print(f"{case:<10}{n:>4}  {label:<10}{tk:>9.3f}{th:>9.3f}{tm:>9.3f}{tp:>10.3f}"
                      f"{ratios}{diff_1s:>10.1e}{diff_end:>10.1e}")
                rows.append(dict(case=case, n_dof=n, integrator=method, t_sim_s=t_end,
                                 engine_blew_up=blew_up, engine_kernel_s=tk, engine_hybrid_s=th, mujoco_s=tm, pinocchio_s=tp,
                                 kernel_over_mujoco=tk / tm, hybrid_over_mujoco=th / tm,
                                 pinocchio_over_mujoco=tp / tm, max_abs_dq_vs_mujoco_1s=diff_1s,
                                 max_abs_dq_vs_mujoco_end=diff_end,
                                 max_abs_dq_hybrid_vs_kernel_end=float(np.abs(qh - qk).max())))
    print("Euler = semi-implicit (symplectic) Euler in all three; |dq|: engine kernel vs MuJoCo (rad); "
          "nan = the run blew up (explicit scheme unstable at this step)")

    leg = E.pantograph_leg()
    q0 = E.pantograph_leg_q0()
    t_leg = 1.0 if quick else 30.0
    t_pin = 1.0 if quick else 3.0
    _kernel_rollout(leg, "rk4", 0.01, q0)  # load/compile the closed-loop kernel
    for method in methods:
        tk, qk = _kernel_rollout(leg, method, t_leg, q0)
        th, qh = _engine_rollout(leg, method, t_leg, q0)
        label = "Euler" if method == "symplectic_euler" else "RK4"
        tp = float("nan")
        if method == "rk4":
            tp = _pinocchio_loop_rollout(leg, t_pin, q0)[0] * t_leg / t_pin
        print(f"{'panto_leg':<10}{leg.n:>4}  {label:<10}{tk:>9.3f}{th:>9.3f}{'-':>9}{tp:>10.3f}")
        rows.append(dict(case="pantograph_leg", n_dof=leg.n, integrator=method, t_sim_s=t_leg,
                         engine_blew_up=not np.all(np.isfinite(qk)), engine_kernel_s=tk, engine_hybrid_s=th, mujoco_s=float("nan"),
                         pinocchio_s=tp, kernel_over_mujoco=float("nan"), hybrid_over_mujoco=float("nan"),
                         pinocchio_over_mujoco=float("nan"), max_abs_dq_vs_mujoco_1s=float("nan"),
                         max_abs_dq_vs_mujoco_end=float("nan"), max_abs_dq_hybrid_vs_kernel_end=float(np.abs(qh - qk).max())))
    print(f"pantographic leg (2 loop rows, constrained dynamics, no Baumgarte): Pinocchio = "
          f"constraintDynamics + RK4 in Python ({t_pin:g} s simulated, scaled to {t_leg:g} s)")
    out = Path(getattr(args, "out", "results/bench")) / "engine.csv"
    _write_csv(out, rows)
    print(f"wrote {out}")
    _contact_event_cost(Path(getattr(args, "out", "results/bench")), 200 if args.quick else 2000)
    return 0


def _contact_event_cost(folder: Path, repeats: int) -> None:
    """One hard-contact event (impulse with the extended Jacobian, active-set search,
    new modes) next to one flow evaluation of the same model: the event's price in flows."""
    from codesign.dynamics.testing.contact_sim import bench_contact_event

    rows = bench_contact_event(repeats=repeats)
    print(f"one contact event vs one flow evaluation (mean of {repeats}, compile excluded)")
    print(f"{'case':<50}{'event (us)':>12}{'flow (us)':>12}{'event/flow':>12}")
    for row in rows:
        print(f"{row['case']:<50}{row['event_s'] * 1e6:>12.1f}{row['flow_s'] * 1e6:>12.1f}"
              f"{row['ratio']:>12.2f}")
    out = folder / "engine_contact_event.csv"
    _write_csv(out, rows)
    print(f"wrote {out}")
