"""Every notebook runs under papermill with the smoke config, and the smoke run really exercises
the pipeline: kernels that compile and pass, groups whose rewards differ, a learning update."""

from __future__ import annotations

import json
import re
import types
import unittest.mock

import pytest

from lab.config import load_config
from lab.harness import cluster
from lab.harness.machine import machine_class
from lab.pipeline.plan import notebook_plan
from lab.pipeline.runner import is_complete, run_experiment
from tests.conftest import ROOT

pytestmark = pytest.mark.slow
NOTEBOOKS = ["01_baseline", "02_grpo", "03_grpo_sqd", "04_figures"]
#: What `make reproduce` runs, in order (notebook, experiment parameter or None): the plan of the
#: smoke config, which has the default config's arms (lab.pipeline.plan, what `lab run --notebooks` runs).
RUNS = [
    (step.notebook, step.parameters.get("experiment"))
    for step in notebook_plan(load_config(ROOT / "configs" / "smoke.yaml"))
]
SUITE_NOTEBOOK = "05_suite"
STUDY_NOTEBOOK = "06_sqd_study"


def _parameter_cells(name: str) -> list:
    import nbformat  # here, not at collection (see _execute)

    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    assert nb.metadata.kernelspec.name == "perfrl-lab"
    return [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]


def _execute(name: str, out, parameters: dict) -> None:
    """Run notebooks/<name>.ipynb under papermill from the repo root into `out`."""
    # Imported here, not at collection: papermill and nbformat (jsonschema builds a URI grammar
    # as it loads) take seconds to import, and under `make test` only one worker runs notebooks.
    import papermill as pm

    pm.execute_notebook(
        str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), parameters=parameters, cwd=str(ROOT), progress_bar=False
    )


def _private_config(tmp_path_factory, smoke_policy, shipped: str):
    """configs/<shipped>.yaml with this session's smoke policy and private output folders."""
    base = tmp_path_factory.mktemp(shipped)
    config = base / f"{shipped}.yaml"
    config.write_text(
        f"defaults: {ROOT / 'configs' / f'{shipped}.yaml'}\nmodel: {smoke_policy}\n"
        f"results_dir: {base / 'results'}\nruns_dir: {base / 'runs'}\n"
        f"figures_dir: {base / 'results' / 'figures'}\n"
    )
    return base, config


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, smoke_policy):
    return _private_config(tmp_path_factory, smoke_policy, "smoke")


@pytest.fixture(scope="module")
def suite_smoke(tmp_path_factory, smoke_policy):
    return _private_config(tmp_path_factory, smoke_policy, "suite_smoke")


@pytest.fixture(scope="module")
def study_smoke(tmp_path_factory, smoke_policy):
    return _private_config(tmp_path_factory, smoke_policy, "sqd_study_smoke")


@pytest.mark.timeout(600)  # beside another test worker the build can take minutes
def test_the_smoke_policy_is_built_first(smoke_policy):
    """The shared build (tests/conftest.py), asked for here before any notebook runs, so that its
    time is not charged to a notebook's limit."""
    assert (smoke_policy / "config.json").is_file() and (smoke_policy / "model.safetensors").is_file()


@pytest.mark.parametrize("name", [*NOTEBOOKS, SUITE_NOTEBOOK])
def test_parameter_cells_hold_only_the_config_path_and_experiment(name):
    params = _parameter_cells(name)
    assert len(params) == 1
    assigned = set(re.findall(r"^(\w+)\s*=", params[0].source, re.M))
    expected = {"04_figures": {"config", "against"}, SUITE_NOTEBOOK: {"config"}}  # against: a reference arm
    assert assigned == expected.get(name, {"config", "experiment"})
    assert ("configs/suite.yaml" if name == SUITE_NOTEBOOK else "configs/default.yaml") in params[0].source


def test_the_study_notebook_takes_its_configs_and_output():
    params = _parameter_cells(STUDY_NOTEBOOK)
    assert len(params) == 1 and set(re.findall(r"^(\w+)\s*=", params[0].source, re.M)) == {
        "configs",
        "out",
        "run",
    }
    assert "configs/sqd_study.yaml" in params[0].source and "configs/sqd_study_suite.yaml" in params[0].source


