"""The experiments: baseline, GRPO-only and GRPO+SQD share one evaluation protocol and one code path.

    from lab.config import load_config
    cfg = load_config("configs/default.yaml").experiment("grpo")
    metrics = run_experiment(cfg)            # what `lab run` and the notebooks call

An experiment of kind `baseline` evaluates the policy as it is; kind `grpo` trains it
first (lab.rl.train; GRPO+SQD when `sqd` is set) into `<runs_dir>/<name>/`, resuming
from the last checkpoint of the same training config. Evaluation protocol: sample
`evaluation.samples` completions of the problem's plain prompt at
`evaluation.temperature`, measure them as `measure` says, turn each status into a
reward (lab.rl.reward, the one place that does), and write `<results_dir>/<name>/`:

- config.json: the resolved experiment config, plus the git commit and the machine;
- samples.jsonl: each completion with its EvalResult, reward and detected techniques;
- train_log.jsonl, archive.json: the training log and the technique archive (trained runs);
- metrics.json: lab.analysis.metrics.summarize(...) plus where it was measured (host,
  machine fingerprint, sandbox isolation) and "complete": true — written last, so a run
  is finished exactly when it exists.

Every file is written atomically (lab.files). A finished experiment is reused when its
config.json holds the same resolved config and the same code fingerprint (the lab
package and the C harness; not the git commit, which changes when results are
committed): rerunning the committed config on the committed code reproduces the
committed results instead of overwriting them; `overwrite=True` (`lab run
--overwrite`, `make reproduce FRESH=1`) measures afresh.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from lab import paths
from lab.analysis.metrics import summarize
from lab.config import ExperimentConfig, LabConfig, load_config
from lab.files import read_json, read_jsonl, tree_hash, write_json, write_jsonl
from lab.harness.evaluate import evaluate_batch
from lab.harness.extract import source_or_none
from lab.harness.machine import machine_fingerprint, machine_summary, openblas_gflops
from lab.harness.problems import load_problem
from lab.harness.sandbox import isolation_level
from lab.policy.sample import load_policy, sample_records
from lab.rl.reward import reward_from_result
from lab.rl.train import changed_fields, config_changes, train
from lab.techniques import TECHNIQUES, detect

#: config.json entries that describe the run, not the experiment: they may differ on a rerun.
_RUN_FACTS = frozenset({"git_commit", "machine", "isolation"})


def code_fingerprint() -> str:
    """Hash of the code that produces results: the lab package and the C harness. Unlike the
    git commit it does not change when results or docs are committed, so committed results
    stay reusable until the code that made them changes."""
    return tree_hash(Path(__file__).resolve().parents[1]) + "-" + tree_hash(paths.harness_dir())


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=Path(__file__).parent
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def project_dir(config_path: str | Path) -> Path:
    """The folder a config's relative paths are relative to: the nearest folder above the
    config file that holds pyproject.toml (the repository root), else the current one."""
    for folder in Path(config_path).resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    return Path.cwd()


def find_config(config_path: str | Path) -> Path:
    """The config file: as given, or (a relative path not found here) in the nearest folder above
    the current one that has it, as for a notebook that JupyterLab runs inside notebooks/."""
    path = Path(config_path)
    if path.is_absolute() or path.exists():
        return path.resolve()
    return next((folder / path for folder in Path.cwd().parents if (folder / path).is_file()), path.resolve())


def open_config(config_path: str | Path, overrides: list[str] | tuple = ()) -> LabConfig:
    """Load a config file and move to its project folder, so that the config's relative paths
    (results_dir, model...) mean the same from a notebook in notebooks/ as from the repository
    root, where make and papermill run."""
    path = find_config(config_path)
    config = load_config(path, overrides)
    os.chdir(project_dir(path))
    return config


def open_experiment(config_path: str | Path, name: str, overrides: list[str] | tuple = ()) -> ExperimentConfig:
    """One experiment of a config file, after `open_config`."""
    return open_config(config_path, overrides).experiment(name)


def is_complete(cfg: ExperimentConfig) -> bool:
    """True if `cfg.out_dir` holds a finished run of this very config made by this very code
    (so it is reused); a run cut off midway, a finished run of another config, or one made by
    other code, is run again."""
    metrics, saved = cfg.out_dir / "metrics.json", cfg.out_dir / "config.json"
    if not (metrics.exists() and read_json(metrics).get("complete") is True and saved.exists()):
        return False
    current = {**cfg.to_dict(), "code": code_fingerprint()}
    differ = changed_fields(read_json(saved), current, ignore=_RUN_FACTS)
    if differ:
        print(f"{cfg.out_dir}: made with another {', '.join(differ)}; running it again", flush=True)
        return False
    return True


def _start(cfg: ExperimentConfig) -> None:
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("metrics.json", "train_log.jsonl", "archive.json"):
        (cfg.out_dir / stale).unlink(missing_ok=True)
    write_json(
        cfg.out_dir / "config.json",
        {
            **cfg.to_dict(),
            "code": code_fingerprint(),
            "git_commit": git_commit(),
            "machine": machine_summary(),
            "isolation": isolation_level(),
        },
    )


def evaluate_policy(cfg: ExperimentConfig, model: str) -> dict:
    """The evaluation protocol on `model`: samples.jsonl, then metrics.json (written last)."""
    problem = load_problem(cfg.problem)
    ev = cfg.evaluation
    records, sample_s = sample_records(
        model, cfg.problem, ev.samples, None, ev.temperature, cfg.seed, ev.max_new_tokens, policy=load_policy(model)
    )
    results = evaluate_batch([r["completion"] for r in records], cfg.problem, cfg.measure)
    techniques = [_techniques(r["completion"], problem.signature) for r in records]
    write_jsonl(
        cfg.out_dir / "samples.jsonl",
        (
            {**rec, **res.to_dict(), "reward": reward_from_result(res, cfg.reward), "techniques": used}
            for rec, res, used in zip(records, results, techniques)
        ),
    )
    blas = openblas_gflops(cfg.problem, cfg.measure.n or problem.default_n, cfg.measure.threads)
    ok_sets = {tuple(used) for res, used in zip(results, techniques) if res.status == "ok"}
    metrics = {
        "experiment": cfg.name,
        "model": model,
        "problem": cfg.problem,
        **summarize(results, blas),
        "distinct_technique_sets_ok": len(ok_sets),
        "sample_s": round(sample_s, 2),
        "host": sorted({r.host for r in results if r.host}),
        "machine": machine_fingerprint(),
        "isolation": sorted({r.isolation for r in results if r.isolation}),
    }
    archive_path = cfg.out_dir / "archive.json"
    if archive_path.exists():
        summary = read_json(archive_path)[cfg.problem]
        metrics["archive"] = {k: v for k, v in summary.items() if k != "elites"}
    metrics["complete"] = True
    write_json(cfg.out_dir / "metrics.json", metrics)
    return metrics


def _techniques(completion: str, signature: str) -> list[str] | None:
    """Techniques detected in the completion's kernel (registry order), None if none extracts."""
    source = source_or_none(completion, signature)
    if source is None:
        return None
    used = detect(source)
    return [t for t in TECHNIQUES if t in used]


