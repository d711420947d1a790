"""Use your own model: a hub architecture, built tiny and random in the test, sampled and trained.

Nothing is downloaded. Each model is a transformers architecture as hub checkpoints have it
(Llama, the seed policy's; Qwen2, the Qwen coder models'), 32 wide and 2 layers deep, saved
with `save_pretrained` beside a tokenizer trained here on a few prompts and kernels, with a
chat template of its own. What a model from the hub brings (config.json, weights, tokenizer
files, template) is then all there: lab.policy.sample loads and samples it, and one GRPO
step of lab.rl.train runs on it, with a stand-in for the harness (no kernel is compiled).

A Qwen2 checkpoint gets Qwen2's own tokenizer class from transformers' AutoTokenizer whatever
its tokenizer files say, with Qwen2's pre-tokenizer (the seed policy is a Llama for that
reason); so the Qwen2 model here gets a Qwen2Tokenizer built from a vocabulary trained with
that pre-tokenizer and a ChatML template, as the Qwen models have.
"""

from __future__ import annotations

import json

import pytest

from lab.config import ExperimentConfig, TrainConfig
from lab.harness.evaluate import EvalResult
from lab.policy.prompts import prompt_text
from lab.rl.reward import TERM_WEIGHTS, TERMS, reward_from_result
from tests.conftest import TINY_MEASURE

#: A Qwen-style chat template (ChatML).
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
KERNEL = "void dgemm(int n, const double *A, const double *B, double *C) {\n  for (int i = 0; i < n; i++) {}\n}\n"
PROBE = "Write dgemm:\n" + KERNEL


def _texts() -> list[str]:
    """What the tokenizers learn from: the training prompts' phrasings and a kernel."""
    return [prompt_text("dgemm", None, None, 2, phrasing=i) for i in range(4)] + [KERNEL]


def _llama_tokenizer():
    from lab.policy.seed_policy.pretrain import train_tokenizer

    return train_tokenizer(_texts(), vocab_size=400)  # the seed policy's tokenizer code, chat template included


def _qwen2_tokenizer():
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX, Qwen2Tokenizer

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(_texts(), trainer=trainer)
    learned = json.loads(bpe.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in learned["merges"]]
    tokenizer = Qwen2Tokenizer(
        vocab=learned["vocab"], merges=merges, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None
    )
    tokenizer.chat_template = CHATML
    return tokenizer


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def own_model(request, tmp_path_factory):
    """(folder, the tokenizer as built) of a tiny random model of the architecture."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    tokenizer = {"llama": _llama_tokenizer, "qwen2": _qwen2_tokenizer}[request.param]()
    architecture = {"llama": LlamaConfig, "qwen2": Qwen2Config}[request.param]
    config = architecture(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(0)
    out = tmp_path_factory.mktemp(request.param)
    AutoModelForCausalLM.from_config(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out, tokenizer


def test_sample_loads_and_samples_your_own_model(own_model):
    from lab.policy.sample import chat_prompt, load_policy, sample_records

    path, built = own_model
    model, tokenizer = load_policy(str(path))
    assert model.config.hidden_size == 32 and model.config.num_hidden_layers == 2
    # Its own tokenizer, as built: the same tokens, and prompts through its own chat template.
    assert tokenizer(PROBE)["input_ids"] == built(PROBE)["input_ids"]
    assert chat_prompt(tokenizer, "hi") == built.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    records, seconds = sample_records(str(path), "dgemm", num=3, max_new_tokens=8, policy=(model, tokenizer))
    assert len(records) == 3 and all(isinstance(r["completion"], str) for r in records) and seconds > 0
    assert records[0]["prompt"] == prompt_text("dgemm", None)


class FakeHarness:
    """Stands in for evaluate_batch (no compiling): the rows of each batch in turn get a fast
    kernel, the harness's own failure, a compile error and a slow kernel, so a group has spread."""

    VERDICTS = (
        EvalResult(status="ok", gflops=20.0, speedup=4.0),
        EvalResult(status="harness_error", detail="the stand-in's failure"),
        EvalResult(status="compile_error"),
        EvalResult(status="ok", gflops=5.0, speedup=1.0),
    )

    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, texts, problem, config, progress=True, compute=None):
        self.calls.append(list(texts))
        return [self.VERDICTS[i % len(self.VERDICTS)] for i in range(len(texts))]


def test_one_grpo_step_on_your_own_model(own_model, tmp_path, monkeypatch):
    """lab.rl.train.train on the model for one step: TRL gets the reward as its three terms,
    measured once, logged each under its name; the harness's failure gets no advantage; the
    step's mean reward is the one reward_from_result gives; the trained model is saved and loads."""
    import lab.rl.train as train_module
    from lab.policy.sample import load_policy

    path, built = own_model
    harness, trainers = FakeHarness(), []
    build = train_module.build_trainer

    def keep(*args, **kwargs):  # the trainer train() builds, to look into afterwards
        trainers.append(build(*args, **kwargs))
        return trainers[-1]

    monkeypatch.setattr(train_module, "evaluate_batch", harness)
    monkeypatch.setattr(train_module, "build_trainer", keep)
    cfg = ExperimentConfig(
        name="own",
        kind="grpo",
        model=str(path),
        measure=TINY_MEASURE,
        train=TrainConfig(steps=1, group_size=4, prompts_per_step=1, max_completion_length=16, save_steps=100),
    )
    final = train_module.train(cfg, tmp_path / "run")
    (trainer,) = trainers
    assert len(harness.calls) == 1 and len(harness.calls[0]) == 4  # one evaluation for the three terms
    assert trainer.reward_func_names == list(TERMS) and trainer.args.reward_weights == list(TERM_WEIGHTS)
    (row,) = [json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    assert row["step"] == 1 and {f"rewards/{t}/mean" for t in TERMS} <= set(row)
    assert row["status_counts"] == {"ok": 2, "harness_error": 1, "compile_error": 1}
    scored = [reward_from_result(r, cfg.reward) for r in trainer.harness_reward.last if r.status != "harness_error"]
    assert row["reward"] == pytest.approx(sum(scored) / len(scored), rel=1e-6)
    assert row["rewards/performance/mean"] == pytest.approx(row["reward"], rel=1e-6)  # no SQD: the others are 0
    advantages = list(trainer._logs["advantages"])
    assert advantages[1] == 0.0 and advantages[0] > 0 > advantages[2]  # harness_error: no advantage
    model, tokenizer = load_policy(str(final))
    assert type(model).__name__ == type(trainer.model).__name__
    assert tokenizer(PROBE)["input_ids"] == built(PROBE)["input_ids"]
