"""Metamorphic PSO (thesis §3.2, algorithm 1), driven by ask() / tell().

Each iteration (algorithm 1, lines 3-10):

1. ``ask()`` returns one :class:`Candidate` per particle (its position in its subspace).
   Any executor evaluates them, in any order, anywhere.
2. ``tell(records)`` (records in particle order):
   a. bests: each particle's best in its current subspace (p), its best overall (whose
      subspace gives the local group s_l of every pool), each subspace's best (g of the
      inner PSO, X_s), and the global best over all subspaces (group s_g of every pool);
   b. inner layer: one constriction-PSO step for every non-empty subspace, on its active
      (non-frozen) parameters, subspaces in id order (:func:`codesign.optimize.pso.pso_step`);
   c. outer layer: every particle, every non-frozen pool, migrates with eq. 3.6.

Eq. 3.6, as read from the garbled text and checked against eq. 3.7 and the toy example
(eq. 3.8): for a pool with N groups (N >= 2), current group c, local group l, global group
g, the probability to move to a group j != c is

    P(c -> j) = 1 - (1 - P_e / (N - 1)) * (1 - P_l [j = l]) * (1 - P_g [j = g])

where [.] is 1 when true, 0 otherwise, and staying is 1 - sum_j P(c -> j); P_e + P_l + P_g
<= 1 keeps this a proper distribution (the sum over j is at most P_e + P_l + P_g).
One uniform number per particle and pool selects the outcome. When the result is an
excluded subspace the draw is repeated for all pools of that particle (rejection, i.e. the
eq. 3.6 distribution conditioned on validity; staying is always valid); after 100 rejected
draws the particle stays. A particle whose best (or a swarm whose global best) is a failed
evaluation has no local (global) group: that term is absent.

Entering a group (the documented rule of the issue): parameters that were active before
and after the move (shared between the old and new groups) keep position and velocity;
parameters that become active are drawn uniformly in their initialisation range, with a
velocity uniform in +-clamp * (init range). The particle's best in the new subspace is its
overall best if that lies in the new subspace, otherwise empty (its first evaluation
there sets it). Initial population: particles are spread equally over the valid subspaces
(particle i in subspace perm[i mod S], perm a random permutation), as §3.2.1 says; a
space's start point (``Space.start``, e.g. a parent run's solution) then places particle 0
in its start subspace at its values, and its seeds (``Space.seeds``) particles 1, 2, ...
(the random draws are the same with or without them).

All randomness comes from one numpy Generator (PCG64) owned by the optimizer on the
driver; :meth:`MMPSO.state` returns plain arrays (plus the generator state as JSON bytes)
from which :meth:`MMPSO.from_state` continues bit-exactly. Evaluation seeds are derived
from (seed, iteration, particle), not drawn, so they never depend on executors.
"""

from __future__ import annotations

import json
from typing import Sequence

import numpy as np

from codesign.objectives import NO_KEY, better, fitness_key
from codesign.optimize.pso import PSOSettings, pso_step
from codesign.optimize.schedule import Migration
from codesign.optimize.space import Space
from codesign.types import Candidate, EvalRecord

MAX_REJECTIONS = 100

# arrays that make up the optimizer state (name -> dtype); scalars are 0-d arrays
_STATE_FIELDS = {
    "iteration": np.int64, "seed": np.int64,
    "x": float, "v": float, "sub": np.int64,
    "pbest_x": float, "pbest_key": float,
    "best_x": float, "best_key": float, "best_sub": np.int64,
    "sbest_x": float, "sbest_key": float,
    "gbest_x": float, "gbest_key": float, "gbest_sub": np.int64,
}


def evaluation_seeds(seed: int, iteration: int, particles: int) -> list[int]:
    """Seeds of one iteration's evaluations: word ``particle`` of the SeedSequence of
    (run seed, iteration) -- a pure function of (run seed, iteration, particle)."""
    words = np.random.SeedSequence([seed, iteration]).generate_state(particles, np.uint32)
    return [int(w) for w in words]


