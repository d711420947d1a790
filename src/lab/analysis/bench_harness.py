"""`make bench-harness`: throughput, parallel efficiency, cache cost and timing stability.

    python -m lab.analysis.bench_harness [--completions 64] [--duplicates 0.25] [--repeats 10] [--out FILE]

1. Scores a batch of completions (legitimate kernels of tests/kernels/legit and
   harness/dgemm/examples, made
   distinct by a comment, plus a share of exact duplicates) with a cold cache and
   reports candidates/s and efficiency = (sum of fresh compile+run time / cores) / wall.
2. Scores every duplicate again through `evaluate` (a cache hit) and reports its
   cost relative to a fresh evaluation.
3. Scores one kernel `repeats` times with the cache off and reports the coefficient
   of variation of its GFLOPS.
Prints a table and writes the numbers (with the machine) as JSON.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time

from lab import paths
from lab.config import MeasureConfig
from lab.files import write_json
from lab.harness.evaluate import evaluate, evaluate_batch
from lab.harness.machine import machine_summary


def _corpus() -> list[str]:
    root = paths.repo_root()
    if root is None:
        raise SystemExit("bench-harness scores the kernels of a source checkout (tests/kernels); run it from one")
    files = sorted((root / "tests" / "kernels" / "legit").glob("*")) + sorted(
        (paths.harness_dir() / "dgemm" / "examples").glob("*")
    )
    texts = []
    for f in files:
        first = f.read_text().splitlines()[0]
        if "problem: dgemv" not in first and f.suffix in (".c", ".md"):
            texts.append(f.read_text())
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--completions", type=int, default=64)
    parser.add_argument("--duplicates", type=float, default=0.25, help="share of exact duplicates in the batch")
    parser.add_argument("--repeats", type=int, default=10, help="scorings of one kernel for the CV")
    parser.add_argument("--out", default="results/bench_harness.json")
    args = parser.parse_args(argv)

    # A cold, private cache: every unique completion is measured for real.
    os.environ["LAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="lab-bench-cache-")

    rng = random.Random(0)
    corpus = _corpus()
    n_dup = int(round(args.completions * args.duplicates))
    unique = [f"{corpus[i % len(corpus)]}\n/* variant {i} */\n" for i in range(args.completions - n_dup)]
    batch = unique + [rng.choice(unique) for _ in range(n_dup)]
    rng.shuffle(batch)
    cores = len(os.sched_getaffinity(0))
    config = MeasureConfig()

    t0 = time.monotonic()
    results = evaluate_batch(batch, "dgemm", config)
    wall = time.monotonic() - t0
    fresh = [r for r in results if not r.cached]
    busy = sum(r.compile_s + r.run_s for r in fresh)
    efficiency = busy / cores / wall
    statuses = {s: sum(r.status == s for r in results) for s in {r.status for r in results}}

    dup_texts = [t for t in batch if batch.count(t) > 1][:n_dup] or unique[:n_dup]
    t0 = time.monotonic()
    for text in dup_texts:
        assert evaluate(text, "dgemm", config).cached
    cached_cost = (time.monotonic() - t0) / max(1, len(dup_texts))
    fresh_cost = busy / max(1, len(fresh))

    repeat_path = paths.harness_dir() / "dgemm" / "examples" / "packed_avx512_omp.c"
    kernel = repeat_path.read_text()
    gflops = []
    for _ in range(args.repeats):
        r = evaluate(kernel, "dgemm", config, cache=False)
        gflops.append(r.gflops if r.status == "ok" else float("nan"))
    cv = statistics.pstdev(gflops) / statistics.mean(gflops)

    report = {
        "machine": machine_summary(),
        "completions": len(batch),
        "unique": len(unique),
        "duplicates": n_dup,
        "statuses": statuses,
        "wall_s": round(wall, 2),
        "candidates_per_s": round(len(batch) / wall, 2),
        "fresh_compile_plus_run_s": round(busy, 2),
        "efficiency": round(efficiency, 3),
        "fresh_eval_s": round(fresh_cost, 3),
        "cached_eval_s": round(cached_cost, 5),
        "cached_over_fresh": round(cached_cost / fresh_cost, 4),
        "repeat_kernel": repeat_path.name,
        "repeat_gflops": [round(g, 2) for g in gflops],
        "gflops_cv": round(cv, 4),
        "targets": {"efficiency": ">= 0.85", "cached_over_fresh": "< 0.02", "gflops_cv": "<= 0.05"},
    }
    write_json(args.out, report)
    print(f"{'completions':28s} {len(batch)} ({len(unique)} unique, {n_dup} duplicates) on {cores} cores")
    print(f"{'statuses':28s} {statuses}")
    print(f"{'wall time':28s} {wall:.1f} s")
    print(f"{'candidates/s':28s} {len(batch) / wall:.2f}")
    print(f"{'efficiency':28s} {efficiency:.3f}   (target >= 0.85)")
    print(
        f"{'cached / fresh evaluation':28s} {cached_cost * 1e3:.1f} ms / {fresh_cost * 1e3:.0f} ms = "
        f"{cached_cost / fresh_cost:.2%}   (target < 2%)"
    )
    print(
        f"{'GFLOPS CV over ' + str(args.repeats) + ' runs':28s} {cv:.2%}   (target <= 5%)  "
        f"median {statistics.median(gflops):.1f} GFLOPS"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
