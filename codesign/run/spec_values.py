"""The typed readers of a job spec's values (:mod:`codesign.run.spec`, :mod:`codesign.run.study_spec`):
each checks one key of a TOML table and raises :class:`Invalid` naming the key path,
what was found and what was expected; the spec's parser turns it into one
:class:`~codesign.errors.UserError` line prefixed with the spec's source."""

from __future__ import annotations

import math
from typing import Any

from codesign.errors import UserError, nearest, shown


class Invalid(Exception):
    """One bad value of a spec (the message without the spec's source)."""


def one_line_error(message: str) -> UserError:
    """A UserError kept on one line (names from the spec may hold line breaks)."""
    return UserError(message.replace("\r", "\\r").replace("\n", "\\n"))


def fail(path: str, got: Any, expected: str) -> None:
    raise Invalid(f"{path}: got {shown(got)}; expected {expected}")


def check_table(data: Any, path: str, allowed: tuple[str, ...]) -> dict:
    if not isinstance(data, dict):
        fail(path or "spec", data, "a table")
    for key in data:
        if key not in allowed:
            where = f"{path}.{key}" if path else key
            raise Invalid(f"{where}: unknown key{nearest(key, allowed)}; expected one of {', '.join(allowed)}")
    return data


def user_table(data: Any, path: str) -> dict:
    """A table whose keys are user names (parameters, pools)."""
    if not isinstance(data, dict):
        fail(path, data, "a table")
    return data


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def read_int(data: dict, key: str, path: str, default: int, low: int = 0, high: int = 2**62) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        fail(_join(path, key), value, f"an integer >= {low}" if high == 2**62 else f"an integer in [{low}, {high}]")
    return value


def read_float(data: dict, key: str, path: str, default: float | None,
           low: float = -math.inf, high: float = math.inf) -> float | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        bounds = "" if (low, high) == (-math.inf, math.inf) else f" in [{low:g}, {high:g}]"
        fail(_join(path, key), value, f"a finite number{bounds}")
    return float(value)


def read_bool(data: dict, key: str, path: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        fail(_join(path, key), value, "true or false")
    return value


def read_str(data: dict, key: str, path: str, default: str, choices: tuple[str, ...] = ()) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or (choices and value not in choices):
        fail(_join(path, key), value, f"one of {', '.join(choices)}" if choices else "a string")
    return value


def read_names(value: Any, path: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        fail(path, value, "a list of names (strings)")
    if len(set(value)) != len(value):
        fail(path, value, "names without repetition")
    return tuple(value)


def read_range(value: Any, path: str) -> tuple[float, float]:
    if (not isinstance(value, list) or len(value) != 2
            or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                   for v in value) or not value[0] < value[1]):
        fail(path, value, "[low, high] with finite numbers, low < high")
    return float(value[0]), float(value[1])
