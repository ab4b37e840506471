"""`codesign bench screen`: time to screen one design (50 gait points x 3 offsets).

Ours: the compiled screen (``codesign.screening.screen``), after compilation, timed as the
kernel alone and end to end (``screen(morphology)``: leg assembly + targets + kernel). Peer:
a straightforward NumPy/SciPy implementation of the same procedure in this module (Python
forward kinematics and Jacobian, Newton steps with ``numpy.linalg.pinv``, null space from
``numpy.linalg.pinv``, ``numpy.linalg.svd`` for the transmission) on the same designs. Both
must give the same verdicts (checked). Designs: the anthropomorphic parallelogram design
(passes: all 150 configurations) and a set of random morphologies (most fail early).
Writes ``<out>/screen.csv``.
"""

from __future__ import annotations

import argparse
import csv
import io
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from codesign.dynamics.model import PRISMATIC_X, REVOLUTE

if TYPE_CHECKING:
    from codesign.model.gait import NominalGait
    from codesign.model.morphology import Morphology
    from codesign.screening.screen import ScreenSettings

DESCRIPTION = "singularity screening of one design (50 gait points x 3 offsets): compiled vs NumPy/SciPy"


# --------------------------------------------------------------------------- the peer


def _peer_fk(model, q):
    pose = np.zeros((model.n, 3))
    for i in range(model.n):
        p = model.parent[i]
        base = pose[p] if p >= 0 else np.zeros(3)
        c, s = np.cos(base[2]), np.sin(base[2])
        rot = np.array([[c, -s], [s, c]])
        xz = base[:2] + rot @ model.joint_xz[i]
        th = base[2]
        if model.joint_type[i] == REVOLUTE:
            th = th + q[i]
        elif model.joint_type[i] == PRISMATIC_X:
            xz = xz + rot[:, 0] * q[i]
        else:
            xz = xz + rot[:, 1] * q[i]
        pose[i] = (xz[0], xz[1], th)
    return pose


def _peer_point(model, pose, body, xz):
    if body < 0:
        return np.array(xz, dtype=float)
    c, s = np.cos(pose[body, 2]), np.sin(pose[body, 2])
    return pose[body, :2] + np.array([[c, -s], [s, c]]) @ xz


def _peer_chain(model, body):
    out = []
    while body >= 0:
        out.append(body)
        body = model.parent[body]
    return out


def _peer_point_jac(model, pose, body, r):
    jac = np.zeros((2, model.n))
    for j in _peer_chain(model, body):
        th = pose[j, 2]
        if model.joint_type[j] == REVOLUTE:
            jac[:, j] = (-(r[1] - pose[j, 1]), r[0] - pose[j, 0])
        elif model.joint_type[j] == PRISMATIC_X:
            jac[:, j] = (np.cos(th), np.sin(th))
        else:
            jac[:, j] = (-np.sin(th), np.cos(th))
    return jac


def _peer_loops(model, q):
    pose = _peer_fk(model, q)
    phi, jac = [], []
    for c in range(model.n_loops):
        ra = _peer_point(model, pose, model.loop_body_a[c], model.loop_xz_a[c])
        rb = _peer_point(model, pose, model.loop_body_b[c], model.loop_xz_b[c])
        phi.append(ra - rb)
        jac.append(_peer_point_jac(model, pose, model.loop_body_a[c], ra) - _peer_point_jac(model, pose, model.loop_body_b[c], rb))
    return np.concatenate(phi), np.vstack(jac)


def _peer_close(model, q, free, s):
    for _ in range(s.max_iter + 1):
        phi, jac = _peer_loops(model, q)
        if np.abs(phi).max() <= s.tol:
            return q, True
        dq = -np.linalg.pinv(jac[:, free]) @ phi
        norm = np.linalg.norm(dq)
        q[free] += dq * (min(1.0, s.max_step / norm) if norm > 0 else 1.0)
    return q, False


def _peer_checks(model, q, cols, obs, act_tree, act_loop, s):
    _phi, jac = _peer_loops(model, q)
    J = jac[:, cols]
    sv = np.linalg.svd(J, compute_uv=False)
    if sv[-1] / sv[0] < s.rank_tol:
        return 2
    N = np.eye(len(cols)) - np.linalg.pinv(J) @ J
    if min(N[h, h] for h in obs) < s.eps:
        return 3
    rows = [N[a, obs] for a in act_tree]
    for c in act_loop:
        w = np.zeros(model.n)
        for j in _peer_chain(model, model.loop_body_b[c]):
            w[j] += model.joint_type[j] == REVOLUTE
        for j in _peer_chain(model, model.loop_body_a[c]):
            w[j] -= model.joint_type[j] == REVOLUTE
        rows.append((N @ w[cols])[obs])
    if rows and np.linalg.svd(np.array(rows), compute_uv=False)[-1] < s.eps:
        return 4
    return 0


