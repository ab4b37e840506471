"""Browning et al. 2007's leg and waist loads on the muscle-driven human (issue 45's
validation): a design walked 10 s with each load (``evaluation.loads``), its reflexes kept
as searched unloaded, or searched again under each load (``--search``: as people adapt
their gait to a load, and as a device's wearer will be); the rise of its net metabolic
power per kg of the person's body mass against the published rise.

    .venv/bin/python studies/muscle-wearer/loads.py [--design FILE] [PROTOCOL] [OPTIONS]

    (no protocol)        reflexes kept (~1 min): loads[-<stem>].csv
    --search             all searched again (~15 min on 2 cores): loads-searched[-<stem>].csv
    --hold-speed         the lean reference scanned over LEAN_GRID, every other reflex kept, the
                         cheapest walk within 3 % of 1.25 m/s (~1 min): loads-held-<stem>.csv
    --fit-speed          those walks, the cost read off a speed fit: loads-fit-<stem>.csv
    --adapt-swing        swing reflexes and lean searched (~25 min): loads-swing-<stem>.csv
    --adapt-all          every reflex and the lean searched: loads-adapted-<stem>.csv
    --pool-walkers A-designs.json ...   each load's walk the cheapest of the walkers those
                         protocols wrote: loads-walkers-<stem>.csv
    --summary            every table's ratios, one table
  options: --gait-lab (the gait lab's knee and landings kept: ...lab...), --seed N (another
  PSO seed: ...-seedN.csv), and with --pool-walkers --refine N (each load no walker prices
  searched on from the nearest, N rounds: ...refined...), --converge N (then each load and
  unloaded searched on from its cheapest walker until converged: ...converged...), --robust
  (each walk the cheapest that meets its stages and its price at half the step too: ...robust...),
  --price JSON (every walk priced, and every search run, under these evaluation settings, e.g.
  '{"metabolic_model": "bhargava2004", "standing_reference": "published"}': ...-bhargava2004-published).
A searching protocol also writes the reflexes of each of its walks beside its table
(``loads-<kind>-<stem>-designs.json``: the unloaded walker under ``none``, each load's under
its slug; pooled, the search's best each walk took), so its rises replay without the runs.

``--search`` runs, per load and once unloaded, ``codesign optimize`` on a spec beside its run
(results/muscle-loads/[<stem>-]<load>.toml): PSO 24 x 30 within +-5 % of the design's
reflexes, seed 45, the load in ``[evaluation]``, a treadmill's stages (``TREADMILL_STAGES``);
the rise is the loaded search's best against the unloaded one's. Stored runs are reused.

``--adapt-swing`` lets the wearer adapt where Browning saw people adapt (his subjects kept
their kinematics, stance moments and EMG under waist, thigh and shank loads, and drove the
swing harder under foot loads): per load and once unloaded, PSO 24 x 40, seed 45, within
+-3 % of the design's reflexes plus starts at other leans, frees ``SWING_REFLEXES`` and the
lean, under ``SWING_STAGES`` (the 10 s at 1.25 m/s +-3 %, Winter's stride shapes loosely
kept, then the least net cost per metre); ``--adapt-all`` frees every reflex. ``--gait-lab``
adds the gait lab's knee and landings (:func:`gait_lab_stages`); ``--seed N`` another PSO
seed. ``--pool-walkers`` searches nothing: every walker protocols wrote to their
``-designs.json`` walks each load and unloaded, each taking the cheapest walk that is a
person's there under its stages (:func:`pooled`; then :func:`refined`, :func:`converged`,
:func:`robust_pooled`).

Every protocol prices a load only from a person's walk: the whole 10 s without the pitch
assist (:func:`walks_alone`; an external torque on the torso), and a searched walk only
once its search's stages before the cost are met (:func:`stages_met`); otherwise NaN.

The published rises are secondary readings (Browning et al., Med Sci Sports Exerc
39(3):515-525, 2007; its figure could not be read here): linear fits of net metabolic rate
(W/kg) on the total added mass (kg) per location -- waist 0.045, thigh 0.075, shank 0.076
W/kg per kg (the fits in the code accompanying Khalilian-Motamed Bonab & Patoglu,
arXiv:2110.00062, which cite Browning) -- and the foot's ~8 % of the unloaded 2.35 W/kg per
kg (lecture notes reading Browning's figure; 7.5-8.5 %/kg in a 2021 paper citing it,
PMC8299804).
"""

from __future__ import annotations

import argparse
import dataclasses
import csv
import itertools
import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import tomli_w

