"""The verdict's numerical-health flag (issue 43): records made by hand."""

from codesign.problems.verdict import UNSOLVED_FRACTION_MAX, numerical_flags, walking_verdict

WALKING = {"time_fraction": 1.0, "time": 10.0, "speed": 1.25, "speed_match": 0.96, "assist_fraction": 0.0}


def test_a_walk_within_the_tolerance_is_not_flagged():
    """0.1 % of the steps beyond the tolerance (the bound itself) and no energy step: no flag."""
    metrics = {**WALKING, "contact_unsolved_fraction": UNSOLVED_FRACTION_MAX, "contact_energy_error_steps": 0.0}
    verdict = walking_verdict(metrics, 10.0)
    assert verdict.walks and verdict.flags == () and "unreliable" not in verdict.text
    assert verdict.short == "yes"


def test_a_walk_beyond_the_tolerance_is_flagged_whether_it_walks_or_not():
    """22 % of the steps beyond the tolerance (the legacy solver's worst walk) and 3 energy
    steps: the flag names both, in the text after the verdict and in the table cell."""
    metrics = {**WALKING, "contact_unsolved_fraction": 0.2162, "contact_energy_error_steps": 3.0}
    verdict = walking_verdict(metrics, 10.0)
    assert verdict.walks
    assert verdict.flags == ("numerically unreliable: 21.62 % of the time steps beyond the contact solver's "
                             "tolerance (at most 0.1 %); 3 time steps whose contact impulses exceed the "
                             "energy bound",)
    assert verdict.text.startswith("walks: 1.25 m/s") and verdict.text.endswith(verdict.flags[0])
    assert verdict.short == "yes ⚠ " + verdict.flags[0]
    falling = walking_verdict({**metrics, "time_fraction": 0.3, "time": 3.0}, 10.0)
    assert not falling.walks and falling.flags == verdict.flags


def test_records_without_the_solver_metrics_carry_no_flag():
    """The event-driven and soft models report no contact metrics: nothing to flag."""
    assert numerical_flags(WALKING) == ()
    assert numerical_flags({"contact_energy_error_steps": 1.0}) != ()
