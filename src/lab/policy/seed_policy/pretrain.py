"""Build the embedded default policy: corpus -> tokenizer -> small causal LM -> models/seed-policy.

    lab seed-model --out models/seed-policy        (what `make seed-model` runs)

1. Write the corpus (lab.policy.seed_policy.corpus) and keep it beside the model
   (corpus.jsonl), so sampled completions can be compared with it.
2. Train a byte-level BPE tokenizer on it with the `tokenizers` library, wrap it as a
   transformers `PreTrainedTokenizerFast` with a small chat template, so the model
   is prompted exactly like a chat model: `apply_chat_template(messages)`.
3. Pretrain a Llama-architecture causal LM from scratch with transformers'
   `Trainer` (loss on the completion tokens only), deterministic for a seed.
4. `save_pretrained` model and tokenizer, plus a model card (README.md) and
   `training.json` (config, corpus statistics, losses, time).

The result loads with `AutoModelForCausalLM.from_pretrained(path)` like any hub model.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from lab.harness.problems import list_problems
from lab.provenance import policy_sha256

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>", "<|user|>", "<|assistant|>", "<|system|>"]


@dataclass(frozen=True)
class SeedConfig:
    """Everything that determines the seed policy (saved as training.json)."""

    seed: int = 0
    examples: int = 16000  # corpus size (8 problems x 3 prompt forms; DGEMM 40%)
    vocab_size: int = 8192  # line-level merges: a kernel line is often one token (the corpus: ~0.7 M tokens)
    hidden_size: int = 256
    layers: int = 4
    heads: int = 4
    intermediate_size: int = 768
    max_tokens: int = 512  # longer examples are left out (the line-level BPE keeps kernels < 250 tokens)
    epochs: float = 3.0
    batch_size: int = 32
    learning_rate: float = 2e-3  # small models train well with a high rate and a cosine decay
    warmup_ratio: float = 0.05
    weight_decay: float = 0.01
    problems: tuple[str, ...] | None = None  # the corpus's problems (None: all of them)


#: A small recipe for smoke runs and tests (about a minute on 2 CPU cores). Its samples at
#: temperature 1.0 are a mix of ok kernels and compile errors, so a GRPO group of 4 has reward
#: spread (the notebook tests check it). What makes it work: a vocabulary of 2048 (line-level
#: merges keep kernels short, so max_completion_length 128 rarely truncates) and enough
#: optimizer steps (~200 steps gave garbage). Its corpus holds only the problems the smoke
#: configs ask for, each with as many examples as a full mix of 2000 would give it; 6 epochs
#: (855 steps) make up for the C the other problems' kernels taught. Against the full mix at 4
#: epochs: a similar share of ok DGEMM kernels (21 vs 18 of 64 at temperature 1.0), 64 s
#: instead of 111 s to build.
SMOKE = SeedConfig(
    problems=("dgemm", "dot", "histogram"),
    examples=1140,
    vocab_size=2048,
    hidden_size=128,
    layers=2,
    heads=4,
    intermediate_size=384,
    epochs=6.0,
    batch_size=8,
    learning_rate=3e-3,
)


def train_tokenizer(texts: list[str], vocab_size: int):
    """Byte-level BPE on the corpus, wrapped for transformers."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from lab.techniques import REGISTRY

    tok = Tokenizer(models.BPE())
    # Split only at line ends, so merges may cross spaces and punctuation: a whole
    # `for (int i = 0; i < n; i++) {` can become one token. Generated kernels are
    # line-regular, and fewer tokens per kernel means faster training and sampling.
    # Technique wordings stay whole tokens of their own, so a prompt's permitted set is a
    # handful of clear features rather than pieces of one long merged line.
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split("\n", behavior="merged_with_previous"),
            pre_tokenizers.Split(Regex("|".join(re.escape(t.wording) for t in REGISTRY.values())), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|endoftext|>",
        pad_token="<|pad|>",
        bos_token=None,
        unk_token=None,
        clean_up_tokenization_spaces=False,
        model_max_length=4096,
    )
    wrapped.chat_template = CHAT_TEMPLATE
    return wrapped


