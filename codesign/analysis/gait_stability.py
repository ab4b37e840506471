"""Floquet multipliers of a walking design: the stroboscopic (period) map of the rollout.

The walking controller (:mod:`codesign.control.impedance`) is periodic in time with the
gait period T = 1 / f (f = ``setup.ctrl.timing[0]`` Hz) and the time-stepping rollout
(:mod:`codesign.walking.rollout`) is otherwise autonomous, so a gait is a periodic orbit
of period m T (m = ``periods``: 1 for a period-one gait) and its stride map is the
stroboscopic map

    P: x(t0) -> x(t0 + m T),       t0 = K T on the controller's clock.

A fixed point x* = P(x*) is the gait; the eigenvalues of dP(x*) are its Floquet
multipliers, all inside the unit circle for an asymptotically stable gait. Unlike the
Poincaré maps of :mod:`codesign.analysis.returnmap` no section is needed: time is the
section.

The discrete map. The rollout steps h = 1 ms; for the map to be the same at every t0 the
step grid has to fit the period, so the analysis runs with h' = T / N, N = round(T / h)
steps per period (f = 0.9 Hz: N = 1111, h' = 1.0001 ms; |h' - h| <= h^2 / (2 T), a 0.05 %
change of the step, well inside the stepping's own O(h) error). Everything below is
about that discrete system: x = (q, qd) after a step, P = m N steps from t0 = K N h'
(:func:`codesign.walking.rollout.walk` with its start time). The contact solver's warm
start (the last step's impulses sw.P and contact modes sw.mode,
:mod:`codesign.dynamics.timestep`) is part of what a step reads, so the rollout's data
record (:class:`codesign.walking.stepping.StepData`) is copied from the settled run
before every evaluation of P: every run starts from the same solver state
and P is a deterministic function of x, bit for bit.

Settling. From the design's initial state the rollout runs K periods (default: as many
as fit in ``max_time`` less the map's m: x* at 8 T = 8.9 s of a 10-s evaluation at
0.9 Hz, so that P(x*) ends within the evaluation; at least one, so a max_time shorter
than (m + 1) T, or (m + 2) T with a section phase, raises :class:`EvaluationTooShort`; an
explicit K = 0 takes the design's initial state as x*), and x* = x(K T). The periodicity
residual max |z(P(x*)) - z(x*)| (reduced coordinates below; SI units m, rad, m/s, rad/s)
says whether x* is on a periodic gait; above ``periodic_tol`` (1e-3) the multipliers are
those of dP at a point that is not a fixed point and the verdict is ``not_periodic``.
``newton_distance`` = max |(J - I)^-1 r| (r the residual) is the linear estimate of the
distance from x* to the fixed point: a Newton correction is not attempted (the
time-stepped map is only piecewise smooth, see below, and Newton diverges on it).

Reduced coordinates. (1) The map is invariant under translation of the base x position
(body ``torso_x``, flat ground): P(x + d e_x) = P(x) + d e_x, so that position is dropped
(its velocity kept). (2) Perturbations must be consistent with the constraints that
hold at x*: the loop closures of an augmented design (phi(q) = 0, 2 rows per loop,
:func:`codesign.dynamics.loops.loop_constraints`) and the contacts loaded at x* (last
step's mode not inactive; they are on the ground: gap ~ 0). Pushing a loaded foot point
into the ground or lifting it off, or giving it a normal velocity, is not a small
perturbation of the gait but a different event (the stepping pushes a penetration out
with a velocity that stays in the state; a lifted point falls and lands plastically), so
the one-sided derivatives differ and central differences would average them. Position
rows Cq: loops and the normals of the loaded contacts; velocity rows Cv: those plus the
tangents of the contacts sticking at x* (:func:`codesign.dynamics.contact_rows.contact_rows`).
The coordinates are partitioned (Wehage & Haug 1982): column-pivoted QR of Cq (without
the x column) and of Cv picks as many dependent coordinates as the rows' rank (redundant
rows, e.g. three points of one flat foot, are fine); z is the change of the independent
positions and velocities from x* (named ``q_<body>_<unit>``, ``qd_<body>_<unit>_s``), so
z has 2 n - 1 - rank Cq - rank Cv entries and is exactly the unconstrained state for a
model without loops in the air. A state x(z) sets the independent coordinates and solves
the dependent ones back onto the constraint values of x* (Newton on Cq's values -- loop
residuals and gaps, which the stepping holds at O(h) -- and one linear solve for Cv qd);
z(x) reads the independent coordinates, so z(x(z)) = z exactly and the eigenvalues of
dz(P(x(z)))/dz are the multipliers of P on the constraint manifold, provided P maps it
into itself. It does only to O(h): the stepping enforces the velocity rows at the start
of a step, not its end, and the contact set at t0 + m T may differ slightly in gap. The
relative size of P's response outside the chart's tangent space,
|D - Dx J| / |D| (D = dP(x(z))/dz, Dx = dx(z)/dz), is reported as ``chart_leak``.
``free_contact_min_gap``: the smallest gap (m) of the contacts not loaded at x*; a value
within reach of eps means a perturbation can touch one down (a kink).

The Jacobian. Central differences on z with one step eps for every coordinate (all are
O(1) in SI units): J[:, j] = (z(P(x(eps e_j))) - z(P(x(-eps e_j)))) / (2 eps), 2 d
rollouts of m periods. Error: truncation eps^2 |P'''| / 6 plus noise delta / eps, delta
the absolute accuracy of P. P is only piecewise smooth: a perturbation that moves a
touch-down or a stick/slip change across a step boundary changes the slope, and steps
where the contact solver falls back to Gauss-Seidel's approximate impulses (tolerance
1e-8) add noise. Measured on the typical human (period map from 8.9 s): J changes by
0.86 between eps = 1e-4 and 1e-5 (a kink within 1e-4), 4.5e-4 between 1e-5 and 1e-6,
7e-6 between 1e-6 and 1e-7 and 9e-5 between 1e-7 and 1e-8 (noise, delta ~ 1e-12): eps =
1e-6 (default) sits at the truncation/noise balance, J accurate to ~1e-5 there. The
multipliers are recomputed with 2 eps and their largest change (sorted moduli) is
reported as ``step_change``: about 3 times the O(eps^2) error when the map is smooth at
that scale; a large value flags a kink in reach of the step (then try a smaller eps).

Outcome (:class:`GaitStability`): ``status`` ``ok`` (multipliers computed), ``fell`` (the
settling run or the period from x* did not survive: the rollout's message),
``perturbation_fell`` (a perturbed period failed: no Jacobian), ``not_simulated``
(screening or set-up rejected the design). ``verdict``: ``not_periodic`` (residual above
``periodic_tol``), else ``inaccurate`` (``step_change`` above ``accuracy_tol``, 1e-2: the
multipliers are not resolved), else ``stable`` (all |lambda| < 1), ``unstable`` or
``marginal`` (max |lambda| within max(1e-9, step_change) of 1); None without
multipliers. ``unconverged_steps``: steps of the period from x* whose contact impulses
miss the time step's tolerance (``timestep.STAT_ABOVE_TOL``; docs/contacts.md): where they
matter, P is noisy at that level.

Known limit (measured): the contact solver chooses between solutions from the last
step's modes, and where Coulomb friction makes more than one consistent (a point that
may either stick and release or keep slipping), states 1e-8 apart follow different
branches and P jumps (by ~5e-3 on the typical augmented design, whose J then grows like
1 / eps: ``step_change`` flags it). The human designs analysed so far are smooth at
eps = 1e-6 (``step_change`` ~1e-6).

Only the stepping contact model (``contact_model = "hard"``) has the start-time rollout.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from codesign.analysis.jacobians import central_jacobian, modulus_change, multipliers
from codesign.analysis.returnmap import verdict as multiplier_verdict
from codesign.errors import UserError
from codesign.walking import stepping
from codesign.walking.rollout_base import OK, STATUS

EPS = 1e-6            # central-difference step in the reduced coordinates (SI units)
PERIODIC_TOL = 1e-3   # residual max |z(P(x*)) - z(x*)| (SI units) of a periodic gait
ACCURACY_TOL = 1e-2   # largest step_change (multiplier moduli) of a resolved Jacobian


class PerturbationFailed(Exception):
    """A perturbed period did not finish (fall, drift, integrator)."""


# ----------------------------------------------------------------------------- the period map
class StroboscopicMap:
    """x -> x(t0 + periods T) of a walking set-up's stepping rollout, from the controller's
    time t0, every run from the same contact-solver warm start (module docstring).

    setup: a :class:`codesign.walking.Setup` (or anything with .model, .p, .x0,
    .ctrl) whose step p.model.step_settings[H] is T / N for an integer N; ``settle_periods`` K: x* = x(K T)
    of the rollout from setup.x0 (run at construction: check ``settle_status``).
    """

    def __init__(self, setup, settle_periods: int, periods: int = 1, section_phase: float = 0.0):
        from codesign.dynamics import timestep as ts

        self.setup = setup
        self.model = setup.model
        self.p = setup.p
        if not isinstance(self.p, stepping.StepParams):
            raise ValueError("the stroboscopic map needs the stepping rollout (contact_model 'hard')")
        self.frequency = float(setup.ctrl.timing[0])
        self.period = 1.0 / self.frequency
        self.h = float(self.p.model.step_settings[ts.H])
        self.steps_per_period = int(round(self.period / self.h))
        if abs(self.steps_per_period * self.h - self.period) > 1e-9 * self.period:
            raise ValueError(f"step {self.h} s does not divide the period {self.period} s; "
                             "build the set-up with h = T / round(T / h) (gait_setup)")
        if settle_periods < 0 or periods < 1:
            raise ValueError(f"settle_periods {settle_periods}, periods {periods}; expected >= 0 and >= 1")
        self.settle_periods = int(settle_periods)
        self.periods = int(periods)
        if not 0.0 <= section_phase < 1.0:
            raise ValueError(f"section_phase {section_phase}; expected a fraction of a period in [0, 1)")
        # the section at a fixed point of the cycle: K periods plus a whole number of steps
        offset = int(round(section_phase * self.steps_per_period))
        self.t0 = (self.settle_periods * self.steps_per_period + offset) * self.h
        self.t_end = self.t0 + self.periods * self.steps_per_period * self.h
        self.n = self.model.n
        self.ix = self.model.body_id("torso_x")
        self._empty = stepping.no_records(2 * self.n, self.model.n_contacts)
        # settle from the design's initial state
        x = np.array(setup.x0, dtype=np.float64)
        code, t, _ = stepping.walk(x, self.t0, self.p, *self._empty, 0.0)
        self.settle_code, self.settle_time = int(code), float(t)
        self.x_star = x
        self.warm = stepping.clone_data(self.p.data)   # the settled run's data record
        self._chart()

    @property
    def settle_status(self) -> tuple[str, str]:
        """(status, message) of the settling run: ("ok", "") or the rollout's failure."""
        if self.settle_code == OK:
            return "ok", ""
        status, text = STATUS[self.settle_code]
        return status, f"{text} at t = {self.settle_time:.3f} s (settling)"

    # ------------------------------------------------------------------ the map itself
    def run(self, x) -> tuple[int, float, np.ndarray]:
        """(code, time reached s, state at t_end) of one map evaluation from the full state
        x (float64[2n]) at t0, from the settled run's data record (its warm start)."""
        stepping.copy_data(self.warm, self.p.data)
        xx = np.array(x, dtype=np.float64)
        code, t, _ = stepping.walk(xx, self.t_end, self.p, *self._empty, self.t0)
        return int(code), float(t), xx

    def __call__(self, x) -> np.ndarray:
        """P(x) (full state); PerturbationFailed if the run does not finish."""
        code, t, xx = self.run(x)
        if code != OK:
            status, text = STATUS[code]
            raise PerturbationFailed(f"{status}: {text} at t = {t:.3f} s")
        return xx

    # ------------------------------------------------------------------ reduced coordinates
    def constraint_rows(self, q, qd):
        """(Cq, gq, Cv, cv) at (q, qd): the position rows (loop closures, normals of the
        contacts loaded at x*) with their values (loop residuals and gaps, m) and the
        velocity rows (the same plus the tangents of the contacts sticking at x*) with
        Cv qd (m/s)."""
        from codesign.dynamics import contact_rows as ct
        from codesign.dynamics.kinematics import forward_kinematics
        from codesign.dynamics.loops import loop_constraints

        m, w, n, c = self.model.arrays, self._w, self.n, self.model.n_contacts
        forward_kinematics(m, np.ascontiguousarray(q, dtype=np.float64),
                           np.ascontiguousarray(qd, dtype=np.float64), w)
        nl = loop_constraints(m, w, 0.0, 0.0)
        L, phi = w.rows[:nl].copy(), w.phi[:nl].copy()
        K, bias, vel, pos = np.zeros((2 * c, n)), np.zeros(2 * c), np.zeros(2 * c), np.zeros(2 * c)
        ct.contact_rows(m, w, self.p.model.contact_settings, K, bias, vel, pos, 0)
        self._gaps = pos[:c].copy()
        Cq = np.vstack([L, K[self.loaded]])
        gq = np.concatenate([phi, pos[self.loaded]])
        Cv = np.vstack([L, K[self.loaded], K[c + self.sticking]])
        return Cq, gq, Cv, Cv @ np.asarray(qd, dtype=float)

    @staticmethod
    def _partition(C: np.ndarray, candidates: list[int]) -> tuple[list[int], list[int]]:
        """(dependent, independent) coordinates among ``candidates``: the columns of C
        that column-pivoted QR picks first (as many as C's rank) are dependent."""
        cand = np.asarray(candidates, dtype=np.int64)
        if C.shape[0] == 0 or cand.size == 0:
            return [], [int(i) for i in cand]
        _, R, piv = scipy.linalg.qr(C[:, cand], mode="economic", pivoting=True)
        d = np.abs(np.diag(R))
        rank = int(np.sum(d > 1e-9 * d[0])) if d.size and d[0] > 0.0 else 0
        dep = sorted(int(i) for i in cand[piv[:rank]])
        return dep, [int(i) for i in cand if int(i) not in dep]

    def _chart(self) -> None:
        from codesign.dynamics import timestep as ts
        from codesign.dynamics.model import REVOLUTE, make_workspace

        n, ix, model = self.n, self.ix, self.model
        self._w = make_workspace(model)
        self.loaded = np.flatnonzero(self.warm.step_work.mode != ts.INACTIVE)
        self.sticking = np.flatnonzero(self.warm.step_work.mode == ts.STICK)
        q, qd = self.x_star[:n], self.x_star[n:]
        Cq, self.gq_star, Cv, self.cv_star = self.constraint_rows(q, qd)
        free = np.setdiff1d(np.arange(model.n_contacts), self.loaded)
        self.free_min_gap = float(self._gaps[free].min()) if free.size else float("inf")
        self.dq, self.iq = self._partition(Cq, [i for i in range(n) if i != ix])
        self.dv, self.iv = self._partition(Cv, list(range(n)))
        names = model.body_names
        unit = ["rad" if model.joint_type[i] == REVOLUTE else "m" for i in range(n)]

        def named(iq, iv):
            return tuple([f"q_{names[i]}_{unit[i]}" for i in iq] + [f"qd_{names[i]}_{unit[i]}_s" for i in iv])

        self.names = named(self.iq, self.iv)
        self.dim = len(self.iq) + len(self.iv)
        self.dependent_names = named(self.dq, self.dv)
        self.full_names = named(range(n), range(n))    # the full state x = (q, qd), 2 n entries

    def state(self, z) -> np.ndarray:
        """The full state x(z) of reduced coordinates z (x(0) = x*; module docstring):
        independent coordinates from z, dependent ones back on the constraint values of
        x* (Newton on the positions, one linear solve for the velocities)."""
        n = self.n
        z = np.asarray(z, dtype=float)
        if not np.any(z):
            return self.x_star.copy()
        kq = len(self.iq)
        q, qd = self.x_star[:n].copy(), self.x_star[n:].copy()
        q[self.iq] += z[:kq]
        qd[self.iv] += z[kq:]
        if self.dq:
            for _ in range(30):
                Cq, gq, _, _ = self.constraint_rows(q, qd)
                r = gq - self.gq_star
                if np.abs(r).max() <= 1e-14:
                    break
                q[self.dq] -= np.linalg.lstsq(Cq[:, self.dq], r, rcond=None)[0]
        if self.dv:
            _, _, Cv, cv = self.constraint_rows(q, qd)
            qd[self.dv] -= np.linalg.lstsq(Cv[:, self.dv], cv - self.cv_star, rcond=None)[0]
        return np.concatenate([q, qd])

    def selection(self) -> np.ndarray:
        """(d, 2n) matrix S with z(x) = S (x - x*)."""
        S = np.zeros((self.dim, 2 * self.n))
        cols = list(self.iq) + [self.n + i for i in self.iv]
        S[np.arange(self.dim), cols] = 1.0
        return S

    def coords(self, x) -> np.ndarray:
        """Reduced coordinates z(x): the independent coordinates' change from x* (the base
        x position is never one of them)."""
        x = np.asarray(x, dtype=float)
        n = self.n
        return np.concatenate([x[self.iq] - self.x_star[self.iq],
                               x[n + np.asarray(self.iv, dtype=np.int64)] - self.x_star[n + np.asarray(self.iv, dtype=np.int64)]])

    def reduced(self, z) -> np.ndarray:
        """z -> z(P(x(z))): the map in reduced coordinates."""
        return self.coords(self(self.state(z)))


