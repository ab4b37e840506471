"""Mobility of planar revolute linkages, computed two independent ways.

A linkage is a multigraph: links are nodes ``0 .. n_links-1`` (link 0 is the ground, here
the torso), revolute joints are edges ``(a, b)``. *Locking* a joint (an actuator held, or a
human joint fixed) welds its two links into one rigid body. The mobility is the number of
degrees of freedom relative to link 0.

1. :func:`mobility_kutzbach` - combinatorial. The Kutzbach count (thesis eq. 5.1)
   ``k = 3 (l - 1) - 2 n`` is exact only when no sub-assembly is over-constrained: a rigid
   triangle with a fourth bar across it counts -1 although it still cannot move. The count
   is corrected by collapsing sub-assemblies into single rigid bodies: for a set ``A`` of
   joints, collapse every connected component of (links, A) into one body and count the
   rest, ``k(A) = 3 (c(A) - 1) - 2 |J \\ A|`` (``c(A)`` = number of bodies left). Every
   ``k(A)`` is a lower bound on the true mobility (a collapsed sub-assembly contributes
   at most 3 (size - 1) independent constraints, the true count of a rigid body), and the
   largest one is the mobility: with each pin counted as two bars this is the rank formula
   of the union of three graphic matroids (Nash-Williams / Edmonds), which by Tay's theorem
   is the generic rank of a planar body-and-bar framework. Locked joints are merged first.
2. :func:`mobility_rank` - numeric. Each body has a planar twist ``(vx, vz, omega)``; a
   revolute joint at point ``p`` equates the velocity of ``p`` on both bodies (2 rows),
   a locked joint also equates the angular velocities (1 row); the ground twist is zero.
   The mobility is ``3 (l - 1) - rank`` at joint positions drawn at random with a fixed seed
   (generic with probability one). No graph algorithm is shared with method 1.

:func:`rigid_subassemblies` lists the link subsets with at least two links whose Kutzbach
count is <= 0: every rigid or over-constrained sub-assembly contains one (a minimal rigid
sub-assembly counts exactly 0), and such a subset is always rigid or over-constrained.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

GENERIC_SEED = 2014  # seed of the random joint positions of the numeric method

Edge = tuple[int, int]


def kutzbach(n_links: int, n_joints: int) -> int:
    """Plain Kutzbach-Gruebler count of a planar revolute linkage (thesis eq. 5.1)."""
    return 3 * (n_links - 1) - 2 * n_joints


def find_root(parent: list[int], i: int) -> int:
    """Root of ``i`` in a union-find forest (``parent[r] == r`` at a root), halving paths."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def merge_locked(n_links: int, joints: Sequence[Edge], locked: Iterable[int] = ()) -> tuple[int, list[Edge]]:
    """Weld the links of every locked joint (indices into ``joints``) into one body.

    Returns the number of bodies and the remaining joints as body pairs (ground stays 0).
    Joints whose two links end up in the same body are dropped: they can no longer move.
    """
    parent = list(range(n_links))
    for j in locked:
        a, b = (find_root(parent, i) for i in joints[j])
        if a != b:
            parent[max(a, b)] = min(a, b)  # the smaller index (ground 0) stays the root
    roots = sorted({find_root(parent, i) for i in range(n_links)})
    body = {r: k for k, r in enumerate(roots)}
    locked = set(locked)
    remaining = []
    for j, (a, b) in enumerate(joints):
        if j in locked:
            continue
        ba, bb = body[find_root(parent, a)], body[find_root(parent, b)]
        if ba != bb:
            remaining.append((ba, bb))
    return len(roots), remaining


def _components(n_links: int, joints: Sequence[Edge], mask: int) -> int:
    """Number of connected components of (links, the joints selected by ``mask``)."""
    parent = list(range(n_links))
    count = n_links
    for j, (a, b) in enumerate(joints):
        if mask >> j & 1:
            ra, rb = find_root(parent, a), find_root(parent, b)
            if ra != rb:
                parent[ra] = rb
                count -= 1
    return count


