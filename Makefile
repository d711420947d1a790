# perfRL lab -- every target sets up what it needs (virtual environment, package, kernel).
#   make reproduce  the whole pipeline on the embedded default model (CONFIG=... for another config)
#   make suite      the base policy and GRPO on the eight-problem suite (about an hour)
#   make ablation   GRPO's settings one at a time against the default arm (about an hour)
#   make exploration  TRL's exploration options against the default GRPO arm, with their dynamics
#   make demonstrations  whether GRPO keeps the fast family when its warm start shows it correct kernels
#   make long       GRPO and the warm-started arm at 200 steps, beside the base policy (about 45 minutes)
#   make reworded-long  the reworded warm start and plain GRPO at 200 steps (about two hours; the
#                   reworded arm alone took 65 minutes on the 2-core AMD EPYC)
#   make exploration-screen  the reworded arm with max@k, a rarity or an entropy bonus or clip-higher, 40 steps
#   make exploration-long  the screen's two best and their reference at 200 steps (about four hours)
#   make sqd-study  plain GRPO and the SQD variants on DGEMM, serial and OpenMP (about two hours)
#   make test       lint, layers contract and the full test suite (what CI runs)
SHELL := /bin/bash
PYTHON ?= python3
CONFIG ?= configs/default.yaml
SUITE_CONFIG ?= configs/suite.yaml
ABLATION_CONFIG ?= configs/ablation.yaml
LONG_CONFIG ?= configs/long.yaml
PORT ?= 8888
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
comma := ,
# Extras installed into the environment (CUDA machines add gpu).
HAS_CUDA := $(shell command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && echo 1)
EXTRAS := dev,notebook$(if $(HAS_CUDA),$(comma)gpu)
# The GPU stack (unsloth, vLLM, TRL, transformers, torch) is pinned together by a constraints file.
CONSTRAINTS := $(if $(HAS_CUDA),-c constraints/gpu.txt)
# Pinned torch for machines without CUDA: the lab's build machines keep the CPU wheel of
# this version locally, and a bare `torch` would pull a multi-GB CUDA build. Elsewhere,
# point pip at PyTorch's CPU wheel index (PIP_EXTRA_INDEX_URL) to get the CPU build.
TORCH_CPU := torch==2.13.0

SEED_MODEL := models/seed-policy
SMOKE_MODEL := models/seed-policy-smoke
PAPERMILL := $(BIN)/papermill --cwd . --log-output --no-progress-bar --request-save-on-cell-execute
SUITE_NOTEBOOK := 05_suite
# Executed notebooks are a record of the run, not results: they change on every run.
EXECUTED := runs/notebooks
# This machine's results folder: results/ when results/machine.json was measured on this class of
# machine (or is not there yet), else results/machines/<class>/ (lab.results). It can only be
# known once the environment exists, so the targets that write result files (HERE below) find it
# after setup, with `lab status --results-dir`, and run again with RESULTS set; RESULTS=... on the
# command line names a folder.
RESULTS ?= results
HERE := calibrate autotune seed-report score-examples detector-report bench-harness bench-window bench-cluster test-time seed-numerics headroom fresh
EXAMPLE_FILES = $(foreach m,serial_t1 openmp_t1 openmp_t2,$(RESULTS)/examples/dgemm_$(m).json)
RESULT_FILES = $(RESULTS)/machine.json $(EXAMPLE_FILES) $(RESULTS)/autotune.json $(RESULTS)/seed_policy.json

.PHONY: setup test test-fast lint reproduce reproduce-here smoke experiments suite fresh fresh-suite ablation fresh-ablation exploration demonstrations reworded-long exploration-screen exploration-long long fresh-long sqd-study sqd-study-suite sqd-long detector-report figures lab calibrate score-examples \
	bench-harness bench-window bench-cluster test-time seed-numerics headroom seed-model seed-report autotune compare clean

setup: $(STAMP)

