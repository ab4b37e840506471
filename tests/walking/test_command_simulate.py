"""`codesign simulate` input errors: one line, exit 2, nothing written (no rollout needed)."""

import json
from pathlib import Path

import pytest

from codesign.cli import main


def test_simulate_needs_exactly_one_design(tmp_path, capsys):
    assert main(["simulate", "--out", str(tmp_path / "o")]) == 2
    assert "exactly one" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_simulate_bad_inputs_exit_2(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["simulate", str(tmp_path / "missing.json"), "--out", str(out)]) == 2
    assert "missing.json" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"params": {"a": "x"}, "topology": None, "actuators": None}))
    assert main(["simulate", str(bad), "--out", str(out)]) == 2
    assert "params.a" in capsys.readouterr().err
    assert main(["simulate", "--human", "--settings", "[1]", "--out", str(out)]) == 2
    assert main(["simulate", "--human", "--settings", '{"max_tim": 1}', "--out", str(out)]) == 2
    assert "evaluation.max_tim" in capsys.readouterr().err
    design = str(Path(__file__).resolve().parents[2] / "docs/designs/codesign-walking.json")
    assert main(["simulate", design, "--sample", "5", "--max-time", "0.5", "--out", str(out)]) == 2
    assert "--sample: 5 s is longer than the simulation (0.5 s)" in capsys.readouterr().err
    for option in (["--stiffness", "100"], ["--damping", "5"], ["--best"], ["--eval", "1:1"]):
        assert main(["simulate", design, *option, "--out", str(out)]) == 2        # not silently ignored
        err = capsys.readouterr().err
        assert f"{option[0]}: applies to" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def _tiny_human_gait_run(tmp_path):
    """A real 2-particle, 2-iteration human-gait run with 0.3-s evaluations."""
    from codesign.run.driver import start_run
    from codesign.run.spec import parse_spec

    spec = """
name = "tiny"
seed = 3
[problem]
name = "human_gait"
[optimizer]
particles = 2
iterations = 2
[evaluation]
max_time = 0.3
[execution]
mode = "serial"
"""
    return start_run(parse_spec(spec), results=tmp_path, progress=False).parent


def test_simulate_replays_stored_evaluations_bit_identically(tmp_path, capsys):
    import pytest
    from codesign.run.store import open_run

    run = _tiny_human_gait_run(tmp_path / "runs")
    with open_run(run, readonly=True) as store:
        evaluations = store.evaluations()
        metrics = store.metrics(wide=True)
    for flag, which in ((["--best"], None), (["--eval", "1:1"], (1, 1))):
        out = tmp_path / ("best" if which is None else "eval")
        assert main(["simulate", "--run", str(run), *flag, "--out", str(out), "--sample", "0.05"]) == 0
        record = json.loads((out / "record.json").read_text())
        if which is None:   # the best: most stages, then smallest stage value
            ok = evaluations[evaluations["status"] == "ok"]
            top = ok.sort_values(["stage", "stage_value"], ascending=[False, True]).iloc[0]
            which = (int(top["iteration"]), int(top["particle"]))
        row = evaluations[(evaluations["iteration"] == which[0]) & (evaluations["particle"] == which[1])].iloc[0]
        stored = metrics[(metrics["iteration"] == which[0]) & (metrics["particle"] == which[1])].iloc[0]
        assert record["status"] == row["status"] and record["conditions_met"] == row["stage"]
        # one numbering (issue 42): record.json's stage is the text's "stage k of n"
        from codesign.problems import get_problem

        n = len(get_problem("human_gait").objectives)
        assert record["stage"] == row["stage"] + 1 and record["stages"] == n
        assert record["stage_text"].startswith(f"stage {record['stage']} of {n}: {record['stage_metric']} ")
        names = [k for k, v in record["metrics"].items() if k in stored and v is not None]   # NaN: null
        assert "time" in names and len(names) >= 5
        for name in names:
            assert record["metrics"][name] == stored[name]      # bit-identical replay
        assert stored["time_fraction"] == record["metrics"]["time"] / 0.3   # the problem's stage 1
        assert record["metrics"]["time"] <= 0.3
        assert (out / "trajectory.csv").is_file() and (out / "gait.png").is_file()
        assert (out / "stick.gif").is_file()
    capsys.readouterr()
    bad = tmp_path / "bad"
    for args, text in ((["--eval", "9:0"], "no such evaluation"), (["--eval", "x"], "ITERATION:PARTICLE"),
                       ([], "exactly one"), (["--best", "--eval", "0:0"], "exactly one")):
        assert main(["simulate", "--run", str(run), *args, "--out", str(bad)]) == 2
        err = capsys.readouterr().err
        assert text in err and len(err.strip().splitlines()) == 1
    assert main(["simulate", "--run", str(tmp_path / "nowhere"), "--best", "--out", str(bad)]) == 2
    assert "nowhere: no run found" in capsys.readouterr().err
    assert not bad.exists()
    # `codesign runs` says whether the best walks: the verdict of the best's stored metrics
    from codesign.commands.runs import run_rows
    from codesign.problems.verdict import walking_verdict

    (row,) = run_rows(tmp_path / "runs")
    top = ok.sort_values(["stage", "stage_value"], ascending=[False, True]).iloc[0]
    best = metrics[(metrics["iteration"] == top["iteration"]) & (metrics["particle"] == top["particle"])].iloc[0]
    verdict = walking_verdict(best.to_dict(), 0.3)
    assert row["walks"] == verdict.short
    from codesign.objectives import describe_fitness
    from codesign.problems import get_problem

    problem = get_problem("human_gait")
    assert row["best"] == describe_fitness(int(top["stage"]), float(top["stage_value"]),
                                           problem.objectives, problem.metric_unit)
    assert row["best"].startswith(f"stage {min(int(top['stage']), len(problem.objectives) - 1) + 1} of "
                                  f"{len(problem.objectives)}: ")
    _ = pytest

