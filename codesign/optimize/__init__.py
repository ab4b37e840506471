"""Stage 5: Metamorphic PSO with lexicographic fitness, driven by ask()/tell().

Modules (one responsibility each):

- ``space``       pools of mutually exclusive groups of parameters; subspaces; freezing
- ``pso``         the inner layer: one constriction-PSO step (thesis §3.1.3)
- ``mmpso``       the optimizer: bests, inner PSO per subspace, migration by eq. 3.6 (§3.2)
- ``schedule``    P_e, P_l, P_g as functions of the iteration (Fig. 3.6 / 5.8)
- ``fitness``     lexicographic objectives and the comparison key (§3.3.2)
- ``problems``    the problem registry and the built-in test problems
- ``evaluation``  worker side: a candidate -> a checked EvalRecord, never raising
- ``driver``      ask -> evaluate -> tell -> store; start and resume runs
- ``command_*``   the `codesign optimize | resume | runs` subcommands

Minimal use, with any executor::

    optimizer = MMPSO(space, PSOSettings(40, 100), Migration(), seed=1)
    while not optimizer.done:
        candidates = optimizer.ask()
        optimizer.tell([evaluate(c) for c in candidates])
"""
