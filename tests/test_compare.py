"""The GRPO-only vs GRPO+SQD comparison: fairness checks, the summary's arithmetic, a real tiny run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from lab.analysis.compare import arm_configs, plan_comparison, spread, summarize_comparison
from lab.cli import main
from lab.config import load_config
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # trains both arms

SMOKE_PATH = ROOT / "configs" / "smoke.yaml"
SMOKE = load_config(SMOKE_PATH)


def test_arms_share_the_budget_and_take_the_seed():
    arms = arm_configs(SMOKE, seed=5, results_dir="r", runs_dir="x")
    assert set(arms) == {"grpo", "grpo_sqd"}
    assert arms["grpo"].name == "grpo_s5" and arms["grpo_sqd"].name == "grpo_sqd_s5"
    assert arms["grpo"].seed == arms["grpo_sqd"].seed == 5
    assert arms["grpo"].kind == arms["grpo_sqd"].kind == "grpo"
    assert arms["grpo"].sqd is None and arms["grpo_sqd"].sqd is not None
    assert arms["grpo"].train == arms["grpo_sqd"].train == SMOKE.experiment("grpo").train
    assert arms["grpo"].train.batch_size == arms["grpo_sqd"].train.batch_size
    assert arms["grpo"].out_dir == Path("r") / "grpo_s5" and arms["grpo_sqd"].run_dir == Path("x") / "grpo_sqd_s5"


def test_plan_covers_every_seed_under_results_compare():
    plan = plan_comparison(SMOKE, [0, 3], results_dir="res", runs_dir="x")
    assert list(plan) == [0, 3]
    assert plan[3]["grpo_sqd"].out_dir == Path("res") / "compare" / "grpo_sqd_s3" and plan[3]["grpo"].seed == 3
    with pytest.raises(ValueError, match="distinct"):
        plan_comparison(SMOKE, [1, 1])
    with pytest.raises(ValueError, match="at least one"):
        plan_comparison(SMOKE, [])


def _without_grpo_sqd(config):
    return dataclasses.replace(config, experiments={k: v for k, v in config.experiments.items() if k != "grpo_sqd"})


@pytest.mark.parametrize(
    "change, message",
    [
        (["experiments.grpo_sqd.train.steps=99"], "differ in train"),
        (["experiments.grpo.evaluation.samples=99"], "differ in evaluation"),
        (["experiments.grpo.measure.threads=2"], "differ in measure"),
        (["experiments.grpo_sqd.reward.positive=speedup"], "differ in reward"),
        (["experiments.grpo.model=elsewhere"], "differ in model"),
        (["experiments.grpo.sqd.steps_per_stage=1"], "without sqd"),
        (["experiments.grpo.kind=baseline"], "must be kind: grpo"),
        (["experiments.grpo_sqd.sqd=null"], "needs kind: grpo and an sqd section"),
        (_without_grpo_sqd, "no grpo_sqd experiment"),
    ],
)
def test_unfair_or_incomplete_configs_are_refused(change, message):
    config = change(SMOKE) if callable(change) else load_config(SMOKE_PATH, change)
    with pytest.raises(ValueError, match=message):
        arm_configs(config, seed=0, results_dir="r", runs_dir="x")


def test_only_the_sqd_schedule_may_differ():
    config = load_config(SMOKE_PATH, ["experiments.grpo_sqd.sqd.empty_weight=9.0"])
    assert arm_configs(config, seed=0, results_dir="r", runs_dir="x")["grpo_sqd"].sqd.empty_weight == 9.0


def test_summary_reports_spread_and_paired_differences():
    def run(seed, best, cov):
        return {
            "seed": seed,
            "best_gflops": best,
            "mean_gflops_ok": best / 2,
            "pass_at_1": 0.5,
            "distinct_technique_sets_ok": 2,
            "archive_coverage": cov,
            "archive_qd_score": 1.0,
            "expected_speedup": 1.0,
            "train_s": 1.0,
        }

    runs = {
        "grpo": [run(0, 10.0, 0.1), run(1, 20.0, 0.2), run(2, 30.0, None)],
        "grpo_sqd": [run(0, 12.0, 0.3), run(1, 18.0, 0.3), run(2, 36.0, 0.4)],
    }
    s = summarize_comparison(runs, {"steps": 3})
    assert s["steps"] == 3
    best = s["arms"]["grpo"]["stats"]["best_gflops"]
    assert best["median"] == 20.0 and best["min"] == 10.0 and best["max"] == 30.0 and best["std"] == 10.0
    assert s["arms"]["grpo"]["stats"]["archive_coverage"]["n"] == 2  # the missing value is left out
    assert s["sqd_minus_grpo"]["best_gflops"]["per_seed"] == [2.0, -2.0, 6.0]
    assert s["sqd_minus_grpo"]["best_gflops"]["median"] == 2.0
    assert s["sqd_minus_grpo"]["archive_coverage"]["per_seed"][2] is None
    assert spread([])["median"] is None and spread([3.0])["std"] == 0.0


def test_compare_runs_both_arms_and_draws_the_figure(smoke_policy, tmp_path, capsys):
    config = tmp_path / "compare.yaml"  # the smoke config, with the policy built for this session
    config.write_text(yaml.safe_dump({"defaults": str(SMOKE_PATH), "model": str(smoke_policy)}))
    argv = [
        "compare",
        "--config",
        str(config),
        "--seeds",
        "0",
        "1",
        "--results-dir",
        str(tmp_path / "results"),
        "--runs-dir",
        str(tmp_path / "runs"),
    ]
    assert main(argv) == 0
    summary = json.loads((tmp_path / "results" / "comparison.json").read_text())
    assert summary["seeds"] == [0, 1] and summary["reward_evaluations"] == 2 * 4
    for arm in ("grpo", "grpo_sqd"):
        assert [r["seed"] for r in summary["arms"][arm]["runs"]] == [0, 1]
        assert summary["arms"][arm]["stats"]["pass_at_1"]["n"] == 2
        for seed in (0, 1):
            metrics = json.loads((tmp_path / "results" / "compare" / f"{arm}_s{seed}" / "metrics.json").read_text())
            assert metrics["complete"] and "archive" in metrics
    assert (tmp_path / "results" / "figures" / "comparison.png").stat().st_size > 10_000
    assert "medians of 2 seeds" in capsys.readouterr().out
    # Finished runs are not redone.
    mtime = (tmp_path / "results" / "compare" / "grpo_s0" / "samples.jsonl").stat().st_mtime_ns
    assert main(argv) == 0
    assert (tmp_path / "results" / "compare" / "grpo_s0" / "samples.jsonl").stat().st_mtime_ns == mtime


def test_compare_reports_bad_input_in_one_line(tmp_path, capsys):
    missing = (tmp_path / "missing.yaml").resolve()
    assert main(["compare", "--config", str(missing)]) == 2
    assert main(["compare", "--config", str(SMOKE_PATH), "--seeds", "1", "1"]) == 2
    assert main(["compare", "--config", str(SMOKE_PATH), "--set", "train.stepz=3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[:2] == [
        f"lab: error: {missing}: no such config file",
        "lab: error: seeds must be distinct and at least one",
    ]
    assert len(err) == 3 and err[2].startswith("lab: error: --set: train.stepz: unknown key")


def test_comparison_figure_copes_with_missing_values(tmp_path):
    from lab.analysis.plots import comparison

    def run(seed, best):
        return {
            "seed": seed,
            "best_gflops": best,
            "mean_gflops_ok": None,
            "pass_at_1": 0.0,
            "distinct_technique_sets_ok": 0,
            "archive_coverage": 0.0,
            "archive_qd_score": 0.0,
            "expected_speedup": 0.0,
            "train_s": 1.0,
        }

    summary = summarize_comparison(
        {"grpo": [run(0, None), run(1, 3.0)], "grpo_sqd": [run(0, None), run(1, None)]},
        {"steps": 2, "reward_evaluations": 8},
    )
    assert comparison(summary, tmp_path).stat().st_size > 10_000
