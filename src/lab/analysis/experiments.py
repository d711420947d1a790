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

A suite experiment (`suite` set) is evaluated the same way on every (problem, mode)
entry, with the prompt stating the mode and the kernel measured in it (serial on 1
thread): samples.jsonl holds them all, each with its problem and mode, and metrics.json
one row per entry (`rows`) and the means over the problems of each mode (`by_mode`);
lab.analysis.suite puts the arms side by side.

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
import statistics
import subprocess
from collections import Counter
from pathlib import Path

from lab import paths
from lab.analysis.metrics import summarize
from lab.config import ExperimentConfig, LabConfig, load_config
from lab.files import read_json, read_jsonl, tree_hash, write_json, write_jsonl
from lab.harness.calibrate import BLAS_PROBLEMS
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
    """The evaluation protocol on `model`: samples.jsonl, then metrics.json (written last).
    A suite is evaluated on every (problem, mode) entry, each with its own prompt and
    measurement; metrics.json then holds one row per entry and the means per mode."""
    policy = load_policy(model)
    samples: list[dict] = []
    rows = []
    for entry in cfg.entries:
        row, entry_samples = _evaluate_entry(cfg, model, policy, entry.problem, entry.mode)
        rows.append(row)
        samples += entry_samples
    write_jsonl(cfg.out_dir / "samples.jsonl", samples)
    metrics = {"experiment": cfg.name, "model": model}
    if cfg.suite is None:
        metrics.update({k: v for k, v in rows[0].items() if k not in ("mode", "threads")})
    else:
        metrics.update(
            {"suite": [f"{e.problem}/{e.mode}" for e in cfg.suite], "rows": rows, "by_mode": mode_means(rows)}
        )
    metrics.update(
        {
            "host": sorted({r["host"] for r in samples if r.get("host")}),
            "machine": machine_fingerprint(),
            "isolation": sorted({r["isolation"] for r in samples if r.get("isolation")}),
        }
    )
    archive_path = cfg.out_dir / "archive.json"
    if archive_path.exists():
        summaries = read_json(archive_path)
        archive = {p: {k: v for k, v in a.items() if k != "elites"} for p, a in summaries.items()}
        metrics["archive"] = archive[cfg.problem] if cfg.suite is None else archive
    metrics["complete"] = True
    write_json(cfg.out_dir / "metrics.json", metrics)
    return metrics


def _evaluate_entry(cfg: ExperimentConfig, model: str, policy, problem_name: str, mode: str) -> tuple[dict, list[dict]]:
    """Sample and score one (problem, mode): its metrics row and its sample records. A
    single-problem experiment keeps the problem's own prompt (no mode stated)."""
    problem = load_problem(problem_name)
    ev = cfg.evaluation
    measure = cfg.measure.for_mode(mode)
    records, sample_s = sample_records(
        model,
        problem_name,
        ev.samples,
        None,
        ev.temperature,
        cfg.seed,
        ev.max_new_tokens,
        policy=policy,
        mode=mode if cfg.suite is not None else None,
        threads=cfg.measure.threads,
    )
    results = evaluate_batch([r["completion"] for r in records], problem_name, measure)
    techniques = [_techniques(r["completion"], problem.signature, problem_name) for r in records]
    samples = [
        {**rec, **res.to_dict(), "reward": reward_from_result(res, cfg.reward), "techniques": used}
        for rec, res, used in zip(records, results, techniques)
    ]
    blas = (
        openblas_gflops(problem_name, measure.n or problem.default_n, measure.threads)
        if problem_name in BLAS_PROBLEMS
        else None
    )
    ok_sets = Counter("+".join(used) or "none" for res, used in zip(results, techniques) if res.status == "ok")
    row = {
        "problem": problem_name,
        "mode": measure.mode,
        "threads": measure.threads,
        "unit": problem.unit,
        **summarize(results, blas),
        "distinct_technique_sets_ok": len(ok_sets),
        "technique_sets_ok": dict(ok_sets.most_common()),
        "sample_s": round(sample_s, 2),
    }
    return row, samples


#: Metrics averaged over the problems of a mode (suite-level figures).
_MODE_MEANS = ("pass_at_1", "expected_speedup")
_MODE_MEANS_BY_K = ("pass_at_k", "speedup_n_at_k", "efficiency_n_at_k")


def mode_means(rows: list[dict]) -> dict[str, dict]:
    """Per execution model: the mean over its problems of pass@1, expected speedup and the
    @k metrics (k present in every row), and how many problems it averages."""
    out = {}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        group = [r for r in rows if r["mode"] == mode]
        means: dict = {"problems": len(group)}
        for key in _MODE_MEANS:
            values = [r[key] for r in group if r.get(key) is not None]
            means[key] = statistics.fmean(values) if values else None
        for key in _MODE_MEANS_BY_K:
            ks = set.intersection(*(set(r.get(key) or {}) for r in group))
            means[key] = {k: statistics.fmean(r[key][k] for r in group) for k in sorted(ks, key=int)}
        out[mode] = means
    return out


def _techniques(completion: str, signature: str, problem: str) -> list[str] | None:
    """Techniques detected in the completion's kernel (registry order; those that apply to
    `problem`), None if none extracts."""
    source = source_or_none(completion, signature)
    if source is None:
        return None
    used = detect(source, problem)
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
