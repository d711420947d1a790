"""The GRPO-only vs GRPO+SQD comparison: fairness checks, the summary's arithmetic, a real tiny run."""

from __future__ import annotations

import json

import pytest
import yaml

from lab.cli import main
from lab.compare import arm_configs, spread, summarize_comparison
from tests.conftest import ROOT

SMOKE = yaml.safe_load((ROOT / "configs" / "smoke.yaml").read_text())


def test_arms_share_the_budget_and_take_the_seed():
    arms = arm_configs(SMOKE, seed=5, results_dir="r", runs_dir="x")
    assert set(arms) == {"grpo", "grpo_sqd"}
    assert arms["grpo"].experiment == "grpo_s5" and arms["grpo_sqd"].experiment == "grpo_sqd_s5"
    assert arms["grpo"].seed == arms["grpo"].train.seed == arms["grpo_sqd"].train.seed == 5
    assert arms["grpo"].train.sqd is None and arms["grpo_sqd"].train.sqd is not None
    assert arms["grpo"].train.batch_size == arms["grpo_sqd"].train.batch_size


@pytest.mark.parametrize("change, message", [
    (lambda p: p["grpo_sqd"]["train"].update(steps=99), "differ in train.steps"),
    (lambda p: p["grpo"].update(samples=99), "differ in samples"),
    (lambda p: p["grpo"]["train"].update(sqd={"steps_per_stage": 1}), "without sqd"),
    (lambda p: p["grpo_sqd"]["train"].pop("sqd"), "needs train.sqd"),
    (lambda p: p.pop("grpo_sqd"), "no grpo_sqd section"),
])
def test_unfair_or_incomplete_configs_are_refused(change, message):
    params = json.loads(json.dumps(SMOKE))
    change(params)
    with pytest.raises(ValueError, match=message):
        arm_configs(params, seed=0, results_dir="r", runs_dir="x")


def test_summary_reports_spread_and_paired_differences():
    def run(seed, best, cov):
        return {"seed": seed, "best_gflops": best, "mean_gflops_ok": best / 2, "pass_at_1": 0.5,
                "distinct_technique_sets_ok": 2, "archive_coverage": cov, "archive_qd_score": 1.0,
                "expected_speedup": 1.0, "train_s": 1.0}

    runs = {"grpo": [run(0, 10.0, 0.1), run(1, 20.0, 0.2), run(2, 30.0, None)],
            "grpo_sqd": [run(0, 12.0, 0.3), run(1, 18.0, 0.3), run(2, 36.0, 0.4)]}
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
    params = json.loads(json.dumps(SMOKE))
    params["model"] = str(smoke_policy)
    config = tmp_path / "compare.yaml"
    config.write_text(yaml.safe_dump(params))
    argv = ["compare", "--config", str(config), "--seeds", "0", "1", "--results-dir", str(tmp_path / "results"),
            "--runs-dir", str(tmp_path / "runs")]
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
    assert main(["compare", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert main(["compare", "--config", str(ROOT / "configs" / "smoke.yaml"), "--seeds", "1", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["lab: error: no such file: " + str(tmp_path / "missing.yaml"),
                   "lab: error: seeds must be distinct and at least one"]


def test_comparison_figure_copes_with_missing_values(tmp_path):
    from lab.plots import comparison

    def run(seed, best):
        return {"seed": seed, "best_gflops": best, "mean_gflops_ok": None, "pass_at_1": 0.0,
                "distinct_technique_sets_ok": 0, "archive_coverage": 0.0, "archive_qd_score": 0.0,
                "expected_speedup": 0.0, "train_s": 1.0}

    summary = summarize_comparison({"grpo": [run(0, None), run(1, 3.0)], "grpo_sqd": [run(0, None), run(1, None)]},
                                   {"steps": 2, "reward_evaluations": 8})
    assert comparison(summary, tmp_path).stat().st_size > 10_000
