"""Figures of a walking rollout (matplotlib, Agg): joint angles against the nominal gait,
ground reaction forces, and a stick-figure animation. Inputs are the trajectory table of
:func:`codesign.walking.trajectory.trajectory_table` and the engine model."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def gait_figure(table, model, frequency: float = 0.9, phase0: float = 0.0):
    """Figure: right-leg hip / knee / ankle (anatomical degrees, flexion +) against time,
    the nominal gait (Winter) at the controller's phase dashed; bottom: the normal ground
    reaction of each foot and their sum in body weights, each the mean over the
    ``grf_peak_bw`` metric's 30-ms window (:func:`~codesign.walking.trajectory.windowed_ground_reaction`:
    a hard contact's impact is an impulse, whose force at one instant means nothing)."""
    from codesign.model.gait import GAIT_JOINTS, SIGN, nominal_gait
    from codesign.walking.metrics import GRF_WINDOW
    from codesign.walking.trajectory import windowed_ground_reaction

    gait = nominal_gait()
    t = table["t_s"].to_numpy()
    fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    nominal = gait.angles(frequency * t + phase0)
    for k, joint in enumerate(GAIT_JOINTS):
        body = {"hip": "thigh", "knee": "shank", "ankle": "foot"}[joint]
        ax = axes[k]
        for side, style in (("r", "-"), ("l", ":")):
            q = table[f"q_{body}_{side}_rad"].to_numpy()
            ax.plot(t, np.degrees(SIGN[k] * q), style, label=f"{joint} {side}")
        ax.plot(t, np.degrees(SIGN[k] * nominal[:, k]), "k--", lw=1, label="nominal (right)")
        ax.set_ylabel(f"{joint} (deg)")
        ax.legend(loc="upper right", fontsize=7, ncol=3)
    ax = axes[3]
    weight = model.total_mass() * model.gravity
    grf = windowed_ground_reaction(table)
    ax.plot(t, grf["total"] / weight, color="0.6", lw=2.5, label="sum")   # behind the feet
    for side in ("r", "l"):
        ax.plot(t, grf[side] / weight, lw=0.9, label=f"foot {side}")
    ax.axhline(1.0, color="grey", ls="--", lw=1, label="body weight")
    ax.set_ylabel(f"normal GRF (BW,\n{1000 * GRF_WINDOW:.0f}-ms mean)")
    ax.set_xlabel("time (s)")
    ax.legend(loc="upper right", fontsize=7, ncol=4)
    fig.suptitle("Joint angles (anatomical, flexion +) and ground reaction forces")
    fig.tight_layout()
    return fig


def stick_segments(model, q):
    """Line segments (list of ((x0, z0), (x1, z1))) of the bodies at configuration q."""
    from codesign.dynamics.kinematics import body_point_world, forward_kinematics
    from codesign.dynamics.model import make_workspace

    w = make_workspace(model)
    forward_kinematics(model.arrays, q, np.zeros(model.n), w)
    pose = w.pose
    segs = []
    massless = model.mass == 0.0
    for i in range(model.n):
        p = model.parent[i]
        if p >= 0 and not massless[p]:
            segs.append((pose[p, :2].copy(), pose[i, :2].copy()))
    torso = model.body_id("torso")
    tip = np.zeros(2)
    body_point_world(w, torso, 2 * model.com_xz[torso, 0], 2 * model.com_xz[torso, 1], tip)
    segs.append((pose[torso, :2].copy(), tip.copy()))
    for k in range(model.n_loops):
        for body, xz in ((model.loop_body_a[k], model.loop_xz_a[k]), (model.loop_body_b[k], model.loop_xz_b[k])):
            if body >= 0:
                body_point_world(w, body, xz[0], xz[1], tip)
                segs.append((pose[body, :2].copy(), tip.copy()))
    feet = []
    for c in range(model.n_contacts):
        body_point_world(w, model.contact_body[c], model.contact_xz[c, 0], model.contact_xz[c, 1], tip)
        feet.append(tip.copy())
    return segs, np.array(feet)


