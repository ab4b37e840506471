"""Command-line option parsing that several commands share."""

from __future__ import annotations

import json

from codesign.errors import UserError


def settings_overrides(text: str) -> dict:
    """The ``--settings`` option: a JSON object of evaluation settings (UserError, one line,
    for anything else)."""
    try:
        overrides = json.loads(text)
    except json.JSONDecodeError:
        raise UserError(f"--settings: {text!r}; expected a JSON object") from None
    if not isinstance(overrides, dict):
        raise UserError("--settings: expected a JSON object")
    return overrides
