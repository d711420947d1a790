"""GRPO on the measured reward: TRL's GRPOTrainer built from a typed config.

    from lab.config import load_config
    from lab.rl.train import train
    train(load_config("configs/default.yaml").experiment("grpo"))   # into runs/grpo/

No trainer subclass: the harness enters as TRL's reward functions, the four terms of
lab.rl.reward.HarnessReward (performance, compliance with the permitted set, QD bonus, rarity;
one scoring of each batch, in parallel through evaluate_batch, measured as the experiment's
`measure` says), summed by GRPOConfig's `reward_weights` into the reward
`reward_from_result` defines; logging enters as a callback. Per step, `train_log.jsonl`
gets TRL's own metrics (loss, reward mean/std, each term's mean and std as
`rewards/<term>/mean`, completion length, the share of groups whose rewards have zero
spread) plus what the harness saw (status counts, mean and best GFLOPS of ok completions)
and the step's time split into generation, reward scoring and update.

With `suite` set, the training prompts are (problem, mode) pairs drawn by the suite's
weights (`suite_rows`), each stating its execution model; TRL repeats each prompt
`group_size` times, so a GRPO group is one (problem, mode, prompt), and the reward
measures each row in its own mode (lab.rl.reward.HarnessReward, `problem` and `mode`
columns). The prompts are the problem's training phrasings (`train_prompts`), dataset row
i asking phrasing i mod their number, so no held-out phrasing is ever trained on; with
`train.reword` each row is worded as the seed corpus words its prompts instead (a training
phrasing, or one recombined from their sentences, drawn with the run's seed), so the policy
is not trained on four fixed texts. Every
scored completion is appended, by text hash with its step and result, to
`training_samples.jsonl` (what the evaluation's `seen_in_training` is checked against);
a correct kernel far above the best its run had found is flagged there (`excessive`) and
written whole to `excessive.jsonl`, to be read (lab.rl.guard).
With `sqd` set (lab.config.SQDConfig), the prompts come from an SQD schedule instead
of the fixed rows (phrasings drawn the same way): a live stream (a datasets.IterableDataset over
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
with a different config; `train.save_total_limit` keeps only the newest ones.

Precision and logging (docs/gpu.md): `train.bf16` (None: on where CUDA supports bfloat16,
off on CPU) and `train.report_to` (e.g. ["tensorboard"], logging under `<output_dir>/logs`)
go to the trainer's arguments; `precision_and_reporting` and `tensorboard_dir` are shared
with the warm start's SFTTrainer. On a CUDA machine with the gpu extra installed
(`pip install -e ".[gpu]" -c constraints/gpu.txt`), `train.use_unsloth` loads the model
through unsloth and `train.use_vllm` switches TRL's generation to vLLM, colocated with the
trainer on the same GPU; both are off by default and guarded, so the CPU path never imports
them. Unsloth patches transformers and TRL when it is imported, so it must come before
them: this module imports neither at import time (tests/test_gpu.py checks it), and
`build_trainer` imports unsloth before anything else (`import_unsloth_first`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import random
import sys
import time
import unittest.mock
import warnings
from collections import Counter
from pathlib import Path

from lab.config import ExperimentConfig, TrainConfig, changed_fields
from lab.files import JsonlAppender, read_json, read_jsonl, write_json, write_jsonl
from lab.harness import target
from lab.harness.evaluate import evaluate_batch
from lab.policy.prompts import prompt_text
from lab.policy.seed_policy.corpus import training_wording
from lab.results import EXCESSIVE, TRAINING_SAMPLES
from lab.rl.guard import ExcessiveGuard
from lab.rl.reward import TERM_WEIGHTS, HarnessReward
from lab.rl.sqd import SQDSchedule, TechniqueArchive
from lab.techniques import problem_techniques

ARCHIVE_STATE = "archive_state.json"  # in each checkpoint folder, beside the Trainer's own files


TENSORBOARD_LOGS = "logs"  # in the output folder: where `report_to: [tensorboard]` writes

#: vLLM's share of the GPU's memory (weights and KV cache) when it is colocated with the
#: trainer; the rest is left to training. TRL's default, stated here so it is not a surprise.
VLLM_GPU_MEMORY_UTILIZATION = 0.3

#: What unsloth patches: imported before it, they run unpatched (unsloth warns).
_PATCHED_BY_UNSLOTH = ("trl", "transformers", "peft")


def resolve_bf16(setting: bool | None) -> bool:
    """Whether to train in bfloat16: `train.bf16` as set, or (None) where the CUDA device
    supports bfloat16 natively; False on CPU. True without CUDA bfloat16 raises."""
    import torch

    cuda = torch.cuda.is_available()
    if setting is None:
        # Native support only (Ampere and newer): emulated bfloat16 on older GPUs is slower
        # than float32, so it is not a sensible default.
        return cuda and torch.cuda.is_bf16_supported(including_emulation=False)
    if setting and not (cuda and torch.cuda.is_bf16_supported()):
        raise RuntimeError("train.bf16: true needs a CUDA GPU with bfloat16 support; leave bf16 unset or false here")
    return setting


def precision_and_reporting(train: TrainConfig) -> dict:
    """The trainer arguments GRPO and the warm start's SFT share: bf16 and report_to."""
    return {"bf16": resolve_bf16(train.bf16), "report_to": list(train.report_to)}


