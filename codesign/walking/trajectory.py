"""A rollout's recorded samples as a table, and its agreement with the nominal gait.

``trajectory_table(rollout, setup)`` is what ``codesign simulate`` writes as
``trajectory.csv`` and what the report's gait figures read.
"""

from __future__ import annotations

import numpy as np

from codesign.control.wearer import ASSIST, CLOCK, sense_phase
from codesign.dynamics.model import REVOLUTE
from codesign.model import actuators as act
from codesign.model.gait import nominal_gait
from codesign.model.muscle_table import NAMES as MUSCLE_NAMES
from codesign.walking.initial_state import HUMAN_JOINT_BODY
from codesign.walking.gait_agreement import nominal_gait_agreement, sampled_stride_agreement
from codesign.walking.metrics import GRF_WINDOW
from codesign.walking.muscle_wearer import RECORD_RATE, RECORD_TORQUE
from codesign.walking.rollout_base import clone_arrays, control, zero_arrays
from codesign.walking.stepping import residual_names


def trajectory_table(rollout, setup):
    """pandas DataFrame of the recorded samples (rows until the run ended): t_s, per
    coordinate q_<body>_<rad|m> and qd_..., per contact mode_<c>, fn_<c>_N, ft_<c>_N (the
    stepping rollout's: each point's mean force since the previous sample, impacts
    counted by their impulse: :class:`~codesign.walking.rollout_base.Rollout`), and for
    the stepping rollout the largest contact residuals of the steps since the previous
    sample (``contact_<residual>``: :func:`codesign.walking.stepping.residual_names`, docs/contacts.md), and under the muscle wearer each
    muscle's activation ``act_<muscle>_<r|l>`` (0-1; Geyer & Herr's SOL, TA, GAS, VAS, HAM,
    GLU, HFL) after the step that starts there and its metabolic rate over that step
    ``edot_<muscle>_<r|l>_W`` (``metabolic_model``'s, Umberger 2010 by default; gross: the sum over muscles is the
    ``metabolic_power`` integrand before the standing rate is taken off)."""
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
    if rollout.record_residuals is not None:
        for j, name in residual_names(setup.p.model.step_settings).items():
            cols[f"contact_{name}"] = rollout.record_residuals[ok, j]
    if rollout.record_muscles is not None:
        for leg, side in enumerate("rl"):
            for i, name in enumerate(MUSCLE_NAMES):
                cols[f"act_{name}_{side}"] = rollout.record_muscles[ok, leg, i]
                cols[f"edot_{name}_{side}_W"] = rollout.record_muscles[ok, leg, RECORD_RATE + i]
    return pd.DataFrame(cols)


def actuator_table(rollout, setup):
    """pandas DataFrame of the effort joints' loads at the recorded samples (rows as
    :func:`trajectory_table`'s): per joint (``setup.effort_names``: the actuators, then the
    human's joints the law drives directly) ``tau_<j>_Nm`` delivered, ``tau_cmd_<j>_Nm``
    commanded (the law's torque before the actuator's clip), ``rate_<j>_rad_s``,
    ``power_<j>_W`` (tau rate) and for a motor ``tau_limit_<j>_Nm`` (its envelope at that
    rate); under the wearer-space law each leg's transmission ``G_<leg>_<hip|knee>_<j>``
    (d angle / d actuated angle, dimensionless); for an active wearer (issue 32) per
    wearer joint ``tau_wearer_<j>_Nm`` (its own torque: the law's less the device's) and
    ``tau_device_<j>_Nm`` (the device's torque there, G^-T tau_a). Recomputed from the recorded states by
    the rollout's own compiled controller (``rollout_base.control``) on a copy of its
    data record: what the rollout applied at the step that started there. An assistance
    timed by the device's phase estimate (``evaluation.assist_timing``, issue 46) has its
    estimators run again along the records (:func:`recorded_feet`), from fresh: the
    rollout's own to the bit where the records are every step, else with its events
    detected at the records' resolution. The muscle
    wearer's joints (issue 45) are NaN: their torques come from the muscles' state, which
    the records do not hold."""
    import pandas as pd

    model = setup.model
    n = model.n
    ok = ~np.isnan(rollout.records[:, 0])
    t = rollout.record_times[ok]
    X = rollout.records[ok]
    wm = setup.p.model.walk
    wd = clone_arrays(setup.p.data.walk)
    names = setup.effort_names
    cmd, tau, rate = (np.zeros((len(t), len(names))) for _ in range(3))
    L = wm.drive.leg_law.shape[0]
    G = np.zeros((len(t), L, 2, 2))
    wearer = wm.wearer_source
    own, device = np.zeros((len(t), len(wearer))), np.zeros((len(t), len(wearer)))
    scratch = np.zeros(n)
    sensed = wm.drive.mode[0] == ASSIST and wm.drive.phase_source[0] != CLOCK
    if sensed:
        zero_arrays(wd.drive.phase)
        feet = recorded_feet(rollout, setup)[ok]
    held = rollout.record_muscles[ok, :, RECORD_TORQUE:RECORD_RATE] if wm.muscle.on[0] != 0 else None
    for k in range(len(t)):
        if sensed:
            sense_phase(float(t[k]), X[k], feet[k], wm.drive, wd.drive)
        if held is not None:            # the muscles' torques held over the step starting there
            wd.muscle.torque[:] = held[k]
        control(float(t[k]), X[k, :n], X[k, n:], setup.p.model.arrays, wm, wd, scratch)
        cmd[k], tau[k], rate[k] = wd.effort_cmd, wd.effort_tau, wd.effort_rate
        G[k] = wd.drive.G
        own[k], device[k] = wd.wearer_tau, wd.relief[wearer]
    cols = {}
    for j, name in enumerate(names):
        cols[f"tau_{name}_Nm"] = tau[:, j]
        cols[f"tau_cmd_{name}_Nm"] = cmd[:, j]
        cols[f"rate_{name}_rad_s"] = rate[:, j]
        cols[f"power_{name}_W"] = tau[:, j] * rate[:, j]
        if wm.effort_kind[j] != act.NO_MOTOR:
            cols[f"tau_limit_{name}_Nm"] = np.array([act.torque_limit(w, wm.effort_limit[j]) for w in rate[:, j]])
            cols[f"tau_continuous_{name}_Nm"] = np.full(len(t), wm.effort_limit[j, act.LIMIT_RATED])
    for e, s in enumerate(int(v) for v in wearer):
        name = f"{setup.layout.active[s // 2].name}_{('r', 'l')[s % 2]}"
        cols[f"tau_wearer_{name}_Nm"] = own[:, e]
        cols[f"tau_device_{name}_Nm"] = device[:, e]
    joint_of = {body: joint for joint, body in HUMAN_JOINT_BODY.items()}
    for leg, side in enumerate(("r", "l")[:L]):
        # the leg's human joints whose rates G maps to: hip and knee, or an ideal device's pair
        joints = [joint_of[model.body_names[c].rsplit("_", 1)[0]] for c in wm.drive.leg_human[leg]]
        for a in range(2):
            actuator = names[2 * leg + a]          # the drive's actuators come first
            for h, joint in enumerate(joints):
                cols[f"G_{side}_{joint}_{actuator.rsplit('_', 1)[0]}"] = G[:, leg, h, a]
    return pd.DataFrame(cols)


