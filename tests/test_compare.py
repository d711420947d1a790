"""Arm against arm: the fairness and budget checks, the comparison's content, a real tiny run."""

from __future__ import annotations

import json

import pytest
import yaml

from lab.analysis.compare import check_budget, check_fair, compare
from lab.cli import main
from lab.config import load_config
from lab.files import read_jsonl, write_json, write_jsonl
from tests.conftest import ROOT, assert_drawn

SMOKE_PATH = ROOT / "configs" / "smoke.yaml"


@pytest.mark.parametrize(
    "change, message",
    [
        (["experiments.grpo_sqd.train.steps=99"], "grpo and grpo_sqd differ in train"),
        (["experiments.grpo.evaluation.samples=99"], "differ in evaluation"),
        (["experiments.baseline.measure.threads=2", "experiments.baseline.measure.mode=openmp"], "differ in measure"),
        (["experiments.grpo_sqd.reward.positive=speedup"], "differ in reward"),
        (["experiments.grpo.model=elsewhere"], "differ in model"),
        (["experiments.grpo.seeds=[0]"], "differ in seeds"),
    ],
)
def test_unfair_configs_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        check_fair(load_config(SMOKE_PATH, change))


def test_what_may_differ_does():
    # The baseline does not train: its reward and budget are not compared; SQD's schedule may
    # differ, and so may the learning curve's samples (no comparison reads the curve).
    changes = [
        "experiments.baseline.train.steps=7",
        "experiments.grpo_sqd.sqd.empty_weight=9.0",
        "experiments.grpo.evaluation.curve_samples=5",
    ]
    check_fair(load_config(SMOKE_PATH, changes))
    with pytest.raises(ValueError, match="single-problem"):
        check_fair(load_config(ROOT / "configs" / "suite_smoke.yaml"))


def _fake_arm(cfg, seeds, p_ok, rate, steps=None, batch=None):
    """A finished experiment folder: metrics, samples and (trained) a training log."""
    out = cfg.out_dir
    out.mkdir(parents=True, exist_ok=True)
    samples = []
    for s in seeds:
        for i in range(24):
            ok = (i / 24) < p_ok
            samples.append(
                {"seed": s, "status": "ok" if ok else "wrong_result", "gflops": rate + i % 3, "speedup": 1.0}
            )
    write_jsonl(out / "samples.jsonl", samples)
    per_seed = {
        str(s): {"pass_at_1": p_ok, "mean_gflops_ok": rate + s, "median_gflops_ok": rate, "expected_speedup": 1.0}
        for s in seeds
    }
    sets = {"loop_reorder": 3, "packing+register_blocking+simd": 1}  # a quarter in the fast family
    write_json(
        out / "metrics.json",
        {"complete": True, "n_samples": len(samples), "seeds": seeds, "per_seed": per_seed, "technique_sets_ok": sets},
    )
    if cfg.kind == "grpo":
        log = [
            {"seed": s, "step": k, "status_counts": {"ok": batch or cfg.train.batch_size}, "entropy": 0.1 * s + 1 / k}
            for s in seeds
            for k in range(1, (steps or cfg.train.steps) + 1)
        ]
        write_jsonl(out / "train_log.jsonl", log)


def test_comparison_of_finished_arms(tmp_path):
    config = load_config(SMOKE_PATH, [f"results_dir={tmp_path}"])
    rates = {"baseline": (0.25, 2.0), "grpo": (0.75, 20.0), "grpo_sqd": (0.25, 2.0)}
    for name, rate in rates.items():  # grpo_rft is left unfinished
        cfg = config.experiment(name)
        _fake_arm(cfg, cfg.seeds, *rate)
    summary = compare(config)
    # The same results give the same file: nothing of the moment it was written (date, commit).
    assert summary == compare(config)
    assert summary["config"] == "configs/smoke.yaml" and "machine" not in summary and "git_commit" not in summary
    assert summary["missing"] == ["grpo_rft"]
    assert [(p["a"], p["b"]) for p in summary["pairs"]] == [
        ("grpo", "baseline"),
        ("grpo_sqd", "baseline"),
        ("grpo_sqd", "grpo"),
    ]
    assert summary["tests"] == 3 * 4
    grpo = summary["pairs"][0]["metrics"]
    assert grpo["mean_gflops_ok"]["difference"] == pytest.approx(18.0)
    assert grpo["pass_at_1"]["verdict"] == "better"
    assert summary["pairs"][2]["per_seed"]["mean_gflops_ok"] == {"0": -18.0, "1": -18.0}  # seed by seed
    assert "per_seed" not in summary["pairs"][0]  # the baseline has no training seeds to pair
    assert summary["arms"]["grpo"]["reward_evaluations"] == 2 * config.experiment("grpo").train.steps * 4
    # Collapse and diversity in the headline: the fast family's share, the entropy at the last step.
    steps = config.experiment("grpo").train.steps
    assert summary["arms"]["grpo"]["metrics"]["fast_family_share"] == 0.25
    assert summary["arms"]["grpo"]["metrics"]["entropy_final"] == pytest.approx(0.05 + 1 / steps)
    assert summary["arms"]["baseline"]["metrics"]["entropy_final"] is None
    assert summary["arms"]["grpo"]["excessive_flags"] is None  # made-up results from before the guard