def model_config(tokenizer, cfg: SeedConfig):
    # Llama rather than Qwen2: transformers' AutoTokenizer replaces the tokenizer of any
    # qwen2 model with Qwen2's own pre-tokenizer, which would not match ours.
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        num_key_value_heads=cfg.heads,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        use_cache=True,
    )


def encode(tokenizer, prompt: str, completion: str) -> dict[str, list[int]]:
    """Token ids of one chat exchange; labels cover the completion (and end-of-text) only."""
    prefix = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
    )
    p_ids = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    c_ids = tokenizer(completion + "\n", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return {"input_ids": p_ids + c_ids, "labels": [-100] * len(p_ids) + c_ids}


#: What makes PyTorch's CPU kernels take the same code paths on every x86-64 machine with AVX2,
#: so that one seed gives the same weights there (docs/seed_policy.md has the measurements):
#: ATen's AVX2 kernels, MKL's conditional-reproducibility mode on its AVX2 branch, oneDNN capped
#: at AVX2, and a fixed number of threads (reductions are split by thread). MKL keeps the AVX2
#: branch on Intel CPUs only (elsewhere it takes its own choice); its COMPATIBLE branch holds on
#: every CPU but makes the build 3-4 times slower, so a user who needs it sets
#: MKL_CBWR=COMPATIBLE,STRICT (a variable already set is left as it is). The libraries read these
#: as they load: `pin_numerics()` runs before PyTorch is imported, as `lab seed-model` does; the
#: record says which capability the build ran with.
DETERMINISTIC_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"}
BUILD_THREADS = 2
#: NUMERICS_ENV=as-given leaves the numerics as the environment has them (lab.bench.seed_numerics).
NUMERICS_ENV = "LAB_SEED_NUMERICS"


def pin_numerics() -> None:
    """Set DETERMINISTIC_ENV for this process and its children, where not set already."""
    if os.environ.get(NUMERICS_ENV) == "as-given":
        return
    for key, value in DETERMINISTIC_ENV.items():
        os.environ.setdefault(key, value)


def build_seed_model(out: Path, cfg: SeedConfig = SeedConfig(), progress: bool = True) -> dict:
    """Build and save the seed policy under `out`; returns the training record."""
    pin_numerics()  # in time only where PyTorch is not loaded yet (see DETERMINISTIC_ENV)
    import torch
    from transformers import DataCollatorForSeq2Seq, LlamaForCausalLM, Trainer, TrainingArguments, set_seed

    from lab.policy.seed_policy.corpus import make_corpus

    start = time.monotonic()
    set_seed(cfg.seed)
    torch.set_num_threads(BUILD_THREADS)
    out.mkdir(parents=True, exist_ok=True)

    corpus = make_corpus(cfg.examples, cfg.seed, cfg.problems)
    with open(out / "corpus.jsonl", "w") as f:
        for ex in corpus:
            f.write(json.dumps(ex.to_dict()) + "\n")
    tokenizer = train_tokenizer([ex.prompt for ex in corpus] + [ex.completion for ex in corpus], cfg.vocab_size)
    encoded = [encode(tokenizer, ex.prompt, ex.completion) for ex in corpus]
    train = [e for e in encoded if len(e["input_ids"]) <= cfg.max_tokens]
    tokens = sum(len(e["input_ids"]) for e in train)

    model = LlamaForCausalLM(model_config(tokenizer, cfg))
    n_params = sum(p.numel() for p in model.parameters())
    args = TrainingArguments(
        output_dir=str(out / "checkpoints"),
        num_train_epochs=cfg.epochs,
        per_device_train_batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=0,
        weight_decay=cfg.weight_decay,
        logging_steps=10,
        save_strategy="no",
        report_to=[],
        seed=cfg.seed,
        data_seed=cfg.seed,
        train_sampling_strategy="group_by_length",
        dataloader_num_workers=0,
        use_cpu=not torch.cuda.is_available(),
        disable_tqdm=not progress,
        bf16=False,
        fp16=False,
    )
    steps = math.ceil(len(train) / cfg.batch_size) * cfg.epochs
    args.warmup_steps = max(1, int(cfg.warmup_ratio * steps))
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=train,
        data_collator=DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=-100, padding=True),
    )
    result = trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]

    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    record = {
        "config": asdict(cfg),
        "parameters": n_params,
        "corpus": {
            "examples": len(corpus),
            "trained_on": len(train),
            "tokens": tokens,
            "correct_share": round(sum(e.correct for e in corpus) / len(corpus), 3),
            "families": dict(Counter(e.family for e in corpus)),
            "tiers": dict(Counter(e.tier for e in corpus)),
            "conditioned_share": round(sum(e.permitted is not None for e in corpus) / len(corpus), 3),
        },
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "train_loss": result.training_loss,
        "losses": losses,
        "build_s": round(time.monotonic() - start, 1),
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": len(os.sched_getaffinity(0)),
            "torch": torch.__version__,
        },
        # The numerics the build ran with: equal weights on two machines need equal values here.
        "numerics": {
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "threads": torch.get_num_threads(),
            **{key: os.environ.get(key) for key in DETERMINISTIC_ENV},
        },
    }
    # What the results a policy makes record of it, and what a run compares (lab.provenance).
    record["policy_sha256"] = policy_sha256(out)
    (out / "training.json").write_text(json.dumps(record, indent=1) + "\n")
    (out / "README.md").write_text(_card(record, out))
    import shutil

    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    return record


