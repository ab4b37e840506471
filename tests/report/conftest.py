"""Shared helpers of the report tests."""

import json
import math
import sqlite3
import struct
from pathlib import Path

import pytest


def _db_rows(run_folder: Path, kind: str) -> list[tuple[int, int, str, float]]:
    """(iteration, particle, name, value) of every stored parameter (``kind`` = "params")
    or metric ("metrics"), straight from SQLite and unpacked by hand as the store's
    docstring specifies it (little-endian float64 in the order of the name set; independent
    of the store's readers and of the report)."""
    names_column = {"params": "param_names", "metrics": "metric_names"}[kind]
    with sqlite3.connect(run_folder / "run.sqlite") as con:
        rows = con.execute(f"SELECT e.iteration, e.particle, n.names_json, e.{kind} FROM evaluations e "
                           f"JOIN name_sets n ON n.set_id = e.{names_column}").fetchall()
    out = []
    for iteration, particle, names_json, blob in rows:
        names = json.loads(names_json)
        out += [(iteration, particle, n, v) for n, v in zip(names, struct.unpack(f"<{len(names)}d", blob))]
    return out


def _db_values(run_folder: Path, kind: str, key) -> dict[str, float]:
    """name -> value of one evaluation (NaN left out), from :func:`_db_rows`."""
    return {n: v for i, p, n, v in _db_rows(run_folder, kind) if (i, p) == tuple(key) and not math.isnan(v)}


@pytest.fixture
def db_values():
    return _db_values


@pytest.fixture
def db_rows():
    return _db_rows