# ----------------------------------------------------------------------------- result
@dataclass(frozen=True)
class GaitStability:
    """Outcome of :func:`floquet` (module docstring). Arrays are empty when not computed;
    eigenvalues sorted by decreasing modulus.

    Two sets of names: ``state_names`` are the d reduced coordinates z (changes from x*,
    so z(x*) = 0): the rows and columns of ``jacobian`` and the entries of
    ``residual_vector``. ``fixed_point`` is the full state x* = (q, qd) (2 n values, SI
    units m, rad, m/s, rad/s, the base x position included) and ``fixed_point_names``
    names each of its entries (``q_<body>_<unit>``, ``qd_<body>_<unit>_s``)."""

    status: str
    message: str
    verdict: str | None
    frequency_hz: float = float("nan")
    period_s: float = float("nan")
    periods: int = 1
    h_s: float = float("nan")
    settle_periods: int = 0
    t0_s: float = float("nan")
    n_loops: int = 0
    loaded_contacts: tuple[str, ...] = ()
    sticking_contacts: tuple[str, ...] = ()
    dependent_coordinates: tuple[str, ...] = ()
    free_contact_min_gap: float = float("nan")
    state_names: tuple[str, ...] = ()        # the reduced coordinates z (jacobian, residual_vector)
    fixed_point_names: tuple[str, ...] = ()  # the full state x = (q, qd): one per fixed_point entry
    fixed_point: np.ndarray = field(default_factory=lambda: np.zeros(0))   # full state x*
    residual: float = float("nan")
    residual_vector: np.ndarray = field(default_factory=lambda: np.zeros(0))
    newton_distance: float = float("nan")
    eps: float = EPS
    jacobian: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    eigenvalues: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=complex))
    max_modulus: float = float("nan")
    step_change: float = float("nan")
    chart_leak: float = float("nan")
    unconverged_steps: int = 0
    periodic_tol: float = PERIODIC_TOL
    accuracy_tol: float = ACCURACY_TOL
    wall_s: float = 0.0

    def to_json(self) -> dict:
        """JSON-ready dictionary: every field, eigenvalues as [re, im] pairs plus
        ``moduli``; NaN as null."""

        def num(v):
            v = float(v)
            return v if math.isfinite(v) else None

        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == "eigenvalues":
                out[f.name] = [[float(e.real), float(e.imag)] for e in v]
                out["moduli"] = [float(abs(e)) for e in v]
            elif isinstance(v, np.ndarray):
                out[f.name] = [[num(a) for a in row] for row in v] if v.ndim == 2 else [num(a) for a in v]
            elif isinstance(v, float):
                out[f.name] = num(v)
            elif isinstance(v, tuple):
                out[f.name] = list(v)
            else:
                out[f.name] = v
        return out