from codesign.control.reflex import REFLEX_PREFIX
from codesign.model.anthropometry import human_geometry
from codesign.objectives import Objective, lexicographic
from codesign.problems.muscle_gait import KNEE_STANCE_PEAK_MAX_DEG, KNEE_STANCE_PEAK_MIN_DEG
from codesign.problems.robust import check_change, read_robust_checks
from codesign.run.stored import StoredDesign, stored_candidate, stored_candidates
from codesign.walking import Design, WalkSettings, evaluate, load_design

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DESIGN = ROOT / "docs" / "designs" / "human-muscles.json"
RUNS = ROOT / "results" / "muscle-loads"
UNLOADED_W_PER_KG = 2.35          # Browning's unloaded net rate as read (see above)
# W/kg of net metabolic rate per kg of total added mass, by location (see above)
PUBLISHED_SLOPE = {"foot": 0.08 * UNLOADED_W_PER_KG, "shank": 0.076, "thigh": 0.075, "torso": 0.045}
# Browning's conditions: (segment, kg per segment); leg loads on both legs, the waist's a
# torso load at the hip (position 0)
CONDITIONS = (("foot", 2.0), ("foot", 4.0), ("shank", 2.0), ("shank", 4.0), ("thigh", 4.0), ("thigh", 8.0),
              ("torso", 4.0), ("torso", 8.0), ("torso", 16.0))
# the re-search per load: a local PSO around the unloaded reflexes
SEARCH = {"algorithm": "pso", "particles": 24, "iterations": 30}
SEARCH_SPREAD = 0.05
SEARCH_SEED = 45
# --hold-speed: Browning's treadmill speed, the band a walk must keep, the lean references
TREADMILL_SPEED = 1.25            # m/s
SPEED_BAND = 0.03                 # fraction of TREADMILL_SPEED
LEAN_GRID = tuple(round(-0.16 + 0.005 * i, 3) for i in range(32))   # rad, -0.16 .. -0.005
FIT_BAND = 0.10                   # --fit-speed: the walks within this fraction of TREADMILL_SPEED
# --adapt-swing: the reflexes a loaded person may change (Browning: the swing's), the search
SWING_REFLEXES = ("delta_s", "g_hfl", "l_off_hfl", "k_lean", "g_ham_hfl", "l_off_ham", "g_ham", "g_glu", "theta_ref")
SWING_SEARCH = {"algorithm": "pso", "particles": 24, "iterations": 40}
SWING_SPREAD = 0.03
SWING_LEANS = (-0.04, -0.07, -0.10, -0.13)    # rad: further starts (Browning's speed by lean)
# a person on a treadmill under a load: walk at the speed, then the least net metabolic cost
TREADMILL_STAGES = ({"metric": "time_fraction", "sense": "maximize", "until": 1.0},
                    {"metric": "speed_match", "sense": "maximize", "until": 0.95},
                    {"metric": "speed_std", "sense": "minimize", "until": 0.1},
                    {"metric": "assist_fraction", "sense": "minimize", "until": 0.0},
                    {"metric": "non_contact_time", "sense": "minimize", "until": 0.0},
                    {"metric": "foot_slip_fraction", "sense": "minimize", "until": 0.05},
                    {"metric": "metabolic_cost", "sense": "minimize"})
# --adapt-swing: the treadmill's stages with Browning's 1.25 m/s +-3 % for its speed match and
# Winter's stride shapes loosely kept before the cost
SWING_STAGES = (TREADMILL_STAGES[0],
                {"metric": "speed", "sense": "maximize", "until": TREADMILL_SPEED * (1 - SPEED_BAND)},
                {"metric": "speed", "sense": "minimize", "until": TREADMILL_SPEED * (1 + SPEED_BAND)},
                *TREADMILL_STAGES[2:-1],
                {"metric": "stride_r_hip", "sense": "maximize", "until": 0.90},
                {"metric": "stride_r_knee", "sense": "maximize", "until": 0.85},
                {"metric": "stride_r_ankle", "sense": "maximize", "until": 0.60},
                TREADMILL_STAGES[-1])
# --gait-lab (with --adapt-swing, --adapt-all or --pool-walkers): the walk also as a gait lab
# records people under Browning's loads (he saw their kinematics kept): each leg's
# loading-response knee flexion as the muscle human's search keeps it, steady landings within
# 1.3 of the person's weight plus the load's
GAIT_LAB_GRF_BW = 1.3


def gait_lab_stages(carried_kg: float, body_mass: float) -> tuple[dict, ...]:
    """SWING_STAGES with the gait lab's stance knee (the muscle human's KNEE_STANCE_PEAK_*)
    and landings (GAIT_LAB_GRF_BW) before the cost, for a person of ``body_mass`` kg carrying
    ``carried_kg`` kg in all."""
    return (*SWING_STAGES[:-1],
            {"metric": "knee_flexion_stance_peak_min_deg", "sense": "maximize", "until": KNEE_STANCE_PEAK_MIN_DEG},
            {"metric": "knee_flexion_stance_peak_deg", "sense": "minimize", "until": KNEE_STANCE_PEAK_MAX_DEG},
            {"metric": "grf_peak_bw", "sense": "minimize", "until": GAIT_LAB_GRF_BW * (1 + carried_kg / body_mass)},
            SWING_STAGES[-1])


WALKED: dict[str, dict[str, float]] = {}   # walk()'s metrics by design and loads: a walk is deterministic
PRICE: dict[str, str] = {}   # --price: the evaluation settings every walk is priced under (metabolic model, standing)


