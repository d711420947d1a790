"""`lab autotune`: the classical search that RL is compared with.

Sweeps the kernel generator's parameter space (lab.policy.seed_policy.generator.sweep_specs:
families, loop orders, tiles, unrolling, SIMD flavours, register-block shapes,
k-blocking, OpenMP) through the harness at one size and thread count, and records
every variant's GFLOPS, the best one (with its source), and OpenBLAS measured in
the same run on the same machine. The best variant is also the ceiling of what the
seed policy can learn to write.
"""

from __future__ import annotations

from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate_batch
from lab.harness.machine import machine_summary, openblas_gflops
from lab.harness.problems import load_problem
from lab.policy.seed_policy.generator import render, sweep_specs


def autotune(problem: str = "dgemm", n: int | None = None, threads: int = 2) -> dict:
    n = n or load_problem(problem).default_n
    specs = sweep_specs(problem)
    config = MeasureConfig(n=n, threads=threads)
    sources = [render(s) for s in specs]
    results = evaluate_batch(sources, problem, config, cache=False)
    rows = [
        {
            "family": s.family,
            "order": s.order,
            "tile": s.tile,
            "unroll": s.unroll,
            "simd": s.simd,
            "omp": s.omp,
            "regblock": s.regblock,
            "kc": s.kc,
            "techniques": sorted(s.techniques()),
            "status": r.status,
            "gflops": r.gflops,
            "detail": r.detail,
        }
        for s, r in zip(specs, results)
    ]
    ok = [(row, src) for row, src in zip(rows, sources) if row["status"] == "ok"]
    blas = openblas_gflops(problem, n, threads)
    best = None
    if ok:
        best_row, best_src = max(ok, key=lambda x: x[0]["gflops"])
        best = {**best_row, "fraction_of_openblas": best_row["gflops"] / blas, "source": best_src}
    return {
        "problem": problem,
        "n": n,
        "threads": threads,
        "variants": len(rows),
        "ok": len(ok),
        "openblas_gflops": blas,
        "best": best,
        "variants_table": sorted(rows, key=lambda r: -(r["gflops"] or 0)),
        "machine": machine_summary(),
    }
