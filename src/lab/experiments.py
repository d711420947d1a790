"""The experiments: baseline, GRPO-only and GRPO+SQD share one evaluation protocol and one code path.

    run_baseline(ExperimentConfig(experiment="baseline"))
    run_grpo(ExperimentConfig(experiment="grpo", train=TrainConfig(steps=40)))
    run_grpo_sqd(ExperimentConfig(experiment="grpo_sqd", train=TrainConfig(steps=40, sqd=SQDConfig())))

Evaluation protocol: for each evaluation prompt (the problem's plain prompt), sample
`samples` completions at `temperature`, score them with the harness, and write
`results/<experiment>/`:

- config.json: every parameter, the git commit, the seed, the machine;
- samples.jsonl: each completion with its EvalResult and the techniques detected in it;
- train_log.jsonl: per-step training log (trained experiments);
- archive.json: the technique archive of the correct kernels seen in training,
  elites' sources included (trained experiments);
- metrics.json: lab.metrics.summarize(...) plus experiment, model, `archive`
  (coverage, QD score, cells, stage history; trained experiments) and
  "complete": true — written last, so a run is finished exactly when it exists.

GRPO-only trains on the plain prompt; GRPO+SQD on prompts from the SQD schedule
(lab.sqd). Both are evaluated on the plain prompt, like the baseline.

A finished experiment is skipped on rerun unless `overwrite` is set, but only when
the same config and commit made it (see `is_complete`); an unfinished GRPO run
resumes from its last checkpoint (under runs/<experiment>/) if that checkpoint was
made with the same training config, and starts afresh otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lab.calibrate import machine_summary, openblas_gflops
from lab.evaluate import EvalConfig, evaluate_batch
from lab.metrics import summarize
from lab.problems import load_problem
from lab.extract import source_or_none
from lab.reward import RewardConfig
from lab.sample import load_policy, sample_records
from lab.sqd import SQDConfig
from lab.techniques import TECHNIQUES, detect
from lab.train import TrainConfig, changed_fields, config_changes, jsonable, train


@dataclass(frozen=True)
class ExperimentConfig:
    """One experiment: which policy, how it is evaluated, and (for GRPO) how it is trained."""

    experiment: str = "baseline"  # the folder name under results/
    model: str = "models/seed-policy"
    problem: str = "dgemm"
    samples: int = 32  # completions per evaluation prompt (k)
    temperature: float = 1.0
    seed: int = 0
    eval_threads: int = 1
    eval_n: int | None = None  # None: the problem's default size
    results_dir: str = "results"
    runs_dir: str = "runs"  # checkpoints (not committed)
    overwrite: bool = False
    train: TrainConfig | None = None

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> ExperimentConfig:
        """Build from papermill parameters / YAML (unknown keys are an error)."""
        params = dict(params)
        train_params = params.pop("train", None)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(params) - known
        if unknown:
            raise ValueError(f"unknown experiment parameter(s): {', '.join(sorted(unknown))}")
        cfg = cls(**params)
        if train_params:
            train_params = dict(train_params)
            nested = {"sqd": SQDConfig, "reward": RewardConfig}
            for key, kind in nested.items():
                if isinstance(train_params.get(key), dict):
                    train_params[key] = kind(**_known(kind, train_params[key], f"train.{key}"))
            train_params = _known(TrainConfig, train_params, "train")
            cfg = dataclasses.replace(cfg, train=TrainConfig(**{"model": cfg.model, "problem": cfg.problem,
                                                                 "seed": cfg.seed, **train_params}))
        return cfg

    @property
    def out_dir(self) -> Path:
        return Path(self.results_dir) / self.experiment


def _known(kind: type, params: dict, where: str) -> dict:
    bad = set(params) - {f.name for f in dataclasses.fields(kind)}
    if bad:
        raise ValueError(f"unknown {where} parameter(s): {', '.join(sorted(bad))}")
    return params


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


_NOT_COMPARED = {"machine", "overwrite"}  # may change between a run and its rerun


def is_complete(cfg: ExperimentConfig) -> bool:
    """True if `cfg.out_dir` holds a finished run of this very config made by this very
    commit, so it can be reused. Anything else reruns: a run cut off midway, a finished
    run of another config, or results committed from another commit (a fresh clone's
    `make reproduce` really reproduces them)."""
    metrics = cfg.out_dir / "metrics.json"
    if not (metrics.exists() and json.loads(metrics.read_text()).get("complete") is True):
        return False
    saved_path = cfg.out_dir / "config.json"
    saved = json.loads(saved_path.read_text()) if saved_path.exists() else {}
    differ = changed_fields(saved, {**jsonable(cfg), "git_commit": git_commit()}, ignore=_NOT_COMPARED)
    if differ:
        print(f"{cfg.out_dir}: made with another {', '.join(differ)}; running it again", flush=True)
        return False
    return True


def _start(cfg: ExperimentConfig) -> None:
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("metrics.json", "train_log.jsonl", "archive.json"):
        (cfg.out_dir / stale).unlink(missing_ok=True)
    config = {**asdict(cfg), "git_commit": git_commit(), "machine": machine_summary()}
    (cfg.out_dir / "config.json").write_text(json.dumps(config, indent=1, default=str) + "\n")


def evaluate_policy(cfg: ExperimentConfig, model: str) -> dict:
    """The evaluation protocol on `model`: samples.jsonl and metrics.json (written last)."""
    problem = load_problem(cfg.problem)
    policy = load_policy(model)
    records, sample_s = sample_records(model, cfg.problem, cfg.samples, None, cfg.temperature, cfg.seed,
                                       policy=policy)
    eval_cfg = EvalConfig(n=cfg.eval_n, threads=cfg.eval_threads)
    results = evaluate_batch([r["completion"] for r in records], cfg.problem, eval_cfg)
    techniques = [_techniques(r["completion"], problem.signature) for r in records]
    with open(cfg.out_dir / "samples.jsonl", "w") as f:
        for rec, res, used in zip(records, results, techniques):
            f.write(json.dumps({**rec, **res.to_dict(), "techniques": used}) + "\n")
    blas = openblas_gflops(cfg.problem, cfg.eval_n or problem.default_n, cfg.eval_threads)
    ok_sets = {tuple(used) for res, used in zip(results, techniques) if res.status == "ok"}
    metrics = {"experiment": cfg.experiment, "model": model, "problem": cfg.problem,
               **summarize(results, blas), "distinct_technique_sets_ok": len(ok_sets),
               "sample_s": round(sample_s, 2)}
    archive_path = cfg.out_dir / "archive.json"
    if archive_path.exists():
        summary = json.loads(archive_path.read_text())[cfg.problem]
        metrics["archive"] = {k: v for k, v in summary.items() if k != "elites"}
    metrics["complete"] = True
    (cfg.out_dir / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    return metrics


def _techniques(completion: str, signature: str) -> list[str] | None:
    """Techniques detected in the completion's kernel (taxonomy order), None if none extracts."""
    source = source_or_none(completion, signature)
    if source is None:
        return None
    used = detect(source)
    return [t for t in TECHNIQUES if t in used]


