"""A run whose evaluation period is far beyond the thesis's 10 s is warned of its cost
before it starts (issue 34, item 6): one line with the factor and the CPU time per
evaluation of a design that walks; an ordinary period says nothing."""

from __future__ import annotations

from codesign.problems.walking import CPU_PER_SIMULATED_S
from codesign.run.driver import check_run
from codesign.run.spec import parse_spec


def spec(problem: str, max_time: float) -> str:
    algorithm = "pso" if problem == "human_gait" else "mmpso"
    return (f'[problem]\nname = "{problem}"\n[optimizer]\nalgorithm = "{algorithm}"\nparticles = 2\n'
            f'iterations = 1\n[evaluation]\nmax_time = {max_time}\n')


def test_a_long_evaluation_period_is_warned_of_its_cost(capsys):
    for problem in ("human_gait", "exo_codesign"):
        check_run(parse_spec(spec(problem, 100000.0)))
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("warning: evaluation.max_time = 100000 s is 1e+04 times the thesis's 10 s")
        assert f"~{CPU_PER_SIMULATED_S * 100000:.3g} s of CPU per evaluation" in line
        check_run(parse_spec(spec(problem, 10.0)))
        assert capsys.readouterr().err == ""
