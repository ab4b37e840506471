"""Test and benchmark compositions of the engine -- NOT the production path.

Everything here exists so that ``tests/`` and ``codesign bench engine`` can exercise the
engine on small standard models and compare it with peer libraries. Production code
(``codesign.walking``, ``codesign.screening``, ``codesign.model``, ``codesign.analysis``
...) must not import from this package; the walking rollouts assemble their own systems
from the engine's modules (``contact_event``, ``contact_soft``, ``timestep``, ``hybrid``).

- examples: standard test models (serial_chain, four_bar, closed_three_link,
  pantograph_leg, falling_rod, sliding_block, random_tree, close_loops_at, + *_q0)
- flows: multibody_flow(t, x, mode, p, xdot) (the passive multibody system as a hybrid
  ``flow``) with p = flow_params(model, ...); mechanical_energy(m, w, q, qd)
- rollouts: tree_rollout / closed_loop_rollout, fixed-step loops compiled whole
- contact_sim: simulate(model, q0, qd0, t_end, ...) of a model with ground contacts and
  loops under constant applied forces (event-driven hard or soft contact), disk-cached
- stepping: simulate / passive_rollout, passive time-stepping runs (timestep.step)
- peers: to_pinocchio(model) -> (pin.Model, order), to_mjcf(model, dt, integrator)
  (Pinocchio and MuJoCo are dev dependencies, imported lazily)
"""