def test_simulate_refuses_a_design_an_evaluation_would_misread(tmp_path, capsys):
    """A topology the catalog lacks, a misspelled or an extra parameter: an evaluation
    would fail with a garbled reason or silently ignore the name; simulate names it."""
    from pathlib import Path

    good = json.loads((Path(__file__).parents[2] / "docs/designs/codesign-walking.json").read_text())
    name = sorted(good["params"])[0]
    cases = {"topology": ({**good, "topology": 99}, "topology: 99; expected a topology id of the catalog"),
             "extra": ({**good, "params": {**good["params"], "bogus": 1.0}}, "unknown bogus;"),
             "misspelled": ({**good, "params": {**{k: v for k, v in good["params"].items() if k != name},
                                                name + "x": 1.0}},
                            f"unknown {name}x; missing {name};")}
    out = tmp_path / "o"
    for label, (doc, expected) in cases.items():
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps(doc))
        assert main(["simulate", str(path), "--out", str(out)]) == 2, label
        err = capsys.readouterr().err
        assert expected in err and err.count("\n") == 1, err
    assert main(["simulate", "--human", "--stiffness", "-10", "--out", str(out)]) == 2
    assert "--stiffness: -10; expected a joint stiffness > 0" in capsys.readouterr().err
    assert main(["simulate", "--human", "--damping", "nan", "--out", str(out)]) == 2
    assert not out.exists()


def test_every_bundled_design_passes_the_check():
    """The designs the docs ship (and hence what `codesign freeze` writes) are exactly
    what an evaluation reads."""
    from pathlib import Path

    from codesign.control.assist import has_assist
    from codesign.problems.options import LATER_OPTIONS
    from codesign.walking import WalkSettings, check_design, load_design

    paths = sorted((Path(__file__).parents[2] / "docs/designs").glob("*.json"))
    assert len(paths) >= 5
    for path in paths:
        design = load_design(path)       # a device assisting an active wearer (issue 32): its settings
        table = {"wearer": "active"} if has_assist(design.params) else {}
        for key in LATER_OPTIONS:          # problem options that set the evaluation's (issues 45, 46)
            if (design.problem or {}).get(key):
                table[key] = design.problem[key]
        check_design(design, WalkSettings.from_dict(table), str(path))