def walk(design: Design, loads: list[dict], check: str = "") -> dict[str, float]:
    """The design's metrics with ``loads`` (its own evaluation settings otherwise, its
    search's robust checks left out), under robust check ``check`` when given
    (:func:`check_change`; ``--robust``: "half_step"); a walk that falls before the window
    has only ``time`` of them. Each walk once per run (``WALKED``: the pools walk every walker
    under each load, and ``--refine`` once per round)."""
    key = json.dumps([design.to_json(), loads, check, PRICE], sort_keys=True)
    if key not in WALKED:
        evaluation = dict(design.evaluation)
        read_robust_checks(evaluation)       # the search's checks: a plain walk here
        settings = WalkSettings.from_dict({**evaluation, "wearer_model": "muscles", "loads": loads, **PRICE})
        settings = check_change(check)(settings) if check else settings
        WALKED[key] = {"metabolic_power": math.nan, "speed": math.nan, **evaluate(design, settings).metrics}
    return dict(WALKED[key])


def walks_alone(m: dict[str, float], max_time: float) -> bool:
    """Whether metrics ``m`` are a person's walk: the whole ``max_time`` (s) without the
    pitch assist (an external torque holding the torso up, which no person has)."""
    return m["time"] >= max_time and m.get("assist_fraction", math.nan) <= 0.0


def stages_met(m: dict[str, float], stages: tuple[dict, ...]) -> bool:
    """Whether metrics ``m`` meet every stage of ``stages`` that has an ``until`` (a
    searched walk is a person's only once its search's stages before the cost are met);
    ``time_fraction``, the search's and not a walk's metric, is :func:`walks_alone`'s."""
    return all((m.get(s["metric"], math.nan) >= s["until"]) if s["sense"] == "maximize" else
               (m.get(s["metric"], math.nan) <= s["until"]) for s in stages
               if "until" in s and s["metric"] != "time_fraction")


def lean_walks(design: Design, loads: list[dict]) -> list[dict[str, float]]:
    """``design`` under ``loads`` with each lean reference of ``LEAN_GRID``: the metrics,
    plus ``theta_ref`` (rad), of each walk that is a person's (:func:`walks_alone`)."""
    walks = []
    for lean in LEAN_GRID:
        m = walk(dataclasses.replace(design, params={**design.params, f"{REFLEX_PREFIX}theta_ref": lean}), loads)
        if walks_alone(m, design.evaluation.get("max_time", 10.0)):
            walks.append({**m, "theta_ref": lean})
    return walks


def pooled(designs: dict[str, Design], loads: list[dict], stages: tuple[dict, ...]) -> dict:
    """``--pool``: the cheapest walk (net metabolic cost per metre) under ``loads`` of every
    design in ``designs`` (each search's best, by its slug) that is a person's there
    (:func:`walks_alone`, ``stages`` met), plus ``reflexes_of`` (its slug); the first
    design's walk, ``reflexes_of`` empty, when none is. ``walkers_met``: how many designs
    meet them (the minimum's sample: the fewer, the less a minimum of noisy searches is
    biased low); ``met``: their slugs; ``nearest``: the slugs, the walk nearest to ``stages``
    first (:func:`nearest_key`), what ``--refine`` searches from."""
    walks = {slug: walk(design, loads) for slug, design in designs.items()}
    nearest = sorted(walks, key=lambda slug: nearest_key(walks[slug], stages, designs[slug]))
    kept = [(m["metabolic_cost"], slug) for slug, m in walks.items()
            if walks_alone(m, designs[slug].evaluation.get("max_time", 10.0)) and stages_met(m, stages)]
    found = {"walkers_met": len(kept), "nearest": nearest, "met": [slug for _, slug in kept]}
    if not kept:
        return {**next(iter(walks.values())), "reflexes_of": "", **found}
    slug = min(kept)[1]
    return {**walks[slug], "reflexes_of": slug, **found}


def nearest_key(m: dict[str, float], stages: tuple[dict, ...], design: Design) -> tuple[int, float]:
    """How near metrics ``m`` of ``design``'s walk are to meeting ``stages``, smaller nearer:
    the lexicographic rank of a search under them (the stages met, negated; then the
    signed value of the first unmet; a missing metric, a fallen walk's, farthest)."""
    metrics = {**m, "time_fraction": m["time"] / design.evaluation.get("max_time", 10.0)}
    stage, value = lexicographic({k: metrics.get(k, math.nan) for k in {s["metric"] for s in stages}},
                                 [Objective(**s) for s in stages])
    return -stage, value if math.isfinite(value) else math.inf


ROBUST_CANDIDATES = 20   # --robust: the best evaluations of each stored search a load's price may come from


def stored_walkers(slug: str, stem: str, stages: tuple[dict, ...], like: Design) -> dict[str, StoredDesign]:
    """``--robust``: the best ``ROBUST_CANDIDATES`` evaluations (distinct) that met every
    stage of each search stored for load ``slug`` under ``stages`` (results/muscle-loads/
    *-<stem>-<slug>, its spec's objectives those stages), by "<run>#<rank>", their designs
    walked with ``like``'s evaluation settings (as :func:`searched` returns its best)."""
    found = {}
    for folder in sorted(RUNS.glob(f"*-{stem}-{slug}")):
        spec = folder.with_name(f"{folder.name}.toml")
        if not (folder / "run.sqlite").exists() or tomllib.loads(spec.read_text())["objectives"] != list(stages):
            continue
        for rank, c in enumerate(stored_candidates(str(folder), ROBUST_CANDIDATES)):
            if c.stage == len(stages) - 1:
                design = dataclasses.replace(c.design, evaluation=dict(like.evaluation), problem=dict(like.problem))
                found[f"{folder.name}#{rank}"] = dataclasses.replace(c, design=design)
    return found


