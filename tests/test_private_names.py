"""No package reaches into another's private names: a name with a leading underscore is
its module's (and its package's) business. The test reads every source file with ``ast``
and fails on ``from codesign.<other package>... import _name`` and on ``alias._name`` where
``alias`` was bound by an import from another package of ``codesign``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "codesign"


def package_of(module: str) -> str:
    """The package (second dotted component) of a ``codesign`` module; "" for the core."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else ""


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def foreign_private_uses(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, what) of every private name of another package that the module uses."""
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("codesign"):
            for alias in node.names:
                other = package_of(f"{node.module}.{alias.name}") if node.module == "codesign" else package_of(node.module + ".x")
                if other != package:
                    if private(alias.name):
                        found.append((node.lineno, f"{node.module}.{alias.name}"))
                    aliases[alias.asname or alias.name] = other
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("codesign.") and alias.asname:
                    if package_of(alias.name + ".x") != package:
                        aliases[alias.asname] = package_of(alias.name + ".x")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases:
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


def test_no_package_uses_another_packages_private_names():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if "_specialized" in path.parts:
            continue
        module = ".".join(("codesign",) + path.relative_to(ROOT).with_suffix("").parts)
        for line, what in foreign_private_uses(ast.parse(path.read_text()), package_of(module)):
            offenders.append(f"{path.relative_to(ROOT.parent)}:{line}: {what}")
    assert not offenders, "private names used across packages:\n" + "\n".join(offenders)


def test_the_checker_sees_a_foreign_private_name():
    source = '''
from codesign.report import gait as figures
from codesign.walking.setup import _wr_rows, build_setup
import codesign.problems.exo_codesign as pb

def f(model, q):
    return figures._segments(model, q), pb._load("x"), figures.gait_figure
'''
    assert foreign_private_uses(ast.parse(source), "commands") == [
        (3, "codesign.walking.setup._wr_rows"), (7, "figures._segments"), (7, "pb._load")]
    assert foreign_private_uses(ast.parse(source), "walking") == [(7, "figures._segments"), (7, "pb._load")]
