"""The registered optimization problems: name -> :class:`~codesign.problems.base.Problem`.

Test functions (``six_hump_camel``, ``lexicographic_six_hump``, ``mmpso_toy``, ``sphere``;
:mod:`codesign.problems.test_functions`) and the walking problems: ``exo_codesign``
(thesis chapter 5, :mod:`codesign.problems.exo_codesign`; ``exo_codesign_balance`` the same
with the WR's torso feedback, ``exo_codesign_wearer`` with the control in the wearer's
joint space, ``exo_codesign_wearer_drive`` with the drivetrains searched too, ``exo_codesign_drive``
the thesis's law with them, ``exo_codesign_wearer_balance_drive`` the wearer-space law with the hip's torso term; ``exo_assist``, a device assisting an active wearer,
:mod:`codesign.problems.exo_assist`; ``exo_assist_wearer``, the wearer adapting to a frozen one,
:mod:`codesign.problems.wearer_adapt`), ``human_gait`` (chapter 4,
:mod:`codesign.problems.human_gait`; ``human_gait_balance`` with the hip servoing the torso) and ``anthropomorphic_baseline`` (5.6,
:mod:`codesign.problems.baseline`), and ``replay`` (sleeps for recorded evaluation costs in
the co-design space: ``codesign bench scaling``, :mod:`codesign.problems.replay`). A problem is built on first use (the co-design space
needs the topology catalog) and cached per process. :func:`register_problem` adds one at
run time (tests; it must then be registered on the workers too).
"""

from __future__ import annotations

from typing import Callable

from codesign.problems import baseline, exo_assist, exo_codesign, human_gait, replay, test_functions, wearer_adapt
from codesign.problems.base import Problem

BUILDERS: dict[str, Callable[[], Problem]] = {
    "six_hump_camel": lambda: test_functions.SIX_HUMP_CAMEL,
    "lexicographic_six_hump": lambda: test_functions.LEXICOGRAPHIC_SIX_HUMP,
    "mmpso_toy": lambda: test_functions.MMPSO_TOY,
    "sphere": lambda: test_functions.SPHERE,
    "exo_codesign": exo_codesign.problem,
    "exo_codesign_balance": lambda: exo_codesign.problem(exo_codesign.BALANCE),
    "exo_codesign_wearer": lambda: exo_codesign.problem(exo_codesign.WEARER),
    "exo_codesign_wearer_drive": lambda: exo_codesign.problem(exo_codesign.WEARER_DRIVE),
    "exo_codesign_drive": lambda: exo_codesign.problem(exo_codesign.THESIS_DRIVE),
    "exo_codesign_wearer_balance_drive": lambda: exo_codesign.problem(exo_codesign.WEARER_BALANCE_DRIVE),
    "exo_assist": exo_assist.problem,
    "exo_assist_wearer": wearer_adapt.problem,
    "human_gait": human_gait.problem,
    "human_gait_balance": human_gait.balance_problem,
    "anthropomorphic_baseline": baseline.problem,
    "replay": replay.problem,
}
_BUILT: dict[str, Problem] = {}


def register_problem(problem: Problem) -> None:
    _BUILT[problem.name] = problem


def problem_names() -> list[str]:
    return sorted(set(BUILDERS) | set(_BUILT))


def get_problem(name: str) -> Problem:
    """The problem registered under ``name`` (KeyError when there is none)."""
    if name not in _BUILT:
        _BUILT[name] = BUILDERS[name]()
    return _BUILT[name]
