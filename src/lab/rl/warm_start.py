"""Rejection-sampling fine-tuning (RFT): the warm start before GRPO.

    from lab.rl.warm_start import warm_start
    model_dir = warm_start(config, Path("runs/grpo_rft/s0/warm_start"))   # -> .../final

What successful RL-for-kernels work does before RL, on the lab's reward:

1. sample `warm_start.samples` completions per (problem, mode) of the experiment from the
   starting policy, on the *training* phrasings only (held-out ones stay unseen), seeded
   with the run's seed;
2. score them with the harness, measured as the experiment's `measure` says (they count as
   reward evaluations: `scored.jsonl` records each one's text hash and result, and the
   training record of the run includes them);
3. keep the correct kernels, each weighted by its speedup over the problem's textbook
   baseline (its rate over the median baseline rate of its (problem, mode) in the batch,
   `steady_speedups`): the fastest appears `max_copies` times in the fine-tuning set, a kernel with
   speedup s about 1 + (max_copies - 1) * s / s_max times, so the fast ones dominate and
   the others still count;
4. fine-tune the starting policy on those (prompt, completion) pairs with TRL's
   SFTTrainer (loss on the completion only), into `<out>/final`.

With `warm_start.demonstrations`, the fine-tuning set also draws on kernels the policy did
not write: the kernel generator's sweep for each (problem, mode) (the space `lab autotune`
searches; no OpenMP in the serial model; written for the target tier), each paired with a
training phrasing in turn and wrapped as the seed policy answers. They are scored like the
samples (they count as reward evaluations too, `source: demonstration` in `scored.jsonl`),
and the correct ones are weighted by speedup together with the policy's own. This is how a
family the policy attempts but never gets right (DGEMM's packed, register-blocked SIMD
micro-kernel, on the default policy) can be in the policy GRPO starts from: the question
GRPO then answers is whether it keeps it.

With `warm_start.reword`, every copy of a kept kernel in the fine-tuning set is paired with a
prompt of its (problem, mode) worded as the seed corpus words them (a training phrasing as
written, or one recombined from their sentences: lab.rl.train.prompt_wordings),
drawn with the run's seed, instead of the phrasing it was sampled on. Fitted on the four training
phrasings alone, the policy learns their surface: on held-out wording it loses the problem.

GRPO then starts from `<out>/final` with the experiment's unchanged budget. A finished
warm start of the same training config is reused (a resumed run does not redo it).
`summary.json` says what was sampled, kept and fitted.
"""

from __future__ import annotations

import random
import shutil
import statistics
from pathlib import Path

from lab.config import ExperimentConfig
from lab.files import read_json, write_json, write_jsonl
from lab.harness import target
from lab.harness.evaluate import evaluate_batch
from lab.harness.problems import load_problem
from lab.policy.prompts import prompt_text
from lab.policy.sample import chat_prompt, load_policy, sample_records
from lab.policy.seed_policy.corpus import as_completion
from lab.policy.seed_policy.generator import for_tier, render, serial_safe, sweep_specs
from lab.rl.train import TENSORBOARD_LOGS, precision_and_reporting, prompt_wordings, tensorboard_dir, text_hash

CONFIG = "warm_start_config.json"


def copies(speedups: list[float], max_copies: int) -> list[int]:
    """How many times each kept kernel enters the fine-tuning set (see the module docstring).

    >>> copies([1.0, 10.0, 20.0], 8)
    [1, 5, 8]
    """
    best = max(speedups, default=0.0)
    if best <= 0:
        return [1] * len(speedups)
    return [1 + round((max_copies - 1) * max(s, 0.0) / best) for s in speedups]


def steady_speedups(kept: list[dict]) -> list[float]:
    """Each kept kernel's speedup over its (problem, mode)'s median baseline rate in the batch,
    instead of over the baseline measured beside it: one baseline call slowed by the machine's
    other work (seen at 0.6 of its usual rate) inflated one kernel's speedup, set `s_max`, and
    cut every other kernel's copies (a warm start remade from the same samples had 284 rows
    instead of 337). The speedup's ratio gflops / speedup is the baseline rate it was taken
    against; within an entry the rates compare directly, and the median names the entry's scale.

    >>> steady_speedups([{"problem": "p", "mode": None, "gflops": g, "speedup": s} for g, s in
    ...                  [(10.0, 10.0), (20.0, 20.0), (30.0, 60.0)]])  # the last baseline ran slow
    [10.0, 20.0, 30.0]
    """
    baselines: dict[tuple, list[float]] = {}
    for s in kept:
        baselines.setdefault((s["problem"], s["mode"]), []).append(s["gflops"] / s["speedup"])
    median = {entry: statistics.median(rates) for entry, rates in baselines.items()}
    return [s["gflops"] / median[(s["problem"], s["mode"])] for s in kept]


