"""`lab calibrate`: what this machine can do, measured, for results/machine.json.

Records the CPU, core count, compiler, the BLAS behind NumPy, and GFLOPS of
OpenBLAS (through NumPy, thread count set with threadpoolctl) and of each
problem's textbook baseline (timed by the harness itself), at the problems'
default sizes and at 1 and all-core thread counts. Every figure in results/ that
is relative to "OpenBLAS" or "the baseline" refers to a file like this one,
written on the machine that produced it.
"""

from __future__ import annotations

import datetime
import os
import platform
import socket
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from lab.build import compiler_version
from lab.evaluate import EvalConfig, evaluate
from lab.problems import HARNESS_DIR, list_problems, load_problem


def _cpu_model() -> str:
    try:
        import cpuinfo

        return cpuinfo.get_cpu_info().get("brand_raw", "") or platform.processor()
    except Exception:  # noqa: BLE001 - py-cpuinfo can fail on unusual kernels; the model is informative only
        return platform.processor()


def _simd_flags() -> list[str]:
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return []
    flags = set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))
    return sorted(f for f in flags if f.startswith(("avx", "fma", "sse4")))


def machine_summary() -> dict:
    """The few facts about this machine that every results file records beside its numbers."""
    return {"cpu": _cpu_model(), "cores": len(os.sched_getaffinity(0)), "compiler": compiler_version(),
            "host": socket.gethostname(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def time_call(fn, min_time_s: float = 0.3, min_reps: int = 5) -> tuple[float, float]:
    """(median, relative spread) of a call's wall time, after one warm-up, as the harness does."""
    fn()
    times: list[float] = []
    while sum(times) < min_time_s or len(times) < min_reps:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return med, (max(times) - min(times)) / med


def openblas_gflops(problem_name: str, n: int, threads: int) -> float:
    """GFLOPS of NumPy's BLAS on `problem` at size n with `threads` threads."""
    problem = load_problem(problem_name)
    inputs = problem.make_inputs(seed=1, n=n)
    ref = problem.reference
    with threadpool_limits(limits=threads, user_api="blas"):
        fn = {"dgemm": lambda: np.matmul(*inputs), "dgemv": lambda: np.dot(*inputs)}.get(
            problem_name, lambda: ref(1, n))
        med, _ = time_call(fn)
    return problem.flops(n) / med * 1e-9


def calibrate(threads: list[int] | None = None, n: int | None = None) -> dict:
    cores = len(os.sched_getaffinity(0))
    threads = sorted(set(threads or [1, cores]))
    blas = [{k: v for k, v in info.items() if k in ("internal_api", "version", "architecture", "num_threads")}
            for info in threadpool_info() if info.get("user_api") == "blas"]
    measurements = []
    for name in list_problems():
        size = n or load_problem(name).default_n
        naive = HARNESS_DIR / name / "examples" / "naive.c"
        baseline = None
        if naive.exists():
            res = evaluate(naive.read_text(), name, EvalConfig(n=size, threads=1, min_time_s=0.3, cache=False))
            baseline = res.baseline_gflops if res.status == "ok" else None
        for t in threads:
            measurements.append({"problem": name, "n": size, "threads": t,
                                 "openblas_gflops": round(openblas_gflops(name, size, t), 3),
                                 "baseline_gflops": round(baseline, 3) if baseline else None})
    big = 1024
    peak = openblas_gflops("dgemm", big, cores)
    summary = {m["problem"] + f"_n{m['n']}_t{m['threads']}": {"openblas_gflops": m["openblas_gflops"],
                                                            "baseline_gflops": m["baseline_gflops"]}
               for m in measurements}
    summary[f"openblas_dgemm_n{big}_t{cores}_gflops"] = round(peak, 2)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "cpu_flags": _simd_flags(),
        "machine": platform.machine(),
        "cores": cores,
        "compiler": compiler_version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
        "openblas_env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ},
        "measurements": measurements,
        "openblas_peak": {"problem": "dgemm", "n": big, "threads": cores, "gflops": round(peak, 3)},
        "summary": summary,
    }
