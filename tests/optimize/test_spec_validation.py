"""Job spec validation: clear one-line errors with the key path; fuzzed with hypothesis."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codesign.errors import UserError
from codesign.run.driver import new_optimizer
from codesign.run.spec import parse_spec

GOOD = """
name = "toy"
seed = 4
[problem]
name = "mmpso_toy"
[optimizer]
algorithm = "mmpso"
particles = 12
iterations = 20
[optimizer.migration]
exploration = 0.01
local = { shape = "gaussian", start = 0.0, peak = 0.05, center = 10, width = 3 }
global = { shape = "sigmoid", start = 0.0, end = 0.05, center = 15, width = 2 }
[space.parameters.x]
bounds = [0.0, 1.0]
init = [0.0, 0.25]
[[objectives]]
metric = "f"
sense = "maximize"
[execution]
mode = "local"
workers = 2
[execution.cluster]
cores = 4
walltime = "02:00:00"
[freeze]
parameters = { y = 0.5 }
"""


def test_good_spec_builds_an_optimizer():
    spec = parse_spec(GOOD)
    optimizer = new_optimizer(spec)
    assert spec.pso.particles == 12 and spec.execution.cluster.cores == 4
    assert optimizer.space.n_subspaces == 2
    assert optimizer.space.parameters[0].init_range == (0.0, 0.25)
    assert all(c.params.get("y", 0.5) == 0.5 for c in optimizer.ask())


@pytest.mark.parametrize("change, message", [
    ("[optimizer]\nparticles = 0\n", "optimizer.particles: got 0; expected an integer in [1, 100000]"),
    ("[optimizer]\nparticels = 3\n", "optimizer.particels: unknown key"),
    ("[optimizer]\npipeline = 1\n", "optimizer.pipeline: got 1; expected true or false"),
    ("[optimizer]\niterations = 1_000_000_000\n", "optimizer.iterations: got 1000000000"),
    ("[optimizer]\niterations = 2.5\n", "optimizer.iterations: got 2.5"),
    ("[optimizer]\nconstriction = true\n", "optimizer.constriction: got true"),
    ("[execution]\nmode = \"scheduler\"\n", "execution.scheduler"),
    ("[execution]\nmode = \"grid\"\n", "execution.mode: got \"grid\"; expected one of serial"),
    ("[space.parameters.x]\nbounds = [1, 0]\n", "space.parameters.x.bounds"),
    ("[space.parameters.q]\nbounds = [0, 1]\n", "space.parameters.q: unknown parameter"),
    ("[freeze]\npools = { shape = \"nope\" }\n", "freeze.pools.shape: unknown group 'nope'"),
    ("[freeze]\nparameters = { x = 3.0 }\n", "freeze.parameters.x: 3.0 outside the bounds"),
    ("[space.start]\nx = 3.0\n", "space.start.x: 3.0 outside the bounds"),
    ("[space.start]\nq = 0.5\n", "space.start.q: unknown parameter"),
    ("[space.start]\nx = \"half\"\n", "space.start.x: got \"half\"; expected a finite number"),
    ("[optimizer.migration]\nexploration = 0.7\nlocal = 0.5\n", "P_e + P_l + P_g = 1.2"),
    ("[optimizer.migration]\nexploration = { shape = \"sigmoid\", start = -0.5 }\n",
     "optimizer.migration.exploration: is -0.25 at iteration 0"),
    ("[[objectives]]\nmetric = \"f\"\nuntil = 1.0\n", "objectives[0].until: given for the last"),
    ("[[space.pools]]\nname = \"p\"\ngroups = [{ name = \"g\", parameters = [\"w\"] }]\n",
     "group p.g uses unknown parameter 'w'"),
    # issue 17: a batch cluster's settings that dask-jobqueue or the batch system would
    # only refuse later (a traceback, or every job submission failing in the background)
    ("[execution.cluster]\nwalltime = \"forever\"\n",
     "execution.cluster.walltime: got \"forever\"; expected a batch walltime like \"04:00:00\""),
    ("[execution.cluster]\nwalltime = \"1:75:00\"\n", "execution.cluster.walltime: got \"1:75:00\""),
    ("[execution.cluster]\nmemory = \"lots\"\n",
     "execution.cluster.memory: got \"lots\"; expected a memory size like \"16GB\" (at least 1 MiB)"),
    ("[execution.cluster]\nmemory = \"\"\n", "execution.cluster.memory: got \"\""),
    ("[execution]\ndashboard = \"yes\"\n", "execution.dashboard: got \"yes\"; expected true or false"),
    ("[execution]\nno_worker_warning_s = -1\n", "execution.no_worker_warning_s: got -1; expected a finite "
     "number in [0, 1e+09]"),
    ("[freeze]\nparameters = { x = \"a\" }\n", "freeze.parameters.x: got \"a\"; expected a finite number"),
    # issue 29: start points from design files
    ("[space]\nstart_spread = 0.1\n", "space.start_spread: got 0.1; expected a start point"),
    ("[space]\nstart_spread = 0.9\n[space.start]\nx = 0.1\n", "space.start_spread: got 0.9; expected a finite "
     "number in [0, 0.5]"),
    ("[space]\nstart_design = \"/no/such/design.json\"\n", "/no/such/design.json"),
    ("[space]\nstart_designs = 3\n", "space.start_designs: got 3; expected the path of a JSON list of designs"),
    # issue 44: a study's transfer seeds
    ("[[space.seeds]]\nx = 3.0\n", "space.seeds[0].x: 3.0 outside the bounds"),
    ("[[space.seeds]]\nx = 0.5\n[[space.seeds]]\nq = 0.5\n", "space.seeds[1].q: unknown parameter"),
    ("[space]\nseeds = 1\n", "space.seeds: got 1; expected an array of tables [[space.seeds]]"),
    ("[optimizer]\nparticles = 2\n[space.start]\nx = 0.1\n[[space.seeds]]\nx = 0.2\n[[space.seeds]]\nx = 0.3\n",
     "space.seeds: 3 start points for 2 particles; expected at most one per particle"),
])
def test_errors_name_the_key_and_the_expectation(change, message):
    text = "[problem]\nname = \"mmpso_toy\"\n" + change
    with pytest.raises(UserError) as info:
        new_optimizer(parse_spec(text, source="x.toml"))
    assert message in str(info.value)
    assert str(info.value).startswith("x.toml: ") and "\n" not in str(info.value)


def test_start_points_from_design_files(tmp_path: Path):
    """space.start_design: its params are particle 0's start and, with start_spread,
    every particle's starts within +-spread of the range around them; start_designs of a
    problem that cannot name a design's parameters are refused in one line."""
    import json

    design = tmp_path / "d.json"
    design.write_text(json.dumps({"topology": None, "actuators": None, "params": {"x": 0.8}}))
    text = (GOOD.replace("[freeze]\nparameters = { y = 0.5 }\n", "")
            + f'[space]\nstart_design = "{design}"\nstart_spread = 0.05\n')
    optimizer = new_optimizer(parse_spec(text.replace("init = [0.0, 0.25]", "init = [0.0, 1.0]")))
    x = [c.params["x"] for c in optimizer.ask()]
    assert x[0] == 0.8 and all(0.75 <= v <= 0.85 for v in x)
    listed = tmp_path / "many.json"
    listed.write_text(json.dumps([{"topology": 1, "actuators": [1, 3], "params": {"x": 0.5}}]))
    with pytest.raises(UserError, match="space.start_designs: problem 'mmpso_toy' does not name a design's"):
        new_optimizer(parse_spec(GOOD + f'[space]\nstart_designs = "{listed}"\n', source="x.toml"))