def test_sqd_study_notebook_runs_with_the_smoke_config(study_smoke, caplog):
    """The base policy, plain GRPO and the combined variant on DGEMM in both modes; the study file."""
    base, config = study_smoke
    out = base / "results" / "sqd_study.json"
    _execute(STUDY_NOTEBOOK, base / f"{STUDY_NOTEBOOK}.ipynb", {"configs": [str(config)], "out": str(out)})
    assert "Passed unknown parameter" not in caplog.text
    study = json.loads(out.read_text())
    assert set(study["variants"]) == {"baseline", "grpo", "s4_combined"} and not study["missing"]
    s4 = study["variants"]["s4_combined"]["results"]
    assert s4["sqd"]["stages"] == "cumulative" and s4["sqd"]["violation"] == "soft"
    assert set(s4["entries"]) == {"dgemm/serial", "dgemm/openmp"}
    assert s4["pooled"]["n_samples"] == 4 and s4["pooled"]["restricted_samples"] == 4
    assert s4["pooled"]["measured"] is not None and "compliance_ci" in s4["pooled"]
    assert [(p["a"], p["b"]) for p in study["comparisons"]["results"]] == [
        ("baseline", "grpo"),
        ("s4_combined", "grpo"),
    ]
    figures = base / "results" / "sqd_study" / "figures"
    assert (figures / "sqd_study.png").exists() and (figures / "sqd_study_training.png").exists()


def test_suite_notebook_runs_with_the_suite_smoke_config(suite_smoke, caplog):
    """Every arm on every entry of the smoke suite, the summary with its verdicts, the figures."""
    base, config = suite_smoke
    _execute(SUITE_NOTEBOOK, base / f"{SUITE_NOTEBOOK}.ipynb", {"config": str(config)})
    assert "Passed unknown parameter" not in caplog.text
    results = base / "results"
    entries = [("dgemm", "serial"), ("dot", "openmp"), ("histogram", "serial")]
    for arm in ("baseline", "grpo", "grpo_sqd"):
        metrics = json.loads((results / arm / "metrics.json").read_text())
        assert metrics["complete"] and [(r["problem"], r["mode"]) for r in metrics["rows"]] == entries
        for row in metrics["rows"]:
            assert row["n_samples"] == 4 and row["threads"] == (1 if row["mode"] == "serial" else 2)
            assert {"pass_at_1", "pass_at_k", "expected_speedup", "speedup_n_at_k", "efficiency_n_at_k"} <= set(row)
        assert set(metrics["by_mode"]) == {"serial", "openmp"}
        samples = [json.loads(line) for line in (results / arm / "samples.jsonl").read_text().splitlines()]
        assert len(samples) == 12 and {(s["problem"], s["mode"]) for s in samples} == set(entries)
        assert all("Execution model: " in s["prompt"] for s in samples)
    log = [json.loads(line) for line in (results / "grpo" / "train_log.jsonl").read_text().splitlines()]
    assert len(log) == 2
    sqd = json.loads((results / "grpo_sqd" / "metrics.json").read_text())
    assert set(sqd["archive"]) == {"dgemm", "dot", "histogram"}  # one archive per problem
    summary = json.loads((results / "metrics.json").read_text())
    assert summary["base"] == "baseline" and len(summary["rows"]) == 9
    assert {e["verdict"] for arm in ("grpo", "grpo_sqd") for e in summary["versus_base"][arm]} <= {
        "better",
        "worse",
        "no clear difference",
    }
    assert {"suite_heatmap.png", "suite_modes.png"} <= {p.name for p in (results / "figures").glob("*.png")}


