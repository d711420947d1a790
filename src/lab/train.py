"""GRPO on the measured reward: TRL's GRPOTrainer built from a typed config.

    from lab.train import TrainConfig, train
    train(TrainConfig(model="models/seed-policy", steps=40, output_dir="runs/grpo"))

No trainer subclass: the harness enters as TRL reward functions
(lab.reward.make_reward_fn, which scores each batch in parallel through
evaluate_batch), and logging as a callback. Per step, `train_log.jsonl` gets TRL's
own metrics (loss, reward mean/std, completion length, the share of groups whose
rewards have zero spread) plus what the harness saw (status counts, mean and best
GFLOPS of ok completions) and the step's time split into generation, reward
scoring and update.

With `sqd` set (lab.sqd.SQDConfig), the prompts come from an SQD schedule instead
of the plain problem prompt: a live stream (a datasets.IterableDataset over
SQDSchedule.rows) whose permitted sets follow the current stage and archive, and
each row's permitted set goes to the reward, which scores code using anything
else as `forbidden` without compiling it. The accelerate dataloader fetches one
batch ahead, so the prompts of step t+1 are drawn when step t's batch is handed
out, from the stage and archive as they stood after step t-1; each row carries the
stage it was drawn in, and that is what the log records. Every run, SQD or not, keeps a technique archive of
the correct kernels its reward saw (for SQD it steers sampling; for GRPO-only it
only observes), logs its coverage per step and writes it to `archive.json`.

Checkpoints go to `output_dir` every `save_steps` (with the archive and the SQD
state, drawn-but-untrained prompts included, beside the model); the same command
on the same output_dir resumes from the last one, and refuses checkpoints made
with a different config. On a CUDA machine with unsloth installed
(`pip install .[gpu]`), `use_unsloth=True` loads the model through unsloth and
`use_vllm=True` switches TRL's generation to vLLM; both are off by default and
guarded, so the CPU path never imports them.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from collections.abc import Set
from typing import Any

from lab.evaluate import EvalConfig, EvalResult, evaluate_batch
from lab.extract import source_or_none
from lab.problems import load_problem
from lab.prompts import prompt_text
from lab.reward import RewardConfig, completion_text, reward_from_result
from lab.sqd import SQDConfig, SQDSchedule, TechniqueArchive, descriptor, permission_violation
from lab.techniques import detect

ARCHIVE_STATE = "archive_state.json"  # in each checkpoint folder, beside the Trainer's own files


@dataclass(frozen=True)
class TrainConfig:
    """Everything a GRPO run depends on (saved next to its results)."""

    model: str = "models/seed-policy"  # local directory or hub id
    problem: str = "dgemm"
    output_dir: str = "runs/grpo"
    steps: int = 40
    group_size: int = 8  # completions per prompt (GRPO's group)
    prompts_per_step: int = 2
    learning_rate: float = 5e-5  # the seed policy is tiny; hub-size models want ~1e-6
    temperature: float = 1.0
    max_completion_length: int = 256  # tokens; the seed policy's kernels are ~40-250 tokens
    loss_type: str = "dapo"
    beta: float = 0.0  # KL coefficient (0 = no reference model, TRL's default)
    lora: bool = False
    lora_rank: int = 16
    seed: int = 0
    save_steps: int = 10
    eval_threads: int = 1  # CPUs per kernel while scoring rewards
    eval_n: int | None = None  # timed size while training (None: the problem's default)
    reward: RewardConfig = field(default_factory=RewardConfig)
    sqd: SQDConfig | None = None  # None: GRPO-only on the plain prompt
    use_vllm: bool = False  # CUDA only
    use_unsloth: bool = False  # CUDA only

    @property
    def batch_size(self) -> int:
        return self.group_size * self.prompts_per_step


class HarnessReward:
    """The TRL reward function for the run, remembering what the harness saw per batch.

    Under SQD each row carries its prompt's permitted set: a kernel using any other
    technique is `forbidden` before it is compiled or timed. Correct kernels are
    offered to `archives[problem]` (descriptor = the techniques detected in the
    extracted source) when archives are given."""

    def __init__(self, problem: str, reward: RewardConfig, eval_config: EvalConfig,
                 archives: dict[str, TechniqueArchive] | None = None):
        self.problem, self.reward, self.eval_config = problem, reward, eval_config
        self.archives = archives
        self.__name__ = f"{problem}_{reward.positive}"
        self.last: list[EvalResult] = []
        # The last batch's SQD columns, one entry per completion (empty without SQD).
        self.last_permitted: list[str | None] = []  # descriptors of the permitted sets
        self.last_rows: list[int] = []
        self.last_stages: list[int] = []  # the stage each row was drawn in
        self.last_problems: list[str] = []
        self.seconds = 0.0
        self.started = self.finished = 0.0  # monotonic times of the last batch's scoring

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        start = self.started = time.monotonic()
        n = len(completions)
        problems = kwargs.get("problem") or [self.problem] * n
        permitted = kwargs.get("permitted") or [None] * n
        texts = [completion_text(c) for c in completions]
        # The permission check and the archive judge the source the compiler gets.
        sources = [source_or_none(t, load_problem(p).signature) for t, p in zip(texts, problems)]  # None: format_error
        used = [frozenset(detect(src)) if src is not None else None for src in sources]
        results: list[EvalResult | None] = [None] * n
        for i in range(n):
            reason = permission_violation(used[i], permitted[i]) if used[i] is not None else None
            if reason:
                results[i] = EvalResult(status="forbidden", detail=reason, problem=problems[i],
                                        reward=float(self.reward.penalties["forbidden"]))
        todo = [i for i in range(n) if results[i] is None]
        for name in dict.fromkeys(problems[i] for i in todo):
            idx = [i for i in todo if problems[i] == name]
            for i, r in zip(idx, evaluate_batch([texts[i] for i in idx], name, self.eval_config, progress=False)):
                results[i] = r
        for i, r in enumerate(results):
            if self.archives is not None and r.status == "ok" and problems[i] in self.archives:
                self.archives[problems[i]].add(used[i], r.gflops, sources[i])
        self.last = results
        self.last_permitted = [descriptor(p) if p is not None else None for p in kwargs.get("permitted") or []]
        self.last_rows, self.last_stages = list(kwargs.get("row") or []), list(kwargs.get("stage") or [])
        self.last_problems = list(problems)
        self.finished = time.monotonic()
        self.seconds = self.finished - start
        return [reward_from_result(r, self.reward) for r in results]


def _step_callback(reward_fn: HarnessReward, log_path: Path | None, schedule: SQDSchedule | None):
    from transformers import TrainerCallback

    class StepLog(TrainerCallback):
        """Per step: advances the SQD schedule, appends one JSON line to the log (TRL's metrics
        plus the harness's view, the archive and, under SQD, the stage the step's prompts
        were drawn in and their permitted sets), and saves the archive state into each
        checkpoint.

        Within a GRPO step, generation comes first, then reward scoring, then the
        forward/backward pass and the optimizer step; the callback's step boundaries and
        the reward function's own timestamps split the step into those three parts."""

        def __init__(self):
            self.t_begin = self.t_end = time.monotonic()

        def on_step_begin(self, args, state, control, **kwargs):
            self.t_begin = time.monotonic()

        def on_step_end(self, args, state, control, **kwargs):
            self.t_end = time.monotonic()
            if schedule is not None:
                schedule.end_step(state.global_step, reward_fn.last_rows, final=state.global_step >= args.max_steps)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if log_path is None or not logs or "loss" not in logs:
                return
            results = reward_fn.last
            ok = [r.gflops for r in results if r.status == "ok"]
            scored_now = self.t_begin <= reward_fn.started <= self.t_end
            record = {
                "step": state.global_step, **{k: v for k, v in logs.items() if isinstance(v, (int, float))},
                "status_counts": dict(Counter(r.status for r in results)),
                "mean_gflops_ok": sum(ok) / len(ok) if ok else None,
                "best_gflops_ok": max(ok) if ok else None,
                "step_s": self.t_end - self.t_begin,
                "generation_s": (reward_fn.started - self.t_begin) if scored_now else None,
                "reward_s": reward_fn.seconds if scored_now else 0.0,
                "update_s": (self.t_end - reward_fn.finished) if scored_now else self.t_end - self.t_begin,
                "archive": {p: a.stats() for p, a in (reward_fn.archives or {}).items()},
            }
            if schedule is not None:
                # One entry per prompt of the step (the group's completions share it). The
                # stage is the one the prompts were drawn in: the dataloader draws a batch a
                # step early, so right after an advance it lags the schedule's by one step.
                group = max(1, args.num_generations)
                stages: dict[str, int] = {}
                for problem, stage in zip(reward_fn.last_problems, reward_fn.last_stages):
                    stages[problem] = max(stage, stages.get(problem, 0))
                record.update(stage=stages, permitted=reward_fn.last_permitted[::group])
            with open(log_path, "a") as f:
                f.write(json.dumps(record) + "\n")

        def on_save(self, args, state, control, **kwargs):
            ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            _write_json(ckpt / ARCHIVE_STATE, _archive_state(reward_fn.archives or {}, schedule))

    return StepLog()