def mobility_kutzbach(n_links: int, joints: Sequence[Edge], locked: Iterable[int] = ()) -> int:
    """Mobility relative to link 0 by the Kutzbach count maximised over every collapse of
    sub-assemblies into rigid bodies (module docstring, method 1)."""
    n_bodies, pins = merge_locked(n_links, joints, locked)
    best = kutzbach(n_bodies, len(pins))  # A = {}: nothing collapsed
    for mask in range(1, 1 << len(pins)):
        c = _components(n_bodies, pins, mask)
        best = max(best, 3 * (c - 1) - 2 * (len(pins) - mask.bit_count()))
    return best


def generic_joint_positions(n_joints: int, seed: int = GENERIC_SEED) -> np.ndarray:
    """Random joint positions, float64[n_joints, 2] (x, z), uniform in [-1, 1] m."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n_joints, 2))


def velocity_constraint_matrix(
    n_links: int, joints: Sequence[Edge], positions: np.ndarray, locked: Iterable[int] = ()
) -> np.ndarray:
    """Velocity constraints ``C @ t = 0`` on the twists of links 1..n_links-1.

    ``t`` stacks ``(vx, vz, omega)`` per moving link (velocity of the body point at the
    origin, m/s, and angular velocity, rad/s); link 0 is fixed. Row pair per joint ``(a, b)``
    at ``p``: ``v_a + omega_a * (-pz, px) - v_b - omega_b * (-pz, px) = 0``; one more row
    ``omega_a - omega_b = 0`` per locked joint. Shape ``(2 n + n_locked, 3 (n_links - 1))``.
    """
    locked = list(locked)
    rows = np.zeros((2 * len(joints) + len(locked), 3 * (n_links - 1)))

    def put(row: int, link: int, coefficients: tuple[float, float, float], sign: float) -> None:
        if link > 0:
            rows[row, 3 * (link - 1) : 3 * link] += sign * np.asarray(coefficients)

    for j, (a, b) in enumerate(joints):
        px, pz = positions[j]
        for link, sign in ((a, 1.0), (b, -1.0)):
            put(2 * j, link, (1.0, 0.0, -pz), sign)
            put(2 * j + 1, link, (0.0, 1.0, px), sign)
    for k, j in enumerate(locked):
        a, b = joints[j]
        put(2 * len(joints) + k, a, (0.0, 0.0, 1.0), 1.0)
        put(2 * len(joints) + k, b, (0.0, 0.0, 1.0), -1.0)
    return rows


def mobility_rank(
    n_links: int, joints: Sequence[Edge], locked: Iterable[int] = (), seed: int = GENERIC_SEED
) -> int:
    """Mobility relative to link 0 as ``3 (l - 1) - rank`` of the velocity constraint
    matrix at generic joint positions (module docstring, method 2)."""
    matrix = velocity_constraint_matrix(n_links, joints, generic_joint_positions(len(joints), seed), locked)
    if matrix.size == 0:
        return matrix.shape[1]
    return matrix.shape[1] - int(np.linalg.matrix_rank(matrix))


def rigid_subassemblies(n_links: int, joints: Sequence[Edge]) -> Iterator[tuple[int, ...]]:
    """Link subsets (at least two links) whose Kutzbach count is <= 0, i.e. rigid or
    over-constrained sub-assemblies, as sorted link tuples (subsets as bitmasks in
    increasing order)."""
    joint_masks = [(1 << a) | (1 << b) for a, b in joints]
    for subset in range(1, 1 << n_links):
        size = subset.bit_count()
        if size >= 2:
            n_inside = sum(1 for m in joint_masks if m & subset == m)
            if kutzbach(size, n_inside) <= 0:
                yield tuple(i for i in range(n_links) if subset >> i & 1)


def has_rigid_subassembly(n_links: int, joints: Sequence[Edge]) -> bool:
    """True when some sub-assembly of at least two links is rigid or over-constrained."""
    return next(rigid_subassemblies(n_links, joints), None) is not None