def test_a_design_file_holding_more_than_the_search_starts_particle_zero_through_its_problem(monkeypatch):
    """space.start_design naming an adapting wearer's device design itself (its file holds
    the wearer's whole law and the frozen units, not only the searched reflexes and
    profile): the walking problem's encode places it, and particle 0 starts at the file's
    value of every searched parameter -- a continuation in one line."""
    import json
    import re

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)                         # the wearer is named from the repository
    design = json.loads((root / "docs/designs/assist-muscles-hip.json").read_text())["params"]
    text = (root / "studies/assist-muscles/hip-loads-robust-5.toml").read_text()
    text = re.sub(r"start_design = .*", 'start_design = "docs/designs/assist-muscles-hip.json"', text)
    spec = parse_spec(text, source="x.toml")
    assert len(design) == 90 and set(design) <= set(spec.start)        # the file's whole law and units
    first = new_optimizer(spec).ask()[0].params
    searched = [name for name in first if name not in spec.freeze.parameters]
    assert len(searched) == 33 and all(first[name] == design[name] for name in searched)


def test_a_muscle_driven_humans_design_file_starts_its_reflex_search():
    """space.start_design naming a muscle-driven human's own design file (its reflexes and
    the unused impedance law it carries): particle 0 starts at the file's 25 reflexes; an
    impedance human's design (no reflexes) is one line naming the missing reflex."""
    import json
    import re

    root = Path(__file__).resolve().parents[2]
    walker = root / "studies/muscle-wearer/human-muscles-loads-2.json"
    design = json.loads(walker.read_text())["params"]
    text = (root / "studies/muscle-wearer/search-loads-2.toml").read_text()
    text = re.sub(r"\[space\.start\][^\n]*\n(\"reflex[^\n]*\n)+", "", text)
    spec = parse_spec(text.replace("[space]\n", f'[space]\nstart_design = "{walker}"\n'), source="x.toml")
    first = new_optimizer(spec).ask()[0].params
    assert len(design) > 25 and len(first) == 25
    assert all(first[name] == design[name] for name in first)
    impedance = root / "docs/designs/human-gentle-walking.json"
    expected = r"^x\.toml: space\.start_design: no reflex\.\w+; expected a muscle-driven human's design \(its 25 reflex"
    with pytest.raises(UserError, match=expected):
        new_optimizer(parse_spec(text.replace("[space]\n", f'[space]\nstart_design = "{impedance}"\n'), source="x.toml"))