# Without CUDA, torch comes through pip, which finds the CPU wheel where the machine's pip
# configuration points, and everything else through uv, which installs the ~170 packages in
# about a minute where pip takes two (CI sets up from a clean clone each run). uv reads
# UV_INDEX_URL and UV_EXTRA_INDEX_URL, not pip's settings. --compile-bytecode does what pip does
# at install: where PYTHONDONTWRITEBYTECODE is set, nothing would cache compiled modules
# otherwise, and every process would compile transformers and trl again as it imports them.
# CUDA machines keep pip for the whole GPU stack: its pins are checked against pip's resolver
# (tests/test_gpu.py, docs/gpu.md).
INSTALL := $(if $(HAS_CUDA),$(BIN)/python -m pip install -q,$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python)
$(STAMP): pyproject.toml $(if $(HAS_CUDA),constraints/gpu.txt)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip $(if $(HAS_CUDA),,uv)
	@if [ -z "$(HAS_CUDA)" ]; then \
	  echo "no CUDA here: installing the CPU build of torch"; \
	  $(BIN)/python -m pip install -q "$(TORCH_CPU)"; \
	fi
	$(INSTALL) -e ".[$(EXTRAS)]" $(CONSTRAINTS)
	$(BIN)/python -m ipykernel install --sys-prefix --name perfrl-lab --display-name "perfRL lab" >/dev/null
	@touch $@

# The house checks: layers contract, lint, format.
lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

# Two pytest-xdist workers, each taking whole test modules (conftest.py's scheduling), longest
# first: on 2 cores faster than one process, which leaves a core idle while it imports, compiles
# or waits for a kernel. TEST_WORKERS=0 runs in one process. A test that failed because the
# harness distrusted a measurement (`suspicious`: the other worker's load slowed a baseline past
# its calibration) runs again, twice at most; any other failure fails at once.
# Compiled modules are cached even where PYTHONDONTWRITEBYTECODE is set: the suite starts many
# Python processes (CLI runs, notebook kernels, scoring workers), and each would compile the
# lab's modules again, and each test worker rewrite every test module's asserts.
TEST_WORKERS ?= 2
RERUN_ON := suspicious|cannot be trusted|calibrated peak
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(TEST_WORKERS) --reruns 2 --only-rerun '$(RERUN_ON)'
test: lint
	$(PYTEST) --durations=15

# No training, no notebooks, no full kernel corpus: about 2 minutes on 2 cores.
test-fast: $(STAMP)
	$(PYTEST) -q -m "not slow"

