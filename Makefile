# perfRL lab -- every target sets up what it needs (virtual environment, package).
#   make test       the test suite (what CI runs)
#   make reproduce  the whole pipeline on the embedded default model
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
comma := ,
# Extras installed into the environment (CUDA machines add gpu).
HAS_CUDA := $(shell command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && echo 1)
EXTRAS := dev$(if $(HAS_CUDA),$(comma)gpu)
# The CPU build of torch; a bare `torch` would pull a multi-GB CUDA build.
TORCH_CPU := torch==2.13.0

SEED_MODEL := models/seed-policy

.PHONY: setup test reproduce calibrate score-examples bench-harness seed-model seed-report autotune clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@if [ -z "$(HAS_CUDA)" ]; then \
	  echo "no CUDA here: installing the CPU build of torch"; \
	  $(BIN)/python -m pip install -q "$(TORCH_CPU)"; \
	fi
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	@touch $@

test: $(STAMP)
	$(BIN)/python -m pytest

# The whole pipeline on the embedded default model (training experiments come next).
reproduce: seed-model calibrate score-examples autotune seed-report

# The embedded default policy, built once (about 5 minutes on 2 cores).
seed-model: $(SEED_MODEL)/config.json

$(SEED_MODEL)/config.json: | $(STAMP)
	$(BIN)/lab seed-model --out $(SEED_MODEL)

seed-report: $(SEED_MODEL)/config.json
	$(BIN)/lab seed-report --model $(SEED_MODEL) --out results/seed_policy.json

autotune: $(STAMP)
	$(BIN)/lab autotune --problem dgemm --out results/autotune.json

calibrate: $(STAMP)
	$(BIN)/lab calibrate --out results/machine.json

score-examples: $(STAMP)
	rm -rf results/examples
	$(BIN)/lab score-examples --no-cache --threads 1 --out results/examples
	$(BIN)/lab score-examples --no-cache --threads 2 --out results/examples

bench-harness: $(STAMP)
	$(BIN)/python -m lab.bench_harness --out results/bench_harness.json

clean:
	rm -rf .cache build
