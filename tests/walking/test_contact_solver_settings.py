"""The contact solver's settings from a spec or --settings (issue 43): a tolerance or an
iteration limit that is not a positive number, or an unknown solver, is one line naming it,
exit 2, nothing written (real processes); the record names the solver and its tolerances."""

from __future__ import annotations

import pytest

from codesign.errors import UserError
from codesign.walking.settings import WalkSettings
from tests.runtools import codesign, one_line


@pytest.mark.parametrize("key, value, expected", [
    ("contact_tol_velocity", 0, "a tolerance > 0 m/s"),
    ("contact_tol_impulse", -1e-6, "a tolerance > 0 N s"),
    ("contact_tol_energy", 0.0, "a bound > 0 J"),
    ("pgs_max_sweeps", 0, "a number of sweeps > 0"),
    ("pgs_tol", "1e-8", "a relative change > 0"),
    ("soft_stiffness", 0, "a stiffness > 0 N/m"),
    ("soft_exponent", 0.5, r"an exponent >= 1 \(1: linear, 1.5: Hertz\)"),
    ("rest_speed", 0.0, r"a speed >= 1e-7 m/s \(the event-driven contact's TOL_V\)"),
])
def test_a_tolerance_or_limit_that_is_not_positive_is_refused(key, value, expected):
    with pytest.raises(UserError, match=f"evaluation.{key}: got .*; expected {expected}"):
        WalkSettings.from_dict({key: value})


def test_an_unknown_solver_is_refused():
    with pytest.raises(UserError, match='evaluation.contact_solver: got "lemke"; expected one of pivoting, gauss_seidel'):
        WalkSettings.from_dict({"contact_solver": "lemke"})


def test_simulate_refuses_a_bad_tolerance_in_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    done = codesign("simulate", "--human", "--settings", '{"contact_tol_velocity": -1}', "--out", out)
    one_line(done, 2, r"codesign simulate: error: evaluation\.contact_tol_velocity: got -1; expected a tolerance > 0 m/s")
    assert not out.exists()
