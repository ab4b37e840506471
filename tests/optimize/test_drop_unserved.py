"""`space.drop_unserved`: the subspaces the load screening found no catalog drivetrain for
leave the search, each with its reason; a table that cannot be read is one line."""

from __future__ import annotations

import pytest

from codesign.errors import UserError
from codesign.run.driver import resolve_problem
from codesign.run.spec import Unserved, build_space, parse_spec

HEADER = "subspace,topology,actuator_1,actuator_2,samples,passed,served,served_fraction,lightest_device_mass_kg,common_reason\n"


def spec_text(path) -> str:
    return f'[problem]\nname = "exo_codesign_wearer"\n[space]\ndrop_unserved = "{path}"\n'


def test_the_unserved_subspaces_leave_the_space_and_the_served_stay(tmp_path):
    table = tmp_path / "loads_subspaces.csv"
    table.write_text(HEADER + "1,1,1,3,50,10,0,0.0,,peak torque: no unit reaches 1.2 x 180 N m\n"
                              "3,1,1,6,50,10,4,0.08,6.1,\n"
                              "7,2,1,4,50,0,0,0.0,,\n")
    spec = parse_spec(spec_text(table))
    assert spec.unserved == (Unserved(1, (1, 3), "peak torque: no unit reaches 1.2 x 180 N m"),
                             Unserved(2, (1, 4), "no pass to size"))
    full = build_space(parse_spec('[problem]\nname = "exo_codesign_wearer"\n'), resolve_problem(spec))
    space = build_space(spec, resolve_problem(spec))
    groups = {d["groups"]["subspace"] if isinstance(d["groups"], dict) else d["groups"][0]
              for d in space.describe()}
    assert space.n_subspaces == full.n_subspaces - 2
    assert "t01_a1-3" not in groups and "t02_a1-4" not in groups and "t01_a1-6" in groups


@pytest.mark.parametrize("text, message", [
    ("topology,served\n1,0\n", r"expected the load screening's loads_subspaces\.csv .* with the columns"),
    (HEADER + "1,x,1,2,50,10,0,0,,\n", r"row 1: topology, actuator_1, actuator_2, served .*expected integers"),
])
def test_a_table_that_cannot_be_read_is_one_line(tmp_path, text, message):
    table = tmp_path / "loads_subspaces.csv"
    table.write_text(text)
    with pytest.raises(UserError, match=message) as caught:
        parse_spec(spec_text(table))
    assert "\n" not in str(caught.value) and "space.drop_unserved" in str(caught.value)
