"""Geyer & Herr 2010's reflex controller of the seven muscles of each leg, with neural delays
exact to the control step (issue 45, item 1: reflex control). The stepping rollout calls it
through :mod:`codesign.walking.muscle_wearer` (docs/muscles.md, "Reflex control").

Source: H. Geyer and H. Herr, IEEE TNSRE 18(3):263-273, 2010, Sec. II and Appendix (open
copy: MIT DSpace, http://hdl.handle.net/1721.1/70926). The paper's text could not be opened
in this session; the laws and numbers were read from four readable descriptions of the same
controller: a transcription of the paper's Table I (p. 269) and Appendix I (p. 270) in a
public Python module of the code index (``GEYER_HERR_2010_TABLE_I`` and
``geyer_herr_2010_stimulation``, "read off the rendered page at 300 dpi"; the index does
not name its repository -- :data:`TRANSCRIPTION`), T. Geijtenbeek's SCONE tutorial
controller ``ControllerGH2010.scone``
(github.com/opensim-org/SCONE, scenarios/Tutorials/data, commit 6c8e8e3; "adapted from
[Geyer & Herr 2010]", each gain commented with the paper's symbol), H. Geyer's own
parameter file ``ControlParams.m`` (github.com/nitishthatte/Neuromuscular-Transfemoral-
Prosthesis-Model, IntactModel/, commit 6d2673d: the delays, pre-stimulations, the knee
over-extension term) and a C++ port of the Geyer stance laws for a robot,
``StimGeyerCtrl.cc`` (github.com/mharding01/augmented-neuromuscular-RT-running, commit
0a7568c: the trunk PD weighted by the leg's load over body weight, k_bw, and GLU's 0.68 k_p).
Every number's source is in :data:`PARAMETER_SOURCES`; nothing here is their code.

Muscles (index m, the order of :data:`codesign.model.muscle_table.NAMES`): SOL, TA, GAS,
VAS, HAM, GLU, HFL. Legs: 0 and 1 (the caller's; the laws are symmetric). Signals, all
normalised as in SCONE: f = F_se/F_max, l = l_ce/l_opt; loads in N (the leg's vertical
ground reaction); the trunk pitch theta in rad, positive leaning forward (GH2010's theta,
theta_ref = 6 deg forward); the knee angle phi_k the paper's (pi straight, smaller in
flexion). [x]+ = max(x, 0). A muscle's own force and length, and the cross terms of its
law, are read with its loop's delay: long (20 ms) for SOL, TA, GAS; medium (10 ms) for VAS
and the knee angle; short (5 ms) for HAM, GLU, HFL and every trunk and load term, the
contralateral load in VAS's law included (Appendix I's t_l, t_m, t_s; ControlParams.m
``LongDelay``/``MidDelay``/``ShortDelay``). The length feedbacks are linear, as Appendix I
prints them (SCONE's adaptation takes their positive part); the clip bounds them.

Stance (the leg loaded)::

    S_SOL = S0 + G_SOL f_SOL
    S_TA  = S0 + G_TA (l_TA - l_off,TA) - G_SOLTA f_SOL
    S_GAS = S0 + G_GAS f_GAS
    S_VAS = S0_VAS + G_VAS f_VAS - k_phi dphi_k - k_bw |F_contra| DS_trail
            dphi_k = phi_k - phi_k,off where phi_k > phi_k,off and dphi_k/dt > 0, else 0
    u     = k_p (theta - theta_ref) + k_d dtheta/dt                       (trunk PD)
    u_GLU = c_GLU k_p (theta - theta_ref) + k_d dtheta/dt                 (c_GLU = 0.68)
    w     = k_bw |F_ipsi| (1 - DS_trail (1 - c_trail))                   (the PD's weight)
    S_HAM = S0_BAL + [u]+ w
    S_GLU = S0_BAL + [u_GLU]+ w - Delta_S DS_trail
    S_HFL = S0_BAL + [-u]+ w + Delta_S DS_trail

DS_trail = 1 while both legs are loaded and this leg's stance began first (the trailing leg
of double support, about to swing: swing initiation by load sharing with the contralateral
leg); else 0. (Appendix I's DSup; read as the trailing leg's, as StimGeyerCtrl.cc does --
the leading leg, just landed, must accept the weight.) c_trail = ``trail_balance``: 1 as
Appendix I (the trailing leg's trunk PD weighted by its load like any stance leg's), 0 as
SCONE's adaptation (the balance reflexes in early and late stance only, the trailing leg's
hip muscles under Delta_S alone; ``evaluation.trailing_balance = false``). Swing (the leg
unloaded)::

    S_SOL = S_GAS = S_VAS = S0
    S_TA  = S0 + G_TA (l_TA - l_off,TA)
    S_HAM = S0 + G_HAM f_HAM
    S_GLU = S0 + G_GLU f_GLU
    S_HFL = S0 + k_lean (theta_TO - theta_ref) + G_HFL (l_HFL - l_off,HFL)
               - G_HAMHFL (l_HAM - l_off,HAM)

theta_TO is the trunk pitch the leg saw (short delay) when its stance ended. Every
stimulation is clipped to [0.01, 1]. Stance/swing: the leg is in stance while its load read
with the contact delay exceeds ``stance_load`` times the body weight.

Delays (:class:`SignalHistory`): one ring buffer of the last ``capacity`` control steps of
every signal (a column per signal, :func:`signal_columns`); at a fixed control step h a
delay d is ``d/h`` steps, refused with one line unless d is a whole multiple of h
(:func:`delay_steps`), and a read ``steps`` back returns exactly the value pushed that many
pushes before (before the history is that long, the oldest value: :func:`history_fill`
primes the buffer with the initial state).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from codesign.errors import UserError
from codesign.model.muscle_table import NAMES
from codesign.model.muscles import MuscleConstants, joint_torques, mtu_lengths, muscles_step

SOL, TA, GAS, VAS, HAM, GLU, HFL = range(7)
N_MUSCLES = 7
N_LEGS = 2
assert NAMES == ("SOL", "TA", "GAS", "VAS", "HAM", "GLU", "HFL"), NAMES

# the loop each muscle's reflexes run on (its delay): ankle long, knee medium, hip short
LONG, MEDIUM, SHORT = 0, 1, 2
MUSCLE_LOOP = np.array([LONG, LONG, LONG, MEDIUM, SHORT, SHORT, SHORT], dtype=np.int64)

# columns of the signal history: per leg 7 forces f, 7 lengths l, knee angle and rate, load
PER_LEG = 2 * N_MUSCLES + 3
COL_FORCE, COL_LCE, COL_KNEE, COL_KNEE_RATE, COL_LOAD = 0, N_MUSCLES, 2 * N_MUSCLES, 2 * N_MUSCLES + 1, 2 * N_MUSCLES + 2
COL_TRUNK = N_LEGS * PER_LEG
COL_TRUNK_RATE = COL_TRUNK + 1
N_SIGNALS = COL_TRUNK + 2

GH2010 = "Geyer & Herr 2010, Sec. II/Appendix"
SCONE = "SCONE scenarios/Tutorials/data/ControllerGH2010.scone (commit 6c8e8e3)"
GEYER_M = "Geyer's IntactModel/ControlParams.m (nitishthatte/Neuromuscular-Transfemoral-Prosthesis-Model, commit 6d2673d)"
TRANSCRIPTION = ("GH2010 Table I (p. 269) / Appendix I (p. 270) as transcribed in GEYER_HERR_2010_TABLE_I of a public "
                 "Python module (code index file id 68884946497, repository not named)")


class ReflexDelays(NamedTuple):
    """One-way neural delays (s)."""
    long: float      # ankle muscles SOL, TA, GAS
    medium: float    # knee muscle VAS
    short: float     # hip muscles HAM, GLU, HFL; the trunk
    contact: float   # the load that switches stance/swing


GEYER_HERR_2010_DELAYS = ReflexDelays(long=0.020, medium=0.010, short=0.005, contact=0.0)


class DelaySteps(NamedTuple):
    """The delays of :class:`ReflexDelays` in control steps."""
    long: int
    medium: int
    short: int
    contact: int


class ReflexParams(NamedTuple):
    """Gains and offsets of the laws (module docstring), dimensionless unless said;
    sources in :data:`PARAMETER_SOURCES`."""
    s0: float            # pre-stimulation of every muscle outside its stance law below
    s0_vas: float        # VAS pre-stimulation in stance
    s0_bal: float        # HAM, GLU, HFL pre-stimulation in stance (trunk balance)
    g_sol: float         # SOL force feedback, per F_max,SOL
    g_ta: float          # TA length feedback, per l_opt,TA
    l_off_ta: float      # TA length offset, in l_opt,TA
    g_sol_ta: float      # SOL force inhibition of TA, per F_max,SOL
    g_gas: float         # GAS force feedback, per F_max,GAS
    g_vas: float         # VAS force feedback, per F_max,VAS
    k_phi: float         # knee over-extension inhibition of VAS (1/rad)
    phi_k_off: float     # knee angle above which it acts (rad, the paper's knee angle)
    k_bw: float          # load gain, per body weight (k_bw |F| / (m g))
    k_p: float           # trunk pitch gain (1/rad)
    k_d: float           # trunk pitch rate gain (s/rad)
    glu_kp_scale: float  # GLU's share of k_p in the stance trunk PD
    theta_ref: float     # reference trunk pitch (rad, forward lean)
    delta_s: float       # swing initiation in double support (GLU -, HFL +)
    g_hfl: float         # swing HFL length feedback, per l_opt,HFL
    l_off_hfl: float     # in l_opt,HFL
    k_lean: float        # swing HFL from the trunk lean at take-off (1/rad)
    g_ham_hfl: float     # HAM length inhibition of swing HFL, per l_opt,HAM
    l_off_ham: float     # in l_opt,HAM
    g_ham: float         # swing HAM force feedback, per F_max,HAM
    g_glu: float         # swing GLU force feedback, per F_max,GLU
    trail_balance: float # 1: the trailing leg's trunk PD as any stance leg's (the paper); 0: off (SCONE)
    stance_load: float   # stance while the leg's load exceeds this fraction of body weight
    body_weight: float   # N: m g, which k_bw and stance_load refer to
    stim_min: float      # clip of every stimulation
    stim_max: float


class ParameterSource(NamedTuple):
    """One parameter's value with its unit and where it comes from."""
    name: str
    value: float
    unit: str
    source: str


