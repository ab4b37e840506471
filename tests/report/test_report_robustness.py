"""The top-solutions table re-evaluates the best design at half the time step and with soft
contacts (issue 15): the columns hold exactly what an evaluation of that stored design
under the changed settings gives."""

import math

import pytest

from codesign.problems.walking import walk
from codesign.report import robustness as rb
from codesign.run.stored import stored_candidate


@pytest.mark.slow
def test_the_best_design_is_reevaluated_under_both_variants(tmp_path):
    from codesign.report.build import build_report
    from codesign.run.driver import start_run
    from codesign.run.spec import parse_spec
    import pandas as pd

    run = start_run(parse_spec(
        'name = "rob"\nseed = 3\n[problem]\nname = "human_gait"\n[optimizer]\nalgorithm = "pso"\n'
        'particles = 2\niterations = 1\n[evaluation]\nmax_time = 0.2\n[execution]\nmode = "serial"\n'),
        results=tmp_path, progress=False)
    out = build_report(run.parent, tmp_path / "report", gait=False, robustness=1)
    table = pd.read_csv(out / "top_solutions.csv")
    best = str(table["eval"].iloc[0])
    stored = stored_candidate(str(run), False, best)
    for name, change in rb.VARIANTS:
        direct = walk(stored.design, rb.variant_settings(stored.settings, change)).metrics
        assert table[f"{name} walked [s]"].iloc[0] == direct["time"]
        speed = table[f"{name} speed [m/s]"].iloc[0]
        assert (math.isnan(speed) and "speed" not in direct) or speed == direct["speed"]
    assert rb.variant_settings({"max_time": 2.0}, {"h_scale": 0.5}) == {"max_time": 2.0, "h": 5e-4}
    assert rb.variant_settings({"h": 2e-3}, {"h_scale": 0.5})["h"] == 1e-3
