"""`lab seed-report`: what the seed policy writes, measured (results/seed_policy.json).

1. Samples `num` completions of the plain DGEMM prompt at temperature 1.0 and scores
   them with the harness: status mix, ok rate, distinct technique sets among ok
   samples (lab.techniques.detect), median and best ok GFLOPS, and OpenBLAS on the
   same machine, size and thread count.
2. Prompt conditioning: the share of samples that use OpenMP under four prompts:
   every technique permitted, all but OpenMP, only OpenMP, and none.
3. Held-out wording: the same DGEMM prompt in its four held-out phrasings (never in the
   corpus): status mix, ok rate, median and best ok GFLOPS, why the `format_error` samples
   have no usable dgemm() (`format_error_cause`), and the fast family: how often the policy
   attempts the packed, register-blocked micro-kernel with the intrinsics of the tier the
   prompt names (lab.harness.target), and how often such an attempt is ok.
4. Novelty: the share of sampled completions whose code appears verbatim in the
   training corpus.
5. Speed: seconds to sample 64 completions; the build time from training.json.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

from lab.config import MeasureConfig
from lab.harness import target
from lab.harness.evaluate import evaluate_batch
from lab.harness.extract import code_blocks, defines, source_or_none
from lab.harness.machine import openblas_gflops
from lab.harness.problems import list_problems, load_problem
from lab.policy.sample import load_policy, sample_records
from lab.techniques import TECHNIQUES, detect

#: The intrinsics' prefixes of each tier's vector registers (the micro-kernel's accumulators).
_TIER_VECTORS = {"avx512": "_mm512_", "avx2": "_mm256_", "sse4": "_mm_", "neon": "vld1q_"}


def microkernel_attempt(completion: str, tier: str | None = None) -> bool:
    """Whether a DGEMM completion attempts the fast family at `tier` (None: the current one):
    packing and register blocking in its text (lab.techniques.detect reads the code, compiling or
    not) with that tier's vector intrinsics."""
    code = "\n".join(code_blocks(completion)) or completion
    found = detect(code)
    return {"packing", "register_blocking"} <= found and _TIER_VECTORS[tier or target.current()] in code


def format_error_cause(completion: str, truncated: bool, detail: str, problem: str = "dgemm") -> str:
    """Why a `format_error` completion (`detail`: the harness's reason) has no usable definition
    of `problem`'s function: cut off at the token limit, no fenced code, the function with
    another signature, a definition of another of the lab's problems' functions instead, another
    format rule broken (a static function, a size limit), or garbled or partial code."""
    if truncated:
        return "truncated"
    if "```" not in completion:
        return "no code block"
    if "has signature" in detail:  # extract_source's own words for a definition that does not match
        return "other signature"
    code = "\n".join(code_blocks(completion))
    if any(defines(code, load_problem(p).function) for p in list_problems() if p != problem):
        return "another problem's function"
    if not detail.startswith("no definition"):
        return "other format rule"
    return "garbled or partial"


