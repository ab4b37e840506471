"""The index of the stored designs (``docs/designs/README.md``), written from the design
files themselves and the folder's ``index.toml`` (``codesign designs index``).

Two sources, kept apart in the index so that a reader sees where each column comes from:

* **the design file** (read now): topology, actuated joints, the number of parameters and
  what they hold (an assistance profile, searched drivetrains), the evaluation settings
  the file carries, and the problem it records (files written before designs carried
  their problem record none; the index says so rather than guessing);
* **index.toml** (written by hand when a design is stored): whether the project
  recommends the design or keeps it because something reproduces it, what it is, the
  spec and problem that made it, the study it belongs to (``studies/<study>/``), its
  verdict and key numbers as measured by the command named in ``measured``, and the test
  that replays it against those numbers (``checked_by``). The index does not re-measure
  them: a 10-s replay per design is the tests' job (``checked_by``), not the index's.

Every design file in the folder must have an entry and every entry a file; anything
else is one line naming the file and what was expected (:class:`UserError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codesign.errors import UserError
from codesign.io import read_user_file, write_text_atomic

INDEX_FILE = "index.toml"
README_FILE = "README.md"
STATUSES = ("recommended", "reproduces")
ENTRY_KEYS = ("file", "status", "what", "made_by", "problem", "study", "verdict", "numbers", "measured",
              "checked_by")
PROBLEM_NOT_RECORDED = "not recorded in the file"


@dataclass(frozen=True)
class IndexEntry:
    """What ``index.toml`` says of one design (every field text, as written there)."""

    file: str           # the design's file name in the folder
    status: str         # one of STATUSES
    what: str           # one line: what the design is
    made_by: str        # the spec (path from the repository root) or command that made it
    problem: str        # the problem of that spec
    study: str          # its study folder's name under studies/
    verdict: str        # as `codesign simulate` printed it
    numbers: str        # key numbers, with units
    measured: str       # the command (and settings) that measured verdict and numbers
    checked_by: str     # the test file replaying it against them, or "" (none)


@dataclass(frozen=True)
class FileFacts:
    """What a design file says of itself."""

    file: str
    topology: int | None            # None: a human-gait design (no device)
    actuators: tuple[int, ...]
    parameters: int
    assist: bool                    # holds an assistance profile (assist.*)
    drivetrains: int                # actuated joints whose motor the file holds (*.motor)
    settings: tuple[tuple[str, str], ...]   # the evaluation settings it carries, as text
    problem: str                    # the problem it records, or PROBLEM_NOT_RECORDED


def _text(entry: dict, key: str, where: str, required: bool = True) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise UserError(f"{where}.{key}: {value!r}; expected a non-empty string")
    return value.strip()


def parse_index(path: Path) -> tuple[IndexEntry, ...]:
    """The entries of an ``index.toml`` ([[design]] tables), checked: known keys only,
    every field a string, a known status, no file twice."""
    doc = read_user_file(path, "a design index TOML file ([[design]] tables)", "toml")
    tables = doc.get("design") if isinstance(doc, dict) else None
    if not isinstance(tables, list) or set(doc) != {"design"}:
        raise UserError(f"{path}: expected only [[design]] tables")
    entries = []
    for k, table in enumerate(tables):
        where = f"{path}: design[{k}]"
        unknown = sorted(set(table) - set(ENTRY_KEYS))
        if unknown:
            raise UserError(f"{where}: unknown key {unknown[0]!r}; expected {', '.join(ENTRY_KEYS)}")
        entry = IndexEntry(**{key: _text(table, key, where, key != "checked_by") for key in ENTRY_KEYS})
        if entry.status not in STATUSES:
            raise UserError(f"{where}.status: {entry.status!r}; expected one of {', '.join(STATUSES)}")
        if any(e.file == entry.file for e in entries):
            raise UserError(f"{where}.file: {entry.file!r} listed twice; expected one entry per design")
        entries.append(entry)
    return tuple(entries)


def _setting_text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def file_facts(path: Path) -> FileFacts:
    """What the design file at ``path`` says of itself (read as JSON, nothing replayed)."""
    doc = read_user_file(path, "a design JSON file")
    if not isinstance(doc, dict) or not isinstance(doc.get("params"), dict):
        raise UserError(f"{path}: expected a design JSON object with a \"params\" table")
    params = doc["params"]
    recorded = doc.get("problem")
    if isinstance(recorded, dict):
        options = ", ".join(f"{k} = {_setting_text(v)}" for k, v in sorted(recorded.items()) if k != "name")
        problem = f"{recorded.get('name', '?')}" + (f" ({options})" if options else "")
    elif isinstance(recorded, str):
        problem = recorded
    else:
        problem = PROBLEM_NOT_RECORDED
    carried = doc.get("evaluation") or {}
    return FileFacts(
        file=path.name,
        topology=doc.get("topology"),
        actuators=tuple(doc.get("actuators") or ()),
        parameters=len(params),
        assist=any(name.startswith("assist.") for name in params),
        drivetrains=sum(name.endswith(".motor") for name in params),
        settings=tuple((str(k), _setting_text(v)) for k, v in sorted(carried.items())),
        problem=problem)


def check_entry(entry: IndexEntry, root: Path, where: str) -> None:
    """The entry's study folder, its spec (when it names a file) and its test exist."""
    if not (root / "studies" / entry.study).is_dir():
        raise UserError(f"{where}: study {entry.study!r}: no folder studies/{entry.study}; expected a study's folder")
    spec = entry.made_by.split()[0]
    if spec.endswith(".toml") and not (root / spec).is_file():
        raise UserError(f"{where}: made_by {spec!r}: no such file; expected a spec's path from the repository root")
    if entry.checked_by:
        test = root / entry.checked_by
        if not test.is_file():
            raise UserError(f"{where}: checked_by {entry.checked_by!r}: no such file; expected a test file")


def _device(facts: FileFacts) -> str:
    if facts.topology is None:
        return "the human alone"
    actuators = "-".join(str(a) for a in facts.actuators)
    return f"topology {facts.topology}, actuators {actuators}"


def _holds(facts: FileFacts) -> str:
    parts = [f"{facts.parameters} parameters"]
    if facts.assist:
        parts.append("an assistance profile")
    if facts.drivetrains:
        parts.append(f"{facts.drivetrains} drivetrains")
    text = ", ".join(parts)
    if facts.settings:
        text += "; settings " + ", ".join(f"{k} = {v}" for k, v in facts.settings)
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def index_markdown(folder: Path, root: Path) -> str:
    """The text of ``folder/README.md``: one row per design, recommended first."""
    index = folder / INDEX_FILE
    entries = parse_index(index)
    files = sorted(p.name for p in folder.glob("*.json"))
    listed = [e.file for e in entries]
    missing = [name for name in files if name not in listed]
    if missing:
        raise UserError(f"{index}: no entry for {missing[0]}; expected one [[design]] per design file in {folder}")
    for k, entry in enumerate(entries):
        if entry.file not in files:
            raise UserError(f"{index}: design[{k}].file: {entry.file!r}: not in {folder}; expected a design "
                            f"file there (a design moved to its study leaves the index)")
        check_entry(entry, root, f"{index}: design[{k}]")
    facts = {name: file_facts(folder / name) for name in files}
    lines = [
        "# Stored designs",
        "",
        "Written by `codesign designs index` from the design files and [index.toml](index.toml);",
        "do not edit by hand (`tests/report/test_design_index.py` checks that it is current).",
        "**Recommended**: what the project recommends; **reproduces**: kept because a study, a",
        "spec, a test or a benchmark replays it. Failures and superseded parents live with",
        "their study under [studies/](../../studies/README.md).",
        "",
        "Where the columns come from: *device*, *the file holds* and *problem (as the file",
        "records it)* are read from each design file now; *made by*, *verdict* and *key",
        "numbers* are what index.toml states, measured by the command in its `measured` field",
        "(a 10-s replay); *checked by* is the test that replays the design against them (none:",
        "not re-checked). Replay any design with `codesign simulate docs/designs/FILE`.",
        "",
    ]
    for status in STATUSES:
        rows = [e for e in entries if e.status == status]
        lines += [f"## {status.capitalize()}", "",
                  "| design | what it is | device | the file holds | problem (as the file records it) | "
                  "made by | verdict | key numbers | study | checked by |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for e in rows:
            f = facts[e.file]
            checked = f"`{e.checked_by}`" if e.checked_by else "none"
            lines.append("| " + " | ".join(_cell(c) for c in (
                f"[`{e.file}`]({e.file})", e.what, _device(f), _holds(f), f.problem,
                f"`{e.made_by}` ({e.problem})", e.verdict, e.numbers,
                f"[{e.study}](../../studies/{e.study}/README.md)", checked)) + " |")
        lines.append("")
    lines += ["How each verdict and number was measured:", ""]
    lines += [f"- `{e.file}`: {e.measured}" for e in entries]
    return "\n".join(lines) + "\n"


def write_index(folder: Path, root: Path) -> Path:
    """Write ``folder/README.md`` (atomically); returns its path."""
    path = folder / README_FILE
    write_text_atomic(path, index_markdown(folder, root))
    return path