@contextlib.contextmanager
def tensorboard_dir(report_to: list[str], path: Path):
    """While a Trainer is built inside it, its TensorBoard logs are set to go to `path`.

    transformers 5 has no `logging_dir` argument any more (5.25: neither TrainingArguments nor
    TRL's GRPOConfig and SFTConfig have one), and the TENSORBOARD_LOGGING_DIR variable is the
    one setting its TensorBoardCallback documents: it reads it when the Trainer creates it
    (default: a dated folder under output_dir/runs). The variable is restored afterwards, so it
    cannot leak into the next trainer of the process (another seed's run)."""
    if "tensorboard" not in report_to:
        yield
        return
    # The standard library's environment patch: set for the block, restored (or removed) after.
    with unittest.mock.patch.dict(os.environ, {"TENSORBOARD_LOGGING_DIR": str(path)}):
        yield


def import_unsloth_first() -> None:
    """Import unsloth, before transformers, TRL and peft where this process has not loaded
    them yet (unsloth patches them as it is imported). Call it before anything that may
    import them; a no-op once unsloth is loaded."""
    if "unsloth" in sys.modules:
        return
    early = [m for m in _PATCHED_BY_UNSLOTH if m in sys.modules]
    if early:
        warnings.warn(
            f"{', '.join(early)} imported before unsloth: its patches may not apply; "
            "call lab.rl.train.import_unsloth_first() at the start of the process",
            stacklevel=2,
        )
    try:
        import unsloth  # noqa: F401 - imported for its patches
    except ModuleNotFoundError as err:
        if err.name != "unsloth":
            raise
        raise RuntimeError("train.use_unsloth needs unsloth: pip install -e '.[gpu]' -c constraints/gpu.txt") from None


def text_hash(text: str) -> str:
    """The key that says two completions are the same text (evaluation's `seen_in_training`)."""
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _sample_records(step: int, reward_fn: HarnessReward) -> list[dict]:
    """One record per completion scored in a step: its text's hash, what it was asked and what
    it scored (no text: the hashes are what evaluation needs, and they keep the file small)."""
    # Every last_* list is set with `last` by the same call; only the permitted sets are empty
    # without SQD.
    permitted = reward_fn.last_permitted or [None] * len(reward_fn.last)
    return [
        {
            "step": step,
            "problem": problem,
            "mode": mode,
            "permitted": allowed,
            "text_hash": text_hash(text),
            "status": r.status,
            "gflops": r.gflops,
            "speedup": r.speedup,
            "violation": violation,
            "archive_improved": up,
            "measured": ran,
            # What the training dynamics follow (lab.analysis.dynamics): the kernel's techniques
            # (None: no kernel) and the reward the harness's terms gave it.
            "techniques": used,
            "reward": reward,
            "host": r.host,  # where it was measured (a cluster worker's host, or this machine)
            "machine": r.machine,
        }
        for r, text, problem, mode, allowed, violation, up, ran, used, reward in zip(
            reward_fn.last,
            reward_fn.last_texts,
            reward_fn.last_problems,
            reward_fn.last_modes,
            permitted,
            reward_fn.last_violations,
            reward_fn.last_improved,
            reward_fn.last_measured,
            reward_fn.last_techniques,
            reward_fn.last_rewards,
            strict=True,
        )
    ]