def robust_pooled(designs: dict[str, Design], stored: dict[str, StoredDesign], loads: list[dict],
                  stages: tuple[dict, ...]) -> dict:
    """``--robust``: :func:`pooled`'s walk, but the cheapest of ``designs`` and ``stored``
    (:func:`stored_walkers`) that meets ``stages`` at the search's step and at half of it,
    its cost there within ``CONVERGED`` (a walk or price of the step alone is no person's:
    ``--converge`` descends to its edge); ``metabolic_cost_half_step`` its cost there;
    ``reflexes_of`` empty when none does."""
    found = pooled(designs, loads, stages)
    walkers = {**designs, **{key: c.design for key, c in stored.items()}}
    order = sorted([(walk(designs[key], loads)["metabolic_cost"], key) for key in found["met"]] +
                   [(c.stage_value, key) for key, c in stored.items()])
    for _, key in order:
        design, max_time = walkers[key], walkers[key].evaluation.get("max_time", 10.0)
        m = walk(design, loads)
        half = walk(design, loads, "half_step") if walks_alone(m, max_time) and stages_met(m, stages) else None
        if (half is not None and walks_alone(half, max_time) and stages_met(half, stages)
                and abs(half["metabolic_cost"] - m["metabolic_cost"]) <= CONVERGED):
            return {**found, **m, "reflexes_of": key, "metabolic_cost_half_step": half["metabolic_cost"]}
    return {**found, "reflexes_of": "", "metabolic_cost_half_step": math.nan}


NOT_HELD = {**dict.fromkeys(("time", "speed", "metabolic_power", "metabolic_cost", "theta_ref"), math.nan), "held": 0}


def speed_held(walks: list[dict[str, float]]) -> dict[str, float]:
    """The walk of least net metabolic cost among ``walks`` (:func:`lean_walks`) within
    ``SPEED_BAND`` of ``TREADMILL_SPEED`` (module docstring); its metrics plus ``held``
    (how many leans held the speed), or ``held`` 0 and NaN when none did."""
    held = [m for m in walks if abs(m["speed"] - TREADMILL_SPEED) <= SPEED_BAND * TREADMILL_SPEED]
    return {**min(held, key=lambda m: m["metabolic_cost"]), "held": len(held)} if held else NOT_HELD


def speed_fitted(walks: list[dict[str, float]]) -> dict[str, float]:
    """``--fit-speed``: the net cost per metre at ``TREADMILL_SPEED`` read off a straight
    line fitted (least squares) to cost against speed over ``walks`` within
    ``FIT_BAND`` of it -- every lean's walk, not the cheapest of a few (a minimum over
    few noisy walks is biased low, and by a different amount under each load). ``held``:
    how many walks the line has (NaN below 3)."""
    near = [m for m in walks if abs(m["speed"] - TREADMILL_SPEED) <= FIT_BAND * TREADMILL_SPEED]
    if len(near) < 3:
        return NOT_HELD
    slope, intercept = np.polyfit([m["speed"] - TREADMILL_SPEED for m in near],
                                  [m["metabolic_cost"] for m in near], 1)
    return {"time": near[0]["time"], "speed": TREADMILL_SPEED, "metabolic_cost": float(intercept),
            "metabolic_power": math.nan, "theta_ref": math.nan, "held": len(near), "assist_fraction": 0.0}


def reflex_params(design: Design) -> dict[str, float]:
    """``design``'s reflex parameters (``reflex.*``) by name."""
    return {name: value for name, value in design.params.items() if name.startswith(REFLEX_PREFIX)}


def searched(design: Design, slug: str, load: dict | None, free: tuple[str, ...] | None = None,
             seed: int = SEARCH_SEED, stages: tuple[dict, ...] = SWING_STAGES,
             leans: tuple[float, ...] = SWING_LEANS) -> Design:
    """The reflexes searched again under ``load`` from ``design``'s (:func:`search_spec`):
    the best of results/muscle-loads/<slug>, run (or resumed) first."""
    folder, spec_file = RUNS / slug, RUNS / f"{slug}.toml"
    RUNS.mkdir(parents=True, exist_ok=True)
    spec_file.write_text(tomli_w.dumps(search_spec(design, slug, load, free, seed, stages, leans)))
    command = ["resume", str(folder)] if (folder / "run.sqlite").exists() else \
        ["optimize", str(spec_file), "--name", slug, "--results", str(RUNS)]
    subprocess.run([sys.executable, "-m", "codesign.cli", *command, "--quiet"], check=True)
    best = stored_candidate(str(folder), best=True, which=None).design   # walked with the design's settings
    return dataclasses.replace(best, evaluation=dict(design.evaluation), problem=dict(design.problem))


