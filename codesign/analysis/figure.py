"""Figure of a walker's limit cycles: phase-plane orbits and Floquet multipliers.

:func:`limit_cycle_figure` returns a matplotlib Figure (Agg); ``codesign analyze walker
NAME --figure PATH`` writes it.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from codesign.analysis import returnmap as R  # noqa: E402

COLORS = ("tab:blue", "tab:red", "tab:green", "tab:purple")


def orbit(model: R.HybridModel, section: R.Section, gait: R.Gait, tol: R.Tolerances, n: int = 400):
    """One stride of the gait: times (n,), states (n, nx), the events' pre/post-jump states."""
    t = np.linspace(0.0, gait.period, n + 1)[:-1]
    s = R.stride(model, section, gait.fixed_point, tol, record_times=t)
    return t, s.result.records[:, : model.nx], s.result.events


def limit_cycle_figure(model: R.HybridModel, section: R.Section, gaits: list[R.Gait],
                       tol: R.Tolerances = R.Tolerances()) -> Figure:
    """Left: each gait's orbit in the phase planes (state 0 vs 1 and, if there are four or
    more states, 2 vs 3), jumps dotted. Right: exact (dots) and finite-difference
    (crosses) eigenvalues of the stride map in the complex plane with the unit circle."""
    fig, (ax, ax_eig) = plt.subplots(1, 2, figsize=(11, 4.8), gridspec_kw={"width_ratios": [1.4, 1]})
    names = model.state_names
    pairs = [(0, 1)] + ([(2, 3)] if model.nx >= 4 else [])
    styles = ("-", "--")
    for i, gait in enumerate(gaits):
        color = COLORS[i % len(COLORS)]
        _, x, ev = orbit(model, section, gait, tol)
        for (a, b), ls in zip(pairs, styles):
            label = f"gait {i + 1} ({gait.verdict}): {names[a]} vs {names[b]}"
            ax.plot(x[:, a], x[:, b], ls, color=color, lw=1.6, label=label)
            for xb, xa in zip(ev.x_before[:, : model.nx], ev.x_after[:, : model.nx]):
                if np.any(np.abs(xb - xa) > 1e-12):  # a jump in this plane: dotted
                    ax.plot([xb[a], xa[a]], [xb[b], xa[b]], ":", color=color, lw=1.2)
            ax.plot(x[0, a], x[0, b], "o", color=color, ms=5)
        lam, lam_fd = gait.eigenvalues, gait.eigenvalues_fd
        ax_eig.plot(lam.real, lam.imag, "o", color=color, ms=7, mfc="none", mew=1.8,
                    label=f"gait {i + 1}: exact (max |λ| = {np.abs(lam).max():.4f})")
        ax_eig.plot(lam_fd.real, lam_fd.imag, "x", color=color, ms=7,
                    label=f"gait {i + 1}: finite differences")
    ax.set_xlabel("angle (rad) / position (m)")
    ax.set_ylabel("rate (rad per time unit) / velocity")
    ax.set_title(f"{model.name}: one stride from the fixed point (o), jumps dotted")
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    phi = np.linspace(0.0, 2.0 * np.pi, 361)
    ax_eig.plot(np.cos(phi), np.sin(phi), "k-", lw=0.8, label="unit circle")
    ax_eig.axhline(0.0, color="0.7", lw=0.6)
    ax_eig.axvline(0.0, color="0.7", lw=0.6)
    reach = max(1.2, max(float(np.abs(g.eigenvalues).max()) for g in gaits) * 1.1)
    ax_eig.set_xlim(-reach, reach)
    ax_eig.set_ylim(-reach, reach)
    ax_eig.set_aspect("equal", adjustable="box")
    ax_eig.set_xlabel("Re λ")
    ax_eig.set_ylabel("Im λ")
    ax_eig.set_title("Floquet multipliers of the stride map")
    ax_eig.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig
