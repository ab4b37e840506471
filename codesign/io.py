"""File input and output shared by every command.

A reader (a person, a plot script, a resumed run) must never see a half-written file that
looks complete: everything is written to a temporary file in the target's folder and
renamed over the target (``os.replace`` is atomic on POSIX within one file system).
Where output goes is checked before the work that produces it (:func:`writable_folder`,
:func:`creatable_folder`: a new folder is made only when its files are written,
:func:`made_folder`). Every file a user names (a job spec, a design, a catalog) is read by
:func:`read_user_file`: a file that is missing, a folder, unreadable, not UTF-8 text or not
valid JSON / TOML is one :class:`UserError` line naming the file (and the line and column
where the parser gives them) and what was expected.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Iterator

from codesign.errors import UserError


def writable_folder(folder: str | os.PathLike, option: str, create: bool = True,
                    given: str | os.PathLike | None = None) -> Path:
    """``folder``, made if missing (``create``) and tried by writing a temporary file into
    it; a UserError (one line) naming ``option`` and its value ``given`` (default: the
    folder) when it cannot be written -- a file in the way, a read-only or impossible
    path -- so a command refuses before it does the work, not after."""
    folder = Path(folder)
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".codesign-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        reason = f"{blocker} is a file" if blocker is not None else exc.strerror or type(exc).__name__
        raise UserError(f"{option} {given if given is not None else folder}: cannot write there "
                        f"({reason}); expected a writable folder") from None
    return folder


def creatable_folder(folder: str | os.PathLike, option: str, given: str | os.PathLike | None = None) -> Path:
    """:func:`writable_folder`'s check without making anything: ``folder`` if it exists,
    else its nearest existing parent, must be a folder this process can write into. The
    command makes ``folder`` when it writes its files (:func:`made_folder`), so a command
    interrupted or failing before then leaves no empty folder behind."""
    folder = Path(folder)
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path.cwd())
    writable_folder(existing, option, create=False, given=given if given is not None else folder)
    return folder


@contextlib.contextmanager
def made_folder(folder: str | os.PathLike) -> Iterator[Path]:
    """``folder``, made (with its missing parents) for the block; on an exception in the
    block (a Ctrl-C, a failure) the folders made here are removed again, innermost first,
    as long as they are empty."""
    folder = Path(folder)
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    except BaseException:
        for p in made:
            with contextlib.suppress(OSError):
                p.rmdir()
        raise


def json_text(document: Any) -> str:
    """``document`` as strict JSON text (indented, keys sorted): NaN and infinities, which
    JSON lacks (Python would write bare ``NaN``, which strict parsers such as JavaScript's
    refuse), become ``null``; numpy numbers and arrays become plain numbers and lists."""
    def strict(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strict(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [strict(v) for v in value]
        if hasattr(value, "tolist"):                    # numpy arrays and scalars
            return strict(value.tolist())
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    return json.dumps(strict(document), indent=1, sort_keys=True, allow_nan=False)


USER_FORMATS = ("json", "toml")


def _one_line(name: str) -> str:
    """A file name for a one-line message (its line breaks spelled out)."""
    return name.replace("\r", "\\r").replace("\n", "\\n")


def read_user_text(path: str | os.PathLike, expected: str) -> str:
    """The text of a file a user named; a UserError (one line) naming the file and
    ``expected`` for a missing file, a folder, a file that cannot be read or bytes that are
    not UTF-8 text (the line and byte of the first bad one). A leading byte-order mark is
    dropped."""
    path = Path(path)
    name = _one_line(str(path))
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise UserError(f"{name}: cannot read (a folder); expected {expected}") from None
    except OSError as exc:
        raise UserError(f"{name}: cannot read ({exc.strerror or type(exc).__name__}); expected "
                        f"{expected}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"{name}: not UTF-8 text (line {line}, byte {exc.start}); expected "
                        f"{expected}") from None
    return text.removeprefix("\ufeff")


def parse_user_text(text: str, source: str, expected: str, format: str) -> Any:
    """The document in ``text`` (``format``: "json" or "toml") read from ``source`` (a
    file's name); a UserError (one line) naming ``source``, where the parser stopped and
    ``expected`` for text that is not valid JSON / TOML."""
    source = _one_line(source)
    if format == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}); expected {expected}") from None
        except RecursionError:
            raise UserError(f"{source}: not valid JSON (nested too deeply); expected {expected}") from None
    if format == "toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            reason = " ".join(str(exc).split())
            where = re.fullmatch(r"(.*) \(at (line \d+, column \d+)\)", reason)   # tomllib's wording
            reason = f"{where[2]}: {where[1]}" if where else reason
            raise UserError(f"{source}: not valid TOML ({reason}); expected {expected}") from None
        except RecursionError:
            raise UserError(f"{source}: not valid TOML (nested too deeply); expected {expected}") from None
    raise ValueError(f"format {format!r}; expected one of {', '.join(USER_FORMATS)}")


def read_user_file(path: str | os.PathLike, expected: str, format: str = "json") -> Any:
    """The JSON or TOML document (``format``) in a file a user named: the one reader of
    job specs, designs and catalogs. Anything that keeps it from being read -- a missing
    file, a folder, unreadable or non-UTF-8 bytes, a syntax error -- is a UserError of one
    line naming the file and ``expected`` (:func:`read_user_text`,
    :func:`parse_user_text`); what the document holds is the caller's to check."""
    return parse_user_text(read_user_text(path, expected), str(path), expected, format)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike, text: str | bytes) -> None:
    """Write ``text`` (str as UTF-8, or bytes) to ``path`` through a temporary file in the
    same folder and a rename. The file gets the usual permissions (0666 minus umask), not
    mkstemp's 0600. The parent folder must exist."""
    path = Path(path)
    data = text.encode() if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_csv_atomic(path: str | os.PathLike, rows: list[dict]) -> None:
    """Write ``rows`` (dicts sharing the keys of the first row, in that column order) as
    CSV with a header line, atomically (see ``write_text_atomic``)."""
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(path, buf.getvalue())


def save_figure_atomic(fig, path: str | os.PathLike, **savefig_kwargs) -> None:
    """Save a matplotlib Figure to ``path`` atomically; the format follows the suffix."""
    path = Path(path)
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".").lower() or "png", **savefig_kwargs)
    write_text_atomic(path, buf.getvalue())
