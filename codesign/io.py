"""Atomic file output shared by every command that writes results.

A reader (a person, a plot script, a resumed run) must never see a half-written file that
looks complete: everything is written to a temporary file in the target's folder and
renamed over the target (``os.replace`` is atomic on POSIX within one file system).
"""
from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path


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
