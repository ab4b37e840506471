# Exo co-design: every stage of the pipeline is a target. `make run` runs the main job,
# `make test` the test suite; both create (or reuse) the virtual environment first.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CODESIGN := $(VENV)/bin/codesign
STAMP := $(VENV)/.installed-stamp
SPEC ?= pipelines/demo.toml

.PHONY: run test topologies screen optimize report freeze sweep bench clean venv

# (Re)install whenever pyproject.toml changes; editable so the numba cache sits in the tree.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## run: the main job on the embedded defaults (grows with the pipeline)
run: $(STAMP) topologies
	@echo "catalog: topologies/catalog.json  table: topologies/README.md  figure: topologies/topologies.png"

## test: the whole test suite
test: $(STAMP)
	$(PY) -m pytest -q

## topologies: stage 1, the topology and actuator-pair catalog
topologies: $(STAMP)
	$(CODESIGN) topologies --out topologies

## screen: stage 3, singularity screening of sampled morphologies in every subspace
screen: $(STAMP)
	$(CODESIGN) screen

## optimize: stage 5 on a local Dask cluster (SPEC=pipelines/NAME.toml)
optimize: $(STAMP)
	$(CODESIGN) optimize $(SPEC)

## sweep: stage 5 on a cluster: SCHEDULER=tcp://host:8786 or CLUSTER=slurm|pbs
sweep: $(STAMP)
	$(CODESIGN) optimize $(SPEC) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(CLUSTER),--cluster $(CLUSTER))

## report: figures and HTML for a run (RUN=results/<name>)
report: $(STAMP)
	$(CODESIGN) report $(RUN)

## freeze: a new spec with parts of a design fixed (RUN=..., KEEP=morphology, OUT=pipelines/x.toml)
freeze: $(STAMP)
	$(CODESIGN) freeze $(RUN) --keep $(KEEP) -o $(OUT)

## bench: every benchmark, side by side with its peers
bench: $(STAMP)
	$(CODESIGN) bench all

## clean: remove generated results and the virtual environment
clean:
	rm -rf $(VENV) results/*/ .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
