"""Valid actuator sets of a linkage (thesis 5.2.2, eq. 5.5, Fig. 5.6).

Reading of the thesis: an actuated joint is a joint whose angle the controller sets, so for
the kinematics it is *locked* (its two links collapse onto one). A pair ``(i, j)`` of added
joints is valid when locking ``i`` alone removes exactly one degree of freedom, locking
``j`` alone removes exactly one, and locking both leaves none (Fig. 5.6: topology 2, joint 1
-> k = 1; then joint 4 -> still k = 1, invalid; joint 6 -> k = 0, valid). For a mobility
``m`` other than 2 the same test runs on sets of ``m`` joints: each joint alone leaves
``m - 1`` and all ``m`` together leave 0. (Locking one joint adds one constraint, so it
removes at most one degree of freedom; "all together leave 0" therefore already implies
the single-joint conditions. Both are checked, as the thesis states them.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

from codesign.topology.mobility import Edge, mobility_kutzbach

MobilityFn = Callable[..., int]  # (n_links, joints, locked) -> degrees of freedom


def actuator_sets(
    n_links: int,
    joints: Sequence[Edge],
    candidates: Sequence[int],
    mobility: int,
    mobility_fn: MobilityFn = mobility_kutzbach,
) -> list[tuple[int, ...]]:
    """Sets of ``mobility`` joints (indices into ``joints``, drawn from ``candidates``, in
    lexicographic order) that actuate the linkage fully, as in the module docstring."""
    removes_one = [j for j in candidates if mobility_fn(n_links, joints, (j,)) == mobility - 1]
    return [
        combo
        for combo in combinations(candidates, mobility)
        if all(j in removes_one for j in combo) and mobility_fn(n_links, joints, combo) == 0
    ]