@pytest.mark.parametrize("name, experiment", RUNS, ids=[f"{n}-{e}" if e else n for n, e in RUNS])
def test_notebook_runs_with_the_smoke_config(name, experiment, smoke, caplog):
    base, config = smoke
    out = base / f"{name}-{experiment}.ipynb"
    _execute(name, out, {"config": str(config)} | ({"experiment": experiment} if experiment else {}))
    if experiment == "grpo_rft":
        metrics = json.loads((base / "results" / "grpo_rft" / "metrics.json").read_text())
        warm = json.loads((base / "results" / "grpo_rft" / "warm_start.json").read_text())
        assert metrics["complete"] and set(warm) == {"0", "1"} and all(w["scored"] == 8 for w in warm.values())
        scored = [
            json.loads(line)
            for line in (base / "results" / "grpo_rft" / "training_samples.jsonl").read_text().splitlines()
        ]
        assert sum(r["phase"] == "warm_start" for r in scored) == 16 and sum(r["phase"] == "grpo" for r in scored) == 16
        return
    assert "Passed unknown parameter" not in caplog.text
    results = base / "results"
    if name == "01_baseline":
        metrics = json.loads((results / "baseline" / "metrics.json").read_text())
        assert metrics["complete"] and metrics["n_samples"] == 8 and metrics["seeds"] == [0, 1]  # 4 per seed
        for key in (
            "seeds",
            "eval_prompts",
            "pass_at_1_ci",
            "expected_speedup_ci",
            "per_seed",
            "unseen",
            "truncation_rate",
            "experiment",
            "model",
            "status_counts",
            "pass_at_1",
            "mean_gflops_ok",
            "median_gflops_ok",
            "best_gflops",
            "expected_speedup",
            "expected_speedup_ok",
            "speedup_n_at_k",
            "fraction_of_openblas_best",
            "openblas_gflops",
            "host",
            "machine",
            "isolation",
        ):
            assert key in metrics
        saved = json.loads((results / "baseline" / "config.json").read_text())
        assert saved["git_commit"] and saved["measure"]["n"] == 64 and saved["evaluation"]["samples"] == 4
        # Held out: evaluation asked none of the phrasings training may show.
        assert len(saved["train_prompts"]) == len(metrics["eval_prompts"]) == 4
        assert not set(saved["train_prompts"]) & set(metrics["eval_prompts"])
        samples = [json.loads(line) for line in (results / "baseline" / "samples.jsonl").read_text().splitlines()]
        assert {s["prompt"] for s in samples} <= set(metrics["eval_prompts"]) and {s["seed"] for s in samples} == {0, 1}
    if name == "02_grpo":
        log = [json.loads(line) for line in (results / "grpo" / "train_log.jsonl").read_text().splitlines()]
        assert [(r["seed"], r["step"]) for r in log] == [(0, 1), (0, 2), (1, 1), (1, 2)]  # two runs of two steps
        metrics = json.loads((results / "grpo" / "metrics.json").read_text())
        assert metrics["complete"] and metrics["n_samples"] == 8 and metrics["training"]["scored"] == 16
        samples = [json.loads(line) for line in (results / "grpo" / "samples.jsonl").read_text().splitlines()]
        assert metrics["seen_in_training"] == sum(s["seen_in_training"] for s in samples)
        assert metrics["unseen"]["n_samples"] == 8 - metrics["seen_in_training"]
        curve = json.loads((results / "grpo" / "learning_curve.json").read_text())
        assert [p["step"] for p in curve["points"]] == [0, 1, 2] and curve["points"][-1]["entries"][0]["n_samples"] == 8
        assert "pass_at_1_ci" in curve["points"][1]["entries"][0]
        scored = [json.loads(line) for line in (results / "grpo" / "training_samples.jsonl").read_text().splitlines()]
        assert len(scored) == 16 and all({"text_hash", "techniques", "reward"} <= set(row) for row in scored)
        # The dynamics by kernel family cover every training step and every scored completion.
        dynamics = json.loads((results / "grpo" / "dynamics.json").read_text())
        assert [(s["step"], s["n"]) for s in dynamics["steps"]] == [(1, 8), (2, 8)]
        assert all(
            s["no_kernel"] + sum(f["attempts"] for f in s["families"].values()) == s["n"] for s in dynamics["steps"]
        )
        # The smoke run exercises the pipeline: correct kernels, and a group whose rewards differ
        # (a nonzero advantage, so the update is real).
        assert sum(row["status_counts"].get("ok", 0) for row in log) >= 1
        assert any(row["frac_reward_zero_std"] < 1 for row in log) and any(row["reward_std"] > 0 for row in log)
    if name == "03_grpo_sqd":
        log = [json.loads(line) for line in (results / "grpo_sqd" / "train_log.jsonl").read_text().splitlines()]
        # Step 2's prompts were drawn during step 1, still in stage 1 (in each seed's run).
        assert [row["stage"] for row in log] == [{"dgemm": 1}] * 4 and all(row["permitted"] for row in log)
        metrics = json.loads((results / "grpo_sqd" / "metrics.json").read_text())
        assert metrics["complete"] and {"coverage", "qd_score", "cells", "stage_history"} <= set(metrics["archive"])
        assert [h["stage"] for h in metrics["archive"]["stage_history"]] == [1, 2]  # no advance after the last step
        assert (results / "grpo_sqd" / "archive.json").exists()
        assert all("measured" in row and "violations" in row for row in log)
        # The technique-restricted evaluation: 2 per seed, each record judged against its permitted set.
        restricted = [
            json.loads(line) for line in (results / "grpo_sqd" / "samples_restricted.jsonl").read_text().splitlines()
        ]
        assert len(restricted) == 4 and all(isinstance(s["permitted"], list) and "compliant" in s for s in restricted)
        assert metrics["restricted"]["n_samples"] == 4 and "compliance_ci" in metrics["restricted"]
    if name == "04_figures":
        figures = {p.name for p in (results / "figures").glob("*.png")}
        assert {
            "reward_curve.png",
            "status_over_steps.png",
            "status_breakdown.png",
            "metrics_table.png",
            "archive_heatmap.png",
            "coverage_over_steps.png",
            "comparison.png",
            "learning_curve.png",
            "training_dynamics.png",
            "family_dynamics.png",
        } <= figures
        comparison = json.loads((results / "comparison.json").read_text())
        assert len(comparison["pairs"]) == 6 and comparison["seeds"] == [0, 1] and not comparison["missing"]


