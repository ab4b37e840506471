"""Does a top design's gait survive a change of the contact model or of the wearer? (issues 15, 46)

A gait the optimizer found with the 1-ms stepping rollout is re-evaluated at half the
time step and under the soft (penalty) contact law (``contact_model = "soft_step"``: the
law of the event-driven ``"soft"`` peer, solved implicitly in the time step, at a quarter
of the run's step, so a check costs a few walks; docs/contacts.md compares the two), with the run's other evaluation
settings; the report's top-solutions table shows the speed and foot slip of each
re-evaluation next to the run's own. A gait that exists in one contact model only -- it
falls, slows down or slides under the others -- is one the search exploited, not one a
person could walk.

The wearer checks (issue 46 item 4) replay it on a lighter and a heavier person: every
segment mass and inertia of the wearer x0.9 (``wearer_light``) and x1.1
(``wearer_heavy``), ``evaluation.wearer_mass_scale`` times the run's own scale
(:mod:`codesign.model.wearer_body`); the device, the loads and the control stay as they are.
They are made through the problem's own settings parser, so a problem that cannot scale
its wearer (the anthropomorphic baseline, whose segments hold the device's lumps) refuses
them in one line instead of scaling the wrong bodies.

By default only the best design is re-evaluated, at half the step and with soft contacts
(``codesign report --robustness N`` for the best N, ``--robustness-checks`` for the
checks: the wearer checks cost a 1-ms walk each).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import sys
from typing import Any, Callable, Mapping

import pandas as pd

from codesign.errors import UserError
from codesign.problems import get_problem
from codesign.problems.robust import CONTACT_CHECKS, without_robust_checks
from codesign.run.stored import inline_run_reference, stored_candidate
from codesign.walking import WalkSettings

# the wearer checks (check name -> factor on the run's evaluation.wearer_mass_scale)
WEARER_CHECKS: dict[str, float] = {"wearer_light": 0.9, "wearer_heavy": 1.1}
# every check a stored walk can be replayed under, in this order (a study adds "mujoco")
CHECKS: tuple[str, ...] = (*CONTACT_CHECKS, *WEARER_CHECKS)
# the report's column prefix of each check
PREFIX = {"half_step": "h/2", "soft": "soft", "wearer_light": "mass x0.9", "wearer_heavy": "mass x1.1"}
# what ``codesign report`` re-evaluates by default (--robustness-checks)
DEFAULT_CHECKS: tuple[str, ...] = ("half_step", "soft")
# (column prefix, the change of WALK's settings) of the contact-model re-evaluations
VARIANTS: tuple[tuple[str, Callable[[WalkSettings], WalkSettings]], ...] = (
    ("h/2", CONTACT_CHECKS["half_step"]), ("soft", CONTACT_CHECKS["soft"]))


def parse_checks(text: str, option: str = "--robustness-checks") -> tuple[str, ...]:
    """A comma-separated list of distinct :data:`CHECKS` ("half_step,wearer_light") as a
    tuple; UserError, one line naming the unknown or repeated check and the choices."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    for name in names:
        if name not in CHECKS:
            raise UserError(f"{option}: unknown check {name!r}; expected a comma-separated list of "
                            f"{', '.join(CHECKS)}")
    if len(set(names)) != len(names):
        raise UserError(f"{option}: got {text!r}, a check twice; expected distinct checks of {', '.join(CHECKS)}")
    return names


def check_settings(problem, table: Mapping[str, Any], settings, check: str):
    """The run's parsed ``settings`` (its evaluation ``table``, run references inlined, parsed
    by ``problem``) under ``check``: a contact check changes the WALK settings, a wearer check
    re-parses ``table`` with ``wearer_mass_scale`` times its factor (so that the problem's own
    parser refuses a scale it cannot simulate: UserError). A check's replay is a plain walk:
    the run's robust checks (``evaluation.robust_checks``) are not replayed again."""
    if check in CONTACT_CHECKS:
        return without_robust_checks(dataclasses.replace(settings, walk=CONTACT_CHECKS[check](settings.walk)))
    if check in WEARER_CHECKS:
        scale = WEARER_CHECKS[check] * settings.walk.wearer_mass_scale
        return without_robust_checks(problem.parse_settings({**table, "wearer_mass_scale": scale}))
    raise UserError(f"check {check!r}: unknown; expected one of {', '.join(CHECKS)}")


def reevaluate(database: str, eval_key: str, checks: tuple[str, ...] = DEFAULT_CHECKS) -> dict[str, float]:
    """{"<prefix> speed [m/s]", "<prefix> slip [% stance]", "<prefix> walked [s]"} of one
    stored evaluation ("ITERATION:PARTICLE") of a walking run, replayed by its problem
    under the run's settings changed by each check (:data:`PREFIX`); NaN where not
    measured (a check the problem refuses: NaN, the reason on stderr)."""
    with contextlib.redirect_stdout(io.StringIO()):      # its "replaying ..." line
        stored = stored_candidate(database, False, eval_key)
    problem = get_problem(stored.problem)
    table = inline_run_reference(stored.table, problem.run_reference)
    settings = problem.parse_settings(table)
    out: dict[str, float] = {}
    for check in checks:
        name = PREFIX[check]
        try:
            variant = check_settings(problem, table, settings, check)
        except UserError as exc:
            print(f"report: {eval_key} not checked with {check}: {exc}", file=sys.stderr, flush=True)
            metrics = {}
        else:
            metrics = problem.walking.replay(stored.design, variant).record.metrics
        out[f"{name} walked [s]"] = metrics.get("time", math.nan)
        out[f"{name} speed [m/s]"] = metrics.get("speed", math.nan)
        out[f"{name} slip [% stance]"] = 100.0 * metrics.get("foot_slip_fraction", math.nan)
    return out


def with_robustness(table: pd.DataFrame, database: str, problem: str, n: int,
                    checks: tuple[str, ...] = DEFAULT_CHECKS) -> pd.DataFrame:
    """The top-solutions table (an ``eval`` column, best first) with the re-evaluation
    columns of each of ``checks`` filled for its first ``n`` rows (a problem without walking
    designs, n = 0 or no check: the table as it is)."""
    if n <= 0 or not checks or get_problem(problem).walking is None or table.empty:
        return table
    n = min(n, len(table))
    print(f"report: re-evaluating the best {n} design{'s' if n > 1 else ''} under {', '.join(checks)}"
          f" (--robustness 0 skips it; a Ctrl-C stops the report once the evaluation in progress is done)",
          file=sys.stderr, flush=True)
    rows = [reevaluate(database, str(key), checks) for key in table["eval"].head(n)]
    extra = pd.DataFrame(rows, index=table.index[:len(rows)])
    return table.join(extra)
