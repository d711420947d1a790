"""The warm start (rejection-sampling fine-tuning): what it keeps, how it weights, what it trains."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lab.config import ExperimentConfig, TrainConfig, WarmStartConfig
from lab.harness.evaluate import EvalResult
from lab.rl import warm_start as ws
from tests.conftest import TINY_MEASURE

pytestmark = pytest.mark.slow  # fine-tunes the smoke policy


def _same_weights(a, b) -> bool:
    from safetensors.torch import load_file

    wa, wb = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    return set(wa) == set(wb) and all((wa[k] == wb[k]).all() for k in wa)


def _config(policy, **warm) -> ExperimentConfig:
    return ExperimentConfig(
        name="rft",
        kind="grpo",
        model=str(policy),
        measure=TINY_MEASURE,
        train=TrainConfig(max_completion_length=96),
        warm_start=WarmStartConfig(**({"samples": 8, "epochs": 1.0} | warm)),
    )


def _record_sft_trainers(monkeypatch) -> list:
    """The SFTTrainer instances the warm start builds, kept to inspect their tokenized data."""
    import trl

    trainers = []

    class Recording(trl.SFTTrainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            trainers.append(self)

    monkeypatch.setattr(trl, "SFTTrainer", Recording)
    return trainers


def _assert_examples_end_the_answer(trainers: list) -> None:
    # Each fine-tuning example must end with the end-of-sequence token, inside the loss: the
    # policy's generation stops on it. Without it the tuned policy runs on to the length limit.
    (trainer,) = trainers
    eos = trainer.processing_class.eos_token_id
    rows = list(trainer.train_dataset)
    assert rows
    for row in rows:
        assert row["input_ids"][-1] == eos
        assert row["labels"][-1] == eos  # in the loss (masked positions are -100)
        # The prompt (the chat-templated text sampling uses) is outside the loss.
        assert row["labels"][0] == -100


def test_fast_kernels_weigh_more_and_failures_are_left_out(smoke_policy, tmp_path, monkeypatch):
    # Scores are made up (the harness is tested elsewhere): every other sample is ok, with a
    # speedup that grows with its position, so the weighting is known.
    def fake(texts, problem, measure, **kw):
        return [
            EvalResult(status="ok", gflops=float(i), speedup=float(i)) if i % 2 else EvalResult(status="compile_error")
            for i in range(len(texts))
        ]

    monkeypatch.setattr(ws, "evaluate_batch", fake)
    trainers = _record_sft_trainers(monkeypatch)
    cfg = _config(smoke_policy)
    final = ws.warm_start(cfg, tmp_path / "ws", {"fingerprint": 1})
    _assert_examples_end_the_answer(trainers)
    assert (final / "config.json").exists() and (final / "model.safetensors").exists()
    scored = [json.loads(line) for line in (tmp_path / "ws" / "scored.jsonl").read_text().splitlines()]
    assert len(scored) == 8 and [r["copies"] for r in scored] == [0, 2, 0, 4, 0, 6, 0, 8]
    summary = json.loads((tmp_path / "ws" / "summary.json").read_text())
    assert summary["kept"] == 4 and summary["fine_tuning_rows"] == 20 and summary["loss"] > 0
    # The fine-tuned weights differ from the starting policy's.
    assert not _same_weights(final, smoke_policy)
    # Reused with the same fingerprint, redone with another.
    mtime = (final / "model.safetensors").stat().st_mtime_ns
    assert ws.warm_start(cfg, tmp_path / "ws", {"fingerprint": 1}) == final
    assert (final / "model.safetensors").stat().st_mtime_ns == mtime
    monkeypatch.setattr(ws, "evaluate_batch", lambda texts, *a, **k: [EvalResult(status="wrong_result")] * len(texts))
    ws.warm_start(cfg, tmp_path / "ws", {"fingerprint": 2})
    assert (
        json.loads((tmp_path / "ws" / "summary.json").read_text())["kept"] == 0
    )  # nothing to learn: the policy as it was
    assert _same_weights(final, smoke_policy)


def test_warm_start_samples_only_training_phrasings(smoke_policy, tmp_path, monkeypatch):
    from lab.policy.prompts import prompt_texts

    seen = []

    def fake(texts, problem, measure, **kw):
        seen.extend(texts)
        return [EvalResult(status="wrong_result")] * len(texts)

    recorded = []
    real = ws.sample_records

    def spy(*args, **kwargs):
        records, s = real(*args, **kwargs)
        recorded.extend(records)
        return records, s

    monkeypatch.setattr(ws, "evaluate_batch", fake)
    monkeypatch.setattr(ws, "sample_records", spy)
    ws.warm_start(_config(smoke_policy), tmp_path / "ws", None)
    assert {r["prompt"] for r in recorded} <= set(prompt_texts("dgemm", "train", "openmp", 1))
    assert len(seen) == 8


def test_a_config_without_a_warm_start_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no warm_start"):
        ws.warm_start(ExperimentConfig(kind="grpo"), tmp_path, None)
    with pytest.raises(ValueError, match="need kind: grpo"):
        ExperimentConfig(kind="baseline", warm_start=WarmStartConfig())


class _TokenizerWithBos:
    """A tokenizer that adds "<s>" itself, as Llama's does, whose chat template writes it too."""

    bos_token, bos_token_id = "<s>", 1

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": ([1] if add_special_tokens else []) + [ord(c) for c in text]}