def search_spec(design: Design, slug: str, load: dict | None, free: tuple[str, ...] | None, seed: int,
                stages: tuple[dict, ...], leans: tuple[float, ...]) -> dict:
    """The job spec of a search of the reflexes under ``load`` (None: unloaded) from
    ``design``'s (module docstring: ``--search``; or ``--adapt-swing`` / ``--adapt-all`` /
    ``--refine`` when ``free`` names the reflexes searched, the others frozen, under
    ``stages``, with a start at each lean reference of ``leans`` (rad)), PSO seeded ``seed``,
    its walks priced by ``PRICE`` (the price each walk is then priced by), its robust checks
    left out (plain walks)."""
    reflexes, evaluation = reflex_params(design), dict(design.evaluation)
    read_robust_checks(evaluation)
    spec = {"name": f"muscle-loads-{slug}", "seed": seed,
            "problem": {"name": "human_gait", "wearer_model": "muscles"},
            "optimizer": SEARCH, "space": {"start_spread": SEARCH_SPREAD, "start": reflexes},
            "evaluation": {**evaluation, **PRICE, "loads": [load] if load else []},
            "execution": {"mode": "local", "workers": 2}, "objectives": list(TREADMILL_STAGES)}
    if free is not None:
        free = {f"{REFLEX_PREFIX}{name}" for name in free}
        lean = f"{REFLEX_PREFIX}theta_ref"
        spec.update(optimizer=SWING_SEARCH, objectives=list(stages),
                    space={"start_spread": SWING_SPREAD,
                           "start": {n: v for n, v in reflexes.items() if n in free},
                           "seeds": [{n: (x if n == lean else v) for n, v in reflexes.items() if n in free}
                                     for x in leans]},
                    freeze={"parameters": {n: v for n, v in reflexes.items() if n not in free}})
    return spec


def searched_from(start: Design, slug: str, load: dict | None, stages: tuple[dict, ...]) -> Design:
    """:func:`searched` on from the walker ``start`` under ``stages`` (``--refine``,
    ``--converge``): every reflex free, seed ``SEARCH_SEED``, ``start`` itself a start."""
    free = tuple(n.removeprefix(REFLEX_PREFIX) for n in reflex_params(start))
    return searched(start, slug, load, free, SEARCH_SEED, stages, (start.params[f"{REFLEX_PREFIX}theta_ref"],))


def refined(walkers: dict[str, Design], loads: dict[str, dict | None], stages: dict[str, tuple[dict, ...]],
            stem: str, rounds: int) -> dict[str, Design]:
    """``--refine``: ``rounds`` times, for each load of ``loads`` (by slug; None unloaded)
    under which no walker of ``walkers`` (nor of an earlier round) is priced (:func:`pooled`),
    every reflex searched again under its ``stages`` from the walker nearest them that no
    search started from yet (a search that found nothing better returns its start: the
    next round starts from the next nearest), that walker itself one of the starts (run
    results/muscle-loads/refine[<round>]-<stem>-<slug>, the first round's without a number;
    resumed or reused when stored): the best of each such search, by
    ``refine<round>:<slug>``."""
    found: dict[str, Design] = {}
    started: set[str] = set()                      # the reflexes searched from
    for round_ in range(1, rounds + 1):
        tag = f"refine{round_ if round_ > 1 else ''}"
        for slug, load in loads.items():
            pool = {**walkers, **found}
            m = pooled(pool, [load] if load else [], stages[slug])
            if m["reflexes_of"]:
                continue
            key = {n: json.dumps(reflex_params(pool[n]), sort_keys=True) for n in m["nearest"]}
            nearest = next(n for n in m["nearest"] if key[n] not in started)
            started.add(key[nearest])
            print(f"{slug}: no walker priced; round {round_} searches again from {nearest}", flush=True)
            found[f"{tag}:{slug}"] = searched_from(pool[nearest], f"{tag}-{stem}-{slug}", load, stages[slug])
    return found


CONVERGED = 0.02   # J/(kg m): a --converge search that lowers a walk's cost by less ends its load's searches


def converged(walkers: dict[str, Design], loads: dict[str, dict | None], stages: dict[str, tuple[dict, ...]],
              stem: str, rounds: int) -> dict[str, Design]:
    """``--converge``: up to ``rounds`` times, for each load of ``loads`` (by slug; None
    unloaded) a walker of ``walkers`` prices (:func:`pooled`), every reflex searched again
    under its ``stages`` from that cheapest walker (itself a start, so the search's best is
    no dearer: a local descent of the least cost), unloaded and loaded alike. A load's
    searches end once one lowers its cost by less than ``CONVERGED``, until a walker another
    load's search found lowers it by more (the walkers found join the pool as they are
    found). Run results/muscle-loads/converge<round>-<stem>-<slug> (resumed or reused when
    stored): the best of each such search, by ``converge<round>:<slug>``."""
    found: dict[str, Design] = {}
    below: dict[str, float] = {}                   # J/(kg m): a load is searched again once its cost is under
    for round_ in range(1, rounds + 1):
        for slug, load in loads.items():
            walked = [load] if load else []
            pool = {**walkers, **found}
            m = pooled(pool, walked, stages[slug])
            if not m["reflexes_of"] or not m["metabolic_cost"] < below.get(slug, math.inf):
                continue
            found[f"converge{round_}:{slug}"] = searched_from(pool[m["reflexes_of"]], f"converge{round_}-{stem}-{slug}",
                                                              load, stages[slug])
            cost = pooled({**walkers, **found}, walked, stages[slug])["metabolic_cost"]
            print(f"{slug}: round {round_} from {m['reflexes_of']}: {m['metabolic_cost']:.3f} -> {cost:.3f} J/(kg m)",
                  flush=True)
            below[slug] = math.inf if cost < m["metabolic_cost"] - CONVERGED else cost - CONVERGED
    return found


