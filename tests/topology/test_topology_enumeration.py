"""The enumeration against the thesis's counts (Table 5.1) and against the rules, checked
independently of the code that applies them."""

from collections import Counter
from itertools import combinations
from pathlib import Path

import networkx as nx
import pytest

from codesign.errors import UserError
from codesign.topology.actuators import actuator_sets
from codesign.topology.catalog import HUMAN_LINKS, CatalogSettings, catalog_to_dict, dumps_catalog_json
from codesign.topology.enumerate import (
    HIP,
    KNEE,
    Linkage,
    build_catalog,
    candidate_linkages,
    canonical_form,
    check_settings,
    has_required_mobility,
    hr_graph,
    hr_isomorphic,
    hr_isomorphism_classes,
)
from codesign.topology.mobility import mobility_kutzbach, mobility_rank

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog():
    return build_catalog()


def test_default_counts_match_thesis_table_5_1(catalog):
    assert len(catalog.topologies) == 10
    assert sorted(len(t.actuator_pairs) for t in catalog.topologies) == [9, 12, 12, 12, 12, 12, 12, 15, 15, 15]
    subspaces = catalog.subspaces()
    assert len(subspaces) == 126
    assert [s[0] for s in subspaces] == list(range(1, 127))


def test_topologies_without_a_triangle_as_in_the_thesis(catalog):
    """Thesis 5.4.2: "Triangular segments (featured in topologies 4 to 10)", so its topologies
    1-3, with N = 9, 12, 12 actuator pairs in Table 5.1 (whose order is not ours), are the
    only ones whose WR links are all binary."""
    binary_only = [t for t in catalog.topologies
                   if max(Counter(n for j in t.joints for n in j.links if n in t.wr_links).values()) == 2]
    assert sorted(len(t.actuator_pairs) for t in binary_only) == [9, 12, 12]


def test_two_mobility_methods_agree_on_every_enumerated_graph():
    """Every joint set passing rules 1-3 (564 graphs): full linkage, hip locked, knee
    locked, both locked - combinatorial and numeric mobility are equal."""
    graphs = list(candidate_linkages(CatalogSettings()))
    assert len(graphs) == 564
    seen = Counter()
    for lk in graphs:
        for locked in ((), (HIP,), (KNEE,), (HIP, KNEE)):
            k = mobility_kutzbach(lk.n_links, lk.joints, locked)
            assert k == mobility_rank(lk.n_links, lk.joints, locked), (lk, locked)
            seen[k] += 1
    assert len(seen) >= 3  # the check covered several mobilities, not one repeated value


def test_actuator_pairs_same_with_numeric_mobility(catalog):
    """Actuator pairs of every catalog topology, recomputed with the numeric method."""
    for t in catalog.topologies:
        lk = _linkage(t)
        numeric = actuator_sets(lk.n_links, lk.joints, lk.added_indices, 2, mobility_fn=mobility_rank)
        assert tuple(tuple(j - 1 for j in pair) for pair in numeric) == t.actuator_pairs


def _linkage(topology) -> Linkage:
    names = list(topology.links)
    return Linkage(len(topology.wr_links), tuple(tuple(names.index(n) for n in j.links) for j in topology.joints))


def test_catalog_obeys_the_rules(catalog):
    for t in catalog.topologies:
        lk = _linkage(t)
        degree = Counter(n for j in t.joints for n in j.links)
        assert all(any(j.links[0] == h for j in t.joints) for h in HUMAN_LINKS)  # rule 2
        assert all(degree[w] >= 2 for w in t.wr_links)  # rule 3
        assert len({frozenset(j.links) for j in t.joints}) == len(t.joints)
        assert mobility_rank(lk.n_links, lk.joints) == 2  # rule 4
        # rule 5 with the numeric method
        assert mobility_rank(lk.n_links, lk.joints, [HIP]) == 1
        assert mobility_rank(lk.n_links, lk.joints, [KNEE]) == 1
        assert mobility_rank(lk.n_links, lk.joints, [HIP, KNEE]) == 0
        # spanning tree: one tree joint per WR link, tree + hip/knee connect every link
        assert len(t.tree_joints) == len(t.wr_links)
        assert len(t.loop_closure_joints) == len(t.joints) - len(t.wr_links)
        tree = nx.Graph([("torso", "thigh"), ("thigh", "shank")] + [t.joint(i).links for i in t.tree_joints])
        assert nx.is_tree(tree) and set(tree) == set(t.links)
        placed = set(HUMAN_LINKS)
        for child, parent, joint_id in t.tree_parents():  # parents come before children
            assert parent in placed and set(t.joint(joint_id).links) == {child, parent}
            placed.add(child)
        assert placed == set(t.links)


def test_topologies_pairwise_not_hr_isomorphic(catalog):
    linkages = [_linkage(t) for t in catalog.topologies]
    for a, b in combinations(linkages, 2):
        assert not hr_isomorphic(a, b)