ABLATION_PATH = ROOT / "configs" / "ablation.yaml"


def test_an_ablation_compares_each_variant_with_the_reference(tmp_path):
    config = load_config(ABLATION_PATH, [f"results_dir={tmp_path}", "seeds=[0,1]"])
    reference = "grpo"
    assert next(iter(config.experiments)) == reference  # the default arm comes first
    with pytest.raises(RuntimeError, match="reference arm has no finished results"):
        compare(config, reference)
    for i, cfg in enumerate(config.experiments.values()):
        _fake_arm(cfg, cfg.seeds, 0.5, 2.0 + 4 * i)
        # What its run recorded: the settings it was made with, and the commit.
        write_json(cfg.out_dir / "config.json", {**cfg.to_dict(), "git_commit": f"commit-{i}", "code": "x"})
    summary = compare(config, reference)
    assert summary["arms"]["reward_rank"]["git_commit"] == "commit-2"
    variants = [n for n in config.experiments if n != reference]
    assert [(p["a"], p["b"]) for p in summary["pairs"]] == [(v, reference) for v in variants]
    assert summary["tests"] == 4 * len(variants) and summary["reference"] == reference
    # Each arm says what it changes; the reference changes nothing.
    assert summary["arms"][reference]["changes"] == {}
    assert summary["arms"]["reward_rank"]["changes"] == {"reward.positive": ["rank", "gflops"]}
    assert set(summary["arms"]["group_16"]["changes"]) == {"train.group_size", "train.prompts_per_step"}
    # Without the reference every pair is compared, and the reward differences are refused.
    with pytest.raises(ValueError, match="differ in reward"):
        compare(config)


@pytest.mark.parametrize(
    "change, message",
    [
        (["experiments.lr_high.train.steps=99"], "train budget"),
        (["experiments.group_16.train.prompts_per_step=2"], "train budget"),
        (["experiments.reward_rank.evaluation.samples=9"], "differ in evaluation"),
    ],
)
def test_an_ablation_keeps_the_budget_and_the_protocol(change, message):
    with pytest.raises(ValueError, match=message):
        check_fair(load_config(ABLATION_PATH, change), "grpo")
    # Against an untrained reference, the trained arms still share one budget.
    with pytest.raises(ValueError, match="train budget"):
        check_fair(load_config(SMOKE_PATH, ["experiments.grpo_sqd.train.steps=99"]), "baseline")
    with pytest.raises(ValueError, match="no experiment 'nothing'"):
        check_fair(load_config(ABLATION_PATH), "nothing")


def test_a_short_training_log_is_refused(tmp_path):
    cfg = load_config(SMOKE_PATH, [f"results_dir={tmp_path}"]).experiment("grpo")
    _fake_arm(cfg, cfg.seeds, 0.5, 1.0, steps=cfg.train.steps - 1)
    with pytest.raises(RuntimeError, match="does not show"):
        check_budget(cfg)
    _fake_arm(cfg, cfg.seeds, 0.5, 1.0, batch=3)
    with pytest.raises(RuntimeError, match="seed 0"):
        check_budget(cfg)