def test_seeds_start_particles_one_two_in_the_subspace_that_holds_them():
    """[[space.seeds]] (a study's transfer): particles 1, 2 start exactly at the seeds, each
    in the first subspace that uses all its parameters ("x" alone: group x; "x" and "y":
    group xy); every other particle starts where it starts without them (the random draws
    are the same)."""
    base = GOOD.replace("[freeze]\nparameters = { y = 0.5 }\n", "") + "[space.start]\nx = 0.2\n"
    plain = new_optimizer(parse_spec(base)).ask()
    seeded = new_optimizer(parse_spec(base + "[[space.seeds]]\nx = 0.9\ny = 0.1\n[[space.seeds]]\nx = 0.7\n")).ask()
    assert seeded[0].params == plain[0].params and seeded[0].params["x"] == 0.2
    assert seeded[1].groups == ("xy",) and seeded[1].params == {"x": 0.9, "y": 0.1}
    assert seeded[2].groups == ("x",) and seeded[2].params == {"x": 0.7}
    assert [(c.groups, c.params) for c in seeded[3:]] == [(c.groups, c.params) for c in plain[3:]]


def test_unknown_problem_and_bad_toml():
    with pytest.raises(UserError, match="problem.name: 'nope' is not a registered problem"):
        new_optimizer(parse_spec("[problem]\nname = \"nope\"\n"))
    with pytest.raises(UserError, match="not valid TOML"):
        parse_spec("[problem\n")
    with pytest.raises(UserError, match="problem: missing"):
        parse_spec("seed = 1\n")