PARAMETER_SOURCES = (
    ParameterSource("s0", 0.01, "-", f"{TRANSCRIPTION}: Table I caption, S0 = 0.01 but for S0,VAS and S0,BAL; "
                    f"{GEYER_M} PreStimSOL/GAS/TA/HAM/GLU = 0.01"),
    ParameterSource("s0_vas", 0.09, "-", f"{TRANSCRIPTION}: S0,VAS = 0.09; {SCONE} line 58 (C0, '# S_0,VAS')"),
    ParameterSource("s0_bal", 0.05, "-", f"{TRANSCRIPTION}: S0,BAL = 0.05; {SCONE} lines 70, 79, 88; {GEYER_M} PreStimGG"),
    ParameterSource("g_sol", 1.2, "1/F_max", f"{TRANSCRIPTION}: G_SOL = 1.2; {SCONE} line 38; {GEYER_M} GainSOL = 1.2/FmaxSOL"),
    ParameterSource("g_ta", 1.1, "1/l_opt", f"{TRANSCRIPTION}: G_TA = 1.1; {SCONE} line 19; {GEYER_M} GainTA = 1.1"),
    ParameterSource("l_off_ta", 0.71, "l_opt", f"{TRANSCRIPTION}: l_off,TA = 0.71; {SCONE} line 20"),
    ParameterSource("g_sol_ta", 0.3, "1/F_max", f"{TRANSCRIPTION}: G_SOLTA = 0.3; {SCONE} line 26 (KF = -0.3)"),
    ParameterSource("g_gas", 1.1, "1/F_max", f"{TRANSCRIPTION}: G_GAS = 1.1; {SCONE} line 43; {GEYER_M} GainGAS"),
    ParameterSource("g_vas", 1.15, "1/F_max", f"{TRANSCRIPTION}: G_VAS = 1.15; {SCONE} line 57 ('# G_VAS')"),
    ParameterSource("k_phi", 2.0, "1/rad", f"{TRANSCRIPTION}: k_phi = 2.0; {GEYER_M} GainKneeOverExt = 2"),
    ParameterSource("phi_k_off", 2.97, "rad", f"{TRANSCRIPTION}: phi_k,off = 2.97; {GEYER_M} kneeAngleOffset = 10 deg "
                    "of flexion (170 deg = 2.967 rad)"),
    ParameterSource("k_bw", 1.2, "1/(m g)", f"{TRANSCRIPTION}: k_bw = 1.2 (the transcriber notes its printed range "
                    "excludes it); the weighting k_bw F_foot/(m g) also in StimGeyerCtrl.cc (commit 0a7568c); SCONE drops it"),
    ParameterSource("k_p", 1.91, "1/rad", f"{TRANSCRIPTION}: k_p = 1.91; {SCONE} line 67 ('# k_p'); {GEYER_M} 1/(30 deg)"),
    ParameterSource("glu_kp_scale", 0.68, "-", f"{TRANSCRIPTION}: '0.68 k_p' in Appendix I's stance S_GLU; "
                    "StimGeyerCtrl.cc (mharding01/augmented-neuromuscular-RT-running, commit 0a7568c) PD_torso_2"),
    ParameterSource("k_d", 0.25, "s/rad", f"{TRANSCRIPTION}: k_d = 0.25; {SCONE} line 68 ('# k_d'); {GEYER_M} has 0.2"),
    ParameterSource("theta_ref", 0.105, "rad", f"{TRANSCRIPTION}: theta_ref = 0.105; {SCONE} line 69 (P0 = -0.105 on "
                    f"its backward-positive pelvis tilt); {GEYER_M} phiHATref = 6 deg"),
    ParameterSource("delta_s", 0.25, "-", f"{TRANSCRIPTION}: Delta_S = 0.25; {SCONE} lines 101, 106 ('# DELTA_S')"),
    ParameterSource("g_hfl", 0.35, "1/l_opt", f"{TRANSCRIPTION}: G_HFL = 0.35; {SCONE} line 119 ('# G_HFL')"),
    ParameterSource("l_off_hfl", 0.60, "l_opt", f"{TRANSCRIPTION}: l_off,HFL = 0.6; {SCONE} line 120"),
    ParameterSource("k_lean", 1.15, "1/rad", f"{TRANSCRIPTION}: k_lean = 1.15, applied to the lean at the previous "
                    f"take-off; {SCONE} line 126 (on the current tilt)"),
    ParameterSource("g_ham_hfl", 4.0, "1/l_opt", f"{TRANSCRIPTION}: G_HAMHFL = 4.0; {SCONE} line 135 (KL = -4.0)"),
    ParameterSource("l_off_ham", 0.85, "l_opt", f"{TRANSCRIPTION}: l_off,HAM = 0.85; {SCONE} line 136"),
    ParameterSource("g_ham", 0.65, "1/F_max", f"{TRANSCRIPTION}: G_HAM = 0.65; {SCONE} line 142"),
    ParameterSource("g_glu", 0.4, "1/F_max", f"{TRANSCRIPTION}: G_GLU = 0.4; {SCONE} line 147"),
    ParameterSource("trail_balance", 1.0, "-", f"{TRANSCRIPTION}: Appendix I's stance S_HAM, S_GLU, S_HFL carry the trunk "
                    f"PD on every loaded leg, weighted by its load, the trailing leg's too (1); {SCONE} keeps its "
                    "balance reflexes to EarlyStance and LateStance, its Liftoff state (the trailing leg) gets Delta_S "
                    "alone (0; evaluation.trailing_balance = false)"),
    ParameterSource("stance_load", 0.1, "m g", f"{SCONE} line 8 (stance_load_threshold ~0.1; the paper switches on "
                    "ground contact)"),
    ParameterSource("stim_min", 0.01, "-", f"{TRANSCRIPTION}: 'All stimulations are limited from 0.01 to 1'"),
    ParameterSource("stim_max", 1.0, "-", f"{TRANSCRIPTION}: 'All stimulations are limited from 0.01 to 1'"),
)
DELAY_SOURCES = (
    ParameterSource("long", 0.020, "s", f"{TRANSCRIPTION}: t_l (SOL, TA, GAS); {GEYER_M} LongDelay; {SCONE} line 18"),
    ParameterSource("medium", 0.010, "s", f"{TRANSCRIPTION}: t_m (VAS); {GEYER_M} MidDelay; {SCONE} line 56"),
    ParameterSource("short", 0.005, "s", f"{TRANSCRIPTION}: t_s (HAM, GLU, HFL, trunk and load terms); {GEYER_M} "
                    f"ShortDelay; {SCONE} line 66"),
    ParameterSource("contact", 0.0, "s", f"{SCONE} line 9 (leg_load_sensor_delay = 0)"),
)
STANDARD_GRAVITY = 9.81
# Each reflex parameter's physical range (issue 45, item 4: the ranges a search moves them
# in; a value outside is a UserError line). Stimulations and pre-stimulations are fractions
# of full activation; a gain's range is 0 (the loop off) to 4-5 times the published value
# (a loop gain beyond that saturates the clip [0.01, 1] at a tenth of the signal's range);
# length offsets stay where the muscle's force-length curve is above 5 % (l_opt (1 +- w),
# w = 0.4-0.56: Table I); the knee offset spans 150-180 deg of the paper's knee angle; the
# reference lean -0.2..0.4 rad (-11..23 deg) brackets people's 0-10 deg; the stance load
# threshold 1-50 % of body weight.
REFLEX_RANGES: dict[str, tuple[float, float]] = {
    "s0": (0.0, 0.1), "s0_vas": (0.0, 0.5), "s0_bal": (0.0, 0.5),
    "g_sol": (0.0, 5.0), "g_ta": (0.0, 5.0), "l_off_ta": (0.5, 1.4), "g_sol_ta": (0.0, 2.0),
    "g_gas": (0.0, 5.0), "g_vas": (0.0, 5.0), "k_phi": (0.0, 10.0), "phi_k_off": (2.62, 3.14),
    "k_bw": (0.0, 5.0), "k_p": (0.0, 10.0), "k_d": (0.0, 2.0), "glu_kp_scale": (0.0, 1.5),
    "theta_ref": (-0.2, 0.4), "delta_s": (0.0, 1.0), "g_hfl": (0.0, 5.0), "l_off_hfl": (0.5, 1.4),
    "k_lean": (0.0, 5.0), "g_ham_hfl": (0.0, 10.0), "l_off_ham": (0.5, 1.4), "g_ham": (0.0, 5.0),
    "g_glu": (0.0, 5.0), "stance_load": (0.01, 0.5),
}
REFLEX_PREFIX = "reflex."   # a design's reflex parameter: params["reflex.g_sol"] ...