def test_the_fine_tuning_prompt_leaves_the_bos_token_to_the_tokenizer(smoke_policy):
    from transformers import AutoTokenizer

    # SFTTrainer adds the token when it tokenizes the row: the text keeps none, so there is one.
    bos = ws._added_bos(_TokenizerWithBos())
    assert "<s><|user|>\nhi\n".removeprefix(bos) == "<|user|>\nhi\n"
    assert "<|user|>\nhi\n".removeprefix(bos) == "<|user|>\nhi\n"
    # The project's own policy has no such token: its prompts pass unchanged.
    tokenizer = AutoTokenizer.from_pretrained(str(smoke_policy))
    assert "<|user|>\nhi\n".removeprefix(ws._added_bos(tokenizer)) == "<|user|>\nhi\n"


def test_demonstrations_are_the_generator_sweep_on_training_phrasings(monkeypatch):
    from lab.harness import target
    from lab.policy.prompts import prompt_texts
    from lab.policy.seed_policy.generator import serial_safe, sweep_specs

    serial = ws.demonstration_records("dgemm", "serial", 1, 0)
    assert len(serial) == sum(serial_safe(s) for s in sweep_specs("dgemm"))
    assert not any("#pragma omp" in r["completion"] for r in serial)
    assert {r["prompt"] for r in serial} == set(prompt_texts("dgemm", "train", "serial", 1))
    assert all(r["completion"].count("```") == 2 and "void dgemm(" in r["completion"] for r in serial)
    assert any("#pragma omp" in r["completion"] for r in ws.demonstration_records("dgemm", "openmp", 2, 0))
    # Written for the tier in force: no AVX-512 under LAB_TARGET=avx2 (sse4 has no intrinsics at all).
    if "avx2" in target.cpu_flags():
        monkeypatch.setenv(target.ENV, "avx2")
        lower = ws.demonstration_records("dgemm", "serial", 1, 0)
        assert lower and not any("_mm512" in r["completion"] for r in lower)
        assert any("_mm256" in r["completion"] for r in lower)


def test_demonstrations_join_the_fine_tuning_set_when_correct(smoke_policy, tmp_path, monkeypatch):
    # The policy's samples all fail; the demonstrations are ok from the fifth on, faster each.
    def fake(texts, problem, measure, **kw):
        return [
            EvalResult(status="ok", gflops=float(i), speedup=float(i)) if i >= 12 else EvalResult(status="wrong_result")
            for i in range(len(texts))
        ]

    monkeypatch.setattr(ws, "evaluate_batch", fake)
    trainers = _record_sft_trainers(monkeypatch)
    cfg = _config(smoke_policy, demonstrations=True)
    shown = ws.demonstration_records("dgemm", "openmp", 1, cfg.seed)
    final = ws.warm_start(cfg, tmp_path / "ws", None)
    scored = [json.loads(line) for line in (tmp_path / "ws" / "scored.jsonl").read_text().splitlines()]
    assert [r["source"] for r in scored] == ["policy"] * 8 + ["demonstration"] * len(shown)
    assert all(r["copies"] == 0 for r in scored[:12]) and all(r["copies"] >= 1 for r in scored[12:])
    summary = json.loads((tmp_path / "ws" / "summary.json").read_text())
    assert summary["scored"] == 8 + len(shown)
    assert summary["demonstrations"]["scored"] == len(shown) and summary["demonstrations"]["ok"] == len(shown) - 4
    assert summary["demonstrations"]["fine_tuning_rows"] == summary["fine_tuning_rows"] > 0
    (trainer,) = trainers
    assert len(trainer.train_dataset) == summary["fine_tuning_rows"]
    assert not _same_weights(final, smoke_policy)