def test_cli_prints_one_line_and_exits_2(tmp_path: Path):
    spec = tmp_path / "bad.toml"
    spec.write_text("[problem]\nname = \"six_hump_camel\"\n[optimizer]\nparticles = -1\n")
    done = subprocess.run([sys.executable, "-m", "codesign.cli", "optimize", str(spec),
                           "--results", str(tmp_path / "results")], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "optimizer.particles" in done.stderr
    assert not (tmp_path / "results").exists()          # nothing half-written


@pytest.mark.parametrize("walltime, memory", [("04:00:00", "16GB"), ("2-00:00:00", "1 GiB"), ("30", "4gb"),
                                              ("1:30", "512MB")])
def test_batch_walltimes_and_memory_sizes_that_slurm_and_pbs_read_are_accepted(walltime, memory):
    spec = parse_spec(f'[problem]\nname = "sphere"\n[execution.cluster]\nwalltime = "{walltime}"\n'
                      f'memory = "{memory}"\n')
    assert (spec.execution.cluster.walltime, spec.execution.cluster.memory) == (walltime, memory)


# -- fuzzing ----------------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
keys = st.text(max_size=4) | st.sampled_from(["name", "seed", "problem", "optimizer", "space", "objectives", "evaluation",
                        "execution", "freeze", "particles", "iterations", "migration", "exploration",
                        "shape", "start", "center", "width", "parameters", "pools", "groups", "bounds",
                        "init", "exclude", "metric", "until", "sense", "mode", "workers", "cluster",
                        "cores", "x", "y", "algorithm", "scheduler", "junk"])
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(keys, inner, max_size=5)),
                      max_leaves=20)


def check(text: str) -> None:
    try:
        new_optimizer(parse_spec(text, source="fuzz.toml"))
    except UserError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("fuzz.toml")


def strip_none(value):
    if isinstance(value, dict):
        return {k: strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_none(v) for v in value if v is not None]
    return value


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(keys, values, max_size=6))
def test_fuzz_random_specs_give_user_errors_only(data):
    check(tomli_w.dumps(strip_none(data)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_good_spec(data):
    import tomllib
    spec = tomllib.loads(GOOD)
    for _ in range(data.draw(st.integers(1, 3))):
        table = spec
        path = []
        while isinstance(table, dict) and table:
            key = data.draw(st.sampled_from(sorted(table)))
            path.append(key)
            if not isinstance(table[key], dict) or data.draw(st.booleans()):
                break
            table = table[key]
        if isinstance(table, dict) and path:
            action = data.draw(st.sampled_from(["delete", "replace", "add"]))
            if action == "delete":
                table.pop(path[-1], None)
            elif action == "replace":
                table[path[-1]] = data.draw(values)
            else:
                table[data.draw(keys)] = data.draw(values)
    check(tomli_w.dumps(strip_none(spec)))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_arbitrary_text(text):
    check(text)


@pytest.mark.parametrize("mode, directive", [("slurm", "#SBATCH"), ("pbs", "#PBS")])
def test_cluster_settings_reach_the_job_script(mode, directive):
    from codesign.run.clusters import jobqueue_cluster
    spec = parse_spec(f"""[problem]\nname = "sphere"\n[execution]\nmode = "{mode}"
[execution.cluster]\ncores = 4\nmemory = "8GB"\nwalltime = "02:00:00"\nlifetime = "110m"\nqueue = "long"\n""")
    cluster = jobqueue_cluster(spec.execution)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert directive in script and "02:00:00" in script and "long" in script
    assert "--nthreads 1" in script and "--nworkers 4" in script and "--lifetime 110m" in script


@pytest.mark.parametrize("name", ["six_hump_camel", "lexicographic_six_hump", "mmpso_toy", "codesign"])
def test_pipeline_specs_are_valid(name):
    from codesign.run.spec import load_spec
    spec = load_spec(Path(__file__).parents[2] / "pipelines" / f"{name}.toml")
    assert spec.name == name
    if name != "codesign":          # the co-design problem is registered by the walking stage
        assert new_optimizer(spec).ask()
