"""`lab autotune`: the classical search that RL is compared with.

Sweeps the kernel generator's parameter space (lab.policy.seed_policy.generator.sweep_specs:
families, loop orders, tiles, unrolling, SIMD flavours, register-block shapes,
k-blocking, OpenMP) through the harness at one size, thread count and execution model
(serial: the variants without OpenMP only), and records every variant's rate, the best one
(with its source), and for BLAS problems (dgemm, dgemv) OpenBLAS measured in the same run
on the same machine. The best variant is also the ceiling of what the seed policy can learn
to write.
"""

from __future__ import annotations

from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate_batch
from lab.harness.machine import BLAS_PROBLEMS, machine_summary, openblas_gflops
from lab.harness.problems import load_problem
from lab.policy.seed_policy.generator import render, serial_safe, sweep_specs


def autotune(problem: str = "dgemm", n: int | None = None, threads: int = 2, mode: str = "openmp") -> dict:
    n = n or load_problem(problem).timed_n(mode)
    specs = [s for s in sweep_specs(problem) if mode != "serial" or serial_safe(s)]
    config = MeasureConfig(n=n, threads=threads).for_mode(mode)  # serial: 1 thread
    threads = config.threads
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
    # OpenBLAS has only the BLAS problems; for the others machine.openblas_gflops would time NumPy.
    blas = openblas_gflops(problem, n, threads) if problem in BLAS_PROBLEMS else None
    best = None
    if ok:
        best_row, best_src = max(ok, key=lambda x: x[0]["gflops"])
        fraction = best_row["gflops"] / blas if blas else None
        best = {**best_row, "fraction_of_openblas": fraction, "source": best_src}
    return {
        "problem": problem,
        "n": n,
        "threads": threads,
        "mode": mode,
        "variants": len(rows),
        "ok": len(ok),
        "openblas_gflops": blas,
        "best": best,
        "variants_table": sorted(rows, key=lambda r: -(r["gflops"] or 0)),
        "machine": machine_summary(),
    }
