"""A rollout's recorded samples as a table, and its agreement with the nominal gait.

``trajectory_table(rollout, setup)`` is what ``codesign simulate`` writes as
``trajectory.csv`` and what the report's gait figures read.
"""

from __future__ import annotations

import numpy as np

from codesign.dynamics.model import REVOLUTE
from codesign.model.gait import nominal_gait
from codesign.walking.metrics import nominal_gait_agreement


def trajectory_table(rollout, setup):
    """pandas DataFrame of the recorded samples (rows until the run ended): t_s, per
    coordinate q_<body>_<rad|m> and qd_..., per contact mode_<c>, fn_<c>_N, ft_<c>_N."""
    import pandas as pd

    model = setup.model
    n = model.n
    ok = ~np.isnan(rollout.records[:, 0])
    t = rollout.record_times[ok]
    X = rollout.records[ok]
    M = rollout.record_modes[ok]
    cols = {"t_s": t}
    for i, name in enumerate(model.body_names):
        unit = "rad" if model.joint_type[i] == REVOLUTE else "m"
        cols[f"q_{name}_{unit}"] = X[:, i]
        cols[f"qd_{name}_{unit}_s"] = X[:, n + i]
    forces = rollout.record_forces[ok]
    for c, name in enumerate(model.contact_names):
        cols[f"mode_{name}"] = M[:, c]
        cols[f"fn_{name}_N"] = forces[:, c, 0]
        cols[f"ft_{name}_N"] = forces[:, c, 1]
    return pd.DataFrame(cols)



def gait_agreement(table, setup, t_end: float) -> dict[str, float]:
    """:func:`codesign.walking.metrics.nominal_gait_agreement` of a trajectory table over
    the second half of the rollout (the metrics' window)."""
    bodies = {"hip": "thigh", "knee": "shank", "ankle": "foot"}
    angles = {f"{j}_{s}": table[f"q_{b}_{s}_rad"].to_numpy() for j, b in bodies.items() for s in "rl"}
    return nominal_gait_agreement(table["t_s"].to_numpy(), angles, nominal_gait(),
                                  float(setup.ctrl.timing[0]), float(setup.ctrl.timing[1]), 0.5 * t_end)