def stick_gif(table, model, path: Path, fps: int = 20) -> None:
    """Stick-figure animation of the trajectory (written to ``path`` via a temp file)."""
    from matplotlib.animation import FuncAnimation, PillowWriter

    qcols = [c for c in table.columns if c.startswith("q_")]
    Q = table[qcols].to_numpy()
    t = table["t_s"].to_numpy()
    step = max(1, int(round((t[1] - t[0]) ** -1 / fps))) if len(t) > 1 else 1
    frames = list(range(0, len(t), step))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_aspect("equal")

    def draw(k):
        ax.clear()
        segs, feet = stick_segments(model, Q[k])
        x_mid = Q[k, model.body_id("torso_x")]
        ax.axhline(0.0, color="grey", lw=1)
        for a, b in segs:
            ax.plot([a[0], b[0]], [a[1], b[1]], "-o", color="C0", ms=2, lw=2)
        ax.plot(feet[:, 0], feet[:, 1], "v", color="C3", ms=4)
        ax.set_xlim(x_mid - 1.0, x_mid + 1.0)
        ax.set_ylim(-0.05, 1.9)
        ax.set_title(f"t = {t[k]:.2f} s")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("z (m)")

    anim = FuncAnimation(fig, draw, frames=frames)
    tmp = path.with_name("." + path.stem + ".tmp.gif")
    anim.save(tmp, writer=PillowWriter(fps=fps))
    plt.close(fig)
    os.replace(tmp, path)


def actuator_figure(table, names: tuple[str, ...], t_from: float = 0.0):
    """Figure of the effort joints' loads (``names``; the columns of
    :func:`codesign.walking.trajectory.actuator_table` in ``table``) from ``t_from`` (s):
    per joint, commanded and delivered torque over time (N m), and the samples in the
    torque-speed plane with the motor's envelope (+-tau_lim(rate)) and its continuous
    rating (dashed; the time panel's title gives the RMS torque against it); under the
    wearer-space law a last row with the transmission's entries G (dimensionless)."""
    t = table["t_s"].to_numpy()
    keep = t >= t_from
    g_cols = [c for c in table.columns if c.startswith("G_")]
    rows = len(names) + (1 if g_cols else 0)
    fig, axes = plt.subplots(rows, 2, figsize=(10, 2.1 * rows), squeeze=False,
                             gridspec_kw={"width_ratios": [2.2, 1]})
    for ax, name in zip(axes, names):
        tau = table[f"tau_{name}_Nm"].to_numpy()[keep]
        cmd = table[f"tau_cmd_{name}_Nm"].to_numpy()[keep]
        rate = table[f"rate_{name}_rad_s"].to_numpy()[keep]
        ax[0].plot(t[keep], cmd, color="0.6", lw=1.0, label="commanded")
        ax[0].plot(t[keep], tau, color="C0", lw=1.0, label="delivered")
        ax[0].set_ylabel(f"{name}\n[N m]")
        ax[1].plot(rate, tau, ".", ms=1.5, color="C0")
        limit = f"tau_limit_{name}_Nm"
        if limit in table:
            order = np.argsort(rate)
            lim = table[limit].to_numpy()[keep][order]
            ax[1].plot(rate[order], lim, color="C3", lw=1.0, label="envelope")
            ax[1].plot(rate[order], -lim, color="C3", lw=1.0)
            rated = float(table[f"tau_continuous_{name}_Nm"].iloc[0])
            if np.isfinite(rated):
                rms = float(np.sqrt(np.mean(tau ** 2)))
                for sign in (1, -1):
                    ax[1].axhline(sign * rated, color="C1", lw=0.8, ls="--",
                                  label="continuous" if sign > 0 else None)
                ax[0].set_title(f"RMS {rms:.0f} N m of {rated:.0f} N m continuous", fontsize=7, loc="right")
        ax[1].set_xlabel("rate [rad/s]" if name == names[-1] and not g_cols else "")
        ax[1].set_ylabel("torque [N m]")
    axes[0, 0].legend(loc="upper right", fontsize=7)
    if any(f"tau_limit_{n}_Nm" in table for n in names):
        axes[0, 1].legend(loc="upper right", fontsize=7)
    if g_cols:
        ax = axes[-1, 0]
        for c in g_cols:
            ax.plot(t[keep], table[c].to_numpy()[keep], lw=1.0, label=c[2:])
        ax.set_ylabel("G [-]")
        ax.legend(loc="upper right", fontsize=6, ncol=4)
        axes[-1, 1].axis("off")
    axes[-1, 0].set_xlabel("time [s]")
    fig.tight_layout()
    return fig