def test_an_interrupted_simulate_leaves_its_folder_as_it_was(tmp_path, capsys, monkeypatch):
    """The files are written into a hidden folder and replace the old ones together once
    all are written: a Ctrl-C while the animation is drawn (the last, longest write) leaves
    the previous simulation's files untouched and nothing half-written; a simulation that
    ends normally replaces all five."""
    from codesign.report import gait

    out = tmp_path / "o"
    assert main(["simulate", "--human", "--max-time", "0.2", "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == ["actuators.png", "gait.png", "record.json", "stick.gif", "trajectory.csv"]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(gait, "stick_gif", interrupted)
    try:
        main(["simulate", "--human", "--max-time", "0.3", "--out", str(out)])
    except KeyboardInterrupt:
        pass
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before      # no hidden folder either
    fresh = tmp_path / "new" / "deeper"                                    # nor a new, empty --out
    try:
        main(["simulate", "--human", "--max-time", "0.3", "--out", str(fresh)])
    except KeyboardInterrupt:
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]
    monkeypatch.undo()
    assert main(["simulate", "--human", "--max-time", "0.3", "--out", str(out)]) == 0
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(after) == sorted(before)
    assert all(after[name] != before[name] for name in before)
    assert json.loads(after["record.json"])["metrics"]["time"] == 0.3
    # 0.3 s hold no stride: said in words, and strict JSON (null, not NaN) in record.json
    assert "heel strike to heel strike; second half, both legs): no complete stride" in capsys.readouterr().out
    assert b"NaN" not in after["record.json"]
    assert json.loads(after["record.json"])["nominal_gait"]["strides"]["hip_corr"] is None


def test_no_animation_skips_the_gif_and_leaves_no_stale_one(tmp_path, capsys):
    out = tmp_path / "sim"
    design = Path(__file__).resolve().parents[2] / "docs" / "designs" / "human-thesis-walking.json"
    assert main(["simulate", str(design), "--max-time", "0.2", "--out", str(out), "--sample", "0.05"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["actuators.png", "gait.png", "record.json", "stick.gif",
                                                     "trajectory.csv"]
    first = (out / "record.json").stat().st_mtime_ns
    assert main(["simulate", str(design), "--max-time", "0.2", "--out", str(out), "--sample", "0.05",
                 "--no-animation"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["actuators.png", "gait.png", "record.json", "trajectory.csv"]
    assert (out / "record.json").stat().st_mtime_ns >= first
    assert "stick.gif" not in capsys.readouterr().out.splitlines()[-1]


def test_each_design_gets_its_own_default_folder(tmp_path, monkeypatch, capsys):
    import argparse

    from codesign.commands.simulate import default_out

    def args(**kw):
        return argparse.Namespace(**{"run": None, "best": False, "eval": None, "human": False, "design": None, **kw})

    assert default_out(args(design="docs/designs/codesign-walking.json")) == Path("results/simulate/codesign-walking")
    assert default_out(args(human=True)) == Path("results/simulate/human")
    assert default_out(args(run="results/demo", best=True)) == Path("results/simulate/demo-best")
    assert default_out(args(run="results/demo/run.sqlite", eval="59:3")) == Path("results/simulate/demo-59-3")
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--human", "--max-time", "0.2", "--sample", "0.05", "--no-animation"]) == 0
    assert (tmp_path / "results" / "simulate" / "human" / "record.json").is_file()
    assert "wrote results/simulate/human/trajectory.csv" in capsys.readouterr().out


def test_the_trajectorys_actuator_loads_add_up_to_the_recorded_metrics(tmp_path, capsys):
    """A 2-s walk of the make-run design on catalog drivetrains, recorded every step: the
    mean of sum |tau w| over the trajectory's effort joints in the window (t >= 1 s) is the
    recorded mechanical power, and the largest RMS torque over the motors divided by its
    tau_continuous column is the recorded thermal ratio; record.json names each motor's
    drivetrain (issue 34: actuator loads; issue 30: drivetrains)."""
    import numpy as np
    import pandas as pd

    design = Path(__file__).resolve().parents[2] / "docs" / "designs" / "wearer-demo.json"
    out = tmp_path / "sim"
    settings = json.dumps({"actuators": {"motor": "AK10-9", "stage_ratio": 3}})
    assert main(["simulate", str(design), "--max-time", "2", "--sample", "0.001", "--no-animation",
                 "--out", str(out), "--settings", settings]) == 0
    table = pd.read_csv(out / "trajectory.csv")
    record = json.loads((out / "record.json").read_text())
    window = table["t_s"].to_numpy() >= 1.0 - 1e-9
    effort = [c[len("power_"):-len("_W")] for c in table.columns if c.startswith("power_")]
    power = sum(np.abs(table[f"power_{j}_W"].to_numpy()[window]) for j in effort)
    t = table["t_s"].to_numpy()[window]
    mean_power = np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(t)) / (t[-1] - t[0])
    assert mean_power == pytest.approx(record["metrics"]["power"], rel=1e-3)
    motors = [j for j in effort if f"tau_continuous_{j}_Nm" in table]
    assert len(motors) == 4                                   # two actuators per leg, the ankles muscles
    thermal = max(np.sqrt(np.mean(table[f"tau_{j}_Nm"].to_numpy()[window] ** 2))
                  / table[f"tau_continuous_{j}_Nm"].iloc[0] for j in motors)
    # the metric averages the rollout's own samples, the trajectory its recorded 1-ms states
    # (the torques recomputed there): 0.1 % apart
    assert thermal == pytest.approx(record["metrics"]["actuator_thermal_ratio"], rel=2e-3)
    assert {a["drivetrain"] for a in record["actuators"].values()} == {"AK10-9 x 3"}
    assert "actuator j1: AK10-9 x 3:" in capsys.readouterr().out


def test_a_human_gait_is_stated_next_to_the_thesis_s_best(tmp_path, capsys):
    """Issue 31: simulate prints a human design's per-stride r and torque RMS (from its
    record) next to thesis Table 4.4's best, step mode (0.96 / 0.90 / 0.54 at 108.6 N m)."""
    out = tmp_path / "sim"
    design = Path(__file__).resolve().parents[2] / "docs" / "designs" / "human-walking.json"
    assert main(["simulate", str(design), "--out", str(out), "--no-animation"]) == 0
    m = json.loads((out / "record.json").read_text())["metrics"]
    expected = (f"per stride r hip / knee / ankle {m['stride_r_hip']:.3f} / {m['stride_r_knee']:.3f} / "
                f"{m['stride_r_ankle']:.3f} at {m['torque_rms']:.1f} N m torque RMS; thesis Table 4.4 "
                "(step mode, best): 0.96 / 0.90 / 0.54 at 108.6 N m")
    assert expected in capsys.readouterr().out.splitlines()
