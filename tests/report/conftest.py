"""Shared helpers of the report tests."""

import sqlite3
from pathlib import Path

import pytest


def _db_values(run_folder: Path, table: str, key) -> dict[str, float]:
    """name -> value of one evaluation straight from SQLite (independent of the report)."""
    with sqlite3.connect(run_folder / "run.sqlite") as con:
        return dict(con.execute(f"SELECT name, value FROM {table} WHERE iteration = ? AND "
                                "particle = ? AND value IS NOT NULL", key))


@pytest.fixture
def db_values():
    return _db_values