def demonstration_records(problem: str, mode: str | None, threads: int, seed: int) -> list[dict]:
    """The kernel generator's sweep for `problem` as warm-start records (the fields
    `sample_records` gives the ones it samples): in the serial model only kernels without OpenMP,
    each written for the target tier (lab.harness.target; dropped where the tier has none of its
    intrinsics), the i-th paired with training phrasing i (modulo their number) and wrapped in
    one of the seed policy's answer forms, drawn with `seed`.

    >>> rows = demonstration_records("dgemm", "serial", 1, 0)
    >>> all("#pragma omp" not in r["completion"] for r in rows), rows[0]["source"], rows[0]["split"]
    (True, 'demonstration', 'train')
    """
    rng = random.Random(seed)
    tier = target.current()
    specs = [s for s in sweep_specs(problem) if mode != "serial" or serial_safe(s)]
    written = [w for w in (for_tier(s, tier, rng) for s in specs) if w is not None]
    phrasings = len(load_problem(problem).phrasings("train"))
    return [
        {
            "id": f"{problem}-{mode}-demonstration-{i}",
            "problem": problem,
            "mode": mode,
            "prompt": prompt_text(problem, None, mode, threads, phrasing=i % phrasings, split="train"),
            "split": "train",
            "phrasing": i % phrasings,
            "completion": as_completion(render(spec), rng),
            "source": "demonstration",
        }
        for i, spec in enumerate(dict.fromkeys(written))
    ]


