# Exo co-design: every stage of the pipeline is a target. `make run` runs the main job,
# `make test` the test suite; both create (or reuse) the virtual environment first.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CODESIGN := $(VENV)/bin/codesign
STAMP := $(VENV)/.installed-stamp
SPEC ?= pipelines/demo.toml

.PHONY: run run-record designs walking test topologies screen optimize study resume runs report freeze sweep bench analyze simulate clean venv cache

CATALOG := topologies/catalog.json
DEMO := results/demo
SCREEN_SAMPLES ?= 50
# pytest-xdist processes for `make test` (CI's machine has 2 cores; 0 runs in this process)
TEST_WORKERS ?= 2

# (Re)install whenever pyproject.toml changes (editable), then compile the walking kernels
# into numba's disk cache once (minutes of CPU; `codesign warmup` prints a line before).
# The event-driven and soft peers' kernels (the tests use them, `make run` does not) are
# compiled by `make test` in a process of its own while the suite runs: the tests that use
# them run last (tests/conftest.py) and wait for that compile (--peers-in-background).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(CODESIGN) warmup
	touch $(STAMP)

venv: $(STAMP)

## cache: compile the walking kernels if the sources changed since (one line when cached)
cache: $(STAMP)
	$(CODESIGN) warmup

## run: the main job — catalog (if missing), screening with the load screening, the demo
## study (pipelines/demo.toml: a global round, a focused round on the best topology, each
## best verified at half the time step and in MuJoCo) and the report of its best's round.
## A finished study is reused (`make clean` or `rm -r results/demo` to start over); an
## interrupted one resumes. Ends on the best's verdict under every check and its design file.
run: $(STAMP) $(CATALOG) cache
	$(CODESIGN) screen --samples $(SCREEN_SAMPLES) --out results/screen
	$(CODESIGN) study pipelines/demo.toml --report

## run-record: after `make run`, replay the demo's best and write what it ends on into
## docs/make-run.json and the README's `make run` sentence (one command to refresh both)
run-record: $(STAMP) cache
	$(CODESIGN) designs make-run $(DEMO)

## designs: rewrite docs/designs/README.md from the design files and docs/designs/index.toml
designs: $(STAMP)
	$(CODESIGN) designs index

## walking: a walking co-design under real actuators (docs/studies.md): the capped
## human-gait study, then the two walk-first runs from its transferred gait, then a replay
WALKING_RUNS := human-capped codesign-transfer codesign-transfer2
walking: $(STAMP) $(CATALOG) cache
	for s in $(WALKING_RUNS); do \
	  if [ -f results/$$s/run.sqlite ]; then $(CODESIGN) resume results/$$s || exit 1; \
	  else $(CODESIGN) optimize pipelines/$$s.toml || exit 1; fi; done
	$(CODESIGN) simulate --run results/codesign-transfer2 --best --out results/walking
	@echo "walking co-design: results/walking (gait.png, stick.gif, record.json)"

## test: the whole test suite. Its kernels are compiled at LLVM level 1 (NUMBA_OPT, for the
## install's warmup too when `make test` does it; the level names its own cache folder):
## ~40 % less compile than numba's default 3, the same results (docs/performance.md)
test: export NUMBA_OPT = 1
test: $(STAMP)
	$(CODESIGN) warmup --peers-in-background
	$(PY) -m pytest -q -n $(TEST_WORKERS)

## topologies: stage 1, regenerate the topology and actuator-pair catalog
topologies: $(STAMP)
	$(CODESIGN) topologies --out topologies

$(CATALOG): | $(STAMP)
	$(CODESIGN) topologies --out topologies

## screen: stage 3, singularity screening of sampled morphologies in every subspace
screen: $(STAMP) $(CATALOG)
	$(CODESIGN) screen --out results/screen

## optimize: stage 5 on a local Dask cluster (SPEC=pipelines/NAME.toml)
optimize: $(STAMP) $(CATALOG) cache
	$(CODESIGN) optimize $(SPEC)

## study: a study's rounds -- global, focused per topology, verified (SPEC with a [study]
## table; results/<name>/, resumed where it stopped)
study: $(STAMP) $(CATALOG) cache
	$(CODESIGN) study $(SPEC)

## resume: continue an interrupted run (RUN=results/NAME)
resume: $(STAMP) cache
	$(CODESIGN) resume $(RUN)

## runs: list the runs with status, best and lineage
runs: $(STAMP)
	$(CODESIGN) runs

## sweep: stage 5 on a cluster: SCHEDULER=tcp://host:8786 or CLUSTER=slurm|pbs
sweep: $(STAMP) $(CATALOG)
	$(CODESIGN) optimize $(SPEC) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(CLUSTER),--cluster $(CLUSTER))

## report: figures and HTML for a run (RUN=results/NAME)
report: $(STAMP)
	$(CODESIGN) report $(RUN)

## freeze: a new spec with parts of a design fixed (RUN=..., KEEP=morphology, [OPEN='param:j5_*'], OUT=mine.toml)
freeze: $(STAMP)
	$(CODESIGN) freeze $(RUN) --keep $(KEEP) $(if $(OPEN),--open $(OPEN)) -o $(OUT)

## simulate: replay a design: DESIGN=file.json, or RUN=results/NAME [EVAL=ITERATION:PARTICLE]
## (its best without EVAL), or the unaugmented human with neither
simulate: $(STAMP) cache
	$(CODESIGN) simulate $(if $(DESIGN),$(DESIGN),$(if $(RUN),--run $(RUN) $(if $(EVAL),--eval $(EVAL),--best),--human))

## analyze: limit-cycle analysis of the simplest walker, with its figure
analyze: $(STAMP)
	$(CODESIGN) analyze walker simplest --figure results/analysis/limit_cycle.png

## bench: every benchmark, side by side with its peers
bench: $(STAMP)
	$(CODESIGN) bench all

## clean: remove generated results, caches and the virtual environment
clean:
	rm -rf $(VENV) results/*/ .pytest_cache .hypothesis codesign/dynamics/_specialized
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
