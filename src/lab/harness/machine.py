"""What this machine is: CPU, compiler, a fingerprint of both, and OpenBLAS's speed on it.

    >>> len(machine_fingerprint())
    12

`machine_summary()` is the few facts every results file records beside its numbers;
`machine_fingerprint()` identifies the compiler and CPU, so cached or stored numbers of
one machine are never taken for another's; `openblas_gflops()` times NumPy's BLAS on a
problem, the reference every "fraction of OpenBLAS" is relative to. The full report
that also times each problem's textbook baseline through the harness is
lab.harness.calibrate.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import socket
import statistics
import time
from functools import cache

import numpy as np
from threadpoolctl import threadpool_limits

from lab.harness.build import compiler_version
from lab.harness.problems import load_problem

#: Problems whose NumPy reference is a single BLAS call: only for these is timing the
#: reference a measure of OpenBLAS (the others' references are plain NumPy, not a yardstick).
BLAS_PROBLEMS = frozenset({"dgemm", "dgemv"})


def cpu_model() -> str:
    try:
        import cpuinfo

        return cpuinfo.get_cpu_info().get("brand_raw", "") or platform.processor()
    except Exception:  # noqa: BLE001 - py-cpuinfo can fail on unusual kernels; the model is informative only
        return platform.processor()


def simd_flags() -> list[str]:
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return []
    flags = set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))
    return sorted(f for f in flags if f.startswith(("avx", "fma", "sse4")))


@cache
def machine_fingerprint() -> str:
    """Compiler and CPU (model and vector extensions), hashed: equal on machines that measure alike."""
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        cpu = next((line for line in open("/proc/cpuinfo").read().splitlines() if line.startswith("model name")), "")
    return hashlib.sha256(f"{compiler_version()}|{cpu}|{','.join(simd_flags())}".encode()).hexdigest()[:12]


def machine_class() -> str:
    """The class of machines whose results are interchangeable: today the fingerprint (compiler,
    CPU model and vector extensions). A machine forced to a lower ISA tier than its own will be
    a class of its own (fingerprint + tier); the native tier adds nothing, so a result recorded
    before tiers existed keeps its class."""
    return machine_fingerprint()


def machine_summary() -> dict:
    """The few facts about this machine that every results file records beside its numbers."""
    return {
        "cpu": cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "compiler": compiler_version(),
        "host": socket.gethostname(),
        "fingerprint": machine_fingerprint(),
        "class": machine_class(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def time_call(fn, min_time_s: float = 0.3, min_reps: int = 5) -> tuple[float, float]:
    """(median, relative spread) of a call's wall time, after one warm-up, as the harness does."""
    fn()
    times: list[float] = []
    total = 0.0  # a running sum: a call of microseconds repeats ~10^5 times, and re-summing is quadratic
    while total < min_time_s or len(times) < min_reps:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        total += times[-1]
    med = statistics.median(times)
    return med, (max(times) - min(times)) / med


def openblas_gflops(problem_name: str, n: int, threads: int) -> float:
    """GFLOPS of NumPy's BLAS on `problem` at size n with `threads` threads."""
    problem = load_problem(problem_name)
    inputs = problem.make_inputs(seed=1, n=n)
    ref = problem.reference
    with threadpool_limits(limits=threads, user_api="blas"):
        fn = {"dgemm": lambda: np.matmul(*inputs), "dgemv": lambda: np.dot(*inputs)}.get(
            problem_name, lambda: ref(1, n)
        )
        med, _ = time_call(fn)
    return problem.flops(n) / med * 1e-9
