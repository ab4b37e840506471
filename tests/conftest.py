"""The suite's order: the tests marked ``peers`` (they run the event-driven or soft
rollouts) after the others. ``make test`` compiles those rollouts in a process of its own
(``codesign warmup --peers-in-background``, minutes of CPU) while the others run, and a
peer test that comes first waits for that compile (``codesign.walking.compiled``)."""

from __future__ import annotations


def pytest_collection_modifyitems(items) -> None:
    """Move the tests marked ``peers`` to the end, each group in its collected order."""
    items.sort(key=lambda item: item.get_closest_marker("peers") is not None)
