"""The ``[evaluation]`` table is read in one place per problem: its ``parse_settings`` (and
WALK's ``WalkSettings.from_dict``), which turn it into a frozen, typed record. Everywhere
else reads fields of that record. This test reads every source file with ``ast`` and fails
on a string-keyed read of the settings outside those parsers:

* ``X["key"]``, ``X.get("key")`` or ``"key" in X`` where X is named like a settings table
  (``settings``, ``*_settings``, ``evaluation``, ``settings_doc``), whatever the key, or
* the same with any receiver when the key is one of the evaluation settings' names (the
  fields of the problems' settings records, gathered from the records themselves).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from codesign.problems.baseline import KEYS as BASELINE_KEYS
from codesign.problems.replay import ReplaySettings
from codesign.problems.test_functions import SphereSettings
from codesign.walking.rollout_base import RolloutSettings
from codesign.walking.settings import WalkSettings

ROOT = Path(__file__).resolve().parents[1] / "codesign"
TABLE_NAME = re.compile(r"(^|_)settings$|^evaluation$|^settings_doc$")
# less the keys that are also ordinary words of other records (a design file's "actuators",
# the load screening's rows' "loads" ...)
SETTING_KEYS = ({f.name for f in dataclasses.fields(RolloutSettings)}
                | {f.name for f in dataclasses.fields(WalkSettings)}
                | {f.name for f in dataclasses.fields(SphereSettings)}
                | {f.name for f in dataclasses.fields(ReplaySettings)}
                | set(BASELINE_KEYS) | {"actuator_model"}) - {"rollout", "h", "mu", "actuators", "loads"}


def is_parser(name: str) -> bool:
    """The functions allowed to read the table by key."""
    return name.startswith("parse_") or name in ("from_dict", "actuators_from_dict")


def receiver_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def keyed_reads(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, receiver, key) of every string-keyed read of a settings table outside the
    parsers in a module's syntax tree."""
    found = []

    def visit(node: ast.AST, inside_parser: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside_parser = inside_parser or is_parser(node.name)
        hit = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            hit = (node.value, node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            hit = (node.func.value, node.args[0].value)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            hit = (node.comparators[0], node.left.value)
        if hit is not None and not inside_parser:
            receiver, key = receiver_name(hit[0]), hit[1]
            if TABLE_NAME.search(receiver) or key in SETTING_KEYS:
                found.append((node.lineno, receiver, key))
        for child in ast.iter_child_nodes(node):
            visit(child, inside_parser)

    visit(tree, False)
    return found


def test_the_evaluation_settings_are_read_by_key_only_in_their_parsers():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if "_specialized" in path.parts:
            continue
        for line, receiver, key in keyed_reads(ast.parse(path.read_text())):
            offenders.append(f"{path.relative_to(ROOT.parent)}:{line}: {receiver}[{key!r}]")
    assert not offenders, "string-keyed reads of the evaluation settings outside parse_settings:\n" + \
        "\n".join(offenders)


def test_the_checker_sees_a_keyed_read():
    source = '''
def evaluate(params, context):
    return context.settings.get("max_time", 10.0)

def parse_settings(table):
    return table["max_time"]

def other(doc):
    return doc["baseline_of"], "catalog" in doc, doc["name"]
'''
    assert keyed_reads(ast.parse(source)) == [(3, "settings", "max_time"), (9, "doc", "baseline_of"),
                                              (9, "doc", "catalog")]
