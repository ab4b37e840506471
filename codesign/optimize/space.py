"""Search spaces of Metamorphic PSO: pools of mutually exclusive groups of parameters.

Thesis §3.2.1 (Fig. 3.3): a *parameter* is continuous and bounded; a *group* is a set of
parameters that are optimized together; a *pool* holds mutually exclusive groups (exactly
one is active at a time); groups may share parameters (pool B = [(4, 5), (5, 6), (6, 7)]).
A *subspace* is one group per pool; some combinations may be declared invalid.

Plain PSO is the space with one pool holding one group of all parameters.

Subspace ids are stable: ``subspace_id = 1 + mixed-radix index`` of the group indices in
the order of ``itertools.product`` over the pools as declared (last pool fastest), counted
over ALL groups, before freezing and exclusion. For the co-design space (pool 1: the 126
(topology, actuator pair) groups in catalog order; pool 2: one group of common parameters)
the id is the catalog's subspace id. A frozen or excluded combination simply never occurs.

Freezing (the freeze issue builds on it): a frozen pool keeps one group and never
migrates; a frozen parameter has a fixed value, is never sampled nor moved, and is still
passed to the evaluation when its group is active.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from codesign.types import Group, Parameter, Pool


@dataclass(frozen=True)
class Space:
    """Parameters, pools, exclusions and frozen parts; derived arrays are computed once.

    ``exclude``: combinations of groups, each a tuple of ``"pool.group"`` names; a
    subspace containing all groups of one combination is invalid. ``valid``: optional
    predicate on the tuple of group names (one per pool) for rules a list cannot state.
    ``start``: parameter values at which particle 0 starts (e.g. a parent run's solution,
    so that a continuation keeps it); particle 0 starts in the first valid subspace that
    uses every one of them (``start_subspace``). ``seeds``: further start points, particle 1,
    2, ... (0, 1, ... without ``start``) at each one's values, each in the first valid
    subspace that uses every one of them (``seed_subspaces``; e.g. a parent's solution with
    another topology's control law). ``start_spread`` > 0: every particle
    draws those parameters within +-start_spread x (high - low) of the start point (their
    initialisation range, clipped to the bounds): a swarm around a known solution.
    ``subspace_starts``: (group names, parameter values) pairs, e.g. the screening's best
    morphology of each subspace: a particle that starts in, or enters, a subspace with all
    of those groups draws those parameters within +-start_spread x (high - low) of the
    values (``sub_init_low``, ``sub_init_high``: the initialisation box per subspace);
    the starts of subspaces the search leaves out (frozen pools, exclusions) are unused.
    """

    parameters: tuple[Parameter, ...]
    pools: tuple[Pool, ...]
    exclude: tuple[tuple[str, ...], ...] = ()
    frozen_pools: Mapping[str, str] = field(default_factory=dict)
    frozen_parameters: Mapping[str, float] = field(default_factory=dict)
    valid: Callable[[tuple[str, ...]], bool] | None = None
    start: Mapping[str, float] = field(default_factory=dict)
    seeds: tuple[Mapping[str, float], ...] = ()
    start_spread: float = 0.0
    subspace_starts: tuple[tuple[tuple[str, ...], Mapping[str, float]], ...] = ()

    def __post_init__(self) -> None:
        names = [p.name for p in self.parameters]
        index = {n: i for i, n in enumerate(names)}
        for pool in self.pools:
            for group in pool.groups:
                for name in group.parameters:
                    if name not in index:
                        raise ValueError(f"group {pool.name}.{group.name}: unknown parameter {name!r}")
        allowed = []
        for pool in self.pools:
            groups = [g.name for g in pool.groups]
            if pool.name in self.frozen_pools:
                allowed.append((groups.index(self.frozen_pools[pool.name]),))
            else:
                allowed.append(tuple(range(len(groups))))
        excluded = [set(c) for c in self.exclude]
        radix = [len(p.groups) for p in self.pools]
        subspaces, ids = [], []
        for combo in itertools.product(*allowed):
            labels = {f"{p.name}.{p.groups[g].name}" for p, g in zip(self.pools, combo)}
            if any(c <= labels for c in excluded):
                continue
            if self.valid is not None and not self.valid(self.group_names(combo)):
                continue
            flat = 0
            for g, n in zip(combo, radix):
                flat = flat * n + g
            subspaces.append(combo)
            ids.append(flat + 1)
        if not subspaces:
            raise ValueError("the search space has no valid subspace")
        active = np.zeros((len(subspaces), len(names)), dtype=bool)   # moved by PSO
        used = np.zeros_like(active)                                  # passed to evaluate
        for s, combo in enumerate(subspaces):
            for pool, g in zip(self.pools, combo):
                for name in pool.groups[g].parameters:
                    used[s, index[name]] = True
                    active[s, index[name]] = name not in self.frozen_parameters
        start_subspace = _first_subspace(used, [index[name] for name in self.start], "the start point")
        seed_subspaces = tuple(_first_subspace(used, [index[name] for name in seed], f"seed {k}")
                               for k, seed in enumerate(self.seeds))
        init = np.array([p.init_range for p in self.parameters], dtype=float).reshape(-1, 2)
        if self.start_spread > 0:
            for name, value in self.start.items():
                p = self.parameters[index[name]]
                half = self.start_spread * (p.high - p.low)
                init[index[name]] = (max(p.low, value - half), min(p.high, value + half))
        sub_init = np.repeat(init[None], len(subspaces), axis=0)
        for groups, values in self.subspace_starts:
            rows = [s for s, combo in enumerate(subspaces) if set(groups) <= set(self.group_names(combo))]
            if not rows:        # a subspace the search leaves out (frozen pools, exclusions)
                continue
            for name, value in values.items():
                if name not in index or not used[rows[0], index[name]]:
                    raise ValueError(f"parameter {name!r} of the start design for {', '.join(groups)} is not "
                                     f"one of that subspace's")
                p = self.parameters[index[name]]
                half = self.start_spread * (p.high - p.low)
                sub_init[rows, index[name]] = (max(p.low, value - half), min(p.high, value + half))
        derived = dict(start_subspace=start_subspace, seed_subspaces=seed_subspaces,
            sub_init_low=sub_init[:, :, 0], sub_init_high=sub_init[:, :, 1],
            names=tuple(names), index=index, allowed=tuple(allowed),
            subspaces=tuple(subspaces), subspace_ids=np.array(ids, dtype=np.int64),
            active=active, used=used,
            low=np.array([p.low for p in self.parameters], dtype=float),
            high=np.array([p.high for p in self.parameters], dtype=float),
        )
        for key, value in derived.items():
            object.__setattr__(self, key, value)

    # -- queries -----------------------------------------------------------------------
    @property
    def n_subspaces(self) -> int:
        return len(self.subspaces)

    def group_names(self, combo: Sequence[int]) -> tuple[str, ...]:
        """The active group's name in each pool, for a tuple of group indices."""
        return tuple(p.groups[g].name for p, g in zip(self.pools, combo))

    def subspace_index(self, combo: Sequence[int]) -> int | None:
        """Row of ``subspaces`` for a tuple of group indices, or None when invalid."""
        try:
            return self._lookup()[tuple(int(g) for g in combo)]
        except KeyError:
            return None

    def _lookup(self) -> dict:
        cache = self.__dict__.get("_lookup_cache")
        if cache is None:
            cache = {c: s for s, c in enumerate(self.subspaces)}
            object.__setattr__(self, "_lookup_cache", cache)
        return cache

    def params_of(self, s: int, x: np.ndarray) -> dict[str, float]:
        """Parameters passed to the evaluation for subspace row ``s`` and position x [D]."""
        out = {}
        for d in np.flatnonzero(self.used[s]):
            name = self.names[d]
            out[name] = float(self.frozen_parameters.get(name, x[d]))
        return out

    def describe(self) -> list[dict]:
        """JSON-able list of subspaces: id and the group of each pool (stored with a run)."""
        return [{"subspace_id": int(i), "groups": dict(zip([p.name for p in self.pools],
                                                           self.group_names(c)))}
                for i, c in zip(self.subspace_ids, self.subspaces)]


def _first_subspace(used: np.ndarray, columns: list[int], what: str) -> int:
    """The first valid subspace (row of ``used`` [S, D]) that uses every parameter
    ``columns``; ValueError naming ``what`` when none does."""
    row = next((s for s in range(len(used)) if used[s, columns].all()), None)
    if row is None:
        raise ValueError(f"no valid subspace uses every parameter of {what}")
    return row


def single_group_space(parameters: Sequence[Parameter]) -> Space:
    """The plain-PSO space: one pool with one group of all parameters."""
    group = Group("all", tuple(p.name for p in parameters))
    return Space(tuple(parameters), (Pool("all", (group,)),))
