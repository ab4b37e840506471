"""The ``replay`` problem: each evaluation sleeps for a recorded cost, in the co-design space.

What ``codesign bench scaling`` runs through the real driver, executor and store to
measure how busy the workers are kept: the evaluation of particle p at iteration i
sleeps for ``cost[i, p]`` seconds, taken from a *cost profile* (the wall times a real run
recorded), so the schedule's shape is the real run's while the evaluations need no cores
(64 sleeping workers fit on a 2-core machine).

The search space is the co-design problem's (126 subspaces, ~1500 parameters, from the
topology catalog), so the driver's ask, tell and store write cost what they cost in a
co-design run. The fitness ``f`` = sum of the squared parameters (something for the
swarm to move on; the costs do not depend on it). A record carries ``f``, ``cost_s`` (the
replayed cost) and ``filler`` metrics up to the profile's ``metrics`` count, so the store
writes as many metric rows per evaluation as the recorded run did.

Cost profile (JSON, :func:`write_profile` / :func:`read_profile`)::

    {"format": "codesign-cost-profile", "version": 1,
     "provenance": "what was run, where, how many iterations",
     "particles": P, "iterations": N, "metrics": M, "unit_s": 0.0001,
     "costs": [[c_0_0, ..., c_0_(P-1)], ...]}     integers, cost = c * unit_s seconds

A path ending in ``.gz`` is written gzipped; a gzipped profile is read whatever its name.

Setting: ``[evaluation] profile = "PATH"`` (a profile file). An iteration beyond the
profile's is a failed record naming it.
"""

from __future__ import annotations

import gzip
import json
import math
import time
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, NamedTuple

import numpy as np

from codesign.errors import UserError, shown
from codesign.objectives import Objective
from codesign.problems import exo_codesign
from codesign.topology.catalog import cached_catalog
from codesign.problems.base import Problem
from codesign.types import EvalContext, EvalRecord

FORMAT = "codesign-cost-profile"
VERSION = 1
UNIT_S = 1e-4       # the profile's integer costs are in units of 0.1 ms


class CostProfile(NamedTuple):
    """Recorded evaluation costs: ``costs[i, p]`` seconds for particle p at iteration i."""

    costs: np.ndarray        # (iterations, particles) float64, s
    provenance: str
    metrics: int = 2         # metrics per evaluation in the recorded run (mean, rounded)

    @property
    def iterations(self) -> int:
        return int(self.costs.shape[0])

    @property
    def particles(self) -> int:
        return int(self.costs.shape[1])


def write_profile(path: str | Path, profile: CostProfile) -> None:
    """Write a cost profile as compact JSON (costs rounded to 0.1 ms)."""
    ticks = np.rint(np.asarray(profile.costs, dtype=float) / UNIT_S).astype(np.int64)
    data = {"format": FORMAT, "version": VERSION, "provenance": profile.provenance,
            "particles": profile.particles, "iterations": profile.iterations,
            "metrics": int(profile.metrics), "unit_s": UNIT_S}
    head = json.dumps(data, indent=1)[:-2]
    rows = ",\n  ".join(json.dumps(row) for row in ticks.tolist())
    text = f'{head},\n "costs": [\n  {rows}\n ]\n}}\n'.encode("utf-8")
    # mtime 0: the same profile gives the same bytes
    Path(path).write_bytes(gzip.compress(text, mtime=0) if str(path).endswith(".gz") else text)


def read_profile(path: str | Path) -> CostProfile:
    """Read and check a cost profile; one UserError line for anything wrong."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = json.loads((gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8"))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read the cost profile ({type(exc).__name__}); expected a "
                        f"JSON file written by `codesign bench scaling`") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise UserError(f"{path}: not a cost profile; expected format {FORMAT!r} version {VERSION}")
    try:
        costs = np.asarray(data["costs"], dtype=float) * float(data["unit_s"])
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{path}: costs: expected a list of equally long lists of integers") from None
    if costs.ndim != 2 or costs.size == 0 or not np.all(np.isfinite(costs)) or np.any(costs < 0):
        raise UserError(f"{path}: costs: expected a non-empty table of finite costs >= 0 "
                        f"(iterations x particles)")
    if costs.shape != (data.get("iterations"), data.get("particles")):
        raise UserError(f"{path}: costs: {costs.shape[0]} x {costs.shape[1]}; expected iterations x "
                        f"particles = {data.get('iterations')} x {data.get('particles')}")
    return CostProfile(costs, str(data.get("provenance", "")), int(data.get("metrics", 2)))


@lru_cache(maxsize=4)
def _costs(path: str) -> np.ndarray:
    """The cost table of a profile, read once per process (worker)."""
    return read_profile(path).costs


# filler metrics a replayed evaluation may report (a walking record has ~37 metrics)
MAX_FILLER = 62
METRICS = ("f", "cost_s", *(f"filler_{k:03d}" for k in range(MAX_FILLER)))


@lru_cache(maxsize=4)
def _filler(path: str) -> tuple[str, ...]:
    """The filler names for a profile: its metric count, less f and cost_s, at most MAX_FILLER."""
    return METRICS[2:2 + min(MAX_FILLER, max(0, read_profile(path).metrics - 2))]


@dataclass(frozen=True)
class ReplaySettings:
    """``profile``: the path of the cost profile (JSON) whose costs are replayed."""

    profile: str


def parse_replay_settings(table: Mapping[str, Any]) -> ReplaySettings:
    """``profile`` (required): a readable cost profile; no other keys (UserError, one line)."""
    unknown = sorted(set(table) - {"profile"})
    if unknown:
        raise UserError(f"evaluation.{unknown[0]}: unknown key for problem 'replay'; expected profile")
    profile = table.get("profile")
    if not isinstance(profile, str):
        raise UserError(f"evaluation.profile: got {shown(profile)}; expected the path of a "
                        f"cost profile (JSON)")
    read_profile(profile)
    return ReplaySettings(profile)


def evaluate(params: dict, context: EvalContext) -> EvalRecord:
    """Sleep for the recorded cost of (iteration, particle); f = sum of squared parameters."""
    if context.settings is None:
        return EvalRecord.failed("evaluation.profile: missing; expected the problem's settings")
    path = context.settings.profile
    costs = _costs(path)
    if context.iteration >= costs.shape[0] or context.particle >= costs.shape[1]:
        return EvalRecord.failed(f"replay: no recorded cost for iteration {context.iteration}, particle "
                                 f"{context.particle} in {path} ({costs.shape[0]} x {costs.shape[1]})")
    cost = float(costs[context.iteration, context.particle])
    time.sleep(cost)
    metrics = {"f": math.fsum(v * v for v in params.values()), "cost_s": cost}
    metrics.update((name, 0.0) for name in _filler(path))
    return EvalRecord("ok", metrics=metrics)


def problem() -> Problem:
    parameters, pools = exo_codesign.codesign_space(cached_catalog())
    return Problem("replay", evaluate,
                   "sleeps for recorded evaluation costs in the co-design space (codesign bench scaling)",
                   parameters=parameters, pools=pools, objectives=(Objective("f"),),
                   parse_settings=parse_replay_settings, metrics=METRICS)