def _step_callback(
    reward_fn: HarnessReward,
    log_path: Path | None,
    schedule: SQDSchedule | None,
    samples_path: Path | None = None,
    guard: ExcessiveGuard | None = None,
):
    """The TrainerCallback that logs, advances SQD and checkpoints the archive."""
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
            self.log = JsonlAppender(log_path) if log_path is not None else None
            self.samples = JsonlAppender(samples_path) if samples_path is not None else None
            self.excessive = JsonlAppender(samples_path.with_name(EXCESSIVE)) if samples_path and guard else None

        def on_step_begin(self, args, state, control, **kwargs):
            self.t_begin = time.monotonic()

        def on_step_end(self, args, state, control, **kwargs):
            self.t_end = time.monotonic()
            if schedule is not None:
                schedule.end_step(state.global_step, reward_fn.last_rows, final=state.global_step >= args.max_steps)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if self.log is None or not logs or "loss" not in logs:
                return
            results = reward_fn.last
            ok = [r.gflops for r in results if r.status == "ok"]
            speedups = [r.speedup for r in results if r.status == "ok" and r.speedup is not None]
            scored_now = self.t_begin <= reward_fn.started <= self.t_end
            record = {
                "step": state.global_step,
                **{k: v for k, v in logs.items() if isinstance(v, (int, float))},
                # The max@k in force when this step's completions were scored (reward.max_at_k_steps).
                "max_at_k": reward_fn.reward.at_step(state.global_step - 1).max_at_k,
                "status_counts": dict(Counter(r.status for r in results)),
                # Kernels the harness compiled and ran (lab.config.RAN_STATUSES; a kernel its object
                # showed to break its permitted set counts: it ran), and those that broke their
                # prompt's permitted set (measured anyway under soft SQD).
                "measured": sum(reward_fn.last_measured),
                "violations": sum(v is not None for v in reward_fn.last_violations),
                "mean_gflops_ok": sum(ok) / len(ok) if ok else None,
                "best_gflops_ok": max(ok) if ok else None,
                # Rates of different problems do not mix; speedups over each problem's baseline do.
                "mean_speedup_ok": sum(speedups) / len(speedups) if speedups else None,
                "best_speedup_ok": max(speedups) if speedups else None,
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
            self.log.append(record)
            if self.samples is not None and scored_now:
                rows = _sample_records(state.global_step, reward_fn)
                if guard is not None:
                    priors = [guard.prior(row["problem"], row["mode"]) for row in rows]
                    flags = guard.check(
                        [
                            (row["problem"], row["mode"], row["gflops"] if row["status"] == "ok" else None)
                            for row in rows
                        ]
                    )
                    for row, prior, flag, text in zip(rows, priors, flags, reward_fn.last_texts):
                        row["excessive"] = flag
                        if flag:  # kept whole, to be read (lab.rl.guard)
                            self.excessive.append(
                                {**row, "prior_best_gflops": prior, "factor": guard.factor, "text": text}
                            )
                for row in rows:
                    self.samples.append(row)

        def on_save(self, args, state, control, **kwargs):
            ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            write_json(ckpt / ARCHIVE_STATE, _archive_state(reward_fn.archives or {}, schedule))

    return StepLog()


def _archive_state(archives: dict[str, TechniqueArchive], schedule: SQDSchedule | None) -> dict:
    return {
        "archives": {p: a.elites() for p, a in archives.items()},
        "sqd": schedule.state_dict() if schedule is not None else None,
    }


def suite_rows(config: ExperimentConfig) -> list[dict]:
    """The training prompts of a suite without SQD: one row per prompt of the run, each a
    (problem, mode) drawn by the entries' weights (seeded), its prompt stating the mode."""
    rng = random.Random(config.seed * 7919 + 17)
    entries = config.entries
    picks = rng.choices(
        entries, weights=[e.weight for e in entries], k=config.train.steps * config.train.prompts_per_step
    )
    wording = prompt_wordings(config.train.reword, config.seed * 6361 + 5)
    threads = config.measure.threads
    return [
        {
            "prompt": _chat(prompt_text(e.problem, None, e.mode, threads, wording(e.problem, e.mode, i))),
            "problem": e.problem,
            "mode": e.mode,
        }
        for i, e in enumerate(picks)
    ]


def prompt_wordings(reword: bool, seed: int):
    """(problem, mode, row) -> the `phrasing` of a training prompt (lab.policy.prompts.prompt_text):
    the row's number (training phrasing row mod their number), or with `reword` a wording drawn as
    the seed corpus draws them (lab.policy.seed_policy.corpus.training_wording) from a generator
    seeded with `seed`, for the tier this process works at."""
    if not reword:
        return lambda problem, mode, row: row
    rng, tier = random.Random(seed), target.current()
    return lambda problem, mode, row: training_wording(rng, problem, mode, tier)


def sqd_schedule(config: ExperimentConfig, archives: dict[str, TechniqueArchive]) -> SQDSchedule:
    """The SQD schedule a run with `sqd` trains on: its entries (each prompt in its mode), one
    archive per problem (`archives`), and with `train.reword` each row reworded (`row_wording`)."""
    return SQDSchedule(
        list(archives),
        config.sqd,
        seed=config.seed,
        archives=archives,
        entries=[(e.problem, e.mode, e.weight) for e in config.entries],
        threads=config.measure.threads,
        wording=row_wording(config.seed * 6361 + 5) if config.train.reword else None,
    )


def row_wording(seed: int):
    """(problem, mode, row) -> a reworded training phrasing as `prompt_wordings` draws them, from
    a generator seeded by `seed` and the row alone: for SQD's stream, which a resumed run
    continues midway, where a generator shared by the rows would have lost its state."""
    tier = target.current()
    return lambda problem, mode, row: training_wording(random.Random(seed * 1_000_003 + row), problem, mode, tier)


def _chat(text: str) -> list[dict]:
    """A prompt as the conversational rows GRPOTrainer takes: one user message."""
    return [{"role": "user", "content": text}]


def _dataset(config: ExperimentConfig, schedule: SQDSchedule | None):
    from datasets import Dataset, IterableDataset

    if schedule is not None:
        return IterableDataset.from_generator(schedule.rows)
    if config.suite is not None:
        return Dataset.from_list(suite_rows(config))
    mode, threads = config.measure.mode, config.measure.threads
    rows = config.train.steps * config.train.prompts_per_step
    wording = prompt_wordings(config.train.reword, config.seed * 6361 + 5)
    prompts = [
        _chat(prompt_text(config.problem, None, mode, threads, wording(config.problem, mode, i))) for i in range(rows)
    ]
    return Dataset.from_dict({"prompt": prompts, "problem": [config.problem] * rows, "mode": [mode] * rows})


def _load_model(config: ExperimentConfig):
    import torch

    if config.train.use_unsloth:
        if not torch.cuda.is_available():
            raise RuntimeError("use_unsloth needs a CUDA GPU")
        from unsloth import FastLanguageModel  # GPU-only dependency (already imported first)

        model, tokenizer = FastLanguageModel.from_pretrained(config.model, load_in_4bit=False)
        return model, tokenizer
    from lab.policy.sample import load_policy

    model, tokenizer = load_policy(config.model)
    return model, tokenizer


def last_checkpoint(output_dir: str | Path) -> str | None:
    """The newest complete checkpoint: the Trainer writes trainer_state.json last and the
    step callback then adds the archive state, so a run killed while saving leaves a
    folder without them, which is skipped."""
    ckpts = sorted(
        (
            p
            for p in Path(output_dir).glob("checkpoint-*")
            if (p / "trainer_state.json").exists() and (p / ARCHIVE_STATE).exists()
        ),
        key=lambda p: int(p.name.split("-")[1]),
    )
    return str(ckpts[-1]) if ckpts else None


def build_trainer(
    config: ExperimentConfig,
    output_dir: str | Path,
    log_path: Path | None = None,
    extra_reward_funcs: list | None = None,
    archive_state: dict | None = None,
):
    """The GRPOTrainer for `config` (without training), checkpointing into `output_dir`;
    `extra_reward_funcs` are added to the harness reward's terms (TRL sums them, each with
    weight 1), e.g. for shaping experiments; `archive_state` (from a checkpoint) restores the
    archive and SQD schedule. The harness reward is `trainer.harness_reward` (its terms are
    the trainer's first reward functions), the schedule (None without SQD) `trainer.sqd_schedule`.

    A kernel the harness could not score (`harness_error`, under the group-mean rule) gets None
    from every term, so TRL gives it no advantage; with extra reward functions, which may score
    it, it gets its group's mean instead, as before the terms were split (lab.rl.reward.term_rewards)."""
    import torch  # unsloth only needs to precede transformers, TRL and peft

    t = config.train
    if (t.use_vllm or t.use_unsloth) and not torch.cuda.is_available():
        raise RuntimeError("use_vllm and use_unsloth need a CUDA GPU; leave them off on CPU")
    if t.use_unsloth:
        import_unsloth_first()
    from trl import GRPOConfig, GRPOTrainer

    precision = precision_and_reporting(t)  # before loading the model: a bad bf16 fails fast
    model, tokenizer = _load_model(config)
    saved = archive_state or {}
    problems = list(dict.fromkeys(e.problem for e in config.entries))
    archives = {
        p: TechniqueArchive.from_elites((saved.get("archives") or {}).get(p, []), problem_techniques(p))
        for p in problems
    }
    schedule = sqd_schedule(config, archives) if config.sqd is not None else None
    if schedule is not None and saved.get("sqd"):
        schedule.load_state_dict(saved["sqd"])
    reward_fn = HarnessReward(
        config.problem,
        config.reward,
        config.measure,
        archives=archives,
        # The rewards are measured where config.compute says: this machine, or a Dask cluster.
        evaluate=functools.partial(evaluate_batch, progress=False, compute=config.compute),
        name="suite" if config.suite else None,
        sqd=config.sqd,
        # TRL leaves a row out only if every reward function returns None for it; extra ones may not.
        unscored_as_none=not extra_reward_funcs,
    )
    reward_funcs = [*reward_fn.terms, *(extra_reward_funcs or [])]
    args = GRPOConfig(
        output_dir=str(output_dir),
        # Under these weights the terms add up to the harness reward (lab.rl.reward.term_rewards).
        reward_weights=[*TERM_WEIGHTS, *[1.0] * (len(reward_funcs) - len(TERM_WEIGHTS))],
        max_steps=t.steps,
        learning_rate=t.learning_rate,
        per_device_train_batch_size=t.batch_size,
        num_generations=t.group_size,
        temperature=t.temperature,
        max_completion_length=t.max_completion_length,
        loss_type=t.loss_type,
        beta=t.beta,
        **t.exploration(),
        seed=config.seed,
        logging_steps=1,
        save_steps=t.save_steps,
        save_strategy="steps",
        save_total_limit=t.save_total_limit,
        **precision,
        use_cpu=not torch.cuda.is_available(),
        use_vllm=t.use_vllm,
        # vLLM in this process, on the trainer's GPU: no separate `trl vllm-serve` to start.
        vllm_mode="colocate",
        vllm_gpu_memory_utilization=VLLM_GPU_MEMORY_UTILIZATION,
        top_k=0,
        top_p=1.0,
        disable_tqdm=False,
        dataloader_num_workers=0,
        # The SQD stream is live state: shuffling would buffer rows ahead, and skipping the
        # batches a resumed run already did would only burn samples (the state is restored).
        shuffle_dataset=schedule is None,
        ignore_data_skip=schedule is not None,
    )
    peft_config = None
    if t.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=t.lora_rank, lora_alpha=2 * t.lora_rank, task_type="CAUSAL_LM", target_modules="all-linear"
        )
    with tensorboard_dir(args.report_to, Path(output_dir) / TENSORBOARD_LOGS):
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward_funcs,
            args=args,
            train_dataset=_dataset(config, schedule),
            processing_class=tokenizer,
            peft_config=peft_config,
        )
    samples_path = log_path.with_name(TRAINING_SAMPLES) if log_path is not None else None
    # The guard starts from the samples a resumed run kept (train() has cut them to its checkpoint).
    recorded = read_jsonl(samples_path, missing_ok=True) if samples_path is not None else []
    guard = ExcessiveGuard.from_samples(t.excessive_speedup, recorded)
    trainer.add_callback(_step_callback(reward_fn, log_path, schedule, samples_path, guard))
    trainer.harness_reward, trainer.sqd_schedule = reward_fn, schedule
    return trainer