def rise_per_kg(loaded: dict[str, float], unloaded: dict[str, float], held: bool, body_mass: float) -> float:
    """The rise of net metabolic rate (W per kg of the person's body mass): at the held
    speed, the rise of the cost per metre times ``TREADMILL_SPEED``; otherwise of the
    measured power, each walk at its own speed."""
    return ((loaded["metabolic_cost"] - unloaded["metabolic_cost"]) * TREADMILL_SPEED if held
            else (loaded["metabolic_power"] - unloaded["metabolic_power"]) / body_mass)


def fitted_slope(rises: dict[float, float]) -> float:
    """Browning's reading of a location: the least-squares line through zero of the rise of
    net metabolic rate (W/kg) on the total added mass (kg), ``rises`` by mass; W/kg per kg
    (NaN when a rise is)."""
    masses, values = np.array(list(rises)), np.array(list(rises.values()))
    return float(masses @ values / (masses @ masses))


# a table's kind (its file name's part after "loads-") -> its title in --summary and the
# printout: the protocol, then its options as the name spells them
PROTOCOLS = {"": "kept", "held": "lean held", "fit": "speed fit", "searched": "all searched",
             "swing": "swing adapted", "adapted": "all adapted", "walkers": "every protocol's walkers pooled"}
OPTIONS = {"lab": "gait lab", "pool": "pooled", "refined": "refined", "converged": "converged", "robust": "robust"}
KINDS = {protocol + "".join(chosen): ", ".join([PROTOCOLS[protocol], *(OPTIONS[o] for o in chosen)])
         for protocol in PROTOCOLS for n in range(len(OPTIONS) + 1) for chosen in itertools.combinations(OPTIONS, n)}


