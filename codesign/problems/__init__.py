"""The registered optimization problems: name -> :class:`~codesign.problems.base.Problem`.

Test functions (``six_hump_camel``, ``lexicographic_six_hump``, ``mmpso_toy``, ``sphere``;
:mod:`codesign.problems.test_functions`), the walking problems -- each a set of typed
options (:mod:`codesign.problems.options`) that one factory builds
(:func:`codesign.problems.compose.walking_problem`); the registered walking names
(``exo_codesign`` and its variants, ``exo_assist``, ``exo_assist_wearer``, ``human_gait``,
``human_gait_balance``) are presets, and a combination no preset spells is keyed
``walking(option=value, ...)`` --, ``anthropomorphic_baseline`` (5.6,
:mod:`codesign.problems.baseline`), and ``replay`` (sleeps for recorded evaluation costs in
the co-design space: ``codesign bench scaling``, :mod:`codesign.problems.replay`). A
problem is built on first use (the co-design space needs the topology catalog) and cached
per process. :func:`register_problem` adds one at run time (tests; it must then be
registered on the workers too).
"""

from __future__ import annotations

from typing import Callable

from codesign.problems import baseline, replay, test_functions
from codesign.problems.base import Problem
from codesign.problems.compose import walking_problem
from codesign.problems.options import PRESETS, options_of_key

BUILDERS: dict[str, Callable[[], Problem]] = {
    "six_hump_camel": lambda: test_functions.SIX_HUMP_CAMEL,
    "lexicographic_six_hump": lambda: test_functions.LEXICOGRAPHIC_SIX_HUMP,
    "mmpso_toy": lambda: test_functions.MMPSO_TOY,
    "sphere": lambda: test_functions.SPHERE,
    "anthropomorphic_baseline": baseline.problem,
    "replay": replay.problem,
}
_BUILT: dict[str, Problem] = {}


def register_problem(problem: Problem) -> None:
    _BUILT[problem.name] = problem


def problem_names() -> list[str]:
    return sorted(set(BUILDERS) | set(PRESETS) | set(_BUILT))


def get_problem(name: str) -> Problem:
    """The problem registered under ``name``: a builder's, a walking preset's, or the
    walking problem a ``walking(...)`` key names (KeyError when there is none)."""
    if name not in _BUILT:
        if name in BUILDERS:
            _BUILT[name] = BUILDERS[name]()
        else:
            options = options_of_key(name)
            if options is None:
                raise KeyError(name)
            _BUILT[name] = walking_problem(options)
    return _BUILT[name]