class MMPSO:
    """Metamorphic PSO on a :class:`Space` (plain PSO when the space has one subspace)."""

    def __init__(self, space: Space, settings: PSOSettings, migration: Migration, seed: int):
        self.space, self.settings, self.migration = space, settings, migration
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        n, d, s = settings.particles, len(space.names), space.n_subspaces
        self.iteration = 0
        perm = self.rng.permutation(s)
        self.sub = perm[np.arange(n) % s].astype(np.int64)
        low, high = space.sub_init_low[self.sub], space.sub_init_high[self.sub]
        self.x = low + self.rng.random((n, d)) * (high - low)
        self.v = self._initial_velocity(self.rng.random((n, d)), self.sub)
        points = ([(space.start_subspace, space.start)] if space.start else []) + list(
            zip(space.seed_subspaces, space.seeds))
        if len(points) > n:
            raise ValueError(f"{len(points)} start points (start and seeds) for {n} particles; expected at "
                             f"most one per particle")
        for i, (s_row, point) in enumerate(points):     # particles 0, 1, ... at the given points
            self.sub[i] = s_row
            for name, value in point.items():
                self.x[i, space.index[name]] = value
        self.pbest_x, self.pbest_key = self.x.copy(), np.tile(NO_KEY, (n, 1))
        self.best_x, self.best_key = self.x.copy(), np.tile(NO_KEY, (n, 1))
        self.best_sub = self.sub.copy()
        self.sbest_x, self.sbest_key = np.zeros((s, d)), np.tile(NO_KEY, (s, 1))
        self.gbest_x, self.gbest_key = np.zeros(d), np.array(NO_KEY)
        self.gbest_sub = np.int64(0)
        self._canonical()

    # -- ask / tell -------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.iteration >= self.settings.iterations

    def ask(self) -> list[Candidate]:
        """The particles' current positions, one candidate per particle, particle order."""
        space = self.space
        seeds = evaluation_seeds(self.seed, self.iteration, len(self.sub))
        return [Candidate(iteration=self.iteration, particle=i,
                          subspace_id=int(space.subspace_ids[s]),
                          groups=space.group_names(space.subspaces[s]),
                          params=space.params_of(s, self.x[i]), seed=seeds[i])
                for i, s in enumerate(self.sub)]

    def tell(self, records: Sequence[EvalRecord]) -> None:
        """Take the evaluations of the last ask() (particle order) and advance one iteration."""
        if len(records) != len(self.sub):
            raise ValueError(f"tell: {len(records)} records for {len(self.sub)} particles")
        self._update_bests([fitness_key(r) for r in records])
        self._move()
        if self.space.n_subspaces > 1:
            self._migrate()
        self.iteration += 1
        self._canonical()

    # -- the three steps --------------------------------------------------------------
    def _update_bests(self, keys: list[tuple[float, float, float]]) -> None:
        for i, key in enumerate(keys):
            s = self.sub[i]
            if better(key, self.pbest_key[i]):
                self.pbest_key[i], self.pbest_x[i] = key, self.x[i]
            if better(key, self.best_key[i]):
                self.best_key[i], self.best_x[i], self.best_sub[i] = key, self.x[i], s
            if better(key, self.sbest_key[s]):
                self.sbest_key[s], self.sbest_x[s] = key, self.x[i]
            if better(key, self.gbest_key):
                self.gbest_key, self.gbest_x, self.gbest_sub = np.array(key), self.x[i].copy(), np.int64(s)

    def _move(self) -> None:
        space = self.space
        for s in range(space.n_subspaces):
            members = np.flatnonzero(self.sub == s)
            dims = np.flatnonzero(space.active[s])
            if members.size == 0 or dims.size == 0:
                continue
            rows = np.ix_(members, dims)
            x, v = pso_step(self.x[rows], self.v[rows], self.pbest_x[rows], self.sbest_x[s, dims],
                            space.low[dims], space.high[dims], self.settings, self.rng)
            self.x[rows], self.v[rows] = x, v

    def _migrate(self) -> None:
        for i in range(len(self.sub)):
            self._migrate_one(i, self.rng)

    def _migrate_one(self, i: int, rng: np.random.Generator) -> None:
        """Eq. 3.6 for particle i at this iteration's probabilities, its local group from its
        own best, the global group from the swarm's best; uniforms drawn from ``rng``."""
        space = self.space
        p_e, p_l, p_g = self.migration.at(self.iteration)
        has_global = self.gbest_key[0] == 0.0
        global_combo = space.subspaces[self.gbest_sub]
        current = space.subspaces[self.sub[i]]
        local_combo = space.subspaces[self.best_sub[i]] if self.best_key[i, 0] == 0.0 else None
        target = self.sub[i]
        for _ in range(MAX_REJECTIONS):
            combo = []
            for k, allowed in enumerate(space.allowed):
                local = local_combo[k] if local_combo is not None else None
                glob = global_combo[k] if has_global else None
                combo.append(migrate_group(current[k], allowed, local, glob, p_e, p_l, p_g,
                                           rng.random()) if len(allowed) > 1 else current[k])
            found = space.subspace_index(combo)
            if found is not None:
                target = found
                break
        if target != self.sub[i]:
            self._enter(i, target, rng)

    def _enter(self, i: int, s: int, rng: np.random.Generator | None = None) -> None:
        """Particle i enters subspace s (the module docstring's rule); uniforms from
        ``rng``, else the optimizer's own generator."""
        rng = self.rng if rng is None else rng
        space = self.space
        new = np.flatnonzero(space.active[s] & ~space.active[self.sub[i]])
        width = space.sub_init_high[s, new] - space.sub_init_low[s, new]
        self.x[i, new] = space.sub_init_low[s, new] + rng.random(new.size) * width
        self.v[i, new] = self._initial_velocity(rng.random(new.size), s, new)
        self.sub[i] = s
        if self.best_sub[i] == s and self.best_key[i, 0] < 2.0:
            self.pbest_key[i], self.pbest_x[i] = self.best_key[i], self.best_x[i]
        else:
            self.pbest_key[i] = NO_KEY

    def _canonical(self) -> None:
        """Zero every coordinate that is not active where it belongs (never read: a
        parameter that becomes active is re-drawn). Keeps the state small and compressible
        (a co-design particle uses ~40 of ~1900 parameters) and makes equal runs' states
        byte-identical."""
        active = self.space.active
        for x, rows in ((self.x, self.sub), (self.v, self.sub), (self.pbest_x, self.sub),
                        (self.best_x, self.best_sub)):
            x[~active[rows]] = 0.0
        self.sbest_x[~active] = 0.0
        self.gbest_x[~active[self.gbest_sub]] = 0.0

    def _initial_velocity(self, u: np.ndarray, s, dims: np.ndarray | None = None) -> np.ndarray:
        """Velocities uniform in +-clamp * (the init range of subspace s, or of each row's
        subspace for an array s), from uniforms u in [0, 1)."""
        dims = slice(None) if dims is None else dims
        space = self.space
        half = self.settings.velocity_clamp * (space.sub_init_high[s][..., dims] - space.sub_init_low[s][..., dims])
        return (2.0 * u - 1.0) * half

    # -- results ----------------------------------------------------------------------
    def best(self) -> tuple[tuple[float, float, float], int, dict[str, float]]:
        """(key, subspace id, parameters) of the global best so far."""
        s = int(self.gbest_sub)
        return (tuple(float(k) for k in self.gbest_key), int(self.space.subspace_ids[s]),
                self.space.params_of(s, self.gbest_x))

    # -- state ------------------------------------------------------------------------
    def state(self) -> dict[str, np.ndarray]:
        """Everything needed to continue bit-exactly: arrays, and the RNG state as JSON bytes."""
        out = {name: np.asarray(getattr(self, name), dtype=dtype).copy()
               for name, dtype in _STATE_FIELDS.items()}
        rng_json = json.dumps(self.rng.bit_generator.state, sort_keys=True)
        out["rng_state_json"] = np.frombuffer(rng_json.encode(), dtype=np.uint8).copy()
        return out

    @classmethod
    def from_state(cls, space: Space, settings: PSOSettings, migration: Migration,
                   state: dict[str, np.ndarray]) -> "MMPSO":
        self = cls.__new__(cls)
        self.space, self.settings, self.migration = space, settings, migration
        for name, dtype in _STATE_FIELDS.items():
            value = np.array(state[name], dtype=dtype)
            setattr(self, name, value if value.ndim else value[()])
        self.iteration, self.seed = int(self.iteration), int(self.seed)
        n, d = self.x.shape
        if n != settings.particles or d != len(space.names) or len(self.sbest_key) != space.n_subspaces:
            raise ValueError("stored optimizer state does not match the spec's space/particles")
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = json.loads(bytes(state["rng_state_json"]).decode())
        return self


def migration_probabilities(current: int, allowed: Sequence[int], local: int | None,
                            glob: int | None, p_e: float, p_l: float, p_g: float) -> np.ndarray:
    """Eq. 3.6: probability of each allowed group (same order) for one particle and pool."""
    groups = np.asarray(allowed)
    n = groups.size
    stay = (1.0 - p_e / (n - 1)) * (1.0 - p_l * (groups == local)) * (1.0 - p_g * (groups == glob))
    probs = 1.0 - stay
    here = groups == current
    probs[here] = 0.0
    probs[here] = 1.0 - probs.sum()
    return probs


def migrate_group(current: int, allowed: Sequence[int], local: int | None, glob: int | None,
                  p_e: float, p_l: float, p_g: float, u: float) -> int:
    """The group after migration, chosen by the uniform number u in [0, 1)."""
    probs = migration_probabilities(current, allowed, local, glob, p_e, p_l, p_g)
    k = int(np.searchsorted(np.cumsum(probs), u, side="right"))
    return allowed[min(k, len(allowed) - 1)]


__all__ = ["MMPSO", "PSOSettings", "migration_probabilities", "migrate_group", "evaluation_seeds"]
