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
# Pinned torch for machines without CUDA: the lab's build machines keep the CPU wheel of
# this version locally, and a bare `torch` would pull a multi-GB CUDA build. Elsewhere,
# point pip at PyTorch's CPU wheel index (PIP_EXTRA_INDEX_URL) to get the CPU build.
TORCH_CPU := torch==2.13.0

SEED_MODEL := models/seed-policy
SMOKE_MODEL := models/seed-policy-smoke
PAPERMILL := $(BIN)/papermill --cwd . --no-progress-bar
NOTEBOOKS := 01_baseline 02_grpo 03_grpo_sqd 04_figures

.PHONY: setup test reproduce smoke experiments figures lab calibrate score-examples bench-harness seed-model \
	seed-report autotune compare clean

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

# The whole pipeline on the embedded default model.
reproduce: seed-model calibrate score-examples autotune seed-report experiments

# Baseline -> GRPO -> GRPO+SQD -> figures through papermill; executed notebooks are kept beside the results.
experiments: $(SEED_MODEL)/config.json
	@mkdir -p results/notebooks
	@for nb in $(NOTEBOOKS); do \
	  $(PAPERMILL) notebooks/$$nb.ipynb results/notebooks/$$nb.ipynb -f configs/default.yaml || exit 1; done

# GRPO-only vs GRPO+SQD, three seeds each at the default budget (about 15 minutes on 2 cores);
# writes results/compare/, results/comparison.json and results/figures/comparison.png.
compare: $(SEED_MODEL)/config.json
	$(BIN)/lab compare --config configs/default.yaml --seeds 0 1 2

# The same pipeline with tiny budgets and a tiny model (a few minutes).
smoke: $(SMOKE_MODEL)/config.json
	@rm -rf runs/smoke && mkdir -p runs/smoke/notebooks
	@for nb in $(NOTEBOOKS); do \
	  $(PAPERMILL) notebooks/$$nb.ipynb runs/smoke/notebooks/$$nb.ipynb -f configs/smoke.yaml || exit 1; done

$(SMOKE_MODEL)/config.json: | $(STAMP)
	$(BIN)/lab seed-model --preset smoke --out $(SMOKE_MODEL)

# Redraw every figure from results/*/ JSON alone.
figures: $(STAMP)
	$(PAPERMILL) notebooks/04_figures.ipynb results/notebooks/04_figures.ipynb -f configs/default.yaml

# JupyterLab on the notebooks, with the project's environment as the kernel.
lab: $(STAMP)
	$(BIN)/python -m pip install -q -e ".[notebook]"
	$(BIN)/python -m ipykernel install --sys-prefix --name perfrl-lab --display-name "perfRL lab"
	$(BIN)/jupyter lab notebooks/

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
	rm -rf .cache build runs