def seed_report(model_dir: str, num: int = 256, seed: int = 0, threads: int = 1) -> dict:
    problem = load_problem("dgemm")
    policy = load_policy(model_dir)
    plain, _ = sample_records(model_dir, "dgemm", num, None, 1.0, seed, policy=policy)
    speed_records, speed_s = sample_records(model_dir, "dgemm", 64, None, 1.0, seed + 1, policy=policy)
    config = MeasureConfig(threads=threads)
    results = evaluate_batch([r["completion"] for r in plain], "dgemm", config, progress=True)
    ok = [(rec, res) for rec, res in zip(plain, results) if res.status == "ok"]
    gflops = sorted(res.gflops for _, res in ok)
    combos = Counter(tuple(sorted(detect(source_or_none(rec["completion"], problem.signature) or ""))) for rec, _ in ok)

    everything = frozenset(TECHNIQUES)
    share_omp = {}
    for name, permitted in (
        ("all_permitted", everything),
        ("all_but_openmp", everything - {"openmp"}),
        ("only_openmp", frozenset({"openmp"})),
        ("none_permitted", frozenset()),
    ):
        recs, _ = sample_records(model_dir, "dgemm", num, permitted, 1.0, seed + 2, policy=policy)
        share_omp[name] = sum("openmp" in detect(r["completion"]) for r in recs) / len(recs)

    # The same prompt in the held-out wordings (problem.toml's eval_prompts), which the corpus
    # never contains: how much of the policy's skill survives a change of wording.
    held, _ = sample_records(
        model_dir, "dgemm", num, None, 1.0, seed + 3, policy=policy, split="eval", phrasings=len(problem.eval_prompts)
    )
    held_results = evaluate_batch([r["completion"] for r in held], "dgemm", config, progress=True)
    held_ok = sorted(r.gflops for r in held_results if r.status == "ok")
    attempts = [res for rec, res in zip(held, held_results) if microkernel_attempt(rec["completion"])]
    causes = Counter(
        format_error_cause(rec["completion"], rec["truncated"], res.detail or "")
        for rec, res in zip(held, held_results)
        if res.status == "format_error"
    )

    corpus_path = Path(model_dir) / "corpus.jsonl"
    corpus_code = set()
    if corpus_path.exists():
        for line in corpus_path.open():
            ex = json.loads(line)
            for block in code_blocks(ex["completion"]):
                corpus_code.add(block.strip())
    codes = [source_or_none(r["completion"], problem.signature) for r in plain]
    verbatim = sum(c is not None and c.strip() in corpus_code for c in codes) / len(codes)

    openblas = openblas_gflops("dgemm", problem.default_n, threads)
    training = (
        json.loads((Path(model_dir) / "training.json").read_text())
        if (Path(model_dir) / "training.json").exists()
        else {}
    )
    median_ok = statistics.median(gflops) if gflops else None
    return {
        "model": model_dir,
        "samples": num,
        "temperature": 1.0,
        "seed": seed,
        "n": problem.default_n,
        "threads": threads,
        "status_counts": dict(Counter(r.status for r in results)),
        "ok_rate": len(ok) / num,
        "distinct_technique_sets_ok": len(combos),
        "technique_sets_ok": {"+".join(k) or "none": v for k, v in combos.most_common()},
        "median_gflops_ok": median_ok,
        "best_gflops_ok": gflops[-1] if gflops else None,
        "best_over_median": (gflops[-1] / median_ok) if gflops else None,
        "openblas_gflops": openblas,
        "median_over_openblas": (median_ok / openblas) if gflops else None,
        "held_out": {
            "samples": num,
            "status_counts": dict(Counter(r.status for r in held_results)),
            "ok_rate": len(held_ok) / num,
            "median_gflops_ok": statistics.median(held_ok) if held_ok else None,
            "best_gflops_ok": held_ok[-1] if held_ok else None,
            "format_error_causes": dict(causes.most_common()),
            "microkernel": {
                "attempts": len(attempts),
                "attempt_share": len(attempts) / num,
                "ok": sum(r.status == "ok" for r in attempts),
                "ok_share_of_attempts": (sum(r.status == "ok" for r in attempts) / len(attempts)) if attempts else None,
                "status_counts": dict(Counter(r.status for r in attempts)),
                "best_gflops_ok": max((r.gflops for r in attempts if r.status == "ok"), default=None),
            },
        },
        "target": target.current(),
        "openmp_share": share_omp,
        "verbatim_share": verbatim,
        "sample_64_s": round(speed_s, 2),
        "build_s": training.get("build_s"),
        "targets": {
            "ok_rate": "0.4..0.8",
            "held_out.ok_rate": ">= 0.3",
            "held_out.microkernel.attempt_share": ">= 0.05",
            "held_out.microkernel.ok_share_of_attempts": ">= 0.2",
            "distinct_technique_sets_ok": ">= 5",
            "best_over_median": ">= 5",
            "verbatim_share": "< 0.5",
            "sample_64_s": "<= 30",
            "build_s": "<= 600",
        },
    }