def reflex_changes(params) -> dict[str, float]:
    """The reflex parameters a design's ``params`` (name -> value) set: each
    ``reflex.<name>`` by its name (:func:`reflex_params` checks them)."""
    return {name.removeprefix(REFLEX_PREFIX): float(value) for name, value in params.items()
            if name.startswith(REFLEX_PREFIX)}


def reflex_params(body_mass: float, **changes: float) -> ReflexParams:
    """The parameters of :data:`PARAMETER_SOURCES` for a person of ``body_mass`` (kg), with
    ``changes`` by name (e.g. a search's values). UserError (one line) for an unknown name,
    a body mass <= 0, a non-finite value or stim bounds outside 0 <= min < max <= 1."""
    if not (math.isfinite(body_mass) and body_mass > 0.0):
        raise UserError(f"reflex: body_mass = {body_mass} is outside its range, expected a finite mass > 0 (kg)")
    values = {row.name: row.value for row in PARAMETER_SOURCES}
    values["body_weight"] = body_mass * STANDARD_GRAVITY
    for name, value in changes.items():
        if name not in values:
            raise UserError(f"reflex: unknown parameter {name!r}, expected one of {', '.join(ReflexParams._fields)}")
        values[name] = float(value)
        low, high = REFLEX_RANGES.get(name, (-math.inf, math.inf))
        if math.isfinite(values[name]) and not low <= values[name] <= high:
            raise UserError(f"reflex: {name} = {value} is outside its physical range, expected {low} <= {name} "
                            f"<= {high}")
    bad = [n for n, v in values.items() if not math.isfinite(v)]
    if bad:
        raise UserError(f"reflex: {bad[0]} = {values[bad[0]]} is not finite, expected a finite number")
    if not 0.0 <= values["stim_min"] < values["stim_max"] <= 1.0:
        raise UserError(f"reflex: stim_min = {values['stim_min']}, stim_max = {values['stim_max']}, expected 0 <= min < max <= 1")
    return ReflexParams(**{name: values[name] for name in ReflexParams._fields})


