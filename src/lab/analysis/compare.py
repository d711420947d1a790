"""The fair comparison of GRPO-only and GRPO+SQD: the same budget, several seeds, every spread.

    lab compare --config configs/default.yaml --seeds 0 1 2

Each arm is the experiment of the same name in the config (`grpo`, `grpo_sqd`), run
once per seed with that seed for training and evaluation, into
`results/compare/<arm>_s<seed>/` (finished runs of the same config are reused,
unfinished ones resume; see lab.analysis.experiments). Before anything runs, the arms
must agree on every setting (model, measurement, reward, training budget,
evaluation protocol); only the SQD schedule may differ. After each run, its log must show every step with a full batch
of reward evaluations, so both arms are seen to have had the same budget.

`results/comparison.json` then holds, per arm, each run's numbers and their median,
mean, standard deviation, min and max: best GFLOPS, mean GFLOPS of ok samples,
pass@1, distinct technique sets among ok samples, training-archive coverage (and QD
score, expected speedup); plus the per-seed differences (SQD minus GRPO-only), the
budget and the machine. `lab.analysis.plots.comparison` draws it.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path

from lab.analysis.experiments import git_commit, run_experiment
from lab.config import ExperimentConfig, LabConfig
from lab.files import read_json, read_jsonl, write_json
from lab.harness.machine import machine_summary

ARMS = ("grpo", "grpo_sqd")
METRICS = (
    "best_gflops",
    "mean_gflops_ok",
    "pass_at_1",
    "distinct_technique_sets_ok",
    "archive_coverage",
    "archive_qd_score",
    "expected_speedup",
    "train_s",
)
# Everything but these must match between the arms for the comparison to be fair.
_MAY_DIFFER = {"name", "sqd"}


def arm_configs(config: LabConfig, seed: int, results_dir: str, runs_dir: str) -> dict[str, ExperimentConfig]:
    """The two arms for one seed: the config's `grpo` and `grpo_sqd` experiments with that seed."""
    missing = [arm for arm in ARMS if arm not in config.experiments]
    if missing:
        raise ValueError(f"{config.path} has no {', '.join(missing)} experiment to compare")
    configs = {
        arm: dataclasses.replace(
            config.experiment(arm), name=f"{arm}_s{seed}", seed=seed, results_dir=results_dir, runs_dir=runs_dir
        )
        for arm in ARMS
    }
    if configs["grpo_sqd"].kind != "grpo" or configs["grpo_sqd"].sqd is None:
        raise ValueError("the grpo_sqd experiment needs kind: grpo and an sqd section")
    if configs["grpo"].kind != "grpo" or configs["grpo"].sqd is not None:
        raise ValueError("the grpo experiment must be kind: grpo without sqd")
    _check_fair(configs["grpo"], configs["grpo_sqd"])
    return configs


def _check_fair(a: ExperimentConfig, b: ExperimentConfig) -> None:
    da, db = a.to_dict(), b.to_dict()
    diff = [k for k in da if k not in _MAY_DIFFER and da[k] != db[k]]
    if diff:
        raise ValueError(f"unfair comparison: the arms differ in {', '.join(diff)}")


def _run_numbers(cfg: ExperimentConfig, metrics: dict) -> dict:
    archive = metrics.get("archive") or {}
    log = read_jsonl(cfg.out_dir / "train_log.jsonl")
    evaluations = [sum(row["status_counts"].values()) for row in log]
    if [row["step"] for row in log] != list(range(1, cfg.train.steps + 1)) or any(
        e != cfg.train.batch_size for e in evaluations
    ):
        raise RuntimeError(
            f"{cfg.out_dir}: the training log does not show {cfg.train.steps} steps of "
            f"{cfg.train.batch_size} reward evaluations each; the comparison would be unfair"
        )
    return {
        "train_s": round(sum(row["step_s"] for row in log), 1),
        "reward_evaluations": sum(evaluations),
        "best_gflops": metrics["best_gflops"],
        "mean_gflops_ok": metrics["mean_gflops_ok"],
        "pass_at_1": metrics["pass_at_1"],
        "distinct_technique_sets_ok": metrics["distinct_technique_sets_ok"],
        "archive_coverage": archive.get("coverage"),
        "archive_qd_score": archive.get("qd_score"),
        "expected_speedup": metrics["expected_speedup"],
    }


def spread(values: list[float | None]) -> dict:
    """median, mean, std (sample), min, max and n of the values that exist.

    >>> spread([1.0, 2.0, None, 6.0])["median"], spread([1.0, 2.0, None, 6.0])["n"]
    (2.0, 3)
    """
    xs = [v for v in values if v is not None]
    if not xs:
        return {"median": None, "mean": None, "std": None, "min": None, "max": None, "n": 0}
    return {
        "median": statistics.median(xs),
        "mean": statistics.fmean(xs),
        "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
        "min": min(xs),
        "max": max(xs),
        "n": len(xs),
    }


def summarize_comparison(runs: dict[str, list[dict]], budget: dict) -> dict:
    """comparison.json's content from each arm's per-seed numbers (lists in seed order)."""
    arms = {arm: {"runs": rs, "stats": {m: spread([r[m] for r in rs]) for m in METRICS}} for arm, rs in runs.items()}
    paired = {}
    for m in METRICS:
        diffs = [None if a[m] is None or b[m] is None else b[m] - a[m] for a, b in zip(runs["grpo"], runs["grpo_sqd"])]
        paired[m] = {"per_seed": diffs, **spread(diffs)}
    return {**budget, "arms": arms, "sqd_minus_grpo": paired}


def plan_comparison(
    config: LabConfig, seeds: list[int], results_dir: str = "results", runs_dir: str = "runs/compare"
) -> dict[int, dict[str, ExperimentConfig]]:
    """Both arms' configs per seed, checked for fairness before anything runs."""
    if len(seeds) < 1 or len(set(seeds)) != len(seeds):
        raise ValueError("seeds must be distinct and at least one")
    return {seed: arm_configs(config, seed, str(Path(results_dir) / "compare"), runs_dir) for seed in seeds}


def run_comparison(plan: dict[int, dict[str, ExperimentConfig]], results_dir: str = "results") -> dict:
    """Train and evaluate both arms for each seed of the plan, then write results/comparison.json."""
    seeds = list(plan)
    runs: dict[str, list[dict]] = {arm: [] for arm in ARMS}
    started = time.monotonic()
    for i, seed in enumerate(seeds):
        for j, (arm, cfg) in enumerate(plan[seed].items()):
            print(f"[compare] run {i * len(ARMS) + j + 1}/{len(seeds) * len(ARMS)}: {arm}, seed {seed}", flush=True)
            metrics = run_experiment(cfg)
            runs[arm].append({"seed": seed, **_run_numbers(cfg, metrics)})
    first = plan[seeds[0]]
    t = first["grpo"].train
    budget = {
        "seeds": seeds,
        "steps": t.steps,
        "group_size": t.group_size,
        "prompts_per_step": t.prompts_per_step,
        "reward_evaluations": t.steps * t.batch_size,
        "eval_samples": first["grpo"].evaluation.samples,
        "sqd": first["grpo_sqd"].to_dict()["sqd"],
        "wall_s_this_invocation": round(time.monotonic() - started, 1),
        "git_commit": git_commit(),
        "machine": machine_summary(),
    }
    summary = summarize_comparison(runs, budget)
    write_json(Path(results_dir) / "comparison.json", summary)
    return summary


def load_comparison(results_dir: str | Path = "results") -> dict | None:
    path = Path(results_dir) / "comparison.json"
    return read_json(path) if path.exists() else None
