"""Benchmarks that print their figures next to a peer's (``codesign bench NAME``).

Each benchmark is a module in this package exposing ``DESCRIPTION: str`` and
``run(args) -> int``; it prints a table, writes ``results/bench/NAME.csv``, and always
measures a peer in the same run (MuJoCo, Pinocchio, a serial executor ...). Performance
claims in the docs come from here, never from timed unit tests. The command is
:mod:`codesign.commands.bench`.
"""

# benchmark name -> module (created by the issue that owns the subject)
BENCHMARKS: dict[str, str] = {
    "engine": "codesign.bench.engine",
    "screen": "codesign.bench.screen",
    "evaluate": "codesign.bench.evaluate",
    "runner": "codesign.bench.runner",
    "storage": "codesign.bench.storage",
    "coldstart": "codesign.bench.coldstart",
    "scaling": "codesign.bench.scaling",
    "search": "codesign.bench.search",
    "mujoco": "codesign.bench.mujoco",
    "loads": "codesign.bench.loads",
}