# ----------------------------------------------------------------------------- set-up
def gait_settings(settings, frequency: float):
    """``settings`` (WalkSettings) with the rollout step h' = T / round(T / h), T = 1 / f."""
    T = 1.0 / frequency
    h = settings.rollout.h
    hp = T / max(1, round(T / h))
    return dataclasses.replace(settings, rollout=dataclasses.replace(settings.rollout, h=hp))


def gait_setup(design, settings):
    """(Setup or None, message, settings with h') of a design for the stroboscopic map:
    built once to learn the gait frequency, again with h' = T / N if h' differs."""
    from codesign import walking as ev

    if settings.rollout.contact_model != "hard":
        raise UserError(f"evaluation.contact_model: {settings.rollout.contact_model!r}; the gait "
                        "analysis needs the stepping model, expected 'hard'")
    try:
        setup, early, _ = ev.build_setup(design, settings)
        if setup is not None:
            s2 = gait_settings(settings, float(setup.ctrl.timing[0]))
            if s2.rollout.h != settings.rollout.h:
                setup, early, _ = ev.build_setup(design, s2, screen_first=False)
            settings = s2
    except (UserError, KeyError, ValueError) as exc:
        text = str(exc) if not isinstance(exc, KeyError) else f"missing parameter {exc.args[0]}"
        return None, f"design: {text}", settings
    if setup is None:
        return None, early.message, settings
    return setup, "", settings