def summary() -> None:
    """``--summary``: every loads*.csv beside this file as one markdown table, the
    predicted rise over the published one per load (a dash where no walk was a person's),
    a column per design and protocol (its file ``loads[-KIND][-DESIGN].csv``)."""
    columns = {}
    for f in HERE.glob("loads*.csv"):
        kind, _, design = f.stem.removeprefix("loads").lstrip("-").partition("-")
        if kind not in KINDS:
            kind, design = "", f.stem.removeprefix("loads-")
        design = design or DESIGN.stem
        columns[(design, list(KINDS).index(kind))] = (f"`{design}` {KINDS[kind]}",
                                                       {row["load"]: row["ratio"] for row in csv.DictReader(open(f))})
    ordered = [columns[key] for key in sorted(columns)]
    print("| load | " + " | ".join(title for title, _ in ordered) + " |")
    print("| --- |" + " --- |" * len(ordered))
    for segment, kg in CONDITIONS:
        load = f"{kg:g} kg {'at the waist' if segment == 'torso' else 'per ' + segment}"
        cells = [ratios.get(load, "") for _, ratios in ordered]
        print(f"| {load} | " + " | ".join("-" if c in ("", "nan") else c for c in cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", type=Path, default=DESIGN, help="the unloaded design (JSON)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--search", action="store_true", help="search the reflexes again under each load")
    mode.add_argument("--hold-speed", action="store_true",
                      help="hold 1.25 m/s by the trunk's lean reference, the other reflexes kept")
    mode.add_argument("--fit-speed", action="store_true",
                      help="as --hold-speed, the cost read at 1.25 m/s off a line through every lean's walk")
    mode.add_argument("--adapt-swing", action="store_true",
                      help="search the swing reflexes and the lean under each load, at 1.25 m/s")
    mode.add_argument("--adapt-all", action="store_true",
                      help="as --adapt-swing, every reflex searched (the stance's too)")
    parser.add_argument("--seed", type=int, action="append",
                        help=f"the searches' PSO seed (default {SEARCH_SEED}; another's runs and table are its own; "
                             "several, with --pool: every seed's searches pooled)")
    parser.add_argument("--gait-lab", action="store_true",
                        help="with --adapt-swing / --adapt-all / --pool-walkers: the gait lab's stance knee and "
                             "landings kept too")
    parser.add_argument("--pool", action="store_true",
                        help="with --adapt-swing / --adapt-all: each load's walk the cheapest of every search's best")
    mode.add_argument("--summary", action="store_true", help="every loads*.csv here as one table of ratios")
    mode.add_argument("--pool-walkers", nargs="+", type=Path, metavar="DESIGNS_JSON",
                      help="each load's walk the cheapest of every walker these protocols' -designs.json files "
                           "hold that is a person's there (with --gait-lab: under its stages), at 1.25 m/s")
    parser.add_argument("--refine", type=int, default=0, metavar="ROUNDS",
                        help="with --pool-walkers: ROUNDS times, each load no walker prices searched again (every "
                             "reflex) from the walker nearest its stages; the refined walkers join the pool")
    parser.add_argument("--converge", type=int, default=0, metavar="ROUNDS",
                        help="with --pool-walkers: up to ROUNDS times, every priced load and unloaded searched again "
                             "(every reflex) from its cheapest walker, until a search lowers its cost by < "
                             f"{CONVERGED} J/(kg m)")
    parser.add_argument("--robust", action="store_true",
                        help="with --pool-walkers: each walk the cheapest stored or pooled walker that meets its "
                             f"stages at half the step too, its cost there within {CONVERGED} J/(kg m)")
    parser.add_argument("--price", type=json.loads, default={}, metavar="JSON", help="evaluation settings every "
                        'walk is priced under, e.g. {"metabolic_model": "bhargava2004"} (its table: ...-<values>.csv)')
    args = parser.parse_args()
    PRICE.update(args.price)
    if min(args.refine, args.converge) < 0:
        parser.error(f"--refine / --converge: {min(args.refine, args.converge)} rounds; expected a count >= 0")
    for flag, why in (("converge", "it searches on from each load's cheapest pooled walker"),
                      ("robust", "it prices each load from the pool and its stored searches"),
                      ("refine", "it searches from the pooled walker nearest a load's stages")):
        if getattr(args, flag) and not args.pool_walkers:
            parser.error(f"--{flag}: give --pool-walkers ({why})")
    if args.pool and not (args.adapt_swing or args.adapt_all):
        parser.error("--pool: give --adapt-swing or --adapt-all (it pools their searches' bests)")
    if args.gait_lab and not (args.adapt_swing or args.adapt_all or args.pool_walkers):
        parser.error("--gait-lab: give --adapt-swing, --adapt-all or --pool-walkers (it adds the gait lab's stages)")
    if args.summary:
        return summary()
    at_speed = speed_fitted if args.fit_speed else speed_held
    args.hold_speed = args.hold_speed or args.fit_speed
    body_mass = human_geometry().mass_kg
    adapt = args.adapt_swing or args.adapt_all or bool(args.pool_walkers)    # walks at 1.25 m/s
    design = load_design(args.design)
    free = SWING_REFLEXES if args.adapt_swing else None
    if args.adapt_all:                             # every reflex the design has
        free = tuple(n.removeprefix(REFLEX_PREFIX) for n in reflex_params(design))
    search = args.search or args.adapt_swing or args.adapt_all
    replayed = search or bool(args.pool_walkers)   # searched walkers: priced once their stages are met
    args.pool = args.pool or bool(args.pool_walkers)
    own = args.design.resolve() == DESIGN          # the default design's runs keep their names
    lab = "lab" * args.gait_lab
    priced_as = "".join(f"-{value}" for value in args.price.values())   # --price: in run and table names
    stem = args.design.stem + priced_as             # every search's run name: each searches at its price
    prefix = (f"swing{lab}-{stem}-" if args.adapt_swing else f"all{lab}-{stem}-" if args.adapt_all else
              "" if own and not priced_as else f"{stem}-")
    seeds = args.seed or [SEARCH_SEED]              # another seed's runs and table are its own
    seeded = "" if seeds == [SEARCH_SEED] else "-seed" + "-".join(map(str, seeds))
    if seeded and not search:
        parser.error("--seed: give --search, --adapt-swing or --adapt-all (it seeds their searches)")
    if len(seeds) > 1 and not args.pool:
        parser.error("--seed given more than once: give --pool (each walk the cheapest of every seed's searches)")
    tags = {seed: "" if seed == SEARCH_SEED else f"seed{seed}-" for seed in seeds}   # in run names and the pool
    loads = {f"{segment}-{kg:g}kg": {"segment": segment, "mass_kg": kg, **({"position": 0.0} if segment == "torso" else {})}
             for segment, kg in CONDITIONS}
    totals = {slug: kg * (1 if segment == "torso" else 2) for (segment, kg), slug in zip(CONDITIONS, loads)}
    stages = {slug: gait_lab_stages(totals.get(slug, 0.0), body_mass) if args.gait_lab else
              SWING_STAGES if adapt else TREADMILL_STAGES for slug in ("none", *loads)}
    walkers = {tags[seed] + slug: searched(design, prefix + tags[seed] + slug, load, free, seed, stages[slug])
               for seed in seeds for slug, load in {"none": None, **loads}.items()} if search else {}
    walkers.update({f"{f.stem.removesuffix('-designs')}:{slug}": Design.from_json(doc, str(f))
                    for f in args.pool_walkers or () for slug, doc in json.loads(f.read_text()).items()})
    if args.refine:                                # each unpriced load: searched on from its nearest walker
        walkers.update(refined(walkers, {"none": None, **loads}, stages, stem, args.refine))
    if args.converge:                              # each priced load and unloaded: searched on from its cheapest
        walkers.update(converged(walkers, {"none": None, **loads}, stages, stem, args.converge))
    unloaded = walkers[tags[seeds[0]] + "none"] if search else design
    designs = {slug: walkers[tags[seeds[0]] + slug] if search else unloaded for slug in loads}
    pool = walkers or {"none": unloaded}
    stored = {slug: stored_walkers(slug, stem, stages[slug], design) if args.robust else {}
              for slug in ("none", *loads)}              # --robust: each load's searches' walkers too
    priced = (lambda slug, load: robust_pooled(pool, stored[slug], load, stages[slug])) if args.robust else \
        (lambda slug, load: pooled(pool, load, stages[slug]))
    base = (at_speed(lean_walks(unloaded, [])) if args.hold_speed else priced("none", []) if args.pool
            else walk(unloaded, []))
    rows = []
    reflexes_of = {"none": base.get("reflexes_of", "")}   # --pool: the search whose best each walk is
    for (segment, kg), (slug, load) in zip(CONDITIONS, loads.items()):
        m = (at_speed(lean_walks(designs[slug], [load])) if args.hold_speed else
             priced(slug, [load]) if args.pool else walk(designs[slug], [load]))
        reflexes_of[slug] = m.get("reflexes_of", "")
        total = totals[slug]
        walked = walks_alone(m, base["time"])      # a fall or an assisted walk: NaN
        if replayed:                               # a searched walk short of its stages: NaN
            walked = walked and stages_met(m, stages[slug])
        rise = rise_per_kg(m, base, args.hold_speed or adapt, body_mass) if walked else math.nan
        published = PUBLISHED_SLOPE[segment] * total
        rows.append({"load": f"{kg:g} kg {'at the waist' if segment == 'torso' else 'per ' + segment}",
                     "total_kg": total, "walked_s": m["time"], "speed_m_s": round(m["speed"], 3),
                     **({"theta_ref_rad": m["theta_ref"], "leans_held": m["held"]} if args.hold_speed else {}),
                     **({"reflexes_of": m["reflexes_of"], "walkers_met": m["walkers_met"]} if args.pool else {}),
                     "rise_W_per_kg": round(rise, 3), "published_W_per_kg": round(published, 3),
                     "ratio": round(rise / published, 2), "per_kg_W_per_kg2": round(rise / total, 4),
                     **({"ratio_half_step": round((m["metabolic_cost_half_step"] - base["metabolic_cost_half_step"])
                                                  * TREADMILL_SPEED / published, 2)} if args.robust else {})})
    kind = ("-searched" if args.search else "-swing" if args.adapt_swing else "-adapted" if args.adapt_all else
            "-walkers" if args.pool_walkers else "-fit" if args.fit_speed else "-held" if args.hold_speed else "")
    kind += ("lab" if args.gait_lab else "") + ("pool" if args.pool and not args.pool_walkers else "")
    kind += ("refined" if args.refine else "") + ("converged" if args.converge else "") + ("robust" * args.robust)
    suffix = ("" if own else f"-{args.design.stem}") + seeded + priced_as   # another design's, seed's, price's
    out = HERE / f"loads{kind}{suffix}.csv"
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    if replayed:                                   # each walk's reflexes, to replay (test_muscle_loads.py)
        every = {**pool, **{key: c.design for found in stored.values() for key, c in found.items()}}
        walked_by = {slug: every.get(reflexes_of.get(slug, ""), design)
                     for slug, design in {"none": unloaded, **designs}.items()}
        out.with_name(f"{out.stem}-designs.json").write_text(json.dumps(
            {slug: design.to_json() for slug, design in walked_by.items()}, indent=1) + "\n")
    how = KINDS[kind.lstrip("-")] + (f" (unloaded: lean {base['theta_ref']:g} rad, {base['held']} leans held)"
                                     if args.hold_speed else f" ({base['walkers_met']} walkers priced unloaded)"
                                     if args.pool else "")
    print(f"{args.design.name} unloaded: {base['time']:g} s, {base['speed']:.3f} m/s, net "
          f"{base['metabolic_power']:.1f} W = {base['metabolic_power'] / body_mass:.2f} W/kg "
          f"({base['metabolic_cost']:.3f} J/(kg m)), body mass {body_mass:.1f} kg; reflexes: {how}; wrote {out}")
    print("| load | total kg | walked s | speed m/s | rise W/kg | published W/kg | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['load']} | {r['total_kg']:g} | {r['walked_s']:g} | {r['speed_m_s']} | {r['rise_W_per_kg']} | "
              f"{r['published_W_per_kg']} | {r['ratio']} |")
    if args.robust:
        print("at half the step: ratios " + ", ".join(f"{r['load']} {r['ratio_half_step']}" for r in rows))
    fitted = {segment: fitted_slope({r["total_kg"]: r["rise_W_per_kg"] for r in rows if r["load"].endswith(
        "waist" if segment == "torso" else segment)}) for segment in PUBLISHED_SLOPE}
    print("per kg, each location's line through zero (W/kg per kg): " + ", ".join(
        f"{'waist' if segment == 'torso' else segment} {fitted[segment]:.3f} (Browning {PUBLISHED_SLOPE[segment]:.3f})"
        for segment in PUBLISHED_SLOPE))


if __name__ == "__main__":
    main()