def run_experiment(cfg: ExperimentConfig, overwrite: bool = False) -> dict:
    """Run one experiment (train first if its kind is grpo) and return its metrics; a finished
    run of the same config is reused unless `overwrite`."""
    if is_complete(cfg) and not overwrite:
        print(f"{cfg.out_dir}: finished with this config; reusing it (overwrite to measure again)", flush=True)
        return read_json(cfg.out_dir / "metrics.json")
    if cfg.kind == "baseline":
        _start(cfg)
        return evaluate_policy(cfg, cfg.model)
    if overwrite or config_changes(cfg.run_dir, cfg):
        if cfg.run_dir.exists():
            print(f"{cfg.run_dir}: starting training afresh", flush=True)
        shutil.rmtree(cfg.run_dir, ignore_errors=True)
    _start(cfg)
    final = train(cfg)
    write_jsonl(cfg.out_dir / "train_log.jsonl", read_jsonl(cfg.run_dir / "train_log.jsonl"))
    write_json(cfg.out_dir / "archive.json", read_json(cfg.run_dir / "archive.json"))
    return evaluate_policy(cfg, str(final))


def run_all(config: LabConfig, overwrite: bool = False) -> dict[str, dict]:
    """Every experiment of a config file, in file order."""
    return {name: run_experiment(cfg, overwrite) for name, cfg in config.experiments.items()}


def load_results(results_dir: str | Path = "results") -> dict[str, dict]:
    """Every finished experiment under results_dir: {name: {"config", "metrics", "samples", "train_log"}}."""
    out = {}
    for metrics_path in sorted(Path(results_dir).glob("*/metrics.json")):
        metrics = read_json(metrics_path)
        if not metrics.get("complete"):
            continue
        folder = metrics_path.parent
        log, config = folder / "train_log.jsonl", folder / "config.json"
        out[folder.name] = {
            "config": read_json(config) if config.exists() else {},
            "metrics": metrics,
            "samples": read_jsonl(folder / "samples.jsonl"),
            "train_log": read_jsonl(log) if log.exists() else [],
        }
    return out