def test_reworded_copies_keep_the_problem_and_vary_its_training_wording(smoke_policy, tmp_path, monkeypatch):
    from lab.policy.prompts import prompt_texts

    monkeypatch.setattr(
        ws, "evaluate_batch", lambda texts, *a, **k: [EvalResult(status="ok", gflops=1.0, speedup=1.0)] * len(texts)
    )
    fitted = []
    monkeypatch.setattr(ws, "_fine_tune", lambda config, model, tok, rows, out: fitted.append(rows) or 0.0)
    training, held_out = (
        set(prompt_texts("dgemm", "train", "openmp", 1)),
        set(prompt_texts("dgemm", "eval", "openmp", 1)),
    )
    ws.warm_start(_config(smoke_policy, max_copies=4), tmp_path / "plain", None)
    ws.warm_start(_config(smoke_policy, max_copies=4, reword=True), tmp_path / "reworded", None)
    ws.warm_start(_config(smoke_policy, max_copies=4, reword=True), tmp_path / "again", None)
    plain, reworded, again = fitted
    assert len(plain) == len(reworded) == 8 * 4  # every kernel as fast as the best: max_copies each
    assert [r["completion"] for r in plain] == [r["completion"] for r in reworded]
    assert reworded == again  # drawn with the run's seed
    # Without rewording a kernel keeps the phrasing it was sampled on; with it, each copy has its
    # own wording of the same request: the signature and the execution model stay, the sentences
    # around them vary, and no held-out phrasing appears.
    assert len({r["prompt"] for r in plain}) <= len(training) < len({r["prompt"] for r in reworded})
    for row in reworded:
        assert "void dgemm(int n, const double *A, const double *B, double *C);" in row["prompt"]
        assert "Execution model: OpenMP. The function runs with 1 OpenMP threads" in row["prompt"]
        assert not any(text in row["prompt"] for text in held_out)
    summary = json.loads((tmp_path / "reworded" / "summary.json").read_text())
    assert summary["distinct_prompts"] == len({r["prompt"] for r in reworded})


def test_arms_that_differ_after_the_warm_start_share_it(tmp_path):
    """Two arms of a screen that differ only in what GRPO does (reward, SQD, TRL's options) use
    one warm start per seed; a change to what the warm start reads (its settings, the seed, the
    measurement, the completion length) or to the code that makes it gives another folder."""
    from lab.config import MeasureConfig, RewardConfig, SQDConfig
    from lab.pipeline.runner import warm_start_dir, warm_start_fingerprint

    settings = WarmStartConfig(samples=8, epochs=1.0)
    base = ExperimentConfig(name="a", kind="grpo", warm_start=settings, runs_dir=str(tmp_path), seeds=[0, 1])
    same = [
        dataclasses.replace(base, name="b", reward=RewardConfig(max_at_k=4)),
        dataclasses.replace(base, name="c", train=TrainConfig(use_adaptive_entropy=True)),
        dataclasses.replace(base, name="d", sqd=SQDConfig()),
    ]
    other = [
        dataclasses.replace(base, warm_start=WarmStartConfig(samples=8, epochs=2.0)),
        dataclasses.replace(base, measure=MeasureConfig(n=64)),
        dataclasses.replace(base, train=TrainConfig(max_completion_length=128)),
    ]
    folder = warm_start_dir(base.for_seed(0), "code")
    assert folder.parent.parent == tmp_path / "warm_starts" and (folder.parent / "fingerprint.json").exists()
    assert all(warm_start_dir(c.for_seed(0), "code") == folder for c in same)
    assert all(warm_start_fingerprint(c.for_seed(0)) == warm_start_fingerprint(base.for_seed(0)) for c in same)
    assert all(warm_start_dir(c.for_seed(0), "code") != folder for c in other)
    assert warm_start_dir(base.for_seed(1), "code") != folder
    assert warm_start_dir(base.for_seed(0), "other code") != folder


def test_one_slow_baseline_call_does_not_set_every_kernels_copies():
    """Copies come from each kernel's rate over its entry's median baseline rate: a kernel
    whose own baseline call ran slow (its speedup inflated twofold) gets the copies its rate
    earns, and the others keep theirs; each (problem, mode) is scaled by its own baseline."""
    from lab.rl.warm_start import copies, steady_speedups

    def kept(problem, mode, rates_and_baselines):
        return [{"problem": problem, "mode": mode, "gflops": g, "speedup": g / b} for g, b in rates_and_baselines]

    steady = kept("dgemm", "serial", [(54.0, 0.92), (28.0, 0.93), (53.0, 0.46), (27.0, 0.91)])
    other = kept("dot", "openmp", [(2.0, 1.0), (1.0, 1.0)])
    assert copies(steady_speedups(steady), 8) == [8, 5, 8, 5]  # as their rates say
    assert copies([r["speedup"] for r in steady], 8) == [5, 3, 8, 3]  # the slow baseline's row sets s_max
    assert steady_speedups(steady + other)[-2:] == [2.0, 1.0]
