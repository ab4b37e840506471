"""Enumeration of wearable-robot topologies (thesis 5.2.1, after Sergi et al. 2011).

The linkage is a graph of links (nodes) and revolute joints (edges). Links ``0, 1, 2`` are
the human torso, thigh and shank, joined by the hip ``(0, 1)`` and the knee ``(1, 2)``; WR
links are ``3 ..``. A candidate chooses ``added_joints`` distinct link pairs among
(human, WR) and (WR, WR) pairs. Rules, as this module reads thesis 5.2.1-5.2.2 and issue 2:

1. exactly ``wr_links`` WR links and ``added_joints`` added joints, each added joint an
   attachment (human-WR) or a wearable joint (WR-WR); never human-human (those would
   duplicate the hip/knee or weld torso to shank);
2. torso, thigh and shank each carry at least one attachment (Fig. 5.3);
3. every WR link carries at least two joints, no two joints join the same pair of links,
   and the linkage is connected (the thesis prunes "disconnected graphs");
4. mobility relative to the torso equals ``mobility`` and no subset of links is a rigid or
   over-constrained sub-assembly; with no such subset the Kutzbach count is exact, so the
   rule is "count == mobility and no sub-assembly counts <= 0" (:mod:`.mobility`);
5. hip and knee move independently: locking either alone leaves ``mobility - 1`` degrees of
   freedom, locking both leaves ``mobility - 2`` (rigid for the default 2). For mobility 1
   (a linkage coupling hip and knee) the reading is: locking either one leaves it rigid;
6. topologies equal under a relabelling of the WR links that keeps the human links fixed
   (HR-isomorphism) are one topology: networkx isomorphism with node labels (each human
   link its own label, all WR links the label ``wr``);
7. (derived) the WR joints can actuate every degree of freedom: a topology without any
   valid actuator set (:mod:`.actuators`) has no subspace and is left out. This never
   happens with the defaults; with 5 WR links, 7 joints and mobility 3 it drops 2 of 21.

With the defaults (4 WR links, 6 added joints, mobility 2) this gives the thesis's 10
topologies and 126 (topology, actuator pair) subspaces (Table 5.1); the thesis text says
"3 attachment and 3 WR joints", but its topology 1 (9 pairs = 3 x 3: one chain for the
hip, one for the knee, Table 5.1 and the text of 5.2.2) needs 4 attachments, so the number
of attachments is left free, as in rule 1; three of the ten topologies have 4.

Numbering (deterministic): each topology is relabelled to its canonical form, the WR
labelling whose sorted joint list is lexicographically smallest (links ordered torso,
thigh, shank, wr1, ...); added joints are numbered 1..n in that sorted order, so
attachments come first (torso, thigh, shank), then wearable joints. Topologies are ordered
by number of actuator pairs, then canonical joint list. Spanning tree: hip and knee, then
the added joints in id order, each kept when it joins two parts not yet connected
(Kruskal); the others are loop-closure joints.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, permutations
from math import comb

import networkx as nx

from codesign.errors import UserError
from codesign.topology.actuators import MobilityFn, actuator_sets
from codesign.topology.catalog import (
    ATTACHMENT,
    HUMAN_LINKS,
    WEARABLE,
    Catalog,
    CatalogSettings,
    Joint,
    Topology,
    wr_link_names,
)
from codesign.topology.mobility import (
    Edge,
    find_root,
    has_rigid_subassembly,
    kutzbach,
    merge_locked,
    mobility_kutzbach,
)

N_HUMAN = len(HUMAN_LINKS)
HUMAN_EDGES: tuple[Edge, ...] = ((0, 1), (1, 2))  # hip, knee
HIP, KNEE = 0, 1  # indices of the human joints in Linkage.joints
MAX_WR_LINKS = 5  # beyond this the brute-force enumeration takes hours


@dataclass(frozen=True)
class Linkage:
    """A candidate: ``n_wr`` WR links and the added joints as sorted link-index pairs."""

    n_wr: int
    added: tuple[Edge, ...]

    @property
    def n_links(self) -> int:
        return N_HUMAN + self.n_wr

    @property
    def joints(self) -> tuple[Edge, ...]:
        """Hip, knee, then the added joints (indices 2.. are added joint ids 1..)."""
        return HUMAN_EDGES + self.added

    @property
    def added_indices(self) -> tuple[int, ...]:
        return tuple(range(len(HUMAN_EDGES), len(HUMAN_EDGES) + len(self.added)))


def accepted_settings(wr_links: int) -> list[tuple[int, int]]:
    """``(added joints, mobility)`` pairs :func:`check_settings` accepts with ``wr_links`` WR
    links, fewest joints first: at least one attachment per human link, at most one joint
    per link pair, and the Kutzbach count ``3 (l - 1) - 2 n = 2 + 3 wr_links - 2 added`` (the
    mobility under rule 4) at least 1. Empty for 1 WR link."""
    joints = range(N_HUMAN, len(candidate_edges(wr_links)) + 1)
    pairs = ((a, kutzbach(N_HUMAN + wr_links, len(HUMAN_EDGES) + a)) for a in joints)
    return [(a, m) for a, m in pairs if m >= 1]


def min_wr_links() -> int:
    """The fewest WR links that any settings accept (2: one WR link has no valid joint count)."""
    return min(w for w in range(1, MAX_WR_LINKS + 1) if accepted_settings(w))


def fitting_options(settings: CatalogSettings) -> str:
    """Accepted settings next to ``settings`` (whose WR links are in range), as CLI options:
    every single option that, changed, makes them accepted (``--mobility 3 or
    --added-joints 5``); if none does, the added joints and mobility nearest to the given
    ones that these WR links accept; with the mobilities they allow when the given one is
    not among them (``--added-joints 3 --mobility 2 (2 WR links allow mobility 2 only)``)."""
    w, a, m = settings.wr_links, settings.added_joints, settings.mobility
    accepted = accepted_settings(w)
    options = [f"--mobility {mob}" for joints, mob in accepted if joints == a]
    options += [f"--added-joints {joints}" for joints, mob in accepted if mob == m]
    options += [f"--wr-links {z}" for z in range(min_wr_links(), MAX_WR_LINKS + 1) if (a, m) in accepted_settings(z)]
    if not options:
        joints, mob = min(accepted, key=lambda pair: (abs(pair[0] - a), pair[0]))
        options = [f"--added-joints {joints} --mobility {mob}"]
    allowed = [str(mobility) for _, mobility in accepted]
    if str(m) not in allowed:
        allowed = allowed[0] + " only" if len(allowed) == 1 else ", ".join(allowed[:-1]) + " or " + allowed[-1]
        options[-1] += f" ({w} WR links allow mobility {allowed})"
    return " or ".join(options)


def check_settings(settings: CatalogSettings) -> None:
    """UserError unless the settings can describe a catalog (keys named as CLI options);
    every suggestion in the message is accepted with the other settings as given."""
    w, a, m = settings.wr_links, settings.added_joints, settings.mobility
    if not min_wr_links() <= w <= MAX_WR_LINKS:
        raise UserError(f"--wr-links: got {w}; expected {min_wr_links()}..{MAX_WR_LINKS}")
    if (a, m) in accepted_settings(w):
        return
    if a < N_HUMAN:
        raise UserError(
            f"--added-joints: got {a}; expected at least {N_HUMAN} (one attachment per human link), "
            f"e.g. {fitting_options(settings)}"
        )
    if m < 1:
        raise UserError(
            f"--mobility: got {m}; expected at least 1 (a linkage that can move), e.g. {fitting_options(settings)}"
        )
    # rule 4 forbids over-constrained sub-assemblies, so the Kutzbach count is the mobility
    count = kutzbach(N_HUMAN + w, len(HUMAN_EDGES) + a)
    if count < 1:
        raise UserError(
            f"--added-joints: got {a}, but with {w} WR links that gives Kutzbach mobility 3(l-1)-2n = {count} "
            f"(a linkage that cannot move); expected {fitting_options(settings)}"
        )
    raise UserError(
        f"--mobility: got {m}, but {w} WR links and {a} added joints give Kutzbach mobility "
        f"3(l-1)-2n = {count} and over-constrained linkages are excluded; expected {fitting_options(settings)}"
    )


def candidate_edges(n_wr: int) -> list[Edge]:
    """Link pairs an added joint may join: (human, WR) then (WR, WR), sorted."""
    wr = range(N_HUMAN, N_HUMAN + n_wr)
    return [(h, w) for h in range(N_HUMAN) for w in wr] + list(combinations(wr, 2))


def candidate_count(settings: CatalogSettings) -> int:
    """Number of joint sets examined (binomial: candidate pairs choose added joints)."""
    return comb(len(candidate_edges(settings.wr_links)), settings.added_joints)


def _connected(n_links: int, joints: tuple[Edge, ...]) -> bool:
    return merge_locked(n_links, joints, range(len(joints)))[0] == 1  # welding all -> one body


def candidate_linkages(settings: CatalogSettings, progress: bool = False) -> Iterator[Linkage]:
    """Every joint set that satisfies rules 1-3 (see the module docstring)."""
    from tqdm import tqdm

    n_wr = settings.wr_links
    n_links = N_HUMAN + n_wr
    edges = candidate_edges(n_wr)
    combos = combinations(edges, settings.added_joints)
    if progress:
        combos = tqdm(combos, total=candidate_count(settings), desc="joint sets", unit="set", mininterval=0.5)
    for added in combos:
        degree = [0] * n_links
        for a, b in added:
            degree[a] += 1
            degree[b] += 1
        # rule 2 (human degree here counts attachments only) and rule 3
        if min(degree[:N_HUMAN]) < 1 or min(degree[N_HUMAN:]) < 2:
            continue
        linkage = Linkage(n_wr, added)
        if _connected(n_links, linkage.joints):
            yield linkage


def has_required_mobility(linkage: Linkage, mobility: int) -> bool:
    """Rule 4: Kutzbach count equals ``mobility`` and no rigid/over-constrained subset."""
    return kutzbach(linkage.n_links, len(linkage.joints)) == mobility and not has_rigid_subassembly(
        linkage.n_links, linkage.joints
    )


def human_joints_independent(linkage: Linkage, mobility: int, mobility_fn: MobilityFn = mobility_kutzbach) -> bool:
    """Rule 5: locking hip or knee alone leaves ``mobility - 1``, both ``max(mobility - 2, 0)``."""
    n, joints = linkage.n_links, linkage.joints
    return (
        mobility_fn(n, joints, (HIP,)) == mobility - 1
        and mobility_fn(n, joints, (KNEE,)) == mobility - 1
        and mobility_fn(n, joints, (HIP, KNEE)) == max(mobility - 2, 0)
    )


def hr_graph(linkage: Linkage) -> nx.Graph:
    """The linkage as a networkx graph, nodes labelled ``torso``/``thigh``/``shank``/``wr``."""
    graph = nx.Graph()
    for i in range(linkage.n_links):
        graph.add_node(i, label=HUMAN_LINKS[i] if i < N_HUMAN else "wr")
    graph.add_edges_from(linkage.joints)
    return graph


def _same_label(a: dict, b: dict) -> bool:
    return a["label"] == b["label"]


def hr_isomorphic(a: Linkage, b: Linkage) -> bool:
    """Rule 6: equal up to a relabelling of WR links that keeps the human links fixed."""
    return nx.is_isomorphic(hr_graph(a), hr_graph(b), node_match=_same_label)


def hr_isomorphism_classes(linkages: Iterator[Linkage] | list[Linkage]) -> list[Linkage]:
    """One representative (the first seen) per HR-isomorphism class, in first-seen order.
    Graphs are bucketed by a Weisfeiler-Lehman hash with node labels (equal for
    isomorphic graphs), then compared with networkx's VF2 isomorphism inside a bucket."""
    buckets: dict[str, list[Linkage]] = {}
    representatives = []
    for linkage in linkages:
        key = nx.weisfeiler_lehman_graph_hash(hr_graph(linkage), node_attr="label")
        bucket = buckets.setdefault(key, [])
        if not any(hr_isomorphic(linkage, other) for other in bucket):
            bucket.append(linkage)
            representatives.append(linkage)
    return representatives


