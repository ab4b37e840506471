"""What `make run` ends on, stored (``docs/make-run.json``) and said in the README.

The README's front door states the demo's outcome in one sentence; that sentence is
rendered from the record by :func:`make_run_sentence`, and ``codesign designs make-run
results/demo`` measures the record from the demo's stored run and rewrites both the
record and the README's sentence (between ``MARKER_BEGIN`` and ``MARKER_END``), so that
one command refreshes them after a new `make run`. ``tests/report/test_make_run_record.py``
keeps the README's sentence equal to the record's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

from codesign.errors import UserError
from codesign.io import json_text, read_user_file, read_user_text, write_text_atomic

RECORD_FILE = Path("docs/make-run.json")
README = Path("README.md")
MARKER_BEGIN = "<!-- make-run: written by `codesign designs make-run results/demo` from docs/make-run.json -->"
MARKER_END = "<!-- /make-run -->"


@dataclass(frozen=True)
class MakeRunRecord:
    """The demo's best as `make run` left it: which evaluation, its lexicographic stage,
    the walking verdict of its replay, when and where, and how this was measured."""

    evaluation: str     # "ITERATION:PARTICLE" of the run's best ("ROUND ITERATION:PARTICLE" of a study's)
    stage: str          # "stage k of n" (the objectives counted from 1)
    verdict: str        # the walking verdict of the best's replay, as `codesign simulate` prints it
    checks: str         # a study's verification of it ("half time step: walks ...; MuJoCo: ..."), or "none"
    date: str           # YYYY-MM-DD of the run
    machine: str        # where it ran, in words
    run: str            # the run folder (results/demo)
    source: str         # how the record was made (command, or a statement it was copied from)


def parse_make_run(path: Path) -> MakeRunRecord:
    """The record in ``path``: a JSON object with exactly the fields of
    :class:`MakeRunRecord`, each a non-empty string (one line naming what is wrong)."""
    doc = read_user_file(path, "a make-run record JSON file")
    names = [f.name for f in fields(MakeRunRecord)]
    if not isinstance(doc, dict) or sorted(doc) != sorted(names):
        got = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise UserError(f"{path}: keys {got}; expected exactly {', '.join(names)}")
    for name in names:
        if not isinstance(doc[name], str) or not doc[name].strip():
            raise UserError(f"{path}: {name}: {doc[name]!r}; expected a non-empty string")
    return MakeRunRecord(**{name: doc[name] for name in names})


def make_run_sentence(record: MakeRunRecord) -> str:
    """The README's sentence for the record (one line)."""
    checked = "" if record.checks == "none" else f"; {record.checks}"
    return (f"`make run` ends on its best, evaluation {record.evaluation} ({record.stage}): "
            f"**{record.verdict}**{checked} (measured {record.date}, {record.machine}).")


def readme_sentence(readme_text: str, where: str) -> str:
    """The sentence between the README's make-run markers (UserError when they are
    missing or hold other than one line)."""
    lines = readme_text.splitlines()
    try:
        begin = lines.index(MARKER_BEGIN)
        end = lines.index(MARKER_END, begin)
    except ValueError:
        raise UserError(f"{where}: no make-run markers; expected the line {MARKER_BEGIN!r} and, "
                        f"after it, {MARKER_END!r}") from None
    if end != begin + 2:
        raise UserError(f"{where}: {end - begin - 1} lines between the make-run markers; expected one sentence")
    return lines[begin + 1]


def with_sentence(readme_text: str, record: MakeRunRecord, where: str) -> str:
    """The README's text with the sentence between its markers replaced by the record's."""
    old = readme_sentence(readme_text, where)
    begin = readme_text.index(MARKER_BEGIN + "\n" + old + "\n")
    return (readme_text[:begin] + MARKER_BEGIN + "\n" + make_run_sentence(record) + "\n"
            + readme_text[begin + len(MARKER_BEGIN) + len(old) + 2:])


def measure_make_run(run: str, date: str, machine: str) -> MakeRunRecord:
    """The record of a finished run or study (``make run``'s ``results/demo``): its best by
    the report's ranking (a study's: the design its verification kept in its ranked best
    round, :mod:`codesign.report.study`),
    the stage it reached, and the walking verdict of its best replayed under the run's own
    settings (one rollout of the spec's ``max_time``, as ``codesign simulate --run RUN
    --best``); a study's verification of it as its checks."""
    from codesign.report.study import STUDY_CSV, study_bests

    if not (Path(run) / STUDY_CSV).is_file():
        return _measure_run(run, date, machine, "none", "")
    best = study_bests(Path(run))[0]
    checks = "; ".join(f"{label}: {verdict}" for label, verdict in best.check_verdicts()[1:]) or "none"
    return _measure_run(str(Path(run) / best.round), date, machine, checks, f"{best.round} ", str(run),
                        best.evaluation)


def _measure_run(run: str, date: str, machine: str, checks: str, prefix: str,
                 shown: str | None = None, evaluation: str | None = None) -> MakeRunRecord:
    """:func:`measure_make_run` of one run (``prefix``: the round's name before the
    evaluation's, ``shown``: the folder the record names, default ``run``; ``evaluation``:
    "ITERATION:PARTICLE" to record, default the run's best)."""

    from codesign.objectives import ranked, stage_label
    from codesign.problems import get_problem
    from codesign.problems.verdict import walking_verdict
    from codesign.run.spec import parse_spec
    from codesign.run.store import find_run_database, open_run
    from codesign.run.stored import inline_run_reference, stored_candidate

    with open_run(find_run_database(run), readonly=True) as store:
        runs = store.runs()
        if runs.empty:
            raise UserError(f"{run}: the database holds no run; expected the demo's finished run")
        row = runs.sort_values("run_id").iloc[-1]
        evaluations = store.evaluations(int(row["run_id"]))
    if row["status"] != "finished":
        raise UserError(f"{run}: status {row['status']!r}; expected a finished run (`make run` to its end)")
    if evaluations.empty:
        raise UserError(f"{run}: no evaluations stored; expected the demo's finished run")
    order = ranked(evaluations)
    if evaluation is not None:
        iteration, particle = (int(v) for v in evaluation.split(":"))
        order = order[(order["iteration"] == iteration) & (order["particle"] == particle)]
    best = order.iloc[0]
    spec = parse_spec(str(row["spec_toml"]), f"{run} (stored spec)")
    problem = get_problem(spec.problem)
    stored = stored_candidate(run, evaluation is None, evaluation)
    settings = problem.parse_settings(inline_run_reference(stored.table, problem.run_reference))
    record = problem.walking.replay(stored.design, settings).record
    max_time = settings.walk.rollout.max_time
    verdict = walking_verdict(record.metrics, max_time).text if record.ok else record.message
    objectives = spec.objectives or problem.objectives
    shown = str(run) if shown is None else shown
    return MakeRunRecord(
        evaluation=f"{prefix}{int(best['iteration'])}:{int(best['particle'])}",
        stage=stage_label(int(best["stage"]), objectives).split(":")[0],
        verdict=verdict, checks=checks, date=date, machine=machine, run=shown,
        source=f"`codesign designs make-run {shown}`: the {'study' if evaluation else 'run'}'s stored best, "
               f"replayed {max_time:g} s")


def write_make_run(record: MakeRunRecord, record_path: Path, readme: Path) -> None:
    """Write the record and the README's sentence; the README is checked first, so a
    README without its markers leaves both files as they were."""
    text = with_sentence(read_user_text(readme, "the README (Markdown)"), record, str(readme))
    write_text_atomic(record_path, json_text(asdict(record)) + "\n")
    write_text_atomic(readme, text)
