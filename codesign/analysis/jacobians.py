"""Finite-difference Jacobians of maps and the spectra of their multipliers: the numerics
of a Floquet analysis (:mod:`codesign.analysis.gait_stability`), independent of walking."""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.linalg

from codesign.analysis.returnmap import sort_eigenvalues


def central_jacobian(F: Callable[[np.ndarray], np.ndarray], z0, eps: float) -> np.ndarray:
    """Central finite-difference Jacobian (k, d) of F: R^d -> R^k at z0 with step eps in
    every coordinate: J[:, j] = (F(z0 + eps e_j) - F(z0 - eps e_j)) / (2 eps); error
    O(eps^2 |F'''|) + O(accuracy of F / eps)."""
    z0 = np.asarray(z0, dtype=float)
    cols = []
    for j in range(z0.shape[0]):
        zp, zm = z0.copy(), z0.copy()
        zp[j] += eps
        zm[j] -= eps
        cols.append((np.asarray(F(zp), dtype=float) - np.asarray(F(zm), dtype=float)) / (2.0 * eps))
    return np.array(cols).T


def multipliers(J) -> np.ndarray:
    """Eigenvalues of J sorted by decreasing modulus (then real, imaginary part)."""
    J = np.asarray(J, dtype=float)
    if J.size == 0:
        return np.zeros(0, dtype=complex)
    return sort_eigenvalues(scipy.linalg.eigvals(J))


def modulus_change(lam_a, lam_b) -> float:
    """Largest change between two spectra compared by sorted moduli (robust to the order
    of conjugate pairs and of near ties)."""
    a = np.sort(np.abs(np.asarray(lam_a)))
    b = np.sort(np.abs(np.asarray(lam_b)))
    return float(np.abs(a - b).max()) if a.size else 0.0