# The whole pipeline on the embedded default model, into this machine's results folder. What is
# current there (same measuring code, machine class, policy and config: `lab status`) is reused,
# what is missing or not current is measured; FRESH=1 measures everything again.
reproduce: $(STAMP)
	@set -e; mine=$$($(BIN)/lab status --results-dir); test -n "$$mine"; echo "results of this machine: $$mine/"; \
	$(BIN)/lab status --stale $$mine/machine.json $$mine/autotune.json $$mine/seed_policy.json $$mine/examples/*.json | xargs -r rm -f; \
	$(MAKE) --no-print-directory reproduce-here RESULTS=$$mine

reproduce-here: $(if $(FRESH),fresh) seed-model $(RESULT_FILES) experiments

# What FRESH=1 forgets: the result files, each experiment's metrics and checkpoints, the
# evaluation cache and the harness's calibrations of this machine (peak, bandwidths, baselines:
# lab.harness.plausibility), which bound every verdict. The seed policy is kept: its build is
# deterministic on one machine, not a measurement.
FORGET = $(BIN)/python -c "import sys; from lab import paths; from lab.results import open_config; \
	  [print(e.out_dir / 'metrics.json', e.run_dir.parent) for e in open_config(sys.argv[1]).experiments.values()]; \
	  print(paths.cache_dir() / 'evals', paths.cache_dir() / 'calibration')"

fresh-suite: $(STAMP)
	$(FORGET) $(SUITE_CONFIG) | xargs rm -rf

# Every arm of the config in the config's order, each through the notebook that presents it
# (baseline -> GRPO -> GRPO+SQD -> GRPO after a warm start on DGEMM), then the figures:
# lab.pipeline.plan is the one place that order lives.
experiments: $(SEED_MODEL)/config.json
	$(BIN)/lab run --config $(CONFIG) --notebooks $(EXECUTED)

# The base policy and GRPO on the problem suite (SUITE_CONFIG), 3 seeds: about an hour on 2
# cores, so not part of `make reproduce`. FRESH=1 measures it again.
suite: $(if $(FRESH),fresh-suite) $(SEED_MODEL)/config.json
	$(BIN)/lab run --config $(SUITE_CONFIG) --notebooks $(EXECUTED)

# What limits GRPO: each variant of ABLATION_CONFIG (one setting changed) trained with every seed
# and compared with the default arm (results/ablation/comparison.json). FRESH=1 measures it again.
ablation: $(if $(FRESH),fresh-ablation) $(SEED_MODEL)/config.json
	$(BIN)/lab run --config $(ABLATION_CONFIG)
	$(BIN)/lab compare --config $(ABLATION_CONFIG) --against grpo

fresh-ablation: $(STAMP)
	$(FORGET) $(ABLATION_CONFIG) | xargs rm -rf

# TRL's exploration options against the default GRPO arm (configs/exploration.yaml), each arm with
# its per-step dynamics by kernel family, compared with the GRPO arm (results/exploration/
# comparison.json) and drawn (results/exploration/figures): about half an hour on 2 cores.
exploration: $(SEED_MODEL)/config.json
	$(BIN)/lab run --config configs/exploration.yaml
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/04_figures.ipynb $(EXECUTED)/04_figures_exploration.ipynb -p config configs/exploration.yaml -p against grpo

# Does GRPO keep DGEMM's fast family once the policy it starts from writes it? A warm start that
# also fine-tunes on the kernel generator's verified sweep, with and without a KL penalty towards
# it, against the default GRPO arm (configs/demonstrations.yaml; results/demonstrations).
demonstrations: $(SEED_MODEL)/config.json
	$(BIN)/lab run --config configs/demonstrations.yaml
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/04_figures.ipynb $(EXECUTED)/04_figures_demonstrations.ipynb -p config configs/demonstrations.yaml -p against grpo

# Does the fast family survive 200 steps? The reworded arm of configs/demonstrations.yaml and plain
# GRPO at 200 steps (configs/reworded_long.yaml; results/reworded_long), compared and drawn.
reworded-long: $(SEED_MODEL)/config.json
	$(BIN)/lab run --config configs/reworded_long.yaml
	$(BIN)/lab compare --config configs/reworded_long.yaml --against grpo
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/04_figures.ipynb $(EXECUTED)/04_figures_reworded_long.ipynb -p config configs/reworded_long.yaml -p against grpo

# Which exploration setting keeps the fast family? The reworded arm at 40 steps with max@k rewards,
# a rarity bonus, TRL's adaptive entropy bonus or clip-higher, against the same arm without
# (configs/exploration_screen.yaml).
exploration-screen: $(SEED_MODEL)/config.json
	$(BIN)/lab run --config configs/exploration_screen.yaml
	$(BIN)/lab compare --config configs/exploration_screen.yaml --against reworded
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/04_figures.ipynb $(EXECUTED)/04_figures_exploration_screen.ipynb -p config configs/exploration_screen.yaml -p against reworded

# Do the screen's best keep the fast family for 200 steps? (configs/exploration_long.yaml; its
# warm starts are the screen's, so `make exploration-screen` first saves about half an hour.)
exploration-long: $(SEED_MODEL)/config.json
	$(BIN)/lab run --config configs/exploration_long.yaml
	$(BIN)/lab compare --config configs/exploration_long.yaml --against reworded_200
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/04_figures.ipynb $(EXECUTED)/04_figures_exploration_long.ipynb -p config configs/exploration_long.yaml -p against reworded_200

# The long runs: LONG_CONFIG's arms trained with every seed, then compared
# (results/long/comparison.json) and drawn (results/long/figures: learning curve, training
# dynamics, ...). FRESH=1 measures them again.
long: $(if $(FRESH),fresh-long) $(SEED_MODEL)/config.json
	$(BIN)/lab run --config $(LONG_CONFIG)
	$(BIN)/lab compare --config $(LONG_CONFIG)
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/04_figures.ipynb $(EXECUTED)/04_figures_long.ipynb -p config $(LONG_CONFIG)

fresh-long: $(STAMP)
	$(FORGET) $(LONG_CONFIG) | xargs rm -rf

# The SQD study (notebooks/06_sqd_study): runs the DGEMM part (configs/sqd_study.yaml) and
# writes results/sqd_study.json and results/sqd_study/figures, with the suite part's arms
# (configs/sqd_study_suite.yaml) where they are finished. Arms that are current are reused.
sqd-study: $(SEED_MODEL)/config.json
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/06_sqd_study.ipynb $(EXECUTED)/06_sqd_study.ipynb -y '{"run": ["configs/sqd_study.yaml"]}'

# The same study with its suite part run too: the DGEMM arms are reused when finished; the suite
# arms take several hours on 2 cores.
sqd-study-suite: $(SEED_MODEL)/config.json
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/06_sqd_study.ipynb $(EXECUTED)/06_sqd_study_suite.ipynb

# The SQD variants at the 200-step budget (configs/sqd_long.yaml): several hours on 2 cores.
sqd-long: $(SEED_MODEL)/config.json
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/06_sqd_study.ipynb $(EXECUTED)/06_sqd_long.ipynb \
	  -y '{"configs": ["configs/sqd_long.yaml"], "out": "results/sqd_study_long.json"}'

# Redraw every figure from results JSON alone.
figures: $(STAMP)
	@mkdir -p $(EXECUTED)
	$(PAPERMILL) notebooks/04_figures.ipynb $(EXECUTED)/04_figures.ipynb -p config $(CONFIG)

# Every finished arm against every other with intervals (results/comparison.json).
compare: $(STAMP)
	$(BIN)/lab compare --config $(CONFIG)

# The same notebooks with configs/smoke.yaml and a small model (a few minutes).
smoke: $(SMOKE_MODEL)/config.json
	@rm -rf runs/smoke && mkdir -p runs/smoke/notebooks
	$(BIN)/lab run --config configs/smoke.yaml --notebooks runs/smoke/notebooks
	$(PAPERMILL) notebooks/$(SUITE_NOTEBOOK).ipynb runs/smoke/notebooks/$(SUITE_NOTEBOOK).ipynb -p config configs/suite_smoke.yaml
	$(PAPERMILL) notebooks/06_sqd_study.ipynb runs/smoke/notebooks/06_sqd_study.ipynb \
	  -y '{"configs": ["configs/sqd_study_smoke.yaml"], "out": "runs/smoke/sqd_study/results/sqd_study.json"}'

$(SMOKE_MODEL)/config.json: | $(STAMP)
	$(BIN)/lab seed-model --preset smoke --out $(SMOKE_MODEL)

# JupyterLab at the repository root with the project's kernel; no browser where there is no
# display. As root (CI, containers) it needs --allow-root. JUPYTER_ARGS adds server options.
NO_BROWSER := $(if $(DISPLAY)$(WAYLAND_DISPLAY),,--no-browser)
AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" --port=$(PORT) --ServerApp.port_retries=0 \
	  $(NO_BROWSER) $(AS_ROOT) $(JUPYTER_ARGS)

# The embedded default policy, built once (20 to 40 minutes on 2 cores: docs/seed_policy.md).
seed-model: $(SEED_MODEL)/config.json

$(SEED_MODEL)/config.json: | $(STAMP)
	$(BIN)/lab seed-model --out $(SEED_MODEL)

ifneq ($(origin RESULTS),command line)
$(HERE): $(STAMP)
	@set -e; mine=$$($(BIN)/lab status --results-dir); test -n "$$mine"; $(MAKE) --no-print-directory RESULTS=$$mine $@
else
seed-report: $(RESULTS)/seed_policy.json
autotune: $(RESULTS)/autotune.json
calibrate: $(RESULTS)/machine.json
score-examples: $(EXAMPLE_FILES)

fresh: $(STAMP)
	rm -f $(RESULT_FILES) $(RESULTS)/examples/*.json
	$(FORGET) $(CONFIG) | xargs rm -rf

# How well the technique detector reads labelled and generated kernels, by text and by the
# compiled object (detector.json; a few minutes).
detector-report: $(STAMP)
	$(BIN)/python -m lab.bench.detector_report --out $(RESULTS)/detector.json

# BENCH_AGAINST=<git revision>: also run that revision's harness, alternating rounds, for a before/after table.
bench-harness: $(STAMP)
	$(BIN)/python -m lab.bench.bench_harness --out $(RESULTS)/bench_harness.json $(if $(BENCH_AGAINST),--against $(BENCH_AGAINST))

# The attacks on the timed window (tests/kernels/hostile/*window_*.c) against their honest twins,
# 3 alternating rounds at the problems' default sizes (about 25 minutes): which inflate their figure.
bench-window: $(STAMP)
	$(BIN)/python -m lab.bench.bench_window --out $(RESULTS)/timed_window.json

# The same 64-candidate batch on this machine's pool and on a 2-worker loopback Dask cluster:
# throughput and the cluster's overhead per candidate, 5 alternating rounds (about 6 minutes).
bench-cluster: $(STAMP)
	$(BIN)/python -m lab.bench.bench_cluster --out $(RESULTS)/bench_cluster.json

# How much faster than naive.c each suite entry can get here (suite/headroom.json and its figure):
# the generator's sweep and the examples scanned, naive.c and the two best in 5 paired rounds, at the
# timed size and at one that fits the cache, beside the roofline (26 minutes for the timed sizes
# alone here, about twice that with both; it resumes where it stopped).
headroom: $(STAMP)
	$(BIN)/python -m lab.bench.headroom --out $(RESULTS)/suite/headroom.json

# How long `make test` takes here (test_time.json): the figure the README quotes.
test-time: $(STAMP)
	$(BIN)/python -m lab.bench.test_time --out $(RESULTS)/test_time.json

# Which numerics give the seed policy the same weights without AVX-512, and what each costs:
# the smoke policy built 8 times (seed_numerics.json; about 20 minutes).
seed-numerics: $(STAMP)
	$(BIN)/python -m lab.bench.seed_numerics --out $(RESULTS)/seed_numerics.json
endif

$(RESULTS)/seed_policy.json: | $(SEED_MODEL)/config.json
	$(BIN)/lab seed-report --model $(SEED_MODEL) --out $@

$(RESULTS)/autotune.json: | $(STAMP)
	$(BIN)/lab autotune --problem dgemm --out $@

$(RESULTS)/machine.json: | $(STAMP)
	$(BIN)/lab calibrate --out $@

# One run per mode scores every problem's examples (<problem>_<mode>_t<threads>.json); each is
# made again when its DGEMM file is missing (`make reproduce` removes those that are not current).
$(RESULTS)/examples/dgemm_serial_t1.json: | $(STAMP)
	$(BIN)/lab score-examples --no-cache --mode serial --out $(RESULTS)/examples
$(RESULTS)/examples/dgemm_openmp_t%.json: | $(STAMP)
	$(BIN)/lab score-examples --no-cache --mode openmp --threads $* --out $(RESULTS)/examples

clean:
	rm -rf .cache build runs