def warm_start(config: ExperimentConfig, out: Path, fingerprint: dict | None = None) -> Path:
    """Run (or reuse) the warm start of `config` (its `warm_start` settings, from `config.model`)
    into `out`; returns the fine-tuned model's folder. `fingerprint` (the run's training config)
    decides reuse: a finished warm start saved with the same one is kept."""
    settings = config.warm_start
    if settings is None:
        raise ValueError("the experiment has no warm_start section")
    final = out / "final"
    if (final / "config.json").exists() and (out / CONFIG).exists() and read_json(out / CONFIG) == fingerprint:
        print(f"{out}: warm start finished with this config; reusing it", flush=True)
        return final
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    model, tokenizer = load_policy(config.model)
    scored: list[dict] = []
    for entry in config.entries:
        problem = load_problem(entry.problem)
        records, _ = sample_records(
            config.model,
            entry.problem,
            settings.samples,
            None,
            settings.temperature,
            config.seed,
            config.train.max_completion_length,
            policy=(model, tokenizer),
            mode=entry.mode,
            threads=config.measure.threads,
            split="train",
            phrasings=len(problem.train_prompts),
        )
        records = [{**r, "source": "policy"} for r in records]
        if settings.demonstrations:
            records += demonstration_records(entry.problem, entry.mode, config.measure.threads, config.seed)
        print(f"warm start: scoring {len(records)} samples of {entry.problem}/{entry.mode}", flush=True)
        results = evaluate_batch(
            [r["completion"] for r in records],
            entry.problem,
            config.measure.for_mode(entry.mode),
            compute=config.compute,
        )
        scored += [
            {**rec, **res.to_dict(), "problem": entry.problem, "mode": entry.mode} for rec, res in zip(records, results)
        ]
    kept = [s for s in scored if s["status"] == "ok" and s.get("speedup")]
    weights = copies(steady_speedups(kept), settings.max_copies)
    # Plain prompt-completion text, the prompt already through the chat template as sampling
    # gives it: SFTTrainer then appends the end-of-sequence token to each completion, so the
    # tuned policy learns to stop after the kernel. (Conversational rows end with the template's
    # end-of-turn marker instead, which this policy's generation does not stop on: it ran on to
    # the length limit.) The newline before that token is how the seed policy was pretrained
    # (seed_policy.pretrain): a kernel, a newline, the end of the sequence.
    bos = _added_bos(tokenizer)
    wording = prompt_wordings(True, config.seed) if settings.reword else None
    rows = []
    for s, c in zip(kept, weights):
        prompts = [s["prompt"]] * c
        if wording:  # each copy its own wording of the same request
            prompts = [
                prompt_text(s["problem"], None, s["mode"], config.measure.threads, wording(s["problem"], s["mode"], 0))
                for _ in range(c)
            ]
        rows += [
            {"prompt": chat_prompt(tokenizer, p).removeprefix(bos), "completion": s["completion"] + "\n"}
            for p in prompts
        ]
    weight_of = {id(s): c for s, c in zip(kept, weights)}
    write_jsonl(
        out / "scored.jsonl",
        [
            {
                "problem": s["problem"],
                "mode": s["mode"],
                "source": s["source"],
                "text_hash": text_hash(s["completion"]),
                "status": s["status"],
                "gflops": s.get("gflops"),
                "speedup": s.get("speedup"),
                "copies": weight_of.get(id(s), 0),
            }
            for s in scored
        ],
    )
    summary = {
        "scored": len(scored),
        "ok": sum(s["status"] == "ok" for s in scored),
        "kept": len(kept),
        "fine_tuning_rows": len(rows),
        "best_speedup": max((s["speedup"] for s in kept), default=None),
        "best_gflops": max((s["gflops"] for s in kept), default=None),
    }
    if wording:
        summary["distinct_prompts"] = len({r["prompt"] for r in rows})
    if settings.demonstrations:
        shown = [s for s in scored if s["source"] == "demonstration"]
        correct = [s for s in shown if s["status"] == "ok" and s.get("speedup")]
        summary["demonstrations"] = {
            "scored": len(shown),
            "ok": len(correct),
            "fine_tuning_rows": sum(c for s, c in zip(kept, weights) if s["source"] == "demonstration"),
            "best_gflops": max((s["gflops"] for s in correct), default=None),
        }
    if rows:
        summary["loss"] = _fine_tune(config, model, tokenizer, rows, out)
    else:  # nothing correct to learn from: GRPO starts from the policy as it was
        model.save_pretrained(str(final))
        tokenizer.save_pretrained(str(final))
    write_json(out / "summary.json", summary)
    write_json(out / CONFIG, fingerprint)
    print(f"warm start: {summary}", flush=True)
    return final


def _added_bos(tokenizer) -> str:
    """The beginning-of-sequence token's text if the tokenizer adds that token itself, else "":
    the prefix to take off a templated prompt. SFTTrainer tokenizes plain-text rows with the
    tokenizer's special tokens, so a template that writes the token too (Llama's, Gemma's)
    would train on a doubled one that sampling never shows the policy."""
    bos = tokenizer.bos_token
    adds_bos = bos is not None and tokenizer("", add_special_tokens=True)["input_ids"][:1] == [tokenizer.bos_token_id]
    return bos if adds_bos else ""


def _fine_tune(config: ExperimentConfig, model, tokenizer, rows: list[dict], out: Path) -> float | None:
    """TRL's SFTTrainer on the prompt/completion rows (loss on the completion), saved to out/final."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    settings = config.warm_start
    args = SFTConfig(
        output_dir=str(out / "sft"),
        num_train_epochs=settings.epochs,
        learning_rate=settings.learning_rate,
        per_device_train_batch_size=16,
        max_length=2048,
        completion_only_loss=True,
        save_strategy="no",
        logging_steps=10,
        seed=config.seed,
        **precision_and_reporting(config.train),  # bf16 and report_to, as GRPO has them
        use_cpu=not torch.cuda.is_available(),
        disable_tqdm=False,
    )
    # The logs go beside the result, not into out/sft, which is deleted after training.
    with tensorboard_dir(args.report_to, out / TENSORBOARD_LOGS):
        trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
    result = trainer.train()
    trainer.save_model(str(out / "final"))
    tokenizer.save_pretrained(str(out / "final"))
    shutil.rmtree(out / "sft", ignore_errors=True)
    return float(result.training_loss) if result.training_loss is not None else None