def run_baseline(cfg: ExperimentConfig) -> dict:
    """Evaluate the untrained policy."""
    if is_complete(cfg) and not cfg.overwrite:
        return json.loads((cfg.out_dir / "metrics.json").read_text())
    _start(cfg)
    return evaluate_policy(cfg, cfg.model)


def run_grpo(cfg: ExperimentConfig) -> dict:
    """GRPO-train the policy on the measured reward, then evaluate it like the baseline."""
    if cfg.train is None:
        raise ValueError("run_grpo needs a train config")
    if is_complete(cfg) and not cfg.overwrite:
        return json.loads((cfg.out_dir / "metrics.json").read_text())
    run_dir = Path(cfg.runs_dir) / cfg.experiment
    if cfg.overwrite or not _same_training(run_dir, cfg.train):
        shutil.rmtree(run_dir, ignore_errors=True)
    _start(cfg)
    tcfg = dataclasses.replace(cfg.train, output_dir=str(run_dir))
    final = train(tcfg)
    for name in ("train_log.jsonl", "archive.json"):
        shutil.copy(run_dir / name, cfg.out_dir / name)
    return evaluate_policy(cfg, str(final))


def _same_training(run_dir: Path, train_cfg: TrainConfig) -> bool:
    """Whether the checkpoints in run_dir (if any) were made with this training config."""
    if config_changes(run_dir, dataclasses.replace(train_cfg, output_dir=str(run_dir))):
        print(f"{run_dir}: checkpoints of another training config; starting afresh", flush=True)
        return False
    return True


def run_grpo_sqd(cfg: ExperimentConfig) -> dict:
    """GRPO on prompts from the SQD schedule (cfg.train.sqd), evaluated like the others."""
    if cfg.train is None or cfg.train.sqd is None:
        raise ValueError("run_grpo_sqd needs train.sqd (the SQD schedule's parameters)")
    return run_grpo(cfg)


def load_results(results_dir: str | Path = "results") -> dict[str, dict]:
    """Every finished experiment under results/: {name: {"metrics", "samples", "train_log"}}."""
    out = {}
    for metrics_path in sorted(Path(results_dir).glob("*/metrics.json")):
        metrics = json.loads(metrics_path.read_text())
        if not metrics.get("complete"):
            continue
        folder = metrics_path.parent
        log = folder / "train_log.jsonl"
        out[folder.name] = {
            "metrics": metrics,
            "samples": [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()],
            "train_log": [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else [],
        }
    return out


