"""Tree-sparse factorisation of the mass matrix and a pivoted dense solve (compiled).

* ``ltl_factor``: Featherstone's LTL factorisation M = L^T L (2008, sec. 6.5), which
  touches only ancestor pairs (no fill-in for a tree), so it costs O(n d^2) for depth d.
  The thesis (2.6.9, eq. 2.84-2.89) uses the same idea (as L^T D L).
* ``pivoted_cholesky_solve``: A x = b for a symmetric positive SEMI-definite A (the
  constraint-space inverse inertia K M^-1 K^T), with complete diagonal pivoting; pivots
  below ``rel_tol * max(diag A)`` are treated as dependent rows and their unknowns set to
  zero. For a consistent system this returns an exact solution (a basic least-squares
  solution); the number of dropped rows is returned so callers can flag redundancy.
* ``fill_pattern`` / ``sparse_ltl`` / ``sparse_lt_solve`` (``sparse_lt_solve2``: two
  right-hand sides at once) / ``sparse_l_solve``: the same
  L^T L factorisation, in place, for a matrix whose nonzeros are the ancestor pairs of a
  tree plus the outer products of a few given rows (the time step's M + hD + h^2 K: the
  impedance of a loop joint couples two branches). Eliminating from the leaves (k = n-1
  down to 0) fills in only where two nonzeros of an eliminated row meet; the pattern with
  that fill is computed once (``fill_pattern``) and the numeric factorisation touches only
  it: O(sum over rows of (nonzeros per row)^2), O(n d^2) for a plain tree, instead of the
  dense n^3 / 3. A solve with the factor likewise costs O(nonzeros), and a right-hand side
  that is nonzero only on a branch (a contact point's Jacobian row) stays on its ancestors.
* ``cholesky`` / ``cholesky_backward``: dense, in-place, with an optional pivot
  regularisation (the time step's loop-constraint block); ``lu_solve``: Gaussian
  elimination with partial pivoting (the nonsymmetric active-set systems of the contact
  problem).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False)
def ltl_factor(parent, M, L):
    """L[n,n] lower triangular with M = L^T L (only ancestor entries used). Returns 0, or
    1 + index of the first non-positive pivot (mass matrix not positive definite)."""
    n = parent.shape[0]
    for i in range(n):
        L[i, i] = M[i, i]
        j = parent[i]
        while j >= 0:
            L[i, j] = M[i, j]
            j = parent[j]
    for k in range(n - 1, -1, -1):
        if L[k, k] <= 0.0:
            return k + 1
        L[k, k] = math.sqrt(L[k, k])
        i = parent[k]
        while i >= 0:
            L[k, i] /= L[k, k]
            i = parent[i]
        i = parent[k]
        while i >= 0:
            j = i
            while j >= 0:
                L[i, j] -= L[k, i] * L[k, j]
                j = parent[j]
            i = parent[i]
    return 0


@njit(cache=True, _nrt=False)
def ltinv_mul(parent, L, x):
    """x <- L^-T x in place (L from ltl_factor)."""
    n = parent.shape[0]
    for i in range(n - 1, -1, -1):
        x[i] /= L[i, i]
        j = parent[i]
        while j >= 0:
            x[j] -= L[i, j] * x[i]
            j = parent[j]


@njit(cache=True, _nrt=False)
def linv_mul(parent, L, x):
    """x <- L^-1 x in place."""
    n = parent.shape[0]
    for i in range(n):
        j = parent[i]
        while j >= 0:
            x[i] -= L[i, j] * x[j]
            j = parent[j]
        x[i] /= L[i, i]


@njit(cache=True, _nrt=False)
def mass_solve(parent, L, x):
    """x <- M^-1 x in place, M = L^T L."""
    ltinv_mul(parent, L, x)
    linv_mul(parent, L, x)


@njit(cache=True, _nrt=False)
def pivoted_cholesky_solve(A, b, r, x, perm, work, rel_tol):
    """Solve A[:r,:r] x = b[:r] (A symmetric PSD; A is overwritten by its factor).

    perm int64[>=r], work float64[>=r] scratch. Returns the rank found; rows whose pivot
    fell below rel_tol * max diag are dropped (their x = 0).
    """
    for i in range(r):
        perm[i] = i
    dmax = 0.0
    for i in range(r):
        if A[i, i] > dmax:
            dmax = A[i, i]
    tol = rel_tol * dmax if dmax > 0.0 else 1e-300
    rank = 0
    for k in range(r):
        # choose the largest remaining diagonal
        best = k
        for i in range(k + 1, r):
            if A[i, i] > A[best, best]:
                best = i
        if A[best, best] <= tol:
            break
        if best != k:
            for c in range(r):
                t = A[k, c]
                A[k, c] = A[best, c]
                A[best, c] = t
            for c in range(r):
                t = A[c, k]
                A[c, k] = A[c, best]
                A[c, best] = t
            t2 = perm[k]
            perm[k] = perm[best]
            perm[best] = t2
        d = math.sqrt(A[k, k])
        A[k, k] = d
        for i in range(k + 1, r):
            A[i, k] /= d
        for j in range(k + 1, r):
            for i in range(j, r):
                A[i, j] -= A[i, k] * A[j, k]
        # keep the trailing block symmetric so pivoting can read rows and columns
        for j in range(k + 1, r):
            for i in range(j + 1, r):
                A[j, i] = A[i, j]
        rank += 1
    # forward / back substitution on the leading rank x rank block
    for i in range(rank):
        s = b[perm[i]]
        for j in range(i):
            s -= A[i, j] * work[j]
        work[i] = s / A[i, i]
    for i in range(rank - 1, -1, -1):
        s = work[i]
        for j in range(i + 1, rank):
            s -= A[j, i] * work[j]
        work[i] = s / A[i, i]
    for i in range(r):
        x[i] = 0.0
    for i in range(rank):
        x[perm[i]] = work[i]
    return rank


@njit(cache=True, _nrt=False)
def cholesky(A, n, eps):
    """In place: the lower triangle of A[:n, :n] becomes L with A + eps I = L L^T.
    ``eps`` (>= 0) is added to every pivot (regularisation). Returns False if a pivot is
    not positive."""
    for j in range(n):
        d = A[j, j] + eps
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        d = math.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@njit(cache=True, _nrt=False)
def cholesky_backward(L, n, b):
    """In place b <- L^-T b for the factor of :func:`cholesky`."""
    for i in range(n - 1, -1, -1):   # L^T x = b by rows of L (contiguous)
        b[i] /= L[i, i]
        xi = b[i]
        for k in range(i):
            b[k] -= L[i, k] * xi


@njit(cache=True, _nrt=False)
def lu_solve(A, b, k):
    """In place: b[:k] <- A[:k, :k]^-1 b[:k] by Gaussian elimination with partial pivoting
    (A is overwritten). Returns False if A is singular to working precision."""
    for j in range(k):
        p = j
        for i in range(j + 1, k):
            if abs(A[i, j]) > abs(A[p, j]):
                p = i
        if not abs(A[p, j]) > 1e-300:
            return False
        if p != j:
            for col in range(k):
                tmp = A[j, col]
                A[j, col] = A[p, col]
                A[p, col] = tmp
            tmp = b[j]
            b[j] = b[p]
            b[p] = tmp
        for i in range(j + 1, k):
            f = A[i, j] / A[j, j]
            if f != 0.0:
                for col in range(j, k):
                    A[i, col] -= f * A[j, col]
                b[i] -= f * b[j]
    for i in range(k - 1, -1, -1):
        acc = b[i]
        for col in range(i + 1, k):
            acc -= A[i, col] * b[col]
        b[i] = acc / A[i, i]
    return True


def fill_pattern(parent: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The strictly lower nonzeros of the L^T L factor of a symmetric n x n matrix whose
    nonzeros are the ancestor pairs of the tree ``parent`` (int64[n], parent[i] < i, -1
    for the root), the diagonal, and the outer products of ``rows`` (float64[k, n]).

    Returns (ptr int64[n + 1], idx int64[nnz]): the columns j < i of row i are
    idx[ptr[i]:ptr[i + 1]], ascending, fill-in included (eliminating row k connects every
    pair of its columns)."""
    n = parent.shape[0]
    cols = [set() for _ in range(n)]
    for i in range(n):
        j = parent[i]
        while j >= 0:
            cols[i].add(int(j))
            j = parent[j]
    for row in np.asarray(rows, dtype=np.float64).reshape(-1, n):
        nz = np.flatnonzero(row)
        for i in nz:
            for j in nz:
                if j < i:
                    cols[int(i)].add(int(j))
    for k in range(n - 1, -1, -1):
        for i in cols[k]:
            for j in cols[k]:
                if j < i:
                    cols[i].add(j)
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        ptr[i + 1] = ptr[i] + len(cols[i])
    idx = np.array([j for i in range(n) for j in sorted(cols[i])], dtype=np.int64)
    return ptr, idx