#: Fields of an experiment that do not change what training does (where results go, how
#: the trained policy is evaluated afterwards).
# Where the rewards are measured (compute) is a fact of the run, like the machine: a run may
# resume on another cluster; its training samples record the hosts.
_NOT_TRAINING = frozenset({"name", "results_dir", "runs_dir", "evaluation", "seeds", "compute"})


def training_config(config: ExperimentConfig) -> dict:
    """The part of an experiment's config that determines its training run (saved beside it)."""
    return {k: v for k, v in config.to_dict().items() if k not in _NOT_TRAINING}


def config_changes(output_dir: str | Path, config: ExperimentConfig) -> list[str]:
    """The fields in which the training config saved in output_dir differs from `config`
    (nothing saved there: none)."""
    saved = Path(output_dir) / "train_config.json"
    return changed_fields(read_json(saved), training_config(config)) if saved.exists() else []


def train(config: ExperimentConfig, output_dir: str | Path | None = None) -> Path:
    """Run (or resume) GRPO into `output_dir` (default: the experiment's run_dir); returns the
    directory of the final model (`archive.json` and `train_log.jsonl` beside it)."""
    out = Path(output_dir or config.run_dir)
    out.mkdir(parents=True, exist_ok=True)
    resume = last_checkpoint(out)
    differ = config_changes(out, config) if resume is not None else []
    if differ:
        raise ValueError(
            f"{out} holds checkpoints of a different training config (differs in: "
            f"{', '.join(differ)}); delete it or train into another output_dir"
        )
    write_json(out / "train_config.json", training_config(config))
    log_path = out / "train_log.jsonl"
    done = int(Path(resume).name.split("-")[1]) if resume else 0
    for path in (log_path, out / TRAINING_SAMPLES, out / EXCESSIVE):
        if resume is None and path.exists():
            path.unlink()  # a fresh run starts a fresh log
        elif resume is not None and path.exists():
            # Keep only the steps the checkpoint covers; later ones will be redone.
            write_jsonl(path, [row for row in read_jsonl(path) if row["step"] <= done])
    state = read_json(Path(resume) / ARCHIVE_STATE) if resume else None
    trainer = build_trainer(config, out, log_path, archive_state=state)
    if done >= config.train.steps:
        # Killed after the last checkpoint (e.g. while evaluating): nothing is left to train.
        # Trainer.train would still run one more step when resuming at max_steps on a stream
        # without a length (the SQD prompts), so only the weights are restored.
        trainer._load_from_checkpoint(resume)
    else:
        trainer.train(resume_from_checkpoint=resume)
    final = out / "final"
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    write_json(out / "archive.json", archive_summary(trainer.harness_reward.archives, trainer.sqd_schedule))
    return final


def archive_summary(archives: dict[str, TechniqueArchive], schedule: SQDSchedule | None) -> dict:
    """Per problem: archive stats, cells (descriptor -> best GFLOPS), elites with their
    sources, and (under SQD) the stage history."""
    history = schedule.history() if schedule is not None else {}
    return {
        p: {**a.stats(), "cells": a.cells(), "stage_history": history.get(p), "elites": a.elites()}
        for p, a in archives.items()
    }
