"""Planar multibody engine: model, compiled algorithms, loop closures, contacts, integrator.

Public API (see each module's docstring for shapes and units):

- model: Model, ModelBuilder, ModelArrays, Workspace, make_workspace, REVOLUTE, PRISMATIC_X,
  PRISMATIC_Z, WORLD

Compiled kernels (numba.njit(cache=True); m = model.arrays, w = make_workspace(model);
call forward_kinematics first for the state the others read):

- kinematics: forward_kinematics(m, q, qd, w); point_kinematics(w, body, px, pz, out6)
  -> (x, z, vx, vz, Jdot qd); point_jacobian(m, w, body, px, pz, J2n);
  add_point_jacobian(m, w, body, x_world, z_world, scale, rows, r0);
  add_angle_jacobian(m, w, body, scale, row); body_point_world(w, body, px, pz, out2);
  center_of_mass(m, w, out4); com_jacobian(m, w, J2n)
- rnea: inverse_dynamics(m, w, qdd, tau_out); bias_forces(m, w) -> w.h;
  rnea_pass(m, w, qdd, f_ext, use_f_ext, tau_out)
- crba: mass_matrix(m, w) -> w.M;  aba: aba(m, w, tau, f_ext, use_f_ext, qdd_out) -> status
- linalg: ltl_factor(parent, M, L), mass_solve(parent, L, x), ltinv_mul, linv_mul,
  pivoted_cholesky_solve(A, b, r, x, perm, work, rel_tol) -> rank
- passive: add_passive_forces(m, w, q, qd, out), joint_passive_torque(m, i, q_i, qd_i),
  add_loop_torque(m, w, loop, tau, out), loop_angle(m, w, loop), loop_passive_torque
- loops: loop_constraints(m, w, alpha, beta) -> rows; prepare_mass(m, w);
  constrained_solve(m, w, n_rows, tau, rel_tol) -> dropped rows;
  correct_to_rows(parent, w, n_rows, target, x, rel_tol) -> dropped rows;
  forward_dynamics(m, q, qd, tau, w, alpha, beta, rel_tol) -> status;
  accelerations(m, w, tau, alpha, beta, rel_tol);
  constraint_impulse(m, w, n_rows, target, qd_minus, qd_plus, rel_tol) -> dropped rows;
  project_positions(m, q, w, tol, max_iter, rel_tol) -> max |phi|;
  project_velocities(m, q, qd, w, rel_tol)
- joint_forces: joint_wrenches(m, w, qdd, f_ext, tau_check) -> w.joint_wrench;
  add_loop_forces(m, w, lam, loop_tau, f_ext); add_point_force(f_ext, body, x, z, fx, fz)

Hybrid systems and contacts (separate modules, not re-exported here):

- hybrid: the integrator's contract and Python API: solve_hybrid(system, x0, mode0, t_span,
  p, ...) -> HybridResult with status/message (as solve_ivp); settings(method, **kw);
  integrate(flow, guards, jump, observe, x0, mode0, t0, t_end, p, record_times, terminal,
  settings) -> Integration record (compiled). Its compiled pieces, one algorithm each:
  hybrid_steppers (DOPRI5 / RK4 / symplectic Euler, dense output), hybrid_events (event
  location), hybrid_loop (the main loop, Settings, Integration, status codes)
- specialize: specialize(flow, guards, jump, observe) -> integrate without the four
  function arguments, cacheable on disk (what the walking rollout uses)
- contact_rows: the ground, the contact settings vector make_settings(model="hard"|"soft",
  mu, restitution, ...), mode codes, loop and contact constraint rows
- contact_event: event-driven hard (impulsive, Coulomb) contact: dynamics in a mode,
  guards, impact, exact active-set mode search; contact_soft: soft (penalty) contact
- timestep: hard contacts by time stepping, step(m, w, sw, cs, ss, q, v, tau, Kimp, Dimp);
  contact_solvers: its contact problem (exact active set, projected Gauss-Seidel)

Tests and benchmarks only (not the production path): :mod:`codesign.dynamics.testing`
(standard example models, a passive multibody flow, fixed-step rollouts, contact and
time-stepping simulations, Pinocchio / MuJoCo adapters).
"""

from codesign.dynamics.model import (  # noqa: F401
    PRISMATIC_X, PRISMATIC_Z, REVOLUTE, WORLD, Model, ModelArrays, ModelBuilder, Workspace,
    make_workspace,
)
