"""Does a top design's gait survive a change of the contact model? (issue 15)

A gait the optimizer found with the 1-ms stepping rollout is re-evaluated at half the
time step and under the soft (penalty) contact model, with the run's other evaluation
settings; the report's top-solutions table shows the speed and foot slip of each
re-evaluation next to the run's own. A gait that exists in one contact model only -- it
falls, slows down or slides under the others -- is one the search exploited, not one a
person could walk.

The soft model costs minutes per 10-s evaluation of an augmented design
(``codesign bench evaluate``), so by default only the best design is re-evaluated
(``codesign report --robustness N`` for the best N).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import sys
from typing import Callable

import pandas as pd

from codesign.problems import get_problem
from codesign.run.stored import inline_run_reference, stored_candidate
from codesign.walking import WalkSettings

# the contact-model checks a walk is replayed under (check name -> the change of WALK's
# settings): here and in a study's verification (codesign.report.study)
CONTACT_CHECKS: dict[str, Callable[[WalkSettings], WalkSettings]] = {
    "half_step": lambda walk: walk.with_rollout(h=0.5 * walk.rollout.h),
    "soft": lambda walk: walk.with_rollout(contact_model="soft")}
# (column prefix, the change of WALK's settings) of the re-evaluations
VARIANTS: tuple[tuple[str, Callable[[WalkSettings], WalkSettings]], ...] = (
    ("h/2", CONTACT_CHECKS["half_step"]), ("soft", CONTACT_CHECKS["soft"]))


def reevaluate(database: str, eval_key: str) -> dict[str, float]:
    """{"<variant> speed [m/s]", "<variant> slip [% stance]", "<variant> walked [s]"} of one
    stored evaluation ("ITERATION:PARTICLE") of a walking run, replayed by its problem
    under the run's settings with each variant's change; NaN where not measured."""
    with contextlib.redirect_stdout(io.StringIO()):      # its "replaying ..." line
        stored = stored_candidate(database, False, eval_key)
    problem = get_problem(stored.problem)
    settings = problem.parse_settings(inline_run_reference(stored.table, problem.run_reference))
    out: dict[str, float] = {}
    for name, change in VARIANTS:
        variant = dataclasses.replace(settings, walk=change(settings.walk))
        metrics = problem.walking.replay(stored.design, variant).record.metrics
        out[f"{name} walked [s]"] = metrics.get("time", math.nan)
        out[f"{name} speed [m/s]"] = metrics.get("speed", math.nan)
        out[f"{name} slip [% stance]"] = 100.0 * metrics.get("foot_slip_fraction", math.nan)
    return out


def with_robustness(table: pd.DataFrame, database: str, problem: str, n: int) -> pd.DataFrame:
    """The top-solutions table (an ``eval`` column, best first) with the re-evaluation
    columns filled for its first ``n`` rows (a problem without walking designs, or n = 0:
    the table as it is)."""
    if n <= 0 or get_problem(problem).walking is None or table.empty:
        return table
    n = min(n, len(table))
    print(f"report: re-evaluating the best {n} design{'s' if n > 1 else ''} at half the time step and "
          f"with soft contacts: minutes per design (--robustness 0 skips it; a Ctrl-C stops the "
          f"report once the evaluation in progress is done)", file=sys.stderr, flush=True)
    rows = [reevaluate(database, str(key)) for key in table["eval"].head(n)]
    extra = pd.DataFrame(rows, index=table.index[:len(rows)])
    return table.join(extra)