def delay_steps(delays: ReflexDelays, h: float) -> DelaySteps:
    """Each delay in steps of the control step h (s). UserError (one line) unless h > 0 and
    every delay is >= 0 and a whole multiple of h (to 1e-9 of a step)."""
    if not (math.isfinite(h) and h > 0.0):
        raise UserError(f"reflex: control step h = {h} s, expected a finite step > 0")
    steps = []
    for name, d in zip(ReflexDelays._fields, delays):
        n = round(d / h)
        if not (math.isfinite(d) and d >= 0.0) or abs(d / h - n) > 1e-9:
            raise UserError(f"reflex: the {name} delay {d} s is not a whole number of control steps of {h} s, "
                            f"expected a multiple of h")
        steps.append(int(n))
    return DelaySteps(*steps)


# --------------------------------------------------------------------------- delays
class SignalHistory(NamedTuple):
    """Ring buffer of the last ``capacity`` control steps of every signal: ``buf[slot,
    column]``, ``head[0]`` the slot of the latest push."""
    buf: np.ndarray    # (capacity, N_SIGNALS) float64
    head: np.ndarray   # (1,) int64


def signal_history(steps: DelaySteps) -> SignalHistory:
    """An empty history long enough for the longest of ``steps`` (capacity = max + 1)."""
    capacity = max(steps) + 1
    return SignalHistory(buf=np.zeros((capacity, N_SIGNALS)), head=np.zeros(1, dtype=np.int64))


