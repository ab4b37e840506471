"""A study spec's ``[study]`` table (``codesign study``, :mod:`codesign.report.study`)
read into a frozen :class:`StudySpec`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codesign.errors import shown
from codesign.run.spec_values import fail, read_bool, read_int, check_table

# the checks a study's verification knows (codesign.report.robustness.CHECKS and "mujoco";
# tests/report/test_study.py keeps the two lists equal): each round's best is replayed under
# every one by default
VERIFY_CHECKS = ("half_step", "soft", "mujoco", "wearer_light", "wearer_heavy")
# the checks a focused round's search can price (codesign.problems.robust.CONTACT_CHECKS; the
# same test keeps them equal)
SEARCH_CHECKS = ("half_step", "soft")


@dataclass(frozen=True)
class StudySpec:
    """A study's rounds after its global one (``[study]``, run by ``codesign study``).

    focus: how many topologies get a focused round (the best of each topology in the
    global round, ranked; 0 with ``topologies`` given); topologies: catalog numbers that
    get one whatever the global round found; focus_particles, focus_iterations: each
    focused round's swarm; warm_start: its open parameters start in the range of the
    parent's N best evaluations of that topology (``codesign freeze --warm-start``);
    verify: the checks each round's best is replayed under (:data:`VERIFY_CHECKS`);
    verify_candidates: how many of a round's best evaluations the verification may replay,
    in the run's order, to keep the first that walks under every check it makes;
    focus_rounds: focused rounds per topology at most -- a topology whose best so far does
    not hold under every check gets another, continued from its last focused round;
    transfer: a focused round also starts a particle at its parent's best with the
    parameters it shares with another topology's design that holds (the control law's:
    ``[[space.seeds]]``), one per such design found so far, best first; focus_pairs: how
    many of a topology's actuator pairs get a chain of up to ``focus_rounds`` focused
    rounds, the next best pair of the global round only once the chains before it ended
    without a design that holds; search_checks: the contact checks every focused round
    written from now on prices inside its search (``evaluation.robust_checks`` and a stage
    on ``robust_walk_score`` before its last, :mod:`codesign.problems.robust`)."""

    focus: int = 3
    topologies: tuple[int, ...] = ()
    focus_particles: int = 24
    focus_iterations: int = 60
    warm_start: int = 10
    verify: tuple[str, ...] = VERIFY_CHECKS
    verify_candidates: int = 1
    focus_rounds: int = 1
    transfer: bool = False
    focus_pairs: int = 1
    search_checks: tuple[str, ...] = ()


def parse_study(data: Any) -> StudySpec:
    """The ``[study]`` table as a :class:`StudySpec` (:class:`~codesign.run.spec_values.Invalid` naming the key)."""
    path = "study"
    check_table(data, path, ("focus", "topologies", "focus_particles", "focus_iterations", "warm_start",
                             "verify", "verify_candidates", "focus_rounds", "transfer", "focus_pairs", "search_checks"))
    topologies = data.get("topologies", [])
    if (not isinstance(topologies, list)
            or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in topologies)
            or len(set(topologies)) != len(topologies)):
        fail("study.topologies", topologies, "a list of distinct topology numbers (integers >= 1)")
    if "topologies" in data and not topologies:
        fail("study.topologies", topologies, "at least one topology number for the focused rounds "
                                             "(or leave it out and set focus = N)")
    if topologies and "focus" in data:
        fail("study.focus", data["focus"], "no focus with study.topologies (the listed topologies are the "
                                           "focused rounds)")
    focus = read_int(data, "focus", path, 0 if topologies else StudySpec.focus, high=1000)
    if focus == 0 and not topologies:
        fail("study.focus", focus, "an integer >= 1 (the topologies that get a focused round), "
                                   "or study.topologies = [k, ...]")
    verify = data.get("verify", list(VERIFY_CHECKS))
    unknown = [v for v in verify if v not in VERIFY_CHECKS] if isinstance(verify, list) else []
    if not isinstance(verify, list) or unknown or len(set(verify)) != len(verify):
        said = f" (unknown: {', '.join(map(shown, unknown))})" if unknown else ""
        fail("study.verify", verify, f"a list of distinct checks among {', '.join(VERIFY_CHECKS)}{said}")
    search = data.get("search_checks", [])
    if not isinstance(search, list) or not all(c in SEARCH_CHECKS for c in search) or len(set(search)) != len(search):
        fail("study.search_checks", search, f"a list of distinct checks among {', '.join(SEARCH_CHECKS)}")
    if data.get("transfer") is True and data.get("warm_start", StudySpec.warm_start) == 0:
        fail("study.transfer", True, "warm_start >= 1 with it (a transfer seed is the parent's best, the focused "
                                     "round's start, with another design's control law)")
    return StudySpec(focus=focus, topologies=tuple(sorted(topologies)),
                     focus_particles=read_int(data, "focus_particles", path, StudySpec.focus_particles,
                                              low=1, high=100_000),
                     focus_iterations=read_int(data, "focus_iterations", path, StudySpec.focus_iterations,
                                               low=1, high=1_000_000),
                     warm_start=read_int(data, "warm_start", path, StudySpec.warm_start, high=100_000),
                     verify=tuple(verify),
                     verify_candidates=read_int(data, "verify_candidates", path, StudySpec.verify_candidates,
                                                low=1, high=1000),
                     focus_rounds=read_int(data, "focus_rounds", path, StudySpec.focus_rounds, low=1, high=100),
                     transfer=read_bool(data, "transfer", path, StudySpec.transfer),
                     focus_pairs=read_int(data, "focus_pairs", path, StudySpec.focus_pairs, low=1, high=100),
                     search_checks=tuple(search))
