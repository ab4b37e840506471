"""A run's best evaluations read back as designs (codesign.run.stored.stored_candidates):
the report's ranking, each the design its evaluation decodes to, revisits once."""

from __future__ import annotations

from codesign.objectives import ranked
from codesign.run.driver import start_run
from codesign.run.spec import parse_spec
from codesign.run.store import find_run_database, open_run
from codesign.run.stored import stored_candidate, stored_candidates


def test_a_run_s_best_evaluations_come_back_in_the_report_s_order(tmp_path):
    run = start_run(parse_spec(
        'name = "top"\nseed = 5\n[problem]\nname = "human_gait"\n[optimizer]\nalgorithm = "pso"\n'
        'particles = 3\niterations = 2\n[evaluation]\nmax_time = 0.2\n[execution]\nmode = "serial"\n'),
        results=tmp_path, progress=False)
    with open_run(find_run_database(str(run)), readonly=True) as store:
        run_id = int(store.runs()["run_id"].max())
        evaluations, params = store.evaluations(run_id), store.params(run_id)
    found = stored_candidates(str(run), 4)
    assert len(found) == 4
    assert found[0].design == stored_candidate(str(run), True, None).design
    for candidate, (_, row) in zip(found, ranked(evaluations).head(4).iterrows()):
        assert (candidate.stage, candidate.stage_value) == (int(row["stage"]), float(row["stage_value"]))
        which = f"{int(row['iteration'])}:{int(row['particle'])}"
        assert candidate.design == stored_candidate(str(run), False, which).design
    distinct = {tuple(group.sort_values("name")["value"]) for _, group in params.groupby(["iteration", "particle"])}
    assert len(stored_candidates(str(run), 100)) == len(distinct)      # fewer than asked: each distinct one