@njit(cache=True, _nrt=False)
def history_advance(hist: SignalHistory) -> int:
    """Move the head one slot on and return it: the row the caller writes this step's
    signals into (overwriting the one pushed ``capacity`` steps ago)."""
    slot = hist.head[0] + 1
    if slot == hist.buf.shape[0]:
        slot = 0
    hist.head[0] = slot
    return slot


@njit(cache=True, _nrt=False)
def history_read(hist: SignalHistory, column: int, steps: int) -> float:
    """The value of ``column`` pushed ``steps`` pushes before the latest (0: the latest);
    ``steps`` < capacity (:func:`signal_history` sizes it for the delays)."""
    slot = hist.head[0] - steps
    if slot < 0:
        slot += hist.buf.shape[0]
    return hist.buf[slot, column]


@njit(cache=True, _nrt=False)
def history_fill(hist: SignalHistory) -> None:
    """Copy the latest row into every slot: the signals held at their initial values for
    as long as the delays look back."""
    head = hist.head[0]
    for slot in range(hist.buf.shape[0]):
        if slot != head:
            for column in range(hist.buf.shape[1]):
                hist.buf[slot, column] = hist.buf[head, column]


# --------------------------------------------------------------------------- the laws
@njit(cache=True, _nrt=False)
def _clip(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else (hi if x > hi else x)


@njit(cache=True, _nrt=False)
def _pos(x: float) -> float:
    return x if x > 0.0 else 0.0


@njit(cache=True, _nrt=False)
def reflex_stimulations(p: ReflexParams, stance: np.ndarray, trailing: np.ndarray, theta_to: np.ndarray,
                        f: np.ndarray, lce: np.ndarray, knee: np.ndarray, knee_rate: np.ndarray,
                        load: np.ndarray, trunk: float, trunk_rate: float,
                        out: np.ndarray) -> None:
    """The 14 stimulations (``out`` (2, 7), legs x SOL..HFL, clipped to [stim_min,
    stim_max]) of the laws in the module docstring, from inputs already delayed:

    stance, trailing (2,) int (1/0): the leg in stance; the trailing leg of double support;
    theta_to (2,) rad: the trunk pitch at the leg's last take-off;
    f (2, 7): F_se/F_max, lce (2, 7): l_ce/l_opt, each muscle's at its own loop delay;
    knee, knee_rate (2,): the paper's knee angle (rad) and its rate (rad/s), medium delay;
    load (2,): each leg's load (N) at the short delay;
    trunk (rad, forward), trunk_rate (rad/s): the trunk pitch at the short delay."""
    u = p.k_p * (trunk - p.theta_ref) + p.k_d * trunk_rate
    u_glu = p.glu_kp_scale * p.k_p * (trunk - p.theta_ref) + p.k_d * trunk_rate
    for leg in range(2):
        other = 1 - leg
        s = out[leg]
        if stance[leg] == 1:
            trail = 1.0 if trailing[leg] == 1 else 0.0
            s[SOL] = p.s0 + p.g_sol * f[leg, SOL]
            s[TA] = p.s0 + p.g_ta * (lce[leg, TA] - p.l_off_ta) - p.g_sol_ta * f[leg, SOL]
            s[GAS] = p.s0 + p.g_gas * f[leg, GAS]
            over = 0.0
            if knee[leg] > p.phi_k_off and knee_rate[leg] > 0.0:
                over = knee[leg] - p.phi_k_off
            s[VAS] = (p.s0_vas + p.g_vas * f[leg, VAS] - p.k_phi * over
                      - trail * p.k_bw * abs(load[other]) / p.body_weight)
            weight = p.k_bw * abs(load[leg]) / p.body_weight * (1.0 - trail * (1.0 - p.trail_balance))
            s[HAM] = p.s0_bal + _pos(u) * weight
            s[GLU] = p.s0_bal + _pos(u_glu) * weight - trail * p.delta_s
            s[HFL] = p.s0_bal + _pos(-u) * weight + trail * p.delta_s
        else:
            s[SOL] = p.s0
            s[TA] = p.s0 + p.g_ta * (lce[leg, TA] - p.l_off_ta)
            s[GAS] = p.s0
            s[VAS] = p.s0
            s[HAM] = p.s0 + p.g_ham * f[leg, HAM]
            s[GLU] = p.s0 + p.g_glu * f[leg, GLU]
            s[HFL] = (p.s0 + p.k_lean * (theta_to[leg] - p.theta_ref)
                      + p.g_hfl * (lce[leg, HFL] - p.l_off_hfl)
                      - p.g_ham_hfl * (lce[leg, HAM] - p.l_off_ham))
        for m in range(N_MUSCLES):
            s[m] = _clip(s[m], p.stim_min, p.stim_max)


# --------------------------------------------------------------------------- one control step
class ReflexMemory(NamedTuple):
    """The controller's state besides the history, and its scratch for the delayed reads.
    All arrays are written in place by :func:`reflex_control_step`."""
    stance: np.ndarray       # (2,) int64: 1 in stance
    trailing: np.ndarray     # (2,) int64: 1 the trailing leg of double support
    theta_to: np.ndarray     # (2,) rad: trunk pitch at the last take-off
    f: np.ndarray            # (2, 7) scratch: delayed F/F_max
    lce: np.ndarray          # (2, 7) scratch: delayed l_ce/l_opt
    knee: np.ndarray         # (2,) scratch
    knee_rate: np.ndarray    # (2,) scratch
    load: np.ndarray         # (2,) scratch


def reflex_memory(theta_ref: float = 0.0) -> ReflexMemory:
    """Both legs in swing, no trailing leg, theta_TO = ``theta_ref`` (rad)."""
    return ReflexMemory(stance=np.zeros(2, dtype=np.int64), trailing=np.zeros(2, dtype=np.int64),
                        theta_to=np.full(2, theta_ref), f=np.zeros((2, N_MUSCLES)), lce=np.zeros((2, N_MUSCLES)),
                        knee=np.zeros(2), knee_rate=np.zeros(2), load=np.zeros(2))


@njit(cache=True, _nrt=False)
def update_gait_state(p: ReflexParams, steps: DelaySteps, hist: SignalHistory, mem: ReflexMemory) -> None:
    """Stance/swing of each leg from its load read with the contact delay (stance while
    load > stance_load m g). Take-offs first: the leg leaves stance, is no longer trailing,
    and keeps theta_TO = the trunk pitch at the short delay. Then touch-downs: the leg
    enters stance, and a contralateral leg already in stance becomes the trailing leg."""
    threshold = p.stance_load * p.body_weight
    for leg in range(2):
        loaded = history_read(hist, leg * PER_LEG + COL_LOAD, steps.contact) > threshold
        if not loaded and mem.stance[leg] == 1:
            mem.stance[leg] = 0
            mem.trailing[leg] = 0
            mem.theta_to[leg] = history_read(hist, COL_TRUNK, steps.short)
    for leg in range(2):
        loaded = history_read(hist, leg * PER_LEG + COL_LOAD, steps.contact) > threshold
        if loaded and mem.stance[leg] == 0:
            mem.stance[leg] = 1
            mem.trailing[leg] = 0
            if mem.stance[1 - leg] == 1:
                mem.trailing[1 - leg] = 1


@njit(cache=True, _nrt=False)
def write_signals(hist: SignalHistory, f: np.ndarray, lce: np.ndarray, knee: np.ndarray, knee_rate: np.ndarray,
                  load: np.ndarray, trunk: float, trunk_rate: float) -> None:
    """Push this step's signals: f, lce (2, 7) normalised, knee, knee_rate, load (2,) and
    the trunk pitch and rate."""
    slot = history_advance(hist)
    row = hist.buf[slot]
    for leg in range(2):
        base = leg * PER_LEG
        for m in range(N_MUSCLES):
            row[base + COL_FORCE + m] = f[leg, m]
            row[base + COL_LCE + m] = lce[leg, m]
        row[base + COL_KNEE] = knee[leg]
        row[base + COL_KNEE_RATE] = knee_rate[leg]
        row[base + COL_LOAD] = load[leg]
    row[COL_TRUNK] = trunk
    row[COL_TRUNK_RATE] = trunk_rate


@njit(cache=True, _nrt=False)
def _loop_steps(steps: DelaySteps, loop: int) -> int:
    if loop == LONG:
        return steps.long
    if loop == MEDIUM:
        return steps.medium
    return steps.short


@njit(cache=True, _nrt=False)
def reflex_control_step(p: ReflexParams, steps: DelaySteps, hist: SignalHistory, mem: ReflexMemory,
                        out: np.ndarray) -> None:
    """After this step's signals are pushed (:func:`write_signals`): the gait state
    (:func:`update_gait_state`), then every input read with its delay and the laws
    (:func:`reflex_stimulations`) into ``out`` (2, 7)."""
    update_gait_state(p, steps, hist, mem)
    for leg in range(2):
        base = leg * PER_LEG
        for m in range(N_MUSCLES):
            n = _loop_steps(steps, MUSCLE_LOOP[m])
            mem.f[leg, m] = history_read(hist, base + COL_FORCE + m, n)
            mem.lce[leg, m] = history_read(hist, base + COL_LCE + m, n)
        mem.knee[leg] = history_read(hist, base + COL_KNEE, steps.medium)
        mem.knee_rate[leg] = history_read(hist, base + COL_KNEE_RATE, steps.medium)
        mem.load[leg] = history_read(hist, base + COL_LOAD, steps.short)
    # the swing HFL's HAM inhibition is a hip loop: HAM's length at the short delay (MUSCLE_LOOP[HAM])
    trunk = history_read(hist, COL_TRUNK, steps.short)
    trunk_rate = history_read(hist, COL_TRUNK_RATE, steps.short)
    reflex_stimulations(p, mem.stance, mem.trailing, mem.theta_to, mem.f, mem.lce, mem.knee, mem.knee_rate,
                        mem.load, trunk, trunk_rate, out)


# --------------------------------------------------------------------------- muscles + reflexes
class LegMuscles(NamedTuple):
    """The muscle state of both legs ((2, 7) each, SI: m, m/s, N) and the stimulation held
    over the coming step (2, 7)."""
    stim: np.ndarray
    act: np.ndarray
    l_ce: np.ndarray
    v_ce: np.ndarray
    l_mtu: np.ndarray
    f_se: np.ndarray


@njit(cache=True, _nrt=False)
def reflex_muscle_step(table, cst: MuscleConstants, p: ReflexParams, steps: DelaySteps, hist: SignalHistory,
                       mem: ReflexMemory, mus: LegMuscles, h: float, phi: np.ndarray, phi_rate: np.ndarray,
                       load: np.ndarray, trunk: float, trunk_rate: float, torque: np.ndarray) -> None:
    """One control step at time t, the function the rollout calls each step h (s):

    1. the muscles advance from t - h to t (:func:`muscles_step`: activation under the
       stimulation held since t - h, backward-Euler CE at the MTU lengths of ``phi``);
    2. ``torque`` (2, 3) = each leg's (ankle, knee, hip) torque (N m) on the paper's angles
       from the tendon forces at t (:func:`joint_torques`), to be held over [t, t + h];
    3. the signals at t are pushed (forces F_se/F_max, l_ce/l_opt, knee angle and rate, the
       legs' loads, the trunk) and the stimulation for [t, t + h] is computed
       (:func:`reflex_control_step`) into ``mus.stim``.

    phi, phi_rate (2, 3): per leg the paper's (ankle, knee, hip) angles (rad) and rates
    (rad/s) at t; load (2,): each leg's vertical ground reaction (N, >= 0) at t; trunk
    (rad, forward lean positive) and trunk_rate (rad/s) at t."""
    for leg in range(2):
        muscles_step(table, cst, phi[leg], mus.stim[leg], h, mus.l_ce[leg], mus.act[leg], mus.v_ce[leg],
                     mus.l_mtu[leg], mus.f_se[leg])
        joint_torques(table, phi[leg], mus.f_se[leg], torque[leg])
        for m in range(N_MUSCLES):
            mem.f[leg, m] = mus.f_se[leg, m] / table.f_max[m]
            mem.lce[leg, m] = mus.l_ce[leg, m] / table.l_opt[m]
        mem.knee[leg] = phi[leg, 1]
        mem.knee_rate[leg] = phi_rate[leg, 1]
    write_signals(hist, mem.f, mem.lce, mem.knee, mem.knee_rate, load, trunk, trunk_rate)
    reflex_control_step(p, steps, hist, mem, mus.stim)


@njit(cache=True, _nrt=False)
def settle_muscles(table, cst: MuscleConstants, phi: np.ndarray, stim: np.ndarray, h: float, n_steps: int,
                   l_ce: np.ndarray, act: np.ndarray, v_ce: np.ndarray, l_mtu: np.ndarray, f_se: np.ndarray) -> None:
    """One leg held at ``phi`` under ``stim`` for n_steps of h: act and l_ce settle on the
    static balance (an initial state for :func:`reflex_muscle_step`)."""
    for _ in range(n_steps):
        muscles_step(table, cst, phi, stim, h, l_ce, act, v_ce, l_mtu, f_se)


def reflex_start(table, cst: MuscleConstants, p: ReflexParams, steps: DelaySteps, h: float, phi: np.ndarray,
                 phi_rate: np.ndarray, load: np.ndarray, trunk: float, trunk_rate: float,
                 settle_s: float = 1.0) -> tuple:
    """An initial (history, memory, muscles) at a posture held still: each leg's muscles
    settled for ``settle_s`` under the pre-stimulation s0, the signals written and the
    history filled with them (the delays see the initial state), the stance flags from the
    loads (no trailing leg), theta_TO = theta_ref, and the first stimulation computed.
    Arrays as :func:`reflex_muscle_step`."""
    phi = np.ascontiguousarray(phi, dtype=np.float64)
    mus = LegMuscles(*(np.zeros((2, N_MUSCLES)) for _ in LegMuscles._fields))
    mus.stim[:] = p.s0
    mus.act[:] = p.s0
    for leg in range(2):
        mtu_lengths(table, phi[leg], mus.l_mtu[leg])
        mus.l_ce[leg] = table.l_opt
        settle_muscles(table, cst, phi[leg], mus.stim[leg], h, int(round(settle_s / h)), mus.l_ce[leg],
                       mus.act[leg], mus.v_ce[leg], mus.l_mtu[leg], mus.f_se[leg])
    hist = signal_history(steps)
    mem = reflex_memory(p.theta_ref)
    f = mus.f_se / table.f_max
    lce = mus.l_ce / table.l_opt
    write_signals(hist, f, lce, phi[:, 1].copy(), np.asarray(phi_rate, dtype=np.float64)[:, 1].copy(),
                  np.asarray(load, dtype=np.float64), float(trunk), float(trunk_rate))
    history_fill(hist)
    for leg in range(2):
        mem.stance[leg] = 1 if load[leg] > p.stance_load * p.body_weight else 0
    reflex_control_step(p, steps, hist, mem, mus.stim)
    return hist, mem, mus
