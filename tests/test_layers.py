"""The house stays as built: imports flow one way between the layers of ``codesign/`` and no
two files import each other, counting every import statement (module level and inside
functions). docs/ARCHITECTURE.md draws the same layers."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1] / "codesign"

# lowest first; a unit imports only units of a lower rank (or itself). Core is one unit.
LAYERS = [
    ("core", {"codesign", "types", "errors", "io", "objectives", "interrupts", "numba_cache"}),
    ("engine", {"topology", "dynamics"}),
    ("model", {"model"}),
    ("screening/control", {"screening", "control"}),
    ("walking", {"walking"}),
    ("problems", {"problems"}),
    ("optimize", {"optimize"}),
    ("run", {"run"}),
    ("report/analysis", {"report", "analysis"}),
    ("bench", {"bench"}),
    ("commands", {"commands"}),
    ("cli", {"cli"}),
]
RANK = {unit: rank for rank, (_name, units) in enumerate(LAYERS) for unit in units}
CORE = LAYERS[0][1]


def source_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every source file (generated code excluded)."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        if "_specialized" in path.parts:
            continue
        parts = ("codesign",) + path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(modules: dict[str, Path]) -> nx.DiGraph:
    """importer -> imported module, for every import of a codesign module anywhere in a
    file. ``from pkg import name`` counts as an import of ``pkg.name`` when that is a
    module, else of ``pkg``; an import of a name that is not a module resolves to its
    nearest enclosing module."""
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                names = [f"{base}.{alias.name}" for alias in node.names]
                targets = [n for n in names if n in modules] or [base]
            for target in targets:
                if target.split(".")[0] != "codesign":
                    continue
                resolved = resolve(target)
                if resolved and resolved != module:
                    graph.add_edge(module, resolved)
    return graph


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "codesign"


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return import_graph(source_modules())


def test_every_package_has_a_layer(graph):
    assert {unit(m) for m in graph} <= set(RANK), sorted({unit(m) for m in graph} - set(RANK))


def test_imports_flow_one_way_between_layers(graph):
    wrong = sorted(f"{a} -> {b}" for a, b in graph.edges
                   if unit(a) != unit(b) and not (unit(a) in CORE and unit(b) in CORE)
                   and RANK[unit(b)] >= RANK[unit(a)])
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_no_two_files_import_each_other(graph):
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, f"import cycles between files: {cycles}"


def test_the_walking_library_knows_nothing_of_runs():
    """walking/ is a pure evaluation library (issue 14): no optimizer, spec, store,
    executor, report or command."""
    graph = import_graph(source_modules())
    banned = ("problems", "optimize", "run", "report", "analysis", "commands", "bench", "cli")
    found = sorted(f"{a} -> {b}" for a, b in graph.edges if unit(a) == "walking" and unit(b) in banned)
    assert not found, found


def test_the_checker_sees_a_violation(tmp_path):
    """The graph is read from the sources as they are: an upward import inside a function,
    a cycle between two files, both found (so a green test means something)."""
    pkg = tmp_path / "codesign"
    (pkg / "walking").mkdir(parents=True)
    (pkg / "run").mkdir()
    for folder in (pkg, pkg / "walking", pkg / "run"):
        (folder / "__init__.py").write_text("")
    (pkg / "walking" / "a.py").write_text("def f():\n    from codesign.run import b\n")
    (pkg / "run" / "b.py").write_text("from codesign.walking import a\n")
    modules = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = ("codesign",) + path.relative_to(pkg).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    g = import_graph(modules)
    assert g.has_edge("codesign.walking.a", "codesign.run.b")
    assert g.has_edge("codesign.run.b", "codesign.walking.a")
    assert RANK["run"] > RANK["walking"]


def test_the_compiled_code_key_covers_what_compiled_code_reaches(graph):
    """numba's disk cache is keyed by a digest of only the core files and
    ``codesign.COMPILED_PACKAGES`` (an edit elsewhere keeps the compiled code). That is
    sound only if every module with a compiled kernel is hashed and every hashed module
    imports only hashed modules: a kernel can link in code (or read constants) from any
    module it imports, and numba's own staleness check sees only the kernel's file."""
    import codesign

    def hashed(module: str) -> bool:
        parts = module.split(".")
        if len(parts) == 1 or f"{parts[1]}.py" in codesign.CORE_FILES:
            return True
        return parts[1] in codesign.COMPILED_PACKAGES

    modules = source_modules()
    with_kernels = sorted(m for m, path in modules.items() if "njit" in path.read_text(encoding="utf-8"))
    assert "codesign.walking.stepping" in with_kernels and "codesign.analysis.walkers" in with_kernels
    assert all(hashed(m) for m in with_kernels), [m for m in with_kernels if not hashed(m)]
    leaks = sorted(f"{a} -> {b}" for a, b in graph.edges if hashed(a) and not hashed(b))
    assert not leaks, "compiled code could reach sources outside its cache key:\n" + "\n".join(leaks)
    assert not hashed("codesign.run.store") and not hashed("codesign.cli")


MAX_LINES = 600


def test_no_source_file_is_over_600_lines():
    """One responsibility per module keeps modules short: no file under codesign/ over
    MAX_LINES lines (generated code excluded), so a long one is split by responsibility."""
    lengths = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
               for path in sorted(ROOT.rglob("*.py")) if "_specialized" not in path.parts}
    over = sorted(f"{name}: {n} lines" for name, n in lengths.items() if n > MAX_LINES)
    assert not over, f"files over {MAX_LINES} lines (split them by responsibility):\n" + "\n".join(over)