def default_settle_periods(max_time: float, frequency: float, periods: int = 1) -> int:
    """Whole periods that fit in max_time, less the map's own: the map's run ends at or
    before max_time (8 of 9 at 10 s and 0.9 Hz)."""
    return max(0, int(math.floor(max_time * frequency + 1e-9)) - periods)


class EvaluationTooShort(UserError):
    """``max_time`` (s) holds fewer whole gait periods than the default settling needs:
    at least one settling period, plus one more for a section phase > 0, plus the map's
    own ``periods``. ``minimum_s``: the shortest max_time that holds them (s)."""

    def __init__(self, max_time: float, frequency: float, needed: int, periods: int):
        self.max_time, self.frequency, self.needed, self.periods = max_time, frequency, needed, periods
        self.held = int(math.floor(max_time * frequency + 1e-9))
        self.minimum_s = needed / frequency
        super().__init__(f"max_time: {max_time:g} s; {self.explanation()}")

    def explanation(self, settle: str = "periods_settle") -> str:
        """The message without the setting's name (the command line names its flags;
        ``settle``: how to ask for an explicit number of settling periods)."""
        T = 1.0 / self.frequency
        return (f"it holds {self.held} whole gait period(s) of {T:.4g} s ({self.frequency:g} Hz); "
                f"expected at least {math.ceil(self.minimum_s * 100.0) / 100.0:g} s ({self.needed} periods: "
                f"1 settling, {'1 for the section phase, ' if self.needed > self.periods + 1 else ''}"
                f"{self.periods} for the map), or {settle} for an explicit number of settling periods")


