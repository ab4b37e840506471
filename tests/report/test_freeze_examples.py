"""The example specs of thesis 5.6 (studies/freeze-scenarios/freeze-*.toml) load with OPT's loader and give
the search spaces their scenarios describe, on the real co-design problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesign.run.driver import resolve_problem
from codesign.report.freeze import is_morphology
from codesign.run.spec import build_space, load_spec

PIPELINES = Path(__file__).resolve().parents[2] / "studies" / "freeze-scenarios"


def _space(name: str):
    spec = load_spec(PIPELINES / f"freeze-{name}.toml")
    return spec, build_space(spec, resolve_problem(spec))


def _open_morphology(space) -> set[str]:
    return {n for n, active in zip(space.names, space.active.any(axis=0))
            if active and is_morphology(n)}


@pytest.mark.parametrize("name", ["control", "actuators", "subchain"])
def test_examples_load_and_name_their_parent(name):
    spec, space = _space(name)
    assert spec.problem == "exo_codesign" and spec.freeze.parent == "demo"
    assert space.n_subspaces >= 1


def test_scenario_1_morphology_fixed_control_open():
    spec, space = _space("control")
    assert space.n_subspaces == 1 and spec.freeze.pools == {"subspace": "t01_a2-4"}
    assert _open_morphology(space) == set()
    assert space.active.sum() > 0                      # the control stays open
    assert set(spec.freeze.parameters) == {f"t01.j{j}_{k}" for j in (1, 2, 3, 4)
                                           for k in ("s", "dx")} | {f"t01.j{j}_{k}" for j in (5, 6)
                                                                   for k in ("x", "z")}


def test_scenario_2_actuator_pairs_of_one_topology():
    spec, space = _space("actuators")
    groups = {space.group_names(c)[0] for c in space.subspaces}
    assert len(groups) == 9 and all(g.startswith("t01_") for g in groups)
    assert not spec.freeze.parameters


def test_scenario_3_one_subchain_open():
    spec, space = _space("subchain")
    assert space.n_subspaces == 1
    assert _open_morphology(space) == {f"t01.j{j}_{k}" for j, k in
                                       ((3, "s"), (3, "dx"), (4, "s"), (4, "dx"),
                                        (6, "x"), (6, "z"))}