def _loss(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "n/a (fewer steps than one logging interval)"


def _card(r: dict, out: Path) -> str:
    c = r["config"]
    problems, every = c.get("problems") or list_problems(), list_problems()
    which = f"the lab's {len(every)}" if len(problems) == len(every) else f"{len(problems)} of the lab's {len(every)}"
    return f"""# {out.name} — a perfRL lab policy built by `lab seed-model`

A small causal language model (Llama architecture, {r["parameters"] / 1e6:.1f} M parameters,
{c["layers"]} layers, hidden size {c["hidden_size"]}, byte-level BPE vocabulary of {c["vocab_size"]})
that writes C kernels for {which} problems ({", ".join(problems)}), in the serial and
OpenMP execution models. **It is not a general code model.** Weights sha256: `{r["policy_sha256"]}`.
It exists so that every stage of the lab — sampling, the measured reward, GRPO, SQD,
evaluation — runs for real on a laptop with no network and no GPU.

How it was made (`lab seed-model`, seed {c["seed"]}, {r["build_s"]:.0f} s on {r["machine"]["cores"]} CPU cores):

- corpus: {r["corpus"]["examples"]} prompt -> completion pairs written by the lab's kernel generator
  (`lab.policy.seed_policy.generator`), {r["corpus"]["correct_share"]:.0%} of them correct, the rest with the slips a base
  model makes; {r["corpus"]["conditioned_share"]:.0%} of prompts state a permitted technique set, which most
  completions respect; families: {r["corpus"]["families"]};
- tokenizer: trained on that corpus with `tokenizers`; chat template `<|user|>` / `<|assistant|>`;
- training: transformers `Trainer`, {c["epochs"]} epochs, batch {c["batch_size"]}, learning rate {c["learning_rate"]}
  (cosine), loss on completion tokens only: {_loss(r["loss_first"])} -> {_loss(r["loss_last"])}.

Load it like any hub model:

```python
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("{out}")
model = AutoModelForCausalLM.from_pretrained("{out}")
```

For real research, point the lab at a real code model instead (see configs/paper.yaml).
"""
