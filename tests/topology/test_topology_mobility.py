"""Mobility of known planar mechanisms, by both methods, against textbook values."""

import numpy as np
import pytest

from codesign.topology.mobility import (
    has_rigid_subassembly,
    kutzbach,
    merge_locked,
    mobility_kutzbach,
    mobility_rank,
    rigid_subassemblies,
)

# (name, number of links, joints as link pairs, known mobility relative to link 0)
KNOWN = [
    ("four-bar", 4, [(0, 1), (1, 2), (2, 3), (3, 0)], 1),
    ("five-bar", 5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)], 2),
    # Watt six-bar: ternary links 0 and 1 joined directly, two binary dyads between them
    ("watt six-bar", 6, [(0, 1), (0, 2), (2, 3), (3, 1), (0, 4), (4, 5), (5, 1)], 1),
    # Stephenson six-bar: ternary links 0 and 1 not adjacent: paths of 1, 1 and 2 binary links
    ("stephenson six-bar", 6, [(0, 2), (2, 1), (0, 3), (3, 1), (0, 4), (4, 5), (5, 1)], 1),
    ("triangle", 3, [(0, 1), (1, 2), (2, 0)], 0),
    # drafting pantograph: a four-bar loop of moving bars 1-4 pivoted to the ground at bar 1;
    # the stylus moves freely in the plane: 2 degrees of freedom
    ("pantograph", 5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 1)], 2),
    ("open chain (human leg)", 3, [(0, 1), (1, 2)], 2),
    # over-constrained: all four links pairwise pinned (count -3, really rigid)
    ("K4 of links", 4, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], 0),
    # rigid over-constrained base {0,1,2,3} carrying a four-bar loop base-4-5-6-base:
    # count 3*6 - 2*10 = -2, mobility 1
    ("four-bar on an over-constrained base", 7,
     [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (0, 4), (4, 5), (5, 6), (6, 1)], 1),
    # ... and a dyad on that base closes a triangle with it: rigid
    ("dyad on an over-constrained base", 6,
     [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (0, 4), (4, 5), (5, 1)], 0),
    # two pins between the same two links weld them: a four-bar with a doubled joint is rigid
    ("four-bar with a doubled pin", 4, [(0, 1), (0, 1), (1, 2), (2, 3), (3, 0)], 0),
]


@pytest.mark.parametrize("name, n_links, joints, expected", KNOWN, ids=[k[0] for k in KNOWN])
def test_known_mechanisms(name, n_links, joints, expected):
    assert mobility_kutzbach(n_links, joints) == expected
    assert mobility_rank(n_links, joints) == expected


def test_plain_count_is_wrong_only_when_over_constrained():
    # the plain Kutzbach count of the K4 base is -3; the corrected count is the true 0
    joints = KNOWN[7][2]
    assert kutzbach(4, len(joints)) == -3
    assert mobility_kutzbach(4, joints) == 0
    assert has_rigid_subassembly(4, joints)


def test_rigid_subassemblies_found():
    # four-bar 0-1-2-3 plus a triangle 1-2-4 hanging on it: the triangle is the rigid part
    joints = [(0, 1), (1, 2), (2, 3), (3, 0), (1, 4), (2, 4)]
    found = list(rigid_subassemblies(5, joints))
    assert (1, 2, 4) in found
    assert all({1, 2, 4} <= set(s) or len(s) >= 4 for s in found)
    assert not has_rigid_subassembly(4, joints[:4])


def test_locking_merges_links():
    # locking the coupler-crank joint of a four-bar welds two links: three bodies, rigid
    joints = [(0, 1), (1, 2), (2, 3), (3, 0)]
    n_bodies, remaining = merge_locked(4, joints, [1])
    assert n_bodies == 3 and len(remaining) == 3
    assert mobility_kutzbach(4, joints, [1]) == 0
    assert mobility_rank(4, joints, [1]) == 0
    # locking two joints of a four-bar: the second lock is redundant (still rigid, not -1)
    assert mobility_kutzbach(4, joints, [0, 1]) == 0
    assert mobility_rank(4, joints, [0, 1]) == 0
    # locking the hip of the human leg leaves the knee
    assert mobility_kutzbach(3, [(0, 1), (1, 2)], [0]) == 1
    assert mobility_rank(3, [(0, 1), (1, 2)], [0]) == 1


def test_methods_agree_on_random_linkages():
    """Random multigraphs (loops, multi-edges, disconnected parts, locked joints): the
    combinatorial and the numeric generic mobility agree on every one."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(400):
        n_links = int(rng.integers(2, 7))
        n_joints = int(rng.integers(1, 10))
        joints = []
        while len(joints) < n_joints:
            a, b = (int(v) for v in rng.integers(0, n_links, 2))
            if a != b:
                joints.append((a, b))
        locked = [j for j in range(n_joints) if rng.random() < 0.2]
        assert mobility_kutzbach(n_links, joints, locked) == mobility_rank(n_links, joints, locked), (
            n_links, joints, locked)
        checked += 1
    assert checked == 400
