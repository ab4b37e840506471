"""`codesign check SPEC`: judge a job spec as `codesign optimize` would, and run nothing.

    codesign check pipelines/demo.toml

The same checks, by the same code, that `codesign optimize` makes before it creates a run
(:func:`codesign.run.spec.load_spec`, then :func:`codesign.run.driver.new_optimizer` and
:func:`codesign.run.driver.check_run`): every key of every table, the files the spec names
(``space.start_design``, ``space.start_designs``, the ``[evaluation]`` table's catalog,
designs and runs as its problem reads them), the problem and its options, the search space,
the objectives' metrics and the ``[evaluation]`` settings, parsed by the problem into its
settings record. Bad input: one line naming the key, what was found and what was expected
-- for an unknown key, option or name the nearest valid one ("did you mean max_time?") --
and exit status 2. A good spec: one line saying what a run of it would be, exit 0.
Nothing is written and no evaluation runs.
"""

from __future__ import annotations

import argparse

HELP = "check a job spec (keys, problem, space, objectives, settings, files it names) without running it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", help="job spec, e.g. pipelines/demo.toml")


def run(args: argparse.Namespace) -> int:
    from codesign.run.driver import check_run, new_optimizer
    from codesign.run.spec import check_run_name, load_spec

    spec = load_spec(args.spec)
    check_run_name(spec.name or "run", f"{spec.source}: name")
    space = new_optimizer(spec).space
    problem, settings = check_run(spec)
    walk = getattr(settings, "walk", None)
    seconds = f", {walk.rollout.max_time:g} s per evaluation" if walk is not None else ""
    objectives = len(spec.objectives or problem.objectives)
    print(f"{spec.source}: ok -- problem {problem.name}, {space.n_subspaces} subspace"
          f"{'s' if space.n_subspaces != 1 else ''}, {spec.pso.particles} particles x {spec.pso.iterations} "
          f"iterations ({spec.algorithm}){seconds}, {objectives} objective{'s' if objectives != 1 else ''}; "
          f"run it with: codesign {'study' if spec.study is not None else 'optimize'} {args.spec}")
    return 0