def test_reused_batches_count_once_in_the_budget(tmp_path):
    """With num_iterations k, TRL generates and scores a batch every k steps and trains on it k
    times: the budget is the batches scored, so an arm with twice the steps and two updates per
    batch is fair against the reference, and its log's reused steps do not count again."""
    config = load_config(ABLATION_PATH, ["experiments.lr_high.train.num_iterations=2"])
    with pytest.raises(ValueError, match="train budget"):
        check_fair(config, "grpo")
    steps = config.experiment("grpo").train.steps
    fair = load_config(
        ABLATION_PATH,
        [
            f"results_dir={tmp_path}",
            "experiments.lr_high.train.num_iterations=2",
            f"experiments.lr_high.train.steps={2 * steps}",
        ],
    )
    check_fair(fair, "grpo")
    cfg = fair.experiment("lr_high")
    _fake_arm(cfg, cfg.seeds, 0.5, 1.0)
    log = read_jsonl(cfg.out_dir / "train_log.jsonl")
    for row in log:  # the steps that reuse the last batch have no generation time
        row["generation_s"] = 1.0 if row["step"] % 2 else None
    write_jsonl(cfg.out_dir / "train_log.jsonl", log)
    assert check_budget(cfg) == len(cfg.seeds) * steps * cfg.train.batch_size
    write_jsonl(cfg.out_dir / "train_log.jsonl", [{**row, "generation_s": 1.0} for row in log])
    with pytest.raises(RuntimeError, match="batches of"):
        check_budget(cfg)  # every step scored anew: twice the reference's evaluations


@pytest.mark.slow
def test_run_then_compare_every_arm_and_draw_the_figure(smoke_policy, tmp_path, capsys):
    # The smoke config, with the policy built for this session, and two of its arms: every arm
    # of it runs in the notebooks' smoke test already, and the command is the same for two.
    config = tmp_path / "compare.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "defaults": str(SMOKE_PATH),
                "model": str(smoke_policy),
                "results_dir": str(tmp_path / "results"),
                "runs_dir": str(tmp_path / "runs"),
                "figures_dir": str(tmp_path / "results" / "figures"),
                "experiments": {"grpo_sqd": None, "grpo_rft": None},
                "seeds": [0],  # the notebooks' smoke test runs two seeds
                "evaluation": {"restricted_samples": 0, "curve_samples": 0},
            }
        )
    )
    # lab compare compares finished arms only: it names what to run first.
    assert main(["compare", "--config", str(config)]) == 2
    assert f"run them first: lab run --config {config}" in capsys.readouterr().err
    assert main(["run", "--config", str(config)]) == 0  # every arm, in the config's order
    assert main(["compare", "--config", str(config)]) == 0
    summary = json.loads((tmp_path / "results" / "comparison.json").read_text())
    assert summary["seeds"] == [0] and set(summary["arms"]) == {"baseline", "grpo"}
    assert summary["arms"]["grpo"]["reward_evaluations"] == 1 * 2 * 4  # seeds x steps x batch
    metrics = json.loads((tmp_path / "results" / "grpo" / "metrics.json").read_text())
    assert metrics["complete"] and metrics["seeds"] == [0] and metrics["n_samples"] == 4
    assert (tmp_path / "runs" / "grpo" / "s0" / "final" / "config.json").exists()
    assert_drawn(tmp_path / "results" / "figures" / "comparison.png")
    assert "grpo - baseline: pass_at_1" in capsys.readouterr().out
    # Finished runs that are current are not redone.
    mtime = (tmp_path / "results" / "grpo" / "samples.jsonl").stat().st_mtime_ns
    assert main(["run", "--config", str(config)]) == 0
    assert "finished and current; reusing it" in capsys.readouterr().out
    assert (tmp_path / "results" / "grpo" / "samples.jsonl").stat().st_mtime_ns == mtime


def test_compare_reports_bad_input_in_one_line(tmp_path, capsys):
    missing = (tmp_path / "missing.yaml").resolve()
    assert main(["compare", "--config", str(missing)]) == 2
    assert main(["compare", "--config", str(SMOKE_PATH), "--set", "experiments.grpo.seeds=[5]"]) == 2
    assert main(["compare", "--config", str(SMOKE_PATH), "--set", "train.stepz=3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == f"lab: error: {missing}: no such config file"
    assert err[1] == "lab: error: unfair comparison: baseline and grpo differ in seeds"
    assert len(err) == 3 and err[2].startswith("lab: error: --set: train.stepz: unknown key")


def test_comparison_figure_copes_with_missing_values(tmp_path):
    from lab.analysis.plots import comparison

    empty = {"difference": None, "ci": None, "verdict_holm": "no clear difference"}
    full = {"difference": 1.0, "ci": [0.5, 1.5], "verdict_holm": "better"}
    summary = {
        "pairs": [
            {
                "a": "grpo",
                "b": "baseline",
                "metrics": {m: full for m in ("pass_at_1", "expected_speedup")}
                | {m: empty for m in ("mean_gflops_ok", "median_gflops_ok")},
            },
        ],
        "arms": {"grpo": {"metrics": {"n_samples": 8}}, "baseline": {"metrics": {"n_samples": 8}}},
        "seeds": [0],
        "tests": 4,
    }
    assert_drawn(comparison(summary, tmp_path))