def canonical_form(linkage: Linkage) -> Linkage:
    """The relabelling of WR links whose sorted joint list is lexicographically smallest.
    HR-isomorphic linkages have the same canonical form (an exact isomorphism test,
    independent of networkx; the tests check both agree)."""
    wr = range(N_HUMAN, linkage.n_links)
    best = None
    for perm in permutations(wr):
        relabel = dict(zip(wr, perm))
        edges = tuple(sorted(tuple(sorted((relabel.get(a, a), relabel.get(b, b)))) for a, b in linkage.added))
        if best is None or edges < best:
            best = edges
    return Linkage(linkage.n_wr, best)


def loop_closure_flags(linkage: Linkage) -> tuple[bool, ...]:
    """Per added joint: True when it closes a loop of the deterministic spanning tree
    (hip, knee, then added joints in order, Kruskal)."""
    parent = list(range(linkage.n_links))
    flags = []
    for k, (a, b) in enumerate(linkage.joints):
        ra, rb = find_root(parent, a), find_root(parent, b)
        if k >= len(HUMAN_EDGES):
            flags.append(ra == rb)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return tuple(flags)


def to_topology(linkage: Linkage, topology_id: int, actuator_sets_: list[tuple[int, ...]]) -> Topology:
    """The catalog record of a canonical linkage (link indices -> names, joint ids 1..n)."""
    names = HUMAN_LINKS + wr_link_names(linkage.n_wr)
    flags = loop_closure_flags(linkage)
    offset = len(HUMAN_EDGES) - 1  # Linkage.joints index -> added joint id
    joints = tuple(
        Joint(k + 1, (names[a], names[b]), ATTACHMENT if a < N_HUMAN else WEARABLE, flags[k])
        for k, (a, b) in enumerate(linkage.added)
    )
    pairs = tuple(tuple(j - offset for j in combo) for combo in actuator_sets_)
    return Topology(topology_id, wr_link_names(linkage.n_wr), joints, pairs)


def enumerate_topologies(settings: CatalogSettings = CatalogSettings(), progress: bool = False) -> list[Linkage]:
    """Canonical representatives of every topology satisfying rules 1-6 (unsorted)."""
    check_settings(settings)
    m = settings.mobility
    mobile = (lk for lk in candidate_linkages(settings, progress) if has_required_mobility(lk, m))
    representatives = hr_isomorphism_classes(mobile)
    return [canonical_form(lk) for lk in representatives if human_joints_independent(lk, m)]


def build_catalog(settings: CatalogSettings = CatalogSettings(), progress: bool = False) -> Catalog:
    """The catalog: topologies (rules 1-7), their actuator sets, trees, deterministic ids."""
    rows = []
    for linkage in enumerate_topologies(settings, progress):
        sets = actuator_sets(linkage.n_links, linkage.joints, linkage.added_indices, settings.mobility)
        if not sets:
            continue  # rule 7
        rows.append((len(sets), linkage.added, linkage, sets))
    rows.sort(key=lambda row: row[:2])
    topologies = tuple(to_topology(linkage, k + 1, sets) for k, (_, _, linkage, sets) in enumerate(rows))
    return Catalog(settings, topologies)
