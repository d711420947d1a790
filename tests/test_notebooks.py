"""Every notebook runs under papermill with the smoke configuration (tiny model, tiny budgets)."""

from __future__ import annotations

import dataclasses
import json

import papermill as pm
import pytest
import yaml

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, smoke_policy):
    base = tmp_path_factory.mktemp("smoke")
    params = yaml.safe_load((ROOT / "configs" / "smoke.yaml").read_text())
    params["model"] = str(smoke_policy)
    params["results_dir"] = str(base / "results")
    params["figures_dir"] = str(base / "results" / "figures")
    params["grpo"]["runs_dir"] = params["grpo_sqd"]["runs_dir"] = str(base / "runs")
    return base, params


@pytest.mark.parametrize("name", ["01_baseline", "02_grpo", "03_grpo_sqd", "04_figures"])
def test_notebook_runs_with_the_smoke_config(name, smoke):
    base, params = smoke
    out = base / f"{name}.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), parameters=params, cwd=str(ROOT),
                        progress_bar=False, kernel_name="python3")
    assert out.exists()
    results = base / "results"
    if name == "01_baseline":
        metrics = json.loads((results / "baseline" / "metrics.json").read_text())
        assert metrics["complete"] and metrics["n_samples"] == 4
        for key in ("experiment", "model", "status_counts", "pass_at_1", "mean_gflops_ok", "median_gflops_ok",
                    "best_gflops", "expected_speedup", "expected_speedup_ok", "speedup_at_k",
                    "fraction_of_openblas_best", "openblas_gflops"):
            assert key in metrics
        assert json.loads((results / "baseline" / "config.json").read_text())["git_commit"]
    if name == "02_grpo":
        assert len((results / "grpo" / "train_log.jsonl").read_text().splitlines()) == 2
        assert json.loads((results / "grpo" / "metrics.json").read_text())["complete"]
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
        assert {"reward_curve.png", "status_over_steps.png", "status_breakdown.png", "metrics_table.png",
                "archive_heatmap.png", "coverage_over_steps.png"} <= figures


def test_finished_experiments_are_skipped(smoke):
    from lab.experiments import ExperimentConfig, run_baseline

    base, params = smoke
    cfg = ExperimentConfig.from_dict({**params["baseline"], "model": params["model"],
                                      "results_dir": str(base / "skip")})
    first = run_baseline(cfg)
    mtime = (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns
    assert run_baseline(cfg) == first and (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns == mtime
    # Results made by another commit (e.g. committed ones in a fresh clone) are made again.
    saved = json.loads((cfg.out_dir / "config.json").read_text())
    (cfg.out_dir / "config.json").write_text(json.dumps({**saved, "git_commit": "0" * 40}))
    run_baseline(cfg)
    assert (cfg.out_dir / "samples.jsonl").stat().st_mtime_ns != mtime
    assert json.loads((cfg.out_dir / "config.json").read_text())["git_commit"] == saved["git_commit"]
    # So are results of another config under the same name.
    run_baseline(dataclasses.replace(cfg, temperature=0.5))
    assert json.loads((cfg.out_dir / "config.json").read_text())["temperature"] == 0.5


def test_unknown_parameters_are_rejected():
    from lab.experiments import ExperimentConfig

    with pytest.raises(ValueError, match="unknown experiment parameter"):
        ExperimentConfig.from_dict({"experiment": "x", "sampels": 3})
    with pytest.raises(ValueError, match="unknown train parameter"):
        ExperimentConfig.from_dict({"experiment": "x", "train": {"stpes": 3}})