@njit(cache=True, _nrt=False)
def sparse_ltl(A, n, ptr, idx):
    """In place: the lower triangle of A[:n, :n] (nonzero only on the pattern ptr/idx of
    :func:`fill_pattern` and the diagonal) becomes L with A = L^T L, except that the
    diagonal holds 1 / L_kk (the solves multiply: a division on their dependency chain
    costs several times a multiplication). Returns False if a pivot is not positive."""
    for k in range(n - 1, -1, -1):
        d = A[k, k]
        if not d > 0.0:
            return False
        inv = 1.0 / math.sqrt(d)
        A[k, k] = inv
        for p in range(ptr[k], ptr[k + 1]):
            A[k, idx[p]] *= inv
        for p in range(ptr[k], ptr[k + 1]):
            i = idx[p]
            lki = A[k, i]
            for q in range(ptr[k], p + 1):
                j = idx[q]
                A[i, j] -= lki * A[k, j]
    return True


@njit(cache=True, _nrt=False)
def sparse_lt_solve(L, n, ptr, idx, b):
    """In place b <- L^-T b for the factor of :func:`sparse_ltl` (zeros of b skipped). A b
    that is zero from some index e on may pass n = e: the solve keeps it zero there."""
    for k in range(n - 1, -1, -1):
        if b[k] == 0.0:
            continue
        yk = b[k] * L[k, k]
        b[k] = yk
        for p in range(ptr[k], ptr[k + 1]):
            b[idx[p]] -= L[k, idx[p]] * yk


@njit(cache=True, _nrt=False)
def sparse_lt_solve2(L, n, ptr, idx, b0, b1):
    """:func:`sparse_lt_solve` of two right-hand sides at once (b0, b1 in place): each
    entry of the factor is read once for both and the two dependency chains interleave.
    Each result equals its own solve's to the bit (where one side is zero at k and the
    other is not, its update subtracts L * 0: the same values, up to the sign of a zero)."""
    for k in range(n - 1, -1, -1):
        if b0[k] == 0.0 and b1[k] == 0.0:
            continue
        lkk = L[k, k]
        y0 = b0[k] * lkk
        y1 = b1[k] * lkk
        b0[k] = y0
        b1[k] = y1
        for p in range(ptr[k], ptr[k + 1]):
            j = idx[p]
            ljk = L[k, j]
            b0[j] -= ljk * y0
            b1[j] -= ljk * y1


@njit(cache=True, _nrt=False)
def sparse_l_solve(L, n, ptr, idx, b):
    """In place b <- L^-1 b for the factor of :func:`sparse_ltl`."""
    for k in range(n):
        s = b[k]
        for p in range(ptr[k], ptr[k + 1]):
            s -= L[k, idx[p]] * b[idx[p]]
        b[k] = s * L[k, k]
