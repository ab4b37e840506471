"""Pipelined Metamorphic PSO: no iteration barrier, the same result for any worker count.

The synchronous :class:`~codesign.optimize.mmpso.MMPSO` moves every particle once all of
an iteration's evaluations are in, so every worker waits for the slowest evaluation of
each iteration. Here particle i moves from iteration k to k+1 as soon as

- its own evaluation at k is in, and
- every evaluation of iteration k-1 is in (the swarm's information S_{k-1}: the subspace
  bests and the global best over iterations 0..k-1),

so at most two iterations are in flight and a worker only waits when a whole iteration
k-1 is still unfinished. The move of (i, k) uses exactly: particle i's own bests
(updated with its evaluation at k), S_{k-1}, and a random stream of its own, seeded by
(run seed, k, i) -- never the order evaluations finish in. S_k is updated with the
evaluations of k in particle order once they are all in. Hence the runs are independent
of the worker count and the finishing order, like the synchronous ones (but not equal
to them: particles see the swarm's bests one iteration later).

Details of the move: the PSO step of eq. 3.4 with g = the better of the subspace's best
in S_{k-1} and the particle's own best there (before the swarm knows anything, its own);
migration with eq. 3.6 at iteration k's probabilities, the local group from the
particle's own best, the global group from S_{k-1}'s (:meth:`MMPSO._migrate_one`).

Iteration k is *complete* when its evaluations are all in; at that moment every
particle has moved to k+1 and none further (k+2 needs S_k), so the optimizer's state
then -- positions for k+1, own bests through k, S_k -- has the fields and meaning of the
synchronous MMPSO state after k's tell: the driver stores it with iteration k, and
:meth:`MMPSO.from_state` continues from it (a resumed run re-asks iteration k+1, whose
evaluations are pure functions of their candidates).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from codesign.objectives import better, fitness_key
from codesign.optimize.mmpso import MMPSO, evaluation_seeds
from codesign.optimize.pso import PSOSettings, pso_step
from codesign.optimize.schedule import Migration
from codesign.optimize.space import Space
from codesign.types import Candidate, EvalRecord

STREAM = 0x9E3779B9      # a fixed word in each move's seed: these streams differ from the run's own


class Completed(NamedTuple):
    """One complete iteration, as the driver stores it: its candidates and records in
    particle order, the global best (key, subspace id) after it and the state after it."""

    iteration: int
    candidates: list[Candidate]
    records: list[EvalRecord]
    best: tuple
    state: dict[str, np.ndarray]


class _Evaluated(NamedTuple):
    """What S_k needs of one evaluation: the key, the position evaluated, its subspace."""

    key: tuple[float, float, float]
    x: np.ndarray
    sub: int
    candidate: Candidate
    record: EvalRecord


class PipelinedMMPSO(MMPSO):
    """MMPSO driven one evaluation at a time: :meth:`ready` -> evaluate -> :meth:`tell_one`.

    ``iteration`` counts the complete iterations (the first incomplete one); ``position[i]``
    is the iteration particle i is at (``iteration`` or ``iteration + 1``)."""

    def __init__(self, space: Space, settings: PSOSettings, migration: Migration, seed: int):
        super().__init__(space, settings, migration, seed)
        self._start()

    @classmethod
    def from_state(cls, space: Space, settings: PSOSettings, migration: Migration,
                   state: dict[str, np.ndarray]) -> "PipelinedMMPSO":
        """Continue from a state stored after a complete iteration (every particle at the next)."""
        self = super().from_state(space, settings, migration, state)
        self._start()
        return self

    def _start(self) -> None:
        n = len(self.sub)
        self.position = np.full(n, self.iteration, dtype=np.int64)
        self._asked = np.full(n, -1, dtype=np.int64)        # last iteration asked per particle
        self._results: dict[int, dict[int, _Evaluated]] = {}  # iteration -> particle -> result
        self._seeds: dict[int, list[int]] = {}

    def ready(self) -> list[Candidate]:
        """Candidates that can be evaluated now and were not handed out yet (each once)."""
        out = []
        for i in np.flatnonzero((self._asked < self.position) & (self.position < self.settings.iterations)):
            k = int(self.position[i])
            if k not in self._seeds:
                self._seeds[k] = evaluation_seeds(self.seed, k, len(self.sub))
            s = int(self.sub[i])
            out.append(Candidate(iteration=k, particle=int(i), subspace_id=int(self.space.subspace_ids[s]),
                                 groups=self.space.group_names(self.space.subspaces[s]),
                                 params=self.space.params_of(s, self.x[i]), seed=self._seeds[k][i]))
            self._asked[i] = k
        return out

    def ask(self) -> list[Candidate]:
        raise TypeError("PipelinedMMPSO hands out candidates with ready(); expected the pipelined driver")

    def tell(self, records: Sequence[EvalRecord]) -> None:
        raise TypeError("PipelinedMMPSO takes evaluations with tell_one(); expected the pipelined driver")

    def tell_one(self, candidate: Candidate, record: EvalRecord) -> list[Completed]:
        """Take one evaluation of a candidate from :meth:`ready`, in any order; returns the
        iterations it completed (oldest first, each with the state right after it)."""
        i, k = candidate.particle, candidate.iteration
        if k != self.position[i] or self._asked[i] != k or i in self._results.get(k, {}):
            raise ValueError(f"tell_one: particle {i} at iteration {k} was not asked or was told before")
        self._results.setdefault(k, {})[i] = _Evaluated(fitness_key(record), self.x[i].copy(), int(self.sub[i]),
                                                        candidate, record)
        completed = []
        if k == self.iteration:                 # S_{k-1} is known: it moves at once
            self._move_one(i, self._results[k][i])
        while len(self._results.get(self.iteration, {})) == len(self.sub):
            completed.append(self._complete(self._results[self.iteration]))
            # those evaluated at the new oldest iteration waited for S_{k-1}: they move now
            for j, result in sorted(self._results.get(self.iteration, {}).items()):
                self._move_one(j, result)
        return completed

    def _move_one(self, i: int, result: _Evaluated) -> None:
        """Particle i from iteration k = ``self.iteration`` to k+1 (S = S_{k-1} now)."""
        key, s, k = result.key, result.sub, self.iteration
        if better(key, self.pbest_key[i]):
            self.pbest_key[i], self.pbest_x[i] = key, result.x
        if better(key, self.best_key[i]):
            self.best_key[i], self.best_x[i], self.best_sub[i] = key, result.x, s
        rng = np.random.default_rng([self.seed, k, i, STREAM])
        dims = np.flatnonzero(self.space.active[s])
        if dims.size:
            own = better(self.pbest_key[i], self.sbest_key[s])
            g = (self.pbest_x[i] if own else self.sbest_x[s])[dims]
            x, v = pso_step(self.x[i, dims][None], self.v[i, dims][None], self.pbest_x[i, dims][None], g,
                            self.space.low[dims], self.space.high[dims], self.settings, rng)
            self.x[i, dims], self.v[i, dims] = x[0], v[0]
        if self.space.n_subspaces > 1:
            self._migrate_one(i, rng)
        active = self.space.active
        for x, rows in ((self.x, self.sub), (self.v, self.sub), (self.pbest_x, self.sub),
                        (self.best_x, self.best_sub)):
            x[i, ~active[rows[i]]] = 0.0
        self.position[i] = k + 1

    def _complete(self, done: dict[int, _Evaluated]) -> Completed:
        """S_k from iteration k's evaluations in particle order; the iteration as stored."""
        k = self.iteration
        for i in range(len(self.sub)):
            key, x, s = done[i].key, done[i].x, done[i].sub
            if better(key, self.sbest_key[s]):
                self.sbest_key[s], self.sbest_x[s] = key, x
            if better(key, self.gbest_key):
                self.gbest_key, self.gbest_x, self.gbest_sub = np.array(key), x.copy(), np.int64(s)
        self.sbest_x[~self.space.active] = 0.0
        self.gbest_x[~self.space.active[self.gbest_sub]] = 0.0
        self.iteration = k + 1
        del self._results[k]
        self._seeds.pop(k, None)
        best = self.best()
        return Completed(k, [done[i].candidate for i in range(len(self.sub))],
                         [done[i].record for i in range(len(self.sub))], best[:2], self.state())


__all__ = ["PipelinedMMPSO", "Completed"]
