"""The time step's sparse L^T L factorisation (dynamics.linalg.sparse_*) against dense algebra.

Truths: numpy's dense solve, Featherstone's no-fill property of a tree (the factor of a
tree's mass matrix has exactly the ancestor pairs), and the same step with the factor
forced dense (every pair in the pattern), which must agree to rounding.
"""

import numpy as np
import pytest

from codesign.dynamics import contact_rows as ct
from codesign.dynamics import linalg as la
from codesign.dynamics import timestep as ts
from codesign.dynamics.model import make_workspace
from codesign.dynamics.testing import examples


def random_tree(rng, n):
    parent = np.array([-1] + [int(rng.integers(-1, i)) for i in range(1, n)], dtype=np.int64)
    return parent


def ancestors(parent, i):
    out = []
    j = parent[i]
    while j >= 0:
        out.append(j)
        j = parent[j]
    return out


def tree_sparse_spd(rng, parent, rows):
    """A symmetric positive definite matrix with the nonzeros of a tree's mass matrix
    (sum over bodies of J_i^T J_i, J_i on the body's ancestors) plus the rows' outer products."""
    n = parent.shape[0]
    M = np.zeros((n, n))
    for i in range(n):
        v = np.zeros(n)
        v[[i] + ancestors(parent, i)] = rng.normal(size=1 + len(ancestors(parent, i)))
        M += np.outer(v, v)
        M[i, i] += 0.1
    for r in rows:
        M += rng.uniform(0.1, 5.0) * np.outer(r, r)
    return M


@pytest.mark.parametrize("seed", range(40))
def test_sparse_ltl_solves_like_numpy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    parent = random_tree(rng, n)
    rows = np.zeros((int(rng.integers(0, 4)), n))
    for r in rows:
        nz = rng.choice(n, size=min(n, int(rng.integers(1, 4))), replace=False)
        r[nz] = rng.normal(size=nz.size)
    M = tree_sparse_spd(rng, parent, rows)
    ptr, idx = la.fill_pattern(parent, rows)
    A = np.tril(M)
    assert la.sparse_ltl(A, n, ptr, idx)
    b = rng.normal(size=n)
    x = b.copy()
    la.sparse_lt_solve(A, n, ptr, idx, x)
    la.sparse_l_solve(A, n, ptr, idx, x)
    np.testing.assert_allclose(x, np.linalg.solve(M, b), rtol=1e-9, atol=1e-9 * np.abs(x).max())


def test_a_tree_factors_without_fill_in():
    rng = np.random.default_rng(3)
    parent = random_tree(rng, 30)
    ptr, idx = la.fill_pattern(parent, np.zeros((0, 30)))
    for i in range(30):
        assert sorted(idx[ptr[i]:ptr[i + 1]]) == sorted(ancestors(parent, i))


def test_not_positive_definite_is_reported():
    parent = np.array([-1, 0], dtype=np.int64)
    ptr, idx = la.fill_pattern(parent, np.zeros((0, 2)))
    A = np.array([[1.0, 0.0], [2.0, 1.0]])      # [[1, 2], [2, 1]]: eigenvalues 3, -1
    assert not la.sparse_ltl(A, 2, ptr, idx)


def test_step_outside_the_pattern_factors_densely_with_the_same_result():
    """A stiffness coupling two branches that the workspace was not told about: the step
    notices, factors densely (STAT_DENSE) and gives the velocities of a workspace whose
    pattern has the coupling."""
    model = examples.serial_chain(6, branches=2)
    n = model.n
    parent = np.asarray(model.parent)
    i, j = next((i, j) for i in range(n) for j in range(i)
                if j not in ancestors(parent, i))          # two bodies on different branches
    rng = np.random.default_rng(0)
    q0 = 0.3 * rng.normal(size=n)
    v0 = rng.normal(size=n)
    coupling = np.zeros(n)
    coupling[i], coupling[j] = 1.0, -1.0                 # a spring on their relative angle
    K = 50.0 * np.outer(coupling, coupling)
    D = 2.0 * np.outer(coupling, coupling)
    results = []
    for rows in (None, coupling[None, :]):
        sw = ts.make_step_workspace(model, rows)
        q, v = q0.copy(), v0.copy()
        for _ in range(20):
            code = ts.step(model.arrays, make_workspace(model), sw, ct.make_settings("hard"),
                           ts.step_settings(h=1e-3), q, v, np.zeros(n), K, D)
            assert code == ts.STEP_OK
        results.append((q, v, int(sw.stats[ts.STAT_DENSE])))
    (q_a, v_a, dense_a), (q_b, v_b, dense_b) = results
    assert (dense_a, dense_b) == (20, 0)
    np.testing.assert_allclose(v_a, v_b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(q_a, q_b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_the_paired_solve_equals_two_single_solves_to_the_bit(seed):
    """sparse_lt_solve2 (the time step's rows in pairs) against sparse_lt_solve of each
    right-hand side alone, exactly: sides on different branches (one is zero where the
    other is not) and sides that end at different indices."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 25))
    parent = random_tree(rng, n)
    rows = np.zeros((2, n))
    for r in rows:
        nz = rng.choice(n, size=min(n, 3), replace=False)
        r[nz] = rng.normal(size=nz.size)
    ptr, idx = la.fill_pattern(parent, rows)
    A = np.tril(tree_sparse_spd(rng, parent, rows))
    assert la.sparse_ltl(A, n, ptr, idx)
    for _ in range(5):
        b0, b1 = np.zeros(n), np.zeros(n)
        for b in (b0, b1):
            i = int(rng.integers(0, n))
            b[[i] + ancestors(parent, i)] = rng.normal(size=1 + len(ancestors(parent, i)))
        end = max(np.flatnonzero(b0).max(), np.flatnonzero(b1).max()) + 1
        x0, x1 = b0.copy(), b1.copy()
        la.sparse_lt_solve2(A, end, ptr, idx, x0, x1)
        la.sparse_lt_solve(A, n, ptr, idx, b0)
        la.sparse_lt_solve(A, n, ptr, idx, b1)
        np.testing.assert_array_equal(x0, b0)
        np.testing.assert_array_equal(x1, b1)