def peer_screen(morphology: Morphology, gait: NominalGait, settings: ScreenSettings) -> int:
    """The same procedure in NumPy (see the module docstring); returns the status code."""
    from codesign.model.assemble import assemble_leg
    from codesign.screening.screen import gait_targets

    leg = assemble_leg(morphology)
    model = leg.model
    torso, hip, knee = (model.body_id(b) for b in ("torso", "thigh_r", "shank_r"))
    driven = [hip, knee]
    free = [i for i in range(model.n) if i not in (torso, hip, knee)]
    cols = [i for i in range(model.n) if i != torso]
    obs = [cols.index(hip), cols.index(knee)]
    act_tree = [cols.index(j.index) for j in leg.actuated if not j.loop]
    act_loop = [j.index for j in leg.actuated if j.loop]
    targets = gait_targets(gait, settings)
    q = np.zeros(model.n)
    steps = max(1, int(np.ceil(np.abs(targets[0, 0]).max() / np.deg2rad(settings.homotopy_step_deg))))
    for k in range(1, steps + 1):
        q[driven] = targets[0, 0] * k / steps
        q, ok = _peer_close(model, q, free, settings)
        if not ok:
            return 1
    nominal = q.copy()
    for k in range(settings.n_points):
        for o in range(3):
            q = nominal.copy()
            q[driven] = targets[k, o]
            q, ok = _peer_close(model, q, free, settings)
            if not ok:
                return 1
            if o == 0:
                nominal = q.copy()
            code = _peer_checks(model, q, cols, obs, act_tree, act_loop, settings)
            if code:
                return code
    return 0


# --------------------------------------------------------------------------- the benchmark


def _best_time(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(args: argparse.Namespace) -> int:
    from codesign.model.anthropometry import human_geometry
    from codesign.model.assemble import assemble_leg
    from codesign.model.gait import nominal_gait
    from codesign.model.morphology import build_morphology, sample_parameters
    from codesign.screening.examples import TWO_FOUR_BARS, parallelogram_positions, params_from_positions
    from codesign.screening.screen import ScreenSettings, gait_targets, screen, screen_mechanism
    from codesign.io import write_text_atomic

    settings = ScreenSettings()
    gait = nominal_gait()
    human = human_geometry()
    anthropomorphic = build_morphology(TWO_FOUR_BARS, (1, 3), params_from_positions(TWO_FOUR_BARS, human, parallelogram_positions(human)))
    t0 = time.perf_counter()
    screen(anthropomorphic, gait, settings)
    compile_s = time.perf_counter() - t0

    rng = np.random.default_rng(0)
    n_random = 10 if args.quick else 60
    randoms = [build_morphology(TWO_FOUR_BARS, (1, 3), sample_parameters(TWO_FOUR_BARS, rng)) for _ in range(n_random)]
    repeats = 3 if args.quick else 10

    # kernel alone on the passing design (all 150 configurations)
    leg = assemble_leg(anthropomorphic)
    m = leg.model
    ids = [m.body_id(b) for b in ("torso", "thigh_r", "shank_r")]
    t = gait_targets(gait, settings)
    targets = np.concatenate([np.zeros(t.shape[:2] + (1,)), t], axis=2)
    act = [j.index for j in leg.actuated]
    kernel = _best_time(lambda: screen_mechanism(m, np.array(ids), np.array(ids[:1]), targets, np.array(ids[1:]),
                                                 np.array(act), np.array([], dtype=np.int64), settings), repeats)
    ours_pass = _best_time(lambda: screen(anthropomorphic, gait, settings), repeats)
    peer_pass = _best_time(lambda: peer_screen(anthropomorphic, gait, settings), max(1, repeats // 3))
    ours_codes = [screen(d, gait, settings).code for d in randoms]
    peer_codes = [peer_screen(d, gait, settings) for d in randoms]
    agree = sum(a == b for a, b in zip(ours_codes, peer_codes))
    ours_rand = _best_time(lambda: [screen(d, gait, settings) for d in randoms], max(1, repeats // 3)) / n_random
    peer_rand = _best_time(lambda: [peer_screen(d, gait, settings) for d in randoms], 1) / n_random

    rows = [
        ("passing design, 50 x 3 configurations", "kernel only", kernel, None),
        ("passing design, 50 x 3 configurations", "end to end", ours_pass, peer_pass),
        (f"{n_random} random designs (mean; {sum(c == 0 for c in ours_codes)} pass)", "end to end", ours_rand, peer_rand),
    ]
    print(f"first call (compile or load from cache): {compile_s:.2f} s; verdicts agree with the peer on "
          f"{agree}/{n_random} random designs")
    print(f"{'case':<48} {'ours':>12} {'NumPy/SciPy peer':>18} {'speed-up':>9}")
    for case, what, ours, peer in rows:
        peer_s = f"{1e3 * peer:.2f} ms" if peer is not None else "-"
        ratio = f"{peer / ours:.0f}x" if peer is not None else "-"
        print(f"{case + ' (' + what + ')':<48} {1e3 * ours:>9.3f} ms {peer_s:>18} {ratio:>9}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["case", "ours_what", "ours_s", "peer_numpy_s"])
    for case, what, ours, peer in rows:
        w.writerow([case, what, f"{ours:.6g}", "" if peer is None else f"{peer:.6g}"])
    write_text_atomic(out / "screen.csv", buf.getvalue())
    return 0 if agree == n_random else 1