# ----------------------------------------------------------------------------- analysis
def floquet(design, settings=None, periods_settle: int | None = None, eps: float = EPS,
            periods: int = 1, periodic_tol: float = PERIODIC_TOL,
            accuracy_tol: float = ACCURACY_TOL, check_step: bool = True,
            section_phase: float = 0.0) -> GaitStability:
    """Floquet multipliers of ``design`` (a :class:`codesign.walking.Design` or
    its JSON) under ``settings`` (WalkSettings or its dict; stepping contacts; default
    10 s): settle ``periods_settle`` gait periods (default
    :func:`default_settle_periods` of max_time, at least one: :class:`EvaluationTooShort`
    if max_time holds fewer), take x* = x(K T), and return the
    residual of the map over ``periods`` periods, its central-difference Jacobian (step
    ``eps``, checked against 2 eps unless ``check_step`` is False) in reduced
    coordinates, the eigenvalues and the verdict (module docstring). ``section_phase``
    (fraction of a period, [0, 1)) moves the section to x* = x((K + phase) T): away from
    a touch-down the state is smooth in time and the map better conditioned. Never raises for a
    design that is rejected or falls (``status`` says so); UserError for bad arguments."""
    import time

    from codesign import walking as ev

    t_start = time.perf_counter()
    if not isinstance(settings, ev.WalkSettings):
        settings = ev.WalkSettings.from_dict(settings)
    if not isinstance(design, ev.Design):
        design = ev.Design.from_json(design)
    _check_arguments(periods_settle, eps, periods, periodic_tol, accuracy_tol, section_phase)
    setup, message, settings = gait_setup(design, settings)
    if setup is None:
        return GaitStability("not_simulated", message, None, periods=periods, eps=eps,
                             periodic_tol=periodic_tol, accuracy_tol=accuracy_tol,
                             wall_s=time.perf_counter() - t_start)
    return floquet_setup(setup, settings.rollout.max_time, periods_settle, eps, periods,
                         periodic_tol, accuracy_tol, check_step, t_start, section_phase)


