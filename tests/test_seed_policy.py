"""The embedded default policy: generator, corpus, tokenizer, pretraining, sampling."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import replace

import pytest

from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate_batch
from lab.policy.prompts import permitted_in
from lab.policy.seed_policy.corpus import make_corpus
from lab.policy.seed_policy.generator import (
    GENERATORS,
    KernelSpec,
    applicable_defects,
    random_spec,
    render,
    spec_techniques,
    sweep_specs,
)
from lab.techniques import detect
from tests.conftest import KERNELS, ROOT, assert_status_on_this_cpu, run_lab

pytestmark = pytest.mark.slow  # builds and samples seed policies

FAST = MeasureConfig(n=64, odd_n=37, min_time_s=0.01, min_reps=2, baseline=False, run_timeout_s=10.0)
EXPECTED_FAILURE = {
    "syntax": "compile_error",
    "off_by_one": "wrong_result",
    "no_zero": "wrong_result",
    "no_tail": "wrong_result",
    "wrong_index": "wrong_result",
    "no_border": "wrong_result",
}
#: The problems beyond DGEMM and DGEMV, in the registry's order (a new problem's generator is scored too).
SUITE = tuple(p for p in GENERATORS if p not in ("dgemm", "dgemv"))


def _specs() -> list[KernelSpec]:
    rng = random.Random(1234)
    specs = [random_spec(rng, "dgemm", defect_rate=0.0) for _ in range(24)]
    specs += [random_spec(rng, "dgemv", defect_rate=0.0) for _ in range(8)]
    # One of every family and SIMD flavour, and each defect where it applies.
    specs += [s for s in sweep_specs("dgemm") if s.family == "microkernel"][::5]
    specs += sweep_specs("dgemv")[::4]
    base = [s for s in specs if s.family in ("naive", "intrinsics", "microkernel")][:12]
    for i, s in enumerate(base):
        defects = applicable_defects(s)
        specs.append(replace(s, defect=defects[i % len(defects)]))
    # The other problems: every family and technique, random draws in both modes, and every
    # defect of a few kernels per problem.
    for problem in SUITE:
        swept = sweep_specs(problem)
        specs += swept
        specs += [random_spec(rng, problem, defect_rate=0.0, mode=m) for m in ("serial", "openmp") for _ in range(3)]
        for s in swept[::3]:
            specs += [replace(s, defect=d) for d in dict.fromkeys(applicable_defects(s))]
    return list(dict.fromkeys(specs))


SPECS = _specs()


@pytest.fixture(scope="module")
def generated():
    results = {}
    for problem in ("dgemm", "dgemv", *SUITE):
        group = [s for s in SPECS if s.problem == problem]
        for s, r in zip(group, evaluate_batch([render(s) for s in group], problem, FAST, cache=False, progress=False)):
            results[s] = r
    return results


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.problem}-{s.family}-{s.omp or 'serial'}-{s.defect or 'ok'}")
def test_generated_kernel_status(spec, generated):
    result = generated[spec]
    text = render(spec)
    assert_status_on_this_cpu(result, "ok" if spec.correct else EXPECTED_FAILURE[spec.defect], text, f"{spec}\n{text}")


def test_generator_labels_match_the_detector():
    rng = random.Random(7)
    specs = [random_spec(rng, p, defect_rate=0.0) for p in ["dgemm"] * 150 + ["dgemv"] * 50]
    agree = sum(detect(render(s)) == s.techniques() for s in specs)
    assert agree / len(specs) >= 0.9


@pytest.mark.parametrize("problem", SUITE)
def test_suite_generator_labels_match_the_detector_and_the_problem(problem):
    """The detector, limited to the problem's techniques, reads back what the generator built;
    and the generator uses only techniques the problem declares."""
    from lab.techniques import problem_techniques

    rng = random.Random(8)
    specs = sweep_specs(problem) + [
        random_spec(rng, problem, defect_rate=0.0, mode=m) for m in ("serial", "openmp", None) for _ in range(40)
    ]
    assert all(s.techniques() <= set(problem_techniques(problem)) for s in specs)
    agree = sum(detect(render(s), problem) == s.techniques() for s in specs)
    assert agree / len(specs) >= 0.95
    sets = {s.techniques() for s in specs}
    assert len(sets) >= 4  # several technique families per problem


@pytest.mark.parametrize("problem", ("dgemm", *SUITE))
def test_serial_draws_never_use_openmp(problem):
    from lab.policy.seed_policy.generator import serial_safe

    rng = random.Random(9)
    specs = [random_spec(rng, problem, mode="serial", optimize=True) for _ in range(60)]
    assert all(serial_safe(s) for s in specs)
    assert not any(re.search(r"#\s*pragma\s+omp|omp\.h|\bomp_", render(s)) for s in specs)
    openmp = [random_spec(rng, problem, mode="openmp") for _ in range(60)]
    assert sum("openmp" in s.techniques() for s in openmp) >= 10  # an OpenMP prompt often gets OpenMP


def test_random_spec_respects_the_permitted_set():
    rng = random.Random(3)
    for permitted in (frozenset(), frozenset({"openmp"}), frozenset({"simd", "packing", "register_blocking"})):
        for _ in range(30):
            assert random_spec(rng, "dgemm", permitted).techniques() <= permitted


def test_styles_vary_and_render_deterministically():
    rng = random.Random(0)
    texts = [render(random_spec(rng, "dgemm", frozenset(), defect_rate=0.0)) for _ in range(40)]
    assert len(set(texts)) >= 25  # plain kernels still differ in names, types, braces, comments
    # A spec drawn again from the same seed, after other draws and renders, renders to the same
    # text: rendering keeps no state of its own (across processes: the next test).
    first = render(random_spec(random.Random(5), "dgemm"))
    assert render(random_spec(random.Random(5), "dgemm")) == first


def test_a_corpus_of_some_problems_keeps_their_shares():
    """The smoke preset's corpus: only its problems, in the full mix's proportions to each other."""
    corpus = make_corpus(1140, seed=0, problems=("dgemm", "dot", "histogram"))
    counts = Counter(e.problem for e in corpus)
    assert set(counts) == {"dgemm", "dot", "histogram"}
    assert 0.6 <= counts["dgemm"] / len(corpus) <= 0.8  # 0.4 / 0.57 of the full mix's weight
    with pytest.raises(ValueError, match="no corpus for problem.s. gemm"):
        make_corpus(10, problems=("gemm",))


def test_a_corpus_of_no_problem_is_refused():
    with pytest.raises(ValueError, match="^no corpus for an empty set of problems: name at least one"):
        make_corpus(10, problems=())
    assert make_corpus(0, problems=None) == []


def test_a_specs_techniques_come_from_its_problems_generator_module():
    """spec.techniques() and spec_techniques(spec) are the problem module's `techniques`; only
    DGEMM's families reorder loops or pack, and DGEMV's row blocks count as unrolling."""
    for problem, generator in GENERATORS.items():
        for s in sweep_specs(problem):
            assert s.techniques() == spec_techniques(s) == generator.techniques(s)
    assert spec_techniques(KernelSpec("dgemm", "transposed")) == {"packing"}
    assert spec_techniques(KernelSpec("dgemm", "intrinsics", simd="avx2")) == {"loop_reorder", "simd"}
    assert spec_techniques(KernelSpec("dgemv", "naive", regblock=(4, 1))) == {"unrolling", "register_blocking"}
    assert spec_techniques(KernelSpec("dot", "naive", unroll=4, regblock=(4, 1))) == {"unrolling", "register_blocking"}
    assert spec_techniques(KernelSpec("transpose", "blocked", tile=(32, 32, 32))) == {"cache_blocking"}


def test_the_smoke_policy_knows_every_problem_the_smoke_configs_ask_for():
    from lab.config import load_config
    from lab.policy.seed_policy.pretrain import SMOKE

    for path in sorted((ROOT / "configs").glob("*smoke*.yaml")):
        for cfg in load_config(path).experiments.values():
            asked = {e.problem for e in cfg.entries}
            assert asked <= set(SMOKE.problems), f"{path.name}: {cfg.name} asks for {asked - set(SMOKE.problems)}"


def test_corpus_mix_and_conditioning():
    corpus = make_corpus(1500, seed=0)
    correct = sum(e.correct for e in corpus) / len(corpus)
    assert 0.75 <= correct <= 0.9
    naive = sum(e.family == "naive" for e in corpus) / len(corpus)
    assert naive > 0.5  # mostly plain code, as a base model writes
    conditioned = [e for e in corpus if e.permitted is not None]
    assert 0.65 <= len(conditioned) / len(corpus) <= 0.85
    respected = sum(set(e.techniques) <= set(e.permitted) for e in conditioned) / len(conditioned)
    assert respected >= 0.85
    assert all(permitted_in(e.prompt) == (frozenset(e.permitted) if e.permitted is not None else None) for e in corpus)
    assert all("```c\n" in e.completion for e in corpus)


def test_each_example_names_its_tier_and_uses_only_its_intrinsics():
    """One policy for every x86-64 tier: the prompt says which CPU, the kernel fits it, and
    every tier has the fast families it can express (AVX2 as well as AVX-512 micro-kernels)."""
    from lab.harness.target import TIERS

    corpus = make_corpus(1500, seed=3)
    above = {"avx512": (), "avx2": ("_mm512", "__m512"), "sse4": ("_mm256", "__m256", "_mm512", "__m512")}
    for example in corpus:
        assert TIERS[example.tier].isa_words in example.prompt
        assert not any(word in example.completion for word in above[example.tier]), example.completion
    tiers = Counter(e.tier for e in corpus)
    assert min(tiers["avx512"], tiers["avx2"]) > 0.35 * len(corpus) and tiers["sse4"] > 0.05 * len(corpus)
    micro = Counter(e.tier for e in corpus if e.family == "microkernel")
    assert micro["avx512"] > 0 and micro["avx2"] > 0 and micro["sse4"] == 0


def test_corpus_is_identical_across_processes():
    """No per-process randomness (such as str hashing) may leak into the corpus."""
    code = (
        "import hashlib; from lab.policy.seed_policy.corpus import make_corpus; "
        "print(hashlib.sha256(''.join(e.completion for e in make_corpus(400, 0)).encode()).hexdigest())"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1


def test_tokenizer_round_trips_c_source():
    from lab.policy.seed_policy.pretrain import train_tokenizer

    corpus = make_corpus(300, seed=1)
    tok = train_tokenizer([e.prompt for e in corpus] + [e.completion for e in corpus], 1024)
    texts = [e.completion for e in make_corpus(30, seed=99)]  # unseen by the tokenizer
    texts += [p.read_text() for p in sorted((KERNELS / "legit").iterdir())]
    texts.append('int main() {\n\tprintf("héllo \\\\ wörld\\n");\r\n  return 0; }  \n\n')
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert tok.decode(ids) == text
    chat = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert chat == "<|user|>\nhi\n<|assistant|>\n"


TINY = dict(
    examples=160,
    vocab_size=512,
    hidden_size=48,
    layers=1,
    heads=2,
    intermediate_size=96,
    epochs=6.0,
    batch_size=16,
    learning_rate=3e-3,
)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from lab.policy.seed_policy.pretrain import SeedConfig, build_seed_model

    out = tmp_path_factory.mktemp("seed") / "tiny"
    record = build_seed_model(out, SeedConfig(**TINY), progress=False)
    return out, record


def test_tiny_training_lowers_loss_and_changes_parameters(tiny_model):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM, set_seed

    from lab.policy.seed_policy.pretrain import SeedConfig, model_config

    out, record = tiny_model
    assert record["loss_last"] < 0.9 * record["loss_first"]
    trained = AutoModelForCausalLM.from_pretrained(out)
    set_seed(0)  # the same initialization the build started from
    initial = LlamaForCausalLM(model_config(AutoTokenizer.from_pretrained(out), SeedConfig(**TINY)))
    changed = [not torch.equal(a, b) for a, b in zip(trained.state_dict().values(), initial.state_dict().values())]
    assert all(changed)
    # The model card names this folder, the problems its corpus covers and the weights it describes.
    from lab.harness.problems import list_problems
    from lab.provenance import policy_sha256

    card = (out / "README.md").read_text()
    problems = TINY.get("problems") or list_problems()
    assert card.startswith(f"# {out.name} — ") and f"({', '.join(problems)})" in card
    assert record["policy_sha256"] == policy_sha256(out) and f"`{record['policy_sha256']}`" in card
    assert (out / "corpus.jsonl").exists() and json.loads((out / "training.json").read_text())["parameters"] > 0


def test_build_is_deterministic_for_a_seed(tiny_model, tmp_path):
    from safetensors.torch import load_file

    from lab.policy.seed_policy.pretrain import SeedConfig, build_seed_model

    out, _ = tiny_model
    again = tmp_path / "again"
    build_seed_model(again, SeedConfig(**TINY), progress=False)
    first, second = load_file(out / "model.safetensors"), load_file(again / "model.safetensors")
    assert first.keys() == second.keys() and all((first[k] == second[k]).all() for k in first)
    assert (out / "corpus.jsonl").read_text() == (again / "corpus.jsonl").read_text()


def test_saved_tokenizer_loads_unchanged_through_autotokenizer(tiny_model):
    """AutoTokenizer must give back our tokenizer, not the architecture's default one."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    from lab.policy.seed_policy.pretrain import encode

    out, _ = tiny_model
    loaded = AutoTokenizer.from_pretrained(out)
    raw = Tokenizer.from_file(str(out / "tokenizer.json"))  # exactly what was trained
    for line in (out / "corpus.jsonl").read_text().splitlines()[:20]:
        text = json.loads(line)["completion"]
        assert loaded(text, add_special_tokens=False)["input_ids"] == raw.encode(text, add_special_tokens=False).ids
    first = json.loads((out / "corpus.jsonl").read_text().splitlines()[0])
    ids = encode(loaded, first["prompt"], first["completion"])["input_ids"]
    assert ids[-1] == loaded.eos_token_id


