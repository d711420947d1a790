"""`lab calibrate`: what this machine can do, measured, for results/machine.json.

Records the CPU, core count, compiler, the BLAS behind NumPy, and GFLOPS of
OpenBLAS (through NumPy, thread count set with threadpoolctl; DGEMM and DGEMV,
whose references are BLAS calls) and of each problem's textbook baseline (timed by
the harness itself), at the problems' default sizes and at 1 and all-core thread
counts, and at the same thread counts the memory hierarchy's best GB/s per level with
the cache bytes those CPUs hold (the plausibility check's bandwidth bound,
lab.harness.plausibility). Every figure in results/ that
is relative to "OpenBLAS" or "the baseline" refers to a file like this one,
written on the machine that produced it.
"""

from __future__ import annotations

import datetime
import os
import platform
import socket

import numpy as np
from threadpoolctl import threadpool_info

from lab import paths
from lab.config import MeasureConfig
from lab.harness import plausibility, target
from lab.harness.build import compiler_version
from lab.harness.evaluate import evaluate
from lab.harness.machine import (
    BLAS_PROBLEMS,
    cpu_model,
    machine_class,
    machine_fingerprint,
    openblas_gflops,
    simd_flags,
)
from lab.harness.problems import list_problems, load_problem
from lab.harness.sandbox import isolation_level


def calibrate(threads: list[int] | None = None, n: int | None = None) -> dict:
    cores = len(os.sched_getaffinity(0))
    threads = sorted(set(threads or [1, cores]))
    blas = [
        {k: v for k, v in info.items() if k in ("internal_api", "version", "architecture", "num_threads")}
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    measurements = []
    for name in list_problems():
        size = n or load_problem(name).default_n
        naive = paths.harness_dir() / name / "examples" / "naive.c"
        baseline = None
        if naive.exists():
            res = evaluate(naive.read_text(), name, MeasureConfig(n=size, threads=1, min_time_s=0.3), cache=False)
            baseline = res.baseline_gflops if res.status == "ok" else None
        for t in threads:
            measurements.append(
                {
                    "problem": name,
                    "n": size,
                    "threads": t,
                    "openblas_gflops": round(openblas_gflops(name, size, t), 3) if name in BLAS_PROBLEMS else None,
                    "baseline_gflops": round(baseline, 3) if baseline else None,
                }
            )
    # The memory hierarchy per thread count: GB/s per level and the cache bytes the threads' CPUs hold.
    bandwidth = {
        f"t{t}": {
            "gbs": {level: round(v, 3) for level, v in plausibility.bandwidth_gbs(t).items()},
            "cache_bytes": {level: int(v) for level, v in plausibility.cache_bytes(t).items()},
        }
        for t in threads
    }
    big = 1024
    peak = openblas_gflops("dgemm", big, cores)
    summary = {
        m["problem"] + f"_n{m['n']}_t{m['threads']}": {
            "openblas_gflops": m["openblas_gflops"],
            "baseline_gflops": m["baseline_gflops"],
        }
        for m in measurements
    }
    summary[f"openblas_dgemm_n{big}_t{cores}_gflops"] = round(peak, 2)
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "fingerprint": machine_fingerprint(),
        "machine_class": machine_class(),
        "target": target.current(),
        "isolation": isolation_level(),
        "cpu_model": cpu_model(),
        "cpu_flags": simd_flags(),
        "machine": platform.machine(),
        "cores": cores,
        "compiler": compiler_version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
        "openblas_env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
        | ({"OPENBLAS_CORETYPE": target.tier().openblas_coretype} if target.forced() else {}),
        "measurements": measurements,
        "openblas_peak": {"problem": "dgemm", "n": big, "threads": cores, "gflops": round(peak, 3)},
        "bandwidth": bandwidth,
        "summary": summary,
    }