ASSIST_JOINTS = ("hip", "knee", "ankle")
ASSIST_SIGN = {"hip": 1.0, "knee": -1.0, "ankle": 1.0}   # anatomical = sign * engine (flexion positive)


def heel_strikes(table, side: str) -> np.ndarray:
    """float64[s]: the times (s) of a foot's heel strikes in a trajectory table (``side``
    "r" or "l"): the records where its normal ground reaction (its contact points'
    ``fn_*_<side>_N`` summed) turns positive after at least ``MIN_SWING_S`` off the ground
    -- the stride metrics' rule (:func:`codesign.walking.gait_agreement.heel_strikes`), so
    that a toe scuffing the ground in mid-swing does not split a stride in two."""
    from codesign.walking.gait_agreement import heel_strikes as gait_heel_strikes

    force = sum(table[c].to_numpy() for c in table.columns if c.startswith("fn_") and c.endswith(f"_{side}_N"))
    return gait_heel_strikes(table["t_s"].to_numpy(), np.nan_to_num(force) > 0.0)


def stride_mean(table, values: dict[str, np.ndarray], t_from: float,
                bins: int = 50) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(gait-cycle centres float64[bins], 0-1 from heel strike; name -> mean over strides
    float64[bins]) of per-leg series ``values`` (``<name>_r`` / ``<name>_l`` -> float64[k],
    the table's rows): both legs' strides pooled, each from a heel strike to the same
    foot's next (:func:`heel_strikes`), those starting at or after ``t_from`` s, each
    time-normalized as gait labs do -- its samples interpolated linearly at the centres --
    so that a stride sampled a few times per bin (10-ms records) does not put its samples'
    positions within the bins into the mean. NaN where no stride has two samples."""
    t = table["t_s"].to_numpy()
    centres = (np.arange(bins) + 0.5) / bins
    names = sorted({key.rsplit("_", 1)[0] for key in values})
    sums = {name: np.zeros(bins) for name in names}
    strides = 0
    for side in ("r", "l"):
        strikes = heel_strikes(table, side)
        for start, end in zip(strikes[:-1], strikes[1:]):
            inside = (t >= start) & (t <= end)
            if start < t_from or inside.sum() < 2:
                continue
            phase = (t[inside] - start) / (end - start)
            strides += 1
            for name in names:
                sums[name] += np.interp(centres, phase, values[f"{name}_{side}"][inside])
    return centres, {name: sums[name] / strides if strides else np.full(bins, np.nan) for name in names}


def assist_figure(assisted, unassisted, t_from: float):
    """The figure of an exoskeleton paper (issue 32): per wearer joint (hip, knee, ankle;
    anatomical, flexion positive) its torque (N m) and power (W) over the gait cycle (0 =
    heel strike; mean over each walk's own strides from ``t_from`` s, both legs:
    :func:`stride_mean`), without the device
    (the wearer's law alone), with it (the wearer's own share) and the device's torque at
    the joint. ``assisted``, ``unassisted``: the trajectory and actuator tables of the two
    walks (:func:`codesign.walking.trajectory.trajectory_table` and ``actuator_table``
    columns side by side)."""
    fig, axes = plt.subplots(len(ASSIST_JOINTS), 2, figsize=(9, 7), sharex=True, squeeze=False)

    def torque(table, kind):      # anatomical
        vals = {f"{j}_{s}": ASSIST_SIGN[j] * table[f"tau_{kind}_{j}_{s}_Nm"].to_numpy()
                for j in ASSIST_JOINTS for s in ("r", "l")}
        return stride_mean(table, vals, t_from)[1]

    def power(table):
        vals = {f"{j}_{s}": table[f"tau_wearer_{j}_{s}_Nm"].to_numpy() * table[f"rate_{j}_{s}_rad_s"].to_numpy()
                for j in ASSIST_JOINTS for s in ("r", "l")}
        return stride_mean(table, vals, t_from)

    phase, p_without = power(unassisted)
    _, p_with = power(assisted)
    without, with_device, device = torque(unassisted, "wearer"), torque(assisted, "wearer"), torque(assisted, "device")
    cycle = 100 * phase
    for ax, joint in zip(axes, ASSIST_JOINTS):
        ax[0].plot(cycle, without[joint], color="0.4", lw=1.5, label="without device")
        ax[0].plot(cycle, with_device[joint], color="C0", lw=1.5, label="with device (wearer)")
        ax[0].plot(cycle, device[joint], color="C3", lw=1.2, ls="--", label="device")
        ax[0].set_ylabel(f"{joint} torque\n[N m, flexion +]")
        ax[1].plot(cycle, p_without[joint], color="0.4", lw=1.5)
        ax[1].plot(cycle, p_with[joint], color="C0", lw=1.5)
        ax[1].set_ylabel(f"{joint} power [W]")
        for a in ax:
            a.axhline(0.0, color="0.8", lw=0.8)
    axes[0, 0].legend(fontsize=7)
    for a in axes[-1]:
        a.set_xlabel("gait cycle [%] (0: heel strike)")
    fig.suptitle("the wearer's joint torque and power with and without the device", fontsize=10)
    fig.tight_layout()
    return fig


def muscle_figure(table, t_from: float):
    """The muscle wearer's activations over the gait cycle (0 = heel strike; the mean over
    its strides from ``t_from`` s, both legs: :func:`stride_mean`), one row per muscle
    group, next to people's EMG on intervals (shaded; :data:`codesign.model.emg_timing.PERRY`),
    each row titled with the share of its activation inside them and the share a constant
    activation would have (:func:`codesign.model.emg_timing.on_share`). ``table``: a
    trajectory table with ``act_<group>_<r|l>`` columns."""
    from codesign.model.emg_timing import PERRY, PERRY_1992, on_share

    values = {f"{e.group}_{s}": table[f"act_{e.group}_{s}"].to_numpy() for e in PERRY for s in ("r", "l")}
    centres, mean = stride_mean(table, values, t_from)
    cycle = 100 * centres
    fig, axes = plt.subplots(len(PERRY), 1, figsize=(7, 1.2 * len(PERRY) + 0.8), sharex=True)
    for ax, e in zip(axes, PERRY):
        for a, b in e.on:
            ax.axvspan(a, b, color="0.85", lw=0)
        ax.plot(cycle, mean[e.group], color="C0", lw=1.5)
        finite = mean[e.group][np.isfinite(mean[e.group])]          # none: no stride in the window
        ax.set_ylim(0.0, max(0.2, 1.1 * float(finite.max())) if finite.size else 1.0)
        ax.set_ylabel(e.group, rotation=0, ha="right", va="center")
        ax.set_title(f"{100 * on_share(e, cycle, mean[e.group]):.0f} % of the activation inside people's "
                     f"on intervals ({100 * e.on_fraction():.0f} % of the cycle; {e.muscle})",
                     fontsize=7, loc="right")
    axes[-1].set_xlabel("gait cycle [%] (0: heel strike)")
    fig.suptitle("muscle activation (mean over strides, both legs) and people's EMG on intervals\n(grey: "
                 + PERRY_1992 + ")", fontsize=8)
    fig.tight_layout()
    return fig