def test_invalid_pairs_are_pairs_inside_a_four_bar_loop(catalog):
    """Classical fact: a four-bar loop has one degree of freedom, so locking two of its
    joints removes only one. For these linkages the invalid pairs are exactly the pairs of
    added joints sharing a four-link loop (thesis 5.2.2: topology 1 needs one actuator on
    the hip chain and one on the knee chain)."""
    for t in catalog.topologies:
        graph = nx.MultiGraph()
        graph.add_edges_from([("torso", "thigh", "hip"), ("thigh", "shank", "knee")])
        graph.add_edges_from((*j.links, j.id) for j in t.joints)
        in_four_loop = set()
        for cycle in nx.simple_cycles(nx.Graph(graph), length_bound=4):
            if len(cycle) == 4:
                ids = {j.id for j in t.joints if set(j.links) <= set(cycle)}
                in_four_loop |= {frozenset(p) for p in combinations(sorted(ids), 2)}
        invalid = {frozenset(p) for p in combinations(range(1, 7), 2)} - {frozenset(p) for p in t.actuator_pairs}
        assert invalid == in_four_loop, t.id


def test_isomorphism_methods_agree():
    """networkx VF2 with node labels and the canonical-form test give the same classes."""
    graphs = [lk for lk in candidate_linkages(CatalogSettings()) if has_required_mobility(lk, 2)]
    classes = hr_isomorphism_classes(graphs)
    assert len(classes) == len({canonical_form(lk) for lk in graphs}) == 14


def test_isomorphic_and_non_isomorphic_pairs():
    # two dyads: torso-thigh via wr1-wr3, torso-shank via wr2-wr4 (the catalog's topology 2)
    a = Linkage(4, ((0, 3), (0, 4), (1, 5), (2, 6), (3, 5), (4, 6)))
    swap = {3: 4, 4: 3, 5: 6, 6: 5}  # relabel WR links: same topology
    b = Linkage(4, tuple(sorted(tuple(sorted((swap.get(x, x), swap.get(y, y)))) for x, y in a.added)))
    assert b != a and hr_isomorphic(a, b) and canonical_form(a) == canonical_form(b)
    # mirror the human (torso <-> shank): the same graph without labels, another topology
    mirror = {0: 2, 2: 0}
    c = Linkage(4, tuple(sorted(tuple(sorted((mirror.get(x, x), mirror.get(y, y)))) for x, y in a.added)))
    assert nx.is_isomorphic(hr_graph(a), hr_graph(c))
    assert not hr_isomorphic(a, c) and canonical_form(a) != canonical_form(c)


def test_catalog_is_deterministic_and_committed_copy_is_current(catalog):
    text = dumps_catalog_json(catalog_to_dict(catalog))
    assert dumps_catalog_json(catalog_to_dict(build_catalog())) == text
    committed = REPO / "topologies" / "catalog.json"
    assert committed.read_text() == text, "topologies/catalog.json is stale: run `make topologies`"


def test_other_settings():
    # mobility 1 (a linkage coupling hip and knee): 3 WR links, 5 added joints
    small = build_catalog(CatalogSettings(3, 5, 1))
    assert small.topologies
    for t in small.topologies:
        lk = _linkage(t)
        assert mobility_rank(lk.n_links, lk.joints) == 1
        assert mobility_rank(lk.n_links, lk.joints, [HIP]) == 0
        assert mobility_rank(lk.n_links, lk.joints, [KNEE]) == 0
        assert t.actuator_pairs and all(len(s) == 1 for s in t.actuator_pairs)
        for (joint_id,) in t.actuator_pairs:  # one actuator locks the whole linkage
            assert mobility_rank(lk.n_links, lk.joints, [joint_id + 1]) == 0


@pytest.mark.parametrize(
    "settings, key",
    [
        (CatalogSettings(0, 6, 2), "--wr-links"),
        (CatalogSettings(9, 6, 2), "--wr-links"),
        (CatalogSettings(4, 2, 2), "--added-joints"),
        (CatalogSettings(4, 6, 0), "--mobility"),
        (CatalogSettings(5, 7, 2), "--mobility"),  # Kutzbach count 3 with these
    ],
)
def test_bad_settings(settings, key):
    with pytest.raises(UserError, match=key):
        check_settings(settings)


def test_every_suggestion_of_check_settings_is_accepted():
    # all settings around the accepted ones: each refusal names options (a single one, or
    # added joints and mobility together) that check_settings accepts with the rest as given
    import re

    for w in range(0, 7):
        for a in range(0, 20):
            for m in range(-2, 13):
                settings = CatalogSettings(w, a, m)
                try:
                    check_settings(settings)
                    continue
                except UserError as exc:
                    message = str(exc)
                if not 2 <= w <= 5:
                    assert message == f"--wr-links: got {w}; expected 2..5"
                    continue
                tail = re.sub(r" \(.*\)$", "", re.split(r"expected |e\.g\. ", message)[-1])
                for option in tail.split(" or "):
                    values = {"wr_links": w, "added_joints": a, "mobility": m}
                    for name, value in re.findall(r"--([a-z-]+) (-?\d+)", option):
                        values[name.replace("-", "_")] = int(value)
                    assert values != {"wr_links": w, "added_joints": a, "mobility": m}, message
                    check_settings(CatalogSettings(**values))  # raises if the suggestion is refused