def recorded_feet(rollout, setup) -> np.ndarray:
    """float64[k, 2]: each record's right and left foot on the ground (0/1), as the
    rollout observes them: a contact point of the foot active in the record's modes (the
    time step's: the modes of the step that ended there) or, for the event-driven and soft
    models (no contact residuals recorded), carrying a normal force."""
    foot = setup.p.model.walk.contact_foot
    on = rollout.record_modes != 0
    if rollout.record_residuals is None:
        on = on | (rollout.record_forces[:, :, 0] > 0.0)
    return np.stack([on[:, foot == leg].any(axis=1) for leg in range(2)], axis=1).astype(float)


def windowed_ground_reaction(table, window_s: float = GRF_WINDOW) -> dict[str, np.ndarray]:
    """The normal ground reaction of each foot (``"r"``, ``"l"``) and their sum
    (``"total"``), N, float64[rows], each the mean over the last ``window_s`` seconds of
    samples (the trajectory's mean forces over ``window_s`` / sample-step samples; fewer
    at the start) -- on flat ground the vertical reaction the ``grf_peak_bw`` metric
    averages over the same window, here at the samples' resolution."""
    t = table["t_s"].to_numpy()
    k = max(1, int(round(window_s / (t[1] - t[0])))) if len(t) > 1 else 1
    out = {}
    for side in ("r", "l"):
        force = sum(table[c].to_numpy() for c in table.columns
                    if c.startswith("fn_") and c.endswith(f"_{side}_N"))
        out[side] = np.convolve(force, np.ones(k), mode="full")[:len(t)] / np.minimum(np.arange(1, len(t) + 1), k)
    out["total"] = out["r"] + out["l"]
    return out


def gait_agreement(table, setup, t_end: float, acc: np.ndarray) -> dict[str, dict[str, float]]:
    """A rollout's agreement with the nominal gait over the second half (the metrics'
    window): ``{"controller_phase": ..., "strides": ...}``, the trajectory table's angles
    against Winter's at the controller's phase
    (:func:`~codesign.walking.gait_agreement.nominal_gait_agreement`) and over strides from
    heel strike to heel strike in the rollout's gait samples (its accumulator ``acc``:
    :func:`~codesign.walking.gait_agreement.sampled_stride_agreement`, whose correlations
    are the metrics ``stride_r_<joint>``, whatever the table's sampling)."""
    bodies = {"hip": "thigh", "knee": "shank", "ankle": "foot"}
    angles = {f"{j}_{s}": table[f"q_{b}_{s}_rad"].to_numpy() for j, b in bodies.items() for s in "rl"}
    t = table["t_s"].to_numpy()
    gait = nominal_gait()
    return {"controller_phase": nominal_gait_agreement(t, angles, gait, float(setup.ctrl.timing[0]),
                                                       float(setup.ctrl.timing[1]), 0.5 * t_end),
            "strides": sampled_stride_agreement(acc, gait)}


def muscle_rates(table, t_from: float) -> dict[str, float]:
    """Each muscle's gross metabolic rate, W, both legs summed, mean over the samples at
    t >= ``t_from`` s (the ``edot_<muscle>_<side>_W`` columns of :func:`trajectory_table`;
    {} for a table without muscles). Evenly spaced samples: the mean is the time mean to
    the sampling's resolution; summed over the muscles it is ``metabolic_power`` plus the
    standing rate."""
    late = table["t_s"].to_numpy() >= t_from
    if f"edot_{MUSCLE_NAMES[0]}_r_W" not in table.columns or not late.any():
        return {}
    return {name: float(sum(table[f"edot_{name}_{side}_W"].to_numpy()[late].mean() for side in "rl"))
            for name in MUSCLE_NAMES}
