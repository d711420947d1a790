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

Checkpoints go to `output_dir` every `save_steps`; the same command on the same
output_dir resumes from the last one. On a CUDA machine with unsloth installed
(`pip install .[gpu]`), `use_unsloth=True` loads the model through unsloth and
`use_vllm=True` switches TRL's generation to vLLM; both are off by default and
guarded, so the CPU path never imports them.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lab.evaluate import EvalConfig, EvalResult, evaluate_batch
from lab.prompts import prompt_text
from lab.reward import RewardConfig, completion_text, reward_from_result
from lab.sqd import permission_violation


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
    use_vllm: bool = False  # CUDA only
    use_unsloth: bool = False  # CUDA only

    @property
    def batch_size(self) -> int:
        return self.group_size * self.prompts_per_step


class HarnessReward:
    """The TRL reward function for the run, remembering what the harness saw per batch."""

    def __init__(self, problem: str, reward: RewardConfig, eval_config: EvalConfig):
        self.problem, self.reward, self.eval_config = problem, reward, eval_config
        self.__name__ = f"{problem}_{reward.positive}"
        self.last: list[EvalResult] = []
        self.seconds = 0.0
        self.started = self.finished = 0.0  # monotonic times of the last batch's scoring

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        start = self.started = time.monotonic()
        problems = kwargs.get("problem") or [self.problem] * len(completions)
        texts = [completion_text(c) for c in completions]
        results: list[EvalResult | None] = [None] * len(texts)
        for name in dict.fromkeys(problems):
            idx = [i for i, p in enumerate(problems) if p == name]
            for i, r in zip(idx, evaluate_batch([texts[i] for i in idx], name, self.eval_config, progress=False)):
                results[i] = r
        # Under SQD each row carries its prompt's permitted set: using anything else is forbidden.
        for i, permitted in enumerate(kwargs.get("permitted") or []):
            if permitted is not None and results[i].status not in ("format_error", "forbidden"):
                reason = permission_violation(texts[i], frozenset(permitted))
                if reason:
                    results[i] = dataclasses.replace(results[i], status="forbidden", detail=reason, gflops=None,
                                                     speedup=None, time_s=None, baseline_gflops=None)
        self.last = results
        self.finished = time.monotonic()
        self.seconds = self.finished - start
        return [reward_from_result(r, self.reward) for r in results]


def _log_callback(reward_fn: HarnessReward, path: Path):
    from transformers import TrainerCallback

    class StepLog(TrainerCallback):
        """Appends one JSON line per logged step: TRL's metrics plus the harness's view.

        Within a GRPO step, generation comes first, then reward scoring, then the
        forward/backward pass and the optimizer step; the callback's step boundaries and
        the reward function's own timestamps split the step into those three parts."""

        def __init__(self):
            self.t_begin = self.t_end = time.monotonic()

        def on_step_begin(self, args, state, control, **kwargs):
            self.t_begin = time.monotonic()

        def on_step_end(self, args, state, control, **kwargs):
            self.t_end = time.monotonic()

        def on_log(self, args, state, control, logs=None, **kwargs):
            if not logs or "loss" not in logs:
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
            }
            with open(path, "a") as f:
                f.write(json.dumps(record) + "\n")

    return StepLog()


def _dataset(config: TrainConfig):
    from datasets import Dataset

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
    """The newest complete checkpoint: the Trainer writes trainer_state.json last, so a run
    killed while saving leaves a folder without it, which is skipped."""
    ckpts = sorted((p for p in Path(output_dir).glob("checkpoint-*") if (p / "trainer_state.json").exists()),
                   key=lambda p: int(p.name.split("-")[1]))
    return str(ckpts[-1]) if ckpts else None


def build_trainer(config: TrainConfig, log_path: Path | None = None, extra_reward_funcs: list | None = None):
    """The GRPOTrainer for `config` (without training); `extra_reward_funcs` are added to the
    harness reward (TRL sums them), e.g. for shaping experiments."""
    import torch
    from trl import GRPOConfig, GRPOTrainer

    if (config.use_vllm or config.use_unsloth) and not torch.cuda.is_available():
        raise RuntimeError("use_vllm and use_unsloth need a CUDA GPU; leave them off on CPU")
    model, tokenizer = _load_model(config)
    eval_config = EvalConfig(n=config.eval_n, threads=config.eval_threads, reward=config.reward)
    reward_fn = HarnessReward(config.problem, config.reward, eval_config)
    args = GRPOConfig(
        output_dir=config.output_dir, max_steps=config.steps, learning_rate=config.learning_rate,
        per_device_train_batch_size=config.batch_size, num_generations=config.group_size,
        temperature=config.temperature, max_completion_length=config.max_completion_length,
        loss_type=config.loss_type, beta=config.beta, seed=config.seed, logging_steps=1,
        save_steps=config.save_steps, save_strategy="steps", report_to=[], bf16=False,
        use_cpu=not torch.cuda.is_available(), use_vllm=config.use_vllm, top_k=0, top_p=1.0,
        disable_tqdm=False, dataloader_num_workers=0,
    )
    peft_config = None
    if config.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=config.lora_rank, lora_alpha=2 * config.lora_rank, task_type="CAUSAL_LM",
                                 target_modules="all-linear")
    trainer = GRPOTrainer(model=model, reward_funcs=[reward_fn, *(extra_reward_funcs or [])], args=args,
                          train_dataset=_dataset(config),
                          processing_class=tokenizer, peft_config=peft_config)
    if log_path is not None:
        trainer.add_callback(_log_callback(reward_fn, log_path))
    return trainer


def train(config: TrainConfig) -> Path:
    """Run (or resume) GRPO; returns the directory of the final model."""
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "train_config.json").write_text(json.dumps(asdict(config), indent=1, default=str) + "\n")
    log_path = out / "train_log.jsonl"
    resume = last_checkpoint(out)
    if resume is None and log_path.exists():
        log_path.unlink()  # a fresh run starts a fresh log
    elif resume is not None and log_path.exists():
        # Keep only the steps the checkpoint covers; later ones will be redone.
        done = int(Path(resume).name.split("-")[1])
        kept = [line for line in log_path.read_text().splitlines() if json.loads(line)["step"] <= done]
        log_path.write_text("".join(line + "\n" for line in kept))
    trainer = build_trainer(config, log_path)
    trainer.train(resume_from_checkpoint=resume)
    final = out / "final"
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    return final