def test_finished_experiments_are_reused_unless_the_config_changes(smoke):
    base, config = smoke
    # One seed, no restricted prompts: the reuse logic is the same, the runs cheaper.
    cheap = [f"results_dir={base / 'reuse'}", "seeds=[0]", "evaluation.restricted_samples=0"]
    cfg = load_config(config, cheap).experiment("baseline")
    first = run_experiment(cfg)
    mtime = (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns
    assert run_experiment(cfg) == first and (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns == mtime
    # Another commit (a fresh clone of the committed results) reuses them: only the config counts.
    saved = json.loads((cfg.out_dir / "config.json").read_text())
    (cfg.out_dir / "config.json").write_text(json.dumps({**saved, "git_commit": "0" * 40}))
    assert run_experiment(cfg) == first
    # Where it is measured is a fact of the run, not a setting: a cluster whose workers are of
    # this machine's class reuses it too, one of another class does not.
    elsewhere = load_config(config, [*cheap, "compute.backend=dask", "compute.address=tcp://head:8786"])
    workers = {"class": machine_class()}
    scheduler = types.SimpleNamespace(cluster_machine=lambda: workers["class"])
    with unittest.mock.patch.object(cluster, "connect", lambda address, probe, evaluator: scheduler):
        assert is_complete(elsewhere.experiment("baseline"))
        workers["class"] = "another-class"
        assert not is_complete(elsewhere.experiment("baseline"))
    # Another config under the same name runs again; so does an explicit overwrite.
    changed = load_config(config, [*cheap, "evaluation.temperature=0.5"]).experiment("baseline")
    run_experiment(changed)
    assert json.loads((cfg.out_dir / "config.json").read_text())["evaluation"]["temperature"] == 0.5
    mtime = (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns
    run_experiment(changed, overwrite=True)
    assert (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns != mtime