def _archive_state(archives: dict[str, TechniqueArchive], schedule: SQDSchedule | None) -> dict:
    return {"archives": {p: a.elites() for p, a in archives.items()},
            "sqd": schedule.state_dict() if schedule is not None else None}


def _write_json(path: Path, data: Any) -> None:
    """Write whole or not at all (a kill mid-write must not leave half a file behind)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def _dataset(config: TrainConfig, schedule: SQDSchedule | None):
    from datasets import Dataset, IterableDataset

    if schedule is not None:
        return IterableDataset.from_generator(schedule.rows)
    prompt = [{"role": "user", "content": prompt_text(config.problem)}]
    rows = config.steps * config.prompts_per_step
    return Dataset.from_dict({"prompt": [prompt] * rows, "problem": [config.problem] * rows})


def _load_model(config: TrainConfig):
    import torch

    if config.use_unsloth:
        if not torch.cuda.is_available():
            raise RuntimeError("use_unsloth needs a CUDA GPU")
        from unsloth import FastLanguageModel  # noqa: PLC0415 - GPU-only dependency

        model, tokenizer = FastLanguageModel.from_pretrained(config.model, load_in_4bit=False)
        return model, tokenizer
    from lab.sample import load_policy

    model, tokenizer = load_policy(config.model)
    return model, tokenizer


def last_checkpoint(output_dir: str | Path) -> str | None:
    """The newest complete checkpoint: the Trainer writes trainer_state.json last and the
    step callback then adds the archive state, so a run killed while saving leaves a
    folder without them, which is skipped."""
    ckpts = sorted((p for p in Path(output_dir).glob("checkpoint-*")
                    if (p / "trainer_state.json").exists() and (p / ARCHIVE_STATE).exists()),
                   key=lambda p: int(p.name.split("-")[1]))
    return str(ckpts[-1]) if ckpts else None


def build_trainer(config: TrainConfig, log_path: Path | None = None, extra_reward_funcs: list | None = None,
                  archive_state: dict | None = None):
    """The GRPOTrainer for `config` (without training); `extra_reward_funcs` are added to the
    harness reward (TRL sums them), e.g. for shaping experiments; `archive_state` (from a
    checkpoint) restores the archive and SQD schedule. The reward function is
    `trainer.harness_reward`, the schedule (None without SQD) `trainer.sqd_schedule`."""
    import torch
    from trl import GRPOConfig, GRPOTrainer

    if (config.use_vllm or config.use_unsloth) and not torch.cuda.is_available():
        raise RuntimeError("use_vllm and use_unsloth need a CUDA GPU; leave them off on CPU")
    model, tokenizer = _load_model(config)
    saved = archive_state or {}
    archives = {config.problem: TechniqueArchive.from_elites((saved.get("archives") or {}).get(config.problem, []))}
    schedule = None
    if config.sqd is not None:
        schedule = SQDSchedule([config.problem], config.sqd, seed=config.seed, archives=archives)
        if saved.get("sqd"):
            schedule.load_state_dict(saved["sqd"])
    eval_config = EvalConfig(n=config.eval_n, threads=config.eval_threads, reward=config.reward)
    reward_fn = HarnessReward(config.problem, config.reward, eval_config, archives=archives)
    args = GRPOConfig(
        output_dir=config.output_dir, max_steps=config.steps, learning_rate=config.learning_rate,
        per_device_train_batch_size=config.batch_size, num_generations=config.group_size,
        temperature=config.temperature, max_completion_length=config.max_completion_length,
        loss_type=config.loss_type, beta=config.beta, seed=config.seed, logging_steps=1,
        save_steps=config.save_steps, save_strategy="steps", report_to=[], bf16=False,
        use_cpu=not torch.cuda.is_available(), use_vllm=config.use_vllm, top_k=0, top_p=1.0,
        disable_tqdm=False, dataloader_num_workers=0,
        # The SQD stream is live state: shuffling would buffer rows ahead, and skipping the
        # batches a resumed run already did would only burn samples (the state is restored).
        shuffle_dataset=schedule is None, ignore_data_skip=schedule is not None,
    )
    peft_config = None
    if config.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=config.lora_rank, lora_alpha=2 * config.lora_rank, task_type="CAUSAL_LM",
                                 target_modules="all-linear")
    trainer = GRPOTrainer(model=model, reward_funcs=[reward_fn, *(extra_reward_funcs or [])], args=args,
                          train_dataset=_dataset(config, schedule),
                          processing_class=tokenizer, peft_config=peft_config)
    trainer.add_callback(_step_callback(reward_fn, log_path, schedule))
    trainer.harness_reward, trainer.sqd_schedule = reward_fn, schedule
    return trainer


def jsonable(config: Any) -> dict:
    """A config dataclass as the JSON it is saved as (nested configs as dicts, anything else as text)."""
    return json.loads(json.dumps(asdict(config), default=str))


def changed_fields(saved: dict, current: dict, ignore: Set[str] = frozenset()) -> list[str]:
    """The keys (outside `ignore`) whose values differ between two saved configs."""
    return sorted(k for k in (set(saved) | set(current)) - set(ignore) if saved.get(k) != current.get(k))


def config_changes(output_dir: str | Path, config: TrainConfig) -> list[str]:
    """The fields in which the training config saved in output_dir differs from `config`
    (nothing saved there: none)."""
    saved = Path(output_dir) / "train_config.json"
    return changed_fields(json.loads(saved.read_text()), jsonable(config)) if saved.exists() else []


def train(config: TrainConfig) -> Path:
    """Run (or resume) GRPO; returns the directory of the final model (`archive.json` beside it)."""
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    resume = last_checkpoint(out)
    differ = config_changes(out, config) if resume is not None else []
    if differ:
        raise ValueError(f"{out} holds checkpoints of a different training config (differs in: "
                         f"{', '.join(differ)}); delete it or train into another output_dir")
    (out / "train_config.json").write_text(json.dumps(jsonable(config), indent=1) + "\n")
    log_path = out / "train_log.jsonl"
    done = int(Path(resume).name.split("-")[1]) if resume else 0
    if resume is None and log_path.exists():
        log_path.unlink()  # a fresh run starts a fresh log
    elif resume is not None and log_path.exists():
        # Keep only the steps the checkpoint covers; later ones will be redone.
        kept = [line for line in log_path.read_text().splitlines() if json.loads(line)["step"] <= done]
        log_path.write_text("".join(line + "\n" for line in kept))
    state = json.loads((Path(resume) / ARCHIVE_STATE).read_text()) if resume else None
    trainer = build_trainer(config, log_path, archive_state=state)
    if done >= config.steps:
        # Killed after the last checkpoint (e.g. while evaluating): nothing is left to train.
        # Trainer.train would still run one more step when resuming at max_steps on a stream
        # without a length (the SQD prompts), so only the weights are restored.
        trainer._load_from_checkpoint(resume)
    else:
        trainer.train(resume_from_checkpoint=resume)
    final = out / "final"
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    _write_json(out / "archive.json", archive_summary(trainer.harness_reward.archives, trainer.sqd_schedule))
    return final


def archive_summary(archives: dict[str, TechniqueArchive], schedule: SQDSchedule | None) -> dict:
    """Per problem: archive stats, cells (descriptor -> best GFLOPS), elites with their
    sources, and (under SQD) the stage history."""
    history = schedule.history() if schedule is not None else {}
    return {p: {**a.stats(), "cells": a.cells(), "stage_history": history.get(p), "elites": a.elites()}
            for p, a in archives.items()}