def test_lab_sample_on_a_model_directory(tiny_model, tmp_path):
    out, _ = tiny_model
    samples = tmp_path / "s.jsonl"
    proc = run_lab(
        "sample",
        "--model",
        str(out),
        "--problem",
        "dgemm",
        "--num",
        "4",
        "--permit",
        "simd,openmp",
        "--max-new-tokens",
        "64",
        "--out",
        str(samples),
    )
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    assert len(rows) == 4 and {r["id"] for r in rows} == {f"dgemm-0-{i}" for i in range(4)}
    assert rows[0]["permitted"] == ["openmp", "simd"] and "Permitted optimization techniques" in rows[0]["prompt"]
    assert all(isinstance(r["completion"], str) for r in rows)
    # An execution model in the prompt, recorded for score-batch; a technique the problem lacks is refused.
    args = ("sample", "--model", str(out), "--problem", "dot", "--num", "2", "--max-new-tokens", "16")
    proc = run_lab(*args, "--mode", "openmp", "--threads", "4", "--out", str(samples))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    assert [(r["id"], r["mode"], r["threads"]) for r in rows] == [(f"dot-openmp-0-{i}", "openmp", 4) for i in range(2)]
    assert "runs with 4 OpenMP threads" in rows[0]["prompt"]
    proc = run_lab(*args, "--mode", "serial", "--permit", "packing", "--out", str(samples))
    assert proc.returncode == 2 and "packing do not apply to dot in serial mode" in proc.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "no/such/dir/model"], "no model at no/such/dir/model"),
        (["--model", "models/missing-policy"], "no model at models/missing-policy"),
        (["--model", "x", "--permit", "magic"], "unknown technique(s) magic"),
    ],
)
def test_lab_sample_errors_are_one_line(args, message, tmp_path):
    proc = run_lab("sample", *args, "--out", str(tmp_path / "o.jsonl"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_the_build_pins_numerics_unless_told_otherwise(monkeypatch):
    """The numerics that make one seed give one set of weights on every AVX2 machine are set
    before PyTorch loads; a variable the user set wins, and `as-given` leaves them all alone."""
    from lab.policy.seed_policy.pretrain import DETERMINISTIC_ENV, NUMERICS_ENV, pin_numerics

    for key in DETERMINISTIC_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE,STRICT")
    pin_numerics()
    assert os.environ["ATEN_CPU_CAPABILITY"] == "avx2" and os.environ["MKL_CBWR"] == "COMPATIBLE,STRICT"
    for key in DETERMINISTIC_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv(NUMERICS_ENV, "as-given")
    pin_numerics()
    assert not any(key in os.environ for key in DETERMINISTIC_ENV)


def test_format_error_causes_are_told_apart():
    from lab.policy.seed_policy.report import format_error_cause

    fence = "```c\n{}\n```"
    none = "no definition of dgemm() found"
    assert format_error_cause(fence.format("void dgemm(int n) {"), True, none) == "truncated"
    assert format_error_cause("void dgemm(int n, const double *A) {}", False, none) == "no code block"
    other = fence.format("void transpose(int n, const double *A, double *B) { }")
    assert format_error_cause(other, False, none) == "another problem's function"
    mismatch = "dgemm() has signature (int) -> void; required: ..."
    assert format_error_cause(fence.format("void dgemm(int n) { }"), False, mismatch) == "other signature"
    partial = fence.format("static void pack_b(int n) { }\n    c00 = x;")
    assert format_error_cause(partial, False, none) == "garbled or partial"
    # A call or a mention of another problem's function is not a definition of it.
    assert format_error_cause(fence.format("x = dot(n, a, b);"), False, none) == "garbled or partial"
    static = "dgemm() is not exported as a function (is it static?)"
    assert format_error_cause(fence.format("static void dgemm(int n) { }"), False, static) == "other format rule"
