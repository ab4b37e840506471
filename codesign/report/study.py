"""A study: the rounds a researcher used to write by hand, run by one command
(``codesign study SPEC``).

1. **global**: the spec itself, a search over every subspace it opens
   (``results/<study>/global/run.sqlite``);
2. **focus-tNN**: for each promising topology (the ``focus`` best of the global round,
   one per topology, ranked as the report ranks, or the spec's ``topologies``), a
   continuation that keeps the topology and actuator pair of that topology's best and
   warm-starts its open parameters from the global round's best evaluations there --
   what ``codesign freeze RUN --solution EVAL --keep topology,actuators --warm-start N``
   writes (the spec is kept as ``focus-tNN.toml``; its run's store names ``global`` as its
   parent); with ``focus_rounds = K``, a topology whose verified best (below) does not
   hold under every check gets ``focus-tNN-2`` ... ``-K``, each the same continuation of
   its previous focused round's best (what was done by hand: round after round); with
   ``transfer``, a focused round also starts particles from the control law of every other
   topology's design that holds so far (:func:`transfer_donors`); with ``focus_pairs = P``,
   a topology whose chain of rounds ended without a design that holds gets a chain on its
   next actuator pair (``focus-tNN-p2``, ``focus-tNN-p2-2`` ...: its second best pair in
   the global round, started from that pair's best there; :func:`pair_choice`), up to P
   pairs -- a chain stuck in one pair's plateau, where another pair of the same linkage
   walks;
3. **verification**: each round's best replayed under the run's settings, at half the
   time step, with soft contacts, in MuJoCo and on a wearer 10 % lighter and heavier
   (``[study] verify``), each with its walking verdict (``verify/<round>.json``); with
   ``verify_candidates = N`` the round's next best in the run's order are replayed in turn
   until one walks under every check made, and that one is the round's best (robustness
   chosen among designs the search ranks alike; the first when none holds);
4. ``study.csv`` / ``study.md``: per topology the best design (``best-tNN.json``), the
   stage it reached, its verdict under each check, the thesis's Table 5.4 quantities
   (device mass, CoM shift, longest segment, power, torque, assist time), speed, cuff
   force, thermal ratio and transmission peak (:data:`TABLE_METRICS`).

Every step is resumable: a round whose run exists resumes (bit for bit, as ``codesign
resume``), a verification already written is read back, the focused topologies follow
from the finished global round alone. So a study killed anywhere and started again ends
on the same files as one never interrupted, whatever the worker count.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from codesign.errors import UserError
from codesign.io import json_text, read_user_file, write_text_atomic
from codesign.objectives import ranked, stage_label
from codesign.report.freeze import choose_solution, compact_toml, freeze_spec
from codesign.report.rundata import load_run, load_run_catalog
from codesign.run.driver import resolve_problem, resume_run, start_run
from codesign.run.spec import ExecutionSpec, Spec, check_run_name, parse_spec
from codesign.run.store import RUN_FILE

GLOBAL = "global"
VERIFY_FOLDER = "verify"
STUDY_CSV = "study.csv"
STUDY_MD = "study.md"
CHECK_LABELS = {"searched": "as searched", "half_step": "half time step", "soft": "soft contacts",
                "mujoco": "MuJoCo", "wearer_light": "wearer mass x0.9", "wearer_heavy": "wearer mass x1.1"}
# the record metrics the study table shows, with their headings (units in the heading): the
# thesis's Table 5.4 (added mass, CoM shift, segment size, power, torque, assist time), then
# the speed and the loads a drivetrain and a person must bear
TABLE_METRICS = (("device mass [kg]", "added_mass", 1.0), ("CoM shift [m]", "com_shift", 1.0),
                 ("longest segment [m]", "longest_segment", 1.0), ("power [W]", "power", 1.0),
                 ("torque RMS [N m]", "torque_rms", 1.0), ("assist time [%]", "assist_fraction", 100.0),
                 ("speed [m/s]", "speed", 1.0), ("cuff force peak [N]", "cuff_force_peak", 1.0),
                 ("thermal ratio [-]", "actuator_thermal_ratio", 1.0),
                 ("transmission peak [-]", "transmission_peak", 1.0))


@dataclass(frozen=True)
class Check:
    """One replay of a round's best: ``name`` (``searched`` or a :data:`~codesign.run.study_spec.VERIFY_CHECKS`
    entry), whether it ``walks`` and the ``verdict`` in words; ``metrics`` the replay's
    record metrics (SI)."""

    name: str
    walks: bool
    verdict: str
    metrics: dict[str, float]
    made: bool = True          # False: not checked (a design MuJoCo's export cannot hold ...)


@dataclass(frozen=True)
class RoundBest:
    """A round's best evaluation and its checks: ``round`` (``global``, ``focus-t05``),
    ``evaluation`` ("ITERATION:PARTICLE"), ``topology`` and ``actuators`` ("2-3"),
    ``stage`` ("stage k of n"), ``fitness`` (the store's stage, counted from 0, and stage
    value: the run's lexicographic order, :func:`codesign.objectives.fitness_key`),
    ``design`` (the design file written for it, relative to the study folder), ``rank``
    (its place in the round's order: 1 for the round's best, more when the verification
    replayed better-ranked evaluations that failed a check)."""

    round: str
    evaluation: str
    topology: int | None
    actuators: str
    stage: str
    fitness: tuple[int, float]
    design: str
    checks: tuple[Check, ...]
    rank: int = 1

    @property
    def holds(self) -> bool:
        """Whether it walks under every check that was made."""
        return all(check.walks for check in self.checks if check.made)

    @property
    def passed(self) -> int:
        """How many of its checks (the run's settings included) say it walks."""
        return sum(check.walks for check in self.checks)

    def check_verdicts(self) -> list[tuple[str, str]]:
        """(label, verdict) of each check, the run's settings first."""
        return [(CHECK_LABELS[check.name], check.verdict) for check in self.checks]


def run_round(spec: Spec, folder: Path, name: str, execution: ExecutionSpec | None,
              progress: bool) -> Path:
    """Run ``spec`` as the study's round ``name`` (``folder/name/run.sqlite``): start it,
    or resume it where a killed study left it. Returns the run database."""
    path = folder / name / RUN_FILE
    if path.exists():
        return resume_run(path, execution, progress=progress)
    return start_run(spec, folder, name, execution, progress=progress)


def _subspace_topologies(data) -> dict[int, tuple[int, str]]:
    """subspace id -> (topology, "a-b") of a co-design run (UserError without a catalog)."""
    catalog = load_run_catalog(data)
    return {int(sid): (int(tid), "-".join(map(str, pair))) for sid, tid, pair in catalog.subspaces()}


def _ranked_subspace_bests(global_run: Path):
    """The global round's best successful evaluation of each subspace, best first (the
    report's ranking), with its ``topology`` as a column."""
    data = load_run(global_run)
    of = _subspace_topologies(data)
    best = ranked(data.evaluations)
    best = best[best["status"] == "ok"].drop_duplicates("subspace_id", keep="first")
    return best.assign(topology=best["subspace_id"].map(lambda sid: of[int(sid)][0]))


def focus_choices(global_run: Path, focus: int, topologies: tuple[int, ...]) -> list[tuple[int, str]]:
    """(topology, its best evaluation "ITERATION:PARTICLE") of each topology that gets a
    focused round: the spec's ``topologies`` (each must have a successful evaluation in
    the global round), else the ``focus`` best topologies of the global round, best first
    (the report's ranking; only successful evaluations)."""
    best = _ranked_subspace_bests(global_run).drop_duplicates("topology", keep="first")
    if topologies:
        missing = sorted(set(topologies) - set(best["topology"]))
        if missing:
            raise UserError(f"study.topologies: topology {missing[0]} has no successful evaluation in "
                            f"the global round; expected topologies it evaluated "
                            f"({', '.join(map(str, sorted(best['topology'])))})")
        best = best[best["topology"].isin(topologies)].sort_values("topology")
    else:
        best = best.head(focus)
    return [(int(r.topology), f"{int(r.iteration)}:{int(r.particle)}") for r in best.itertuples()]


def pair_choice(global_run: Path, topology: int, pair_rank: int) -> str | None:
    """The global round's best evaluation ("ITERATION:PARTICLE") in ``topology``'s
    ``pair_rank``-th actuator pair (1: the pair of its best evaluation, 2: the best
    evaluation's among its other pairs, ...; the report's ranking); None when the round
    evaluated fewer of its pairs successfully."""
    best = _ranked_subspace_bests(global_run)
    best = best[best["topology"] == topology]
    if len(best) < pair_rank:
        return None
    row = best.iloc[pair_rank - 1]
    return f"{int(row['iteration'])}:{int(row['particle'])}"


def focus_name(topology: int, round_number: int = 1, pair_rank: int = 1) -> str:
    """``focus-tNN`` for a topology's first focused round, ``focus-tNN-K`` for its K-th;
    ``focus-tNN-pP`` and ``focus-tNN-pP-K`` for the rounds on its ``pair_rank`` P-th
    actuator pair (``[study] focus_pairs``)."""
    pair = f"-p{pair_rank}" if pair_rank > 1 else ""
    return f"focus-t{topology:02d}{pair}" + (f"-{round_number}" if round_number > 1 else "")


def focus_spec_text(parent_run: Path, topology: int, evaluation: str, spec: Spec, index: int,
                    round_number: int = 1, donors: tuple[tuple[str, dict[str, float]], ...] = (),
                    pair_rank: int = 1) -> str:
    """The focused round's spec for ``topology``: ``codesign freeze``'s continuation of the
    parent round's ``evaluation`` (the global round's for the first, the previous focused
    round's after it) keeping its topology and actuator pair, warm-started from the
    parent's ``warm_start`` best evaluations that fit, with the study's swarm
    (``focus_particles`` x ``focus_iterations``) and its own seed (the study's + 1 +
    ``index``, the round's place in the study). ``donors``: (label, parameter values under
    the search's names) of other topologies' designs; each gives a seed (particle 1, 2,
    ...): the start with every parameter the donor shares with it (the control law's) taken
    from the donor (:func:`transfer_donors`). Nothing is written."""
    study = spec.study
    name = focus_name(topology, round_number, pair_rank)
    text, _ = freeze_spec(parent_run, ["topology", "actuators"], solution=evaluation, name=name,
                          warm_start=study.warm_start)
    # freeze's header names the parent's folder; the study's says where it is relative to it
    header = [line for line in text.splitlines() if line.startswith("#") and "Written by" not in line]
    document = tomllib.loads(text)
    document.pop("study", None)
    document["seed"] = spec.seed + 1 + index
    optimizer = document.setdefault("optimizer", {})
    optimizer["particles"] = study.focus_particles
    optimizer["iterations"] = study.focus_iterations
    start = document.get("space", {}).get("start", {})
    seeds, labels = [], []
    for label, values in donors[:max(study.focus_particles - 1, 0)]:
        seed = {name: values.get(name, value) for name, value in start.items()}
        if seed != start and seed not in seeds:
            seeds.append(seed)
            labels.append(label)
    if seeds:
        document["space"]["seeds"] = seeds
    if study.search_checks:
        _price_robustness(document, spec, study.search_checks)
    parent = parent_run.parent.name
    pair = f" (its actuator pair no. {pair_rank} in the global round)" if pair_rank > 1 else ""
    lines = [f"# Study {spec.name}, focused round {round_number} on topology {topology}{pair}, written by "
             f"`codesign study` from its round {parent} (../{parent}/run.sqlite):", *header]
    if seeds:
        lines.append(f"# seeds: its start with the shared (control) parameters of {', '.join(labels)}.")
    return "\n".join(lines) + "\n" + compact_toml(document)


def _price_robustness(document: dict, spec: Spec, checks: tuple[str, ...]) -> None:
    """A focused round's spec ``document`` (changed in place) searching under ``checks``
    (``[study] search_checks``): ``evaluation.robust_checks`` and the objectives (its own,
    else the problem's default stages) with the robust stage before the last, once."""
    from codesign.problems.robust import ROBUST_METRIC, ROBUST_STAGE

    def table(o) -> dict:          # an Objective as a spec's [[objectives]] table
        return {"metric": o.metric, "sense": o.sense, **({} if o.until is None else {"until": o.until})}

    document.setdefault("evaluation", {})["robust_checks"] = list(checks)
    stages = document.get("objectives") or [table(o) for o in (spec.objectives or resolve_problem(spec).objectives)]
    if all(stage["metric"] != ROBUST_METRIC for stage in stages):
        stages = [*stages[:-1], table(ROBUST_STAGE), stages[-1]]
    document["objectives"] = stages


def transfer_donors(folder: Path, bests: list[RoundBest], topology: int) -> tuple[tuple[str, dict[str, float]], ...]:
    """(label, parameter values) of every other topology's kept best that holds under every
    check made (:func:`ranked_bests`' order), read from its round's run: the designs a
    focused round on ``topology`` starts particles from with ``[study] transfer``."""
    out = []
    for best in ranked_bests(bests):
        if best.holds and best.topology not in (None, topology):
            params = choose_solution(load_run(folder / best.round / RUN_FILE), best.evaluation).params
            out.append((f"topology {best.topology}'s {best.round} {best.evaluation}", params))
    return tuple(out)


def _focus_spec(folder: Path, parent_run: Path, topology: int, evaluation: str, spec: Spec,
                index: int, round_number: int, bests: list[RoundBest], pair_rank: int) -> Spec:
    """The focused round's spec, written once as ``folder/<focus_name>.toml`` (read back
    when a resumed study finds it); with ``[study] transfer`` seeded from the designs of
    ``bests`` that hold (:func:`transfer_donors`)."""
    path = folder / f"{focus_name(topology, round_number, pair_rank)}.toml"
    if not path.exists():
        donors = transfer_donors(folder, bests, topology) if spec.study.transfer else ()
        write_text_atomic(path, focus_spec_text(parent_run, topology, evaluation, spec, index, round_number,
                                                donors, pair_rank))
    return parse_spec(path.read_text(encoding="utf-8"), source=str(path))


def run_study(spec: Spec, results: str | Path = "results", execution: ExecutionSpec | None = None,
              progress: bool = True) -> tuple[Path, list[RoundBest]]:
    """Run (or resume) the study ``spec`` into ``results/<name>/`` (module docstring);
    returns its folder and its rounds' bests, best first (:func:`study_table`'s rank)."""
    if spec.study is None:
        raise UserError(f"{spec.source}: no [study] table; expected a study spec (focus = N, "
                        "docs/optimization.md), or run it with `codesign optimize`")
    folder = Path(results) / check_run_name(spec.name, f"{spec.source}: name")
    folder.mkdir(parents=True, exist_ok=True)
    global_run = run_round(spec, folder, GLOBAL, execution, progress)
    study = spec.study
    bests = [verify_round(folder, GLOBAL, global_run, study.verify, study.verify_candidates)]
    # (topology, its last focused round's run, that round's best) of the topologies still open
    chosen = focus_choices(global_run, study.focus, study.topologies)
    index = 0
    for pair_rank in range(1, study.focus_pairs + 1):
        holding = {b.topology for b in ranked_bests(bests) if b.holds}
        starts = chosen if pair_rank == 1 else [(t, pair_choice(global_run, t, pair_rank)) for t, _ in chosen
                                                 if t not in holding]
        # (topology, its last focused round's run, that round's best) of the topologies still open
        open_rounds = [(topology, global_run, evaluation) for topology, evaluation in starts if evaluation]
        for round_number in range(1, study.focus_rounds + 1):
            next_rounds = []
            for topology, parent_run, evaluation in open_rounds:
                child = _focus_spec(folder, parent_run, topology, evaluation, spec, index, round_number, bests,
                                    pair_rank)
                index += 1
                run = run_round(child, folder, child.name, execution, progress)
                best = verify_round(folder, child.name, run, study.verify, study.verify_candidates)
                bests.append(best)
                next_rounds.append((topology, run, best.evaluation))
            shown = {b.topology: b for b in ranked_bests(bests)}
            open_rounds = [r for r in next_rounds if not shown[r[0]].holds]
    write_study_table(folder, bests)
    return folder, ranked_bests(bests)


def _round_bests(run: Path, n: int) -> list[tuple[dict, str, int | None, str, str]]:
    """(the row, "ITERATION:PARTICLE", topology, actuators, "stage k of n") of a round's
    ``n`` best evaluations, best first (the report's ranking)."""
    data = load_run(run)
    objectives = data.spec.objectives or resolve_problem(data.spec).objectives
    topologies = _subspace_topologies(data)
    out = []
    for _, best in ranked(data.evaluations).head(n).iterrows():
        topology, actuators = topologies.get(int(best["subspace_id"]), (None, "-"))
        stage = stage_label(int(best["stage"]), objectives).split(":")[0] if best["status"] == "ok" else "failed"
        out.append((best, f"{int(best['iteration'])}:{int(best['particle'])}", topology, actuators, stage))
    return out


def verify_round(folder: Path, name: str, run: Path, checks: tuple[str, ...], candidates: int = 1) -> RoundBest:
    """The round's best replayed under each check (module docstring), written to
    ``folder/verify/<name>.json`` with its design file ``folder/best-<name>.json``; read back
    when already there. With ``candidates`` > 1 the next best are replayed in turn until one
    holds under every check made (:attr:`RoundBest.holds`); the first is kept when none does."""
    path = folder / VERIFY_FOLDER / f"{name}.json"
    if path.exists():
        return _read_round_best(path)
    design_file = f"best-{name}.json"
    tried: list[RoundBest] = []
    for rank, (best, evaluation, topology, actuators, stage) in enumerate(_round_bests(run, candidates), start=1):
        results = replay_checks(run, evaluation, ("searched", *checks), folder / design_file,
                                stop_on_failure=rank > 1)
        fitness = (int(best["stage"]), float(best["stage_value"]))
        tried.append(RoundBest(name, evaluation, topology, actuators, stage, fitness, design_file, results, rank))
        if tried[-1].holds:
            break
    out = tried[-1] if tried[-1].holds else tried[0]
    if out is not tried[-1]:        # the design file is the kept one's
        write_design_file(run, out.evaluation, folder / design_file)
    path.parent.mkdir(exist_ok=True)
    write_text_atomic(path, json_text(dataclasses.asdict(out)) + "\n")
    return out


def _read_round_best(path: Path) -> RoundBest:
    doc = read_user_file(path, "a study's verification JSON file")
    checks = tuple(Check(**c) for c in doc.pop("checks"))
    return RoundBest(**{**doc, "fitness": tuple(doc["fitness"])}, checks=checks)


def replay_checks(run: Path, evaluation: str, checks: tuple[str, ...], design_path: Path,
                  stop_on_failure: bool = False) -> tuple[Check, ...]:
    """Replay the run's evaluation under each check: ``searched`` (the run's settings),
    ``half_step``, ``soft``, ``wearer_light`` and ``wearer_heavy``
    (:func:`codesign.report.robustness.check_settings`: the contact model, or every wearer
    segment's mass and inertia x0.9 / x1.1; a problem that refuses the scale: a check not
    made, with the reason), ``mujoco`` (the MuJoCo export under its own compiled law,
    :func:`codesign.walking.crosscheck.crosscheck`; a design the export cannot hold is a
    check not made, with the reason); writes the design file (the run's settings as its
    ``evaluation``) to ``design_path``. ``stop_on_failure``: the checks after the first made
    that does not walk are left out (a candidate the verification will not keep)."""
    from codesign.run.stored import inline_run_reference

    stored, problem = write_design_file(run, evaluation, design_path)
    table = inline_run_reference(stored.table, problem.run_reference)
    settings = problem.parse_settings(table)
    out = []
    for check in checks:
        out.append(_mujoco_check(problem, stored.design, settings) if check == "mujoco"
                   else _replay_check(problem, stored.design, table, settings, check))
        if stop_on_failure and out[-1].made and not out[-1].walks:
            break
    return tuple(out)


def _replay_check(problem, design, table, settings, check: str) -> Check:
    """The design replayed under the run's settings (``searched``) or a robustness check's."""
    from codesign.report.robustness import check_settings

    try:
        variant = settings if check == "searched" else check_settings(problem, table, settings, check)
    except UserError as exc:       # e.g. the anthropomorphic baseline refuses a wearer scale
        return Check(check, False, f"not checked: {exc}", {}, made=False)
    record = problem.walking.replay(design, variant).record
    if not record.ok:
        return Check(check, False, f"not simulated: {record.message}", {})
    return _check(check, dict(record.metrics), record.message, settings.walk.rollout.max_time)


def write_design_file(run: Path, evaluation: str, design_path: Path):
    """Write the run's evaluation as a design file (the run's settings as its
    ``evaluation``, its problem first, as every design file); returns (the stored
    candidate, its problem)."""
    from codesign.problems import get_problem
    from codesign.problems.identity import problem_document
    from codesign.run.stored import stored_candidate

    stored = stored_candidate(str(run), False, evaluation)
    problem = get_problem(stored.problem)
    design = dataclasses.replace(stored.design, evaluation={**stored.table, **stored.design.evaluation},
                                 problem=problem_document(problem.name, problem.options, stored.table))
    write_text_atomic(design_path, json.dumps(design.to_json(), indent=1) + "\n")
    return stored, problem


def _mujoco_check(problem, design, settings) -> Check:
    """The design walked in MuJoCo under its own compiled law for the run's ``max_time``."""
    import numpy as np

    from codesign.problems.robust import without_robust_checks
    from codesign.walking.crosscheck import crosscheck

    max_time = settings.walk.rollout.max_time
    replay = problem.walking.replay(design, without_robust_checks(settings), np.zeros(0))   # MuJoCo's walk only
    if replay.setup is None or replay.rollout is None:
        return Check("mujoco", False, f"not simulated: {replay.record.message}", {})
    try:
        _, mj = crosscheck(replay.setup, settings.walk, replay.rollout, replay.record.metrics,
                           replay.timings.get("rollout_s", math.nan), np.zeros(0))
    except UserError as exc:          # a model MuJoCo's tree-sparse mass matrix cannot hold
        return Check("mujoco", False, f"not checked: {exc}", {}, made=False)
    stop = "" if mj.status == "ok" else f"{mj.status}: {mj.message}"
    return _check("mujoco", {**mj.metrics, "time_fraction": mj.time / max_time}, stop, max_time)


def _check(name: str, metrics: dict, stop: str, max_time: float) -> Check:
    """A :class:`Check` of a replay's metrics: its walking verdict, the finite metrics kept."""
    from codesign.problems.verdict import walking_verdict

    verdict = walking_verdict(metrics, max_time, stop)
    return Check(name, verdict.walks, verdict.text,
                 {k: float(v) for k, v in metrics.items() if v is not None and math.isfinite(v)})


def ranked_bests(bests: list[RoundBest]) -> list[RoundBest]:
    """One best per topology -- its focused rounds' best, unless the global round's best of
    that topology holds under more of the checks (:func:`_robustness`) -- best first: the
    most checks walked, then the run's lexicographic order (most stages, smallest stage
    value)."""
    by_topology: dict[int | None, RoundBest] = {}
    for best in bests:
        kept = by_topology.get(best.topology)
        if kept is None or _robustness(best) > _robustness(kept):
            by_topology[best.topology] = best
    return sorted(by_topology.values(), key=lambda b: (-b.passed, -b.fitness[0], b.fitness[1]))


def _robustness(best: RoundBest) -> tuple[bool, int, bool, int, float]:
    """(holds under every check made, checks walked, a focused round's, stage, -stage
    value): what ranks two rounds' bests of one topology."""
    return best.holds, best.passed, best.round != GLOBAL, best.fitness[0], -best.fitness[1]


def study_bests(folder: Path) -> list[RoundBest]:
    """The ranked bests (:func:`ranked_bests`) of a finished study folder, read from its
    verification files."""
    files = sorted((folder / VERIFY_FOLDER).glob("*.json"))
    if not files:
        raise UserError(f"{folder}: no {VERIFY_FOLDER}/*.json; expected a finished study (codesign study)")
    return ranked_bests([_read_round_best(path) for path in files])


def best_line(best: RoundBest, folder: Path) -> str:
    """The study's last line: its best in words -- the verdict under the run's settings, then
    under each check -- and where its design file is."""
    checks = "; ".join(f"{label}: {verdict}" for label, verdict in best.check_verdicts()[1:])
    return (f"best: topology {best.topology} (actuators {best.actuators}, {best.round} {best.evaluation}, "
            f"{best.stage}{_rank_words(best)}): {best.checks[0].verdict}" + (f"; {checks}" if checks else "")
            + f" -- {folder / best.design}")


def _rank_words(best: RoundBest) -> str:
    """", the round's 3rd best (the 2 before it fail a check)" for a kept design below the
    round's first; "" for the first."""
    if best.rank == 1:
        return ""
    return f", the round's no. {best.rank} (the {best.rank - 1} before it fail a check)"


def study_table(bests: list[RoundBest]) -> pd.DataFrame:
    """One row per topology, ranked: its best round's best (the focused round's, unless the
    global round's holds under more checks), the stage it reached, its verdict under each check and
    the :data:`TABLE_METRICS` of its replay under the run's settings, ranked
    (:func:`ranked_bests`)."""
    rows = []
    for rank, best in enumerate(ranked_bests(bests), start=1):
        searched = best.checks[0].metrics
        row = {"rank": rank, "topology": best.topology, "actuators": best.actuators, "round": best.round,
               "evaluation": best.evaluation, "stage": best.stage}
        for check in best.checks:
            row[CHECK_LABELS[check.name]] = check.verdict
        for heading, metric, scale in TABLE_METRICS:
            row[heading] = searched.get(metric, math.nan) * scale
        row["design"] = best.design
        rows.append(row)
    return pd.DataFrame(rows)


def write_study_table(folder: Path, bests: list[RoundBest]) -> pd.DataFrame:
    """``study.csv`` and ``study.md`` (module docstring); returns the table."""
    table = study_table(bests)
    write_text_atomic(folder / STUDY_CSV, table.to_csv(index=False))
    lines = [f"# Study {folder.name}", "",
             "Per topology, the best of its focused round (the global round's where that one holds "
             "under more checks, or there is no focused round), replayed under "
             "the run's settings and each verification check; ranked by the checks it walks, then by "
             "the run's stages.", "",
             "| " + " | ".join(table.columns) + " |", "|" + " --- |" * len(table.columns)]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    write_text_atomic(folder / STUDY_MD, "\n".join(lines) + "\n")
    return table


def _cell(value) -> str:
    if isinstance(value, float):
        return "-" if not math.isfinite(value) else f"{value:.3g}"
    return str(value)
