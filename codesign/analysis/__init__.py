"""Limit-cycle analysis of hybrid systems: stride maps, fixed points, exact Jacobians.

Public API: :mod:`codesign.analysis.returnmap` (HybridModel, Section, Tolerances, stride,
jacobian_fd, find_fixed_point, analyze_gait, analyze), the example models in
:mod:`codesign.analysis.walkers` (rimless wheel, simplest walker, SLIP runner) and, for
walking designs, :mod:`codesign.analysis.gait_stability` (floquet: Floquet multipliers of
the time-stepping rollout's gait-period map).
"""