def _check_arguments(periods_settle, eps, periods, periodic_tol, accuracy_tol, section_phase=0.0) -> None:
    def integer(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

    if not (integer(periods) and periods >= 1):
        raise UserError(f"periods: {periods!r}; expected an integer >= 1")
    if periods_settle is not None and not (integer(periods_settle) and periods_settle >= 0):
        raise UserError(f"periods_settle: {periods_settle!r}; expected an integer >= 0")
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and 0.0 < eps <= 0.1):
        raise UserError(f"eps: {eps!r}; expected a step in (0, 0.1]")
    for name, v in (("periodic_tol", periodic_tol), ("accuracy_tol", accuracy_tol)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise UserError(f"{name}: {v!r}; expected a tolerance > 0")
    if not (isinstance(section_phase, (int, float)) and 0.0 <= section_phase < 1.0):
        raise UserError(f"section_phase: {section_phase!r}; expected a fraction of a period in [0, 1)")


def floquet_setup(setup, max_time: float, periods_settle: int | None = None, eps: float = EPS,
                  periods: int = 1, periodic_tol: float = PERIODIC_TOL,
                  accuracy_tol: float = ACCURACY_TOL, check_step: bool = True,
                  t_start: float | None = None, section_phase: float = 0.0) -> GaitStability:
    """:func:`floquet` on a built set-up (anything with .model, .p, .x0, .ctrl of the
    stepping rollout whose step divides the gait period: see :func:`gait_setup`). The
    set-up's workspaces are used and left in the state of the last run."""
    import time

    from codesign.dynamics import timestep as ts

    t_start = time.perf_counter() if t_start is None else t_start
    _check_arguments(periods_settle, eps, periods, periodic_tol, accuracy_tol, section_phase)
    f = float(setup.ctrl.timing[0])
    if periods_settle is None:
        # default: settle at least one whole period, the section (K + phase) T and the map's
        # end (K + phase + periods) T inside max_time; else EvaluationTooShort
        needed = periods + 1 + (1 if section_phase > 0.0 else 0)
        if math.floor(max_time * f + 1e-9) < needed:
            raise EvaluationTooShort(max_time, f, needed, periods)
        K = default_settle_periods(max_time, f, periods) - (1 if section_phase > 0.0 else 0)
    else:
        K = int(periods_settle)   # as asked, 0 included (x* = the initial state)
    smap = StroboscopicMap(setup, K, periods, section_phase)
    names = setup.model.contact_names
    common = dict(frequency_hz=f, period_s=smap.period, periods=periods, h_s=smap.h,
                  settle_periods=K, t0_s=smap.t0, n_loops=setup.model.n_loops,
                  loaded_contacts=tuple(names[i] for i in smap.loaded),
                  sticking_contacts=tuple(names[i] for i in smap.sticking),
                  dependent_coordinates=smap.dependent_names,
                  free_contact_min_gap=smap.free_min_gap, state_names=smap.names, eps=eps,
                  periodic_tol=periodic_tol, accuracy_tol=accuracy_tol)

    def result(status, message, verdict=None, **kw):
        names = smap.full_names if "fixed_point" in kw else ()   # one name per stored value
        return GaitStability(status, message, verdict, **common, **kw, fixed_point_names=names,
                             wall_s=time.perf_counter() - t_start)

    status, message = smap.settle_status
    if status != "ok":
        return result("fell", message)
    stats = smap.p.data.step_work.stats
    before = int(stats[ts.STAT_ABOVE_TOL])
    code, t, x1 = smap.run(smap.x_star)
    unconverged = int(stats[ts.STAT_ABOVE_TOL]) - before
    if code != OK:
        _, text = STATUS[code]
        return result("fell", f"{text} at t = {t:.3f} s (the period from x*)",
                      fixed_point=smap.x_star.copy(), unconverged_steps=unconverged)
    r = smap.coords(x1)
    residual = float(np.abs(r).max())
    zero = np.zeros(smap.dim)

    def full(z):                                          # P(x(z)), full state
        return smap(smap.state(z))

    try:
        D = central_jacobian(full, zero, eps)             # (2n, d): d P(x(z)) / dz
        D2 = central_jacobian(full, zero, 2.0 * eps) if check_step else None
    except PerturbationFailed as exc:
        return result("perturbation_fell", f"a perturbed period failed: {exc}",
                      fixed_point=smap.x_star.copy(), residual=residual, residual_vector=r,
                      unconverged_steps=unconverged)
    sel = smap.selection()
    J = sel @ D                                           # z(P(x(z))): z(x) is a selection
    lam = multipliers(J)
    step_change = modulus_change(lam, multipliers(sel @ D2)) if D2 is not None else float("nan")
    try:
        newton = float(np.abs(np.linalg.solve(J - np.eye(smap.dim), r)).max())
    except np.linalg.LinAlgError:
        newton = float("inf")
    # P's response outside the chart's tangent space (0 without constraints; module docstring)
    Dpsi = central_jacobian(smap.state, zero, eps)
    D[smap.ix] = 0.0
    Dpsi[smap.ix] = 0.0
    leak = float(np.linalg.norm(D - Dpsi @ J) / max(float(np.linalg.norm(D)), 1e-300))
    max_mod = float(np.abs(lam).max())
    if not residual <= periodic_tol:
        verdict = "not_periodic"
    elif step_change > accuracy_tol:
        verdict = "inaccurate"
    else:   # within the error estimate of 1: marginal
        verdict = multiplier_verdict(lam, margin=max(1e-9, 0.0 if math.isnan(step_change) else step_change))
    return result("ok", "", verdict, fixed_point=smap.x_star.copy(), residual=residual,
                  residual_vector=r, newton_distance=newton, jacobian=J, eigenvalues=lam,
                  max_modulus=max_mod, step_change=step_change, chart_leak=leak,
                  unconverged_steps=unconverged)
