"""Every notebook runs under papermill with the smoke config, and the smoke run really exercises
the pipeline: kernels that compile and pass, groups whose rewards differ, a learning update."""

from __future__ import annotations

import json
import re

import nbformat
import papermill as pm
import pytest

from lab.analysis.experiments import run_experiment
from lab.config import load_config
from tests.conftest import ROOT

pytestmark = pytest.mark.slow
NOTEBOOKS = ["01_baseline", "02_grpo", "03_grpo_sqd", "04_figures"]
SUITE_NOTEBOOK = "05_suite"


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


@pytest.mark.parametrize("name", [*NOTEBOOKS, SUITE_NOTEBOOK])
def test_parameter_cells_hold_only_the_config_path_and_experiment(name):
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    assert nb.metadata.kernelspec.name == "perfrl-lab"
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    assigned = set(re.findall(r"^(\w+)\s*=", params[0].source, re.M))
    assert assigned == ({"config"} if name in ("04_figures", SUITE_NOTEBOOK) else {"config", "experiment"})
    assert ("configs/suite.yaml" if name == SUITE_NOTEBOOK else "configs/default.yaml") in params[0].source


def test_suite_notebook_runs_with_the_suite_smoke_config(suite_smoke, caplog):
    """Every arm on every entry of the smoke suite, the summary with its verdicts, the figures."""
    base, config = suite_smoke
    pm.execute_notebook(
        str(ROOT / "notebooks" / f"{SUITE_NOTEBOOK}.ipynb"),
        str(base / f"{SUITE_NOTEBOOK}.ipynb"),
        parameters={"config": str(config)},
        cwd=str(ROOT),
        progress_bar=False,
    )
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


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_with_the_smoke_config(name, smoke, caplog):
    base, config = smoke
    out = base / f"{name}.ipynb"
    pm.execute_notebook(
        str(ROOT / "notebooks" / f"{name}.ipynb"),
        str(out),
        parameters={"config": str(config)},
        cwd=str(ROOT),
        progress_bar=False,
    )
    assert "Passed unknown parameter" not in caplog.text
    results = base / "results"
    if name == "01_baseline":
        metrics = json.loads((results / "baseline" / "metrics.json").read_text())
        assert metrics["complete"] and metrics["n_samples"] == 4
        for key in (
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
    if name == "02_grpo":
        log = [json.loads(line) for line in (results / "grpo" / "train_log.jsonl").read_text().splitlines()]
        assert len(log) == 2 and json.loads((results / "grpo" / "metrics.json").read_text())["complete"]
        # The smoke run exercises the pipeline: correct kernels, and a group whose rewards differ
        # (a nonzero advantage, so the update is real).
        assert sum(row["status_counts"].get("ok", 0) for row in log) >= 1
        assert any(row["frac_reward_zero_std"] < 1 for row in log) and any(row["reward_std"] > 0 for row in log)
    if name == "03_grpo_sqd":
        log = [json.loads(line) for line in (results / "grpo_sqd" / "train_log.jsonl").read_text().splitlines()]
        # Step 2's prompts were drawn during step 1, still in stage 1.
        assert [row["stage"] for row in log] == [{"dgemm": 1}, {"dgemm": 1}] and all(row["permitted"] for row in log)
        metrics = json.loads((results / "grpo_sqd" / "metrics.json").read_text())
        assert metrics["complete"] and {"coverage", "qd_score", "cells", "stage_history"} <= set(metrics["archive"])
        assert [h["stage"] for h in metrics["archive"]["stage_history"]] == [1, 2]  # no advance after the last step
        assert (results / "grpo_sqd" / "archive.json").exists()
    if name == "04_figures":
        figures = {p.name for p in (results / "figures").glob("*.png")}
        assert {
            "reward_curve.png",
            "status_over_steps.png",
            "status_breakdown.png",
            "metrics_table.png",
            "archive_heatmap.png",
            "coverage_over_steps.png",
        } <= figures


def test_finished_experiments_are_reused_unless_the_config_changes(smoke):
    base, config = smoke
    cfg = load_config(config, [f"results_dir={base / 'reuse'}"]).experiment("baseline")
    first = run_experiment(cfg)
    mtime = (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns
    assert run_experiment(cfg) == first and (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns == mtime
    # Another commit (a fresh clone of the committed results) reuses them: only the config counts.
    saved = json.loads((cfg.out_dir / "config.json").read_text())
    (cfg.out_dir / "config.json").write_text(json.dumps({**saved, "git_commit": "0" * 40}))
    assert run_experiment(cfg) == first
    # Another config under the same name runs again; so does an explicit overwrite.
    changed = load_config(config, [f"results_dir={base / 'reuse'}", "evaluation.temperature=0.5"]).experiment(
        "baseline"
    )
    run_experiment(changed)
    assert json.loads((cfg.out_dir / "config.json").read_text())["evaluation"]["temperature"] == 0.5
    mtime = (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns
    run_experiment(changed, overwrite=True)
    assert (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns != mtime
