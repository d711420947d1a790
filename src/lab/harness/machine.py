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
import subprocess
import sys
import time
from functools import cache

import numpy as np
from threadpoolctl import threadpool_limits

from lab.harness import target
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
    """The CPU's vector extensions (part of the fingerprint)."""
    return sorted(f for f in target.cpu_flags() if f.startswith(("avx", "fma", "sse4")))


@cache
def machine_fingerprint() -> str:
    """Compiler and CPU (model and vector extensions), hashed: equal on machines that measure alike."""
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        cpu = next((line for line in open("/proc/cpuinfo").read().splitlines() if line.startswith("model name")), "")
    return hashlib.sha256(f"{compiler_version()}|{cpu}|{','.join(simd_flags())}".encode()).hexdigest()[:12]


def machine_class() -> str:
    """The class of machines whose results are interchangeable: the fingerprint (compiler, CPU
    model and vector extensions) at the machine's own ISA tier, and `<fingerprint>-<tier>` when
    a lower tier is forced (lab.harness.target): the native tier adds nothing, so a result
    recorded before tiers existed keeps its class."""
    return machine_fingerprint() if not target.forced() else f"{machine_fingerprint()}-{target.current()}"


def machine_summary() -> dict:
    """The few facts about this machine that every results file records beside its numbers."""
    return {
        "cpu": cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "compiler": compiler_version(),
        "host": socket.gethostname(),
        "fingerprint": machine_fingerprint(),
        "class": machine_class(),
        "target": target.current(),
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
    """GFLOPS of NumPy's BLAS on `problem` at size n with `threads` threads, at the tier this
    process works at: here at the machine's own tier; under a forced tier in a process of its
    own, whose OpenBLAS is told that tier's core type (OPENBLAS_CORETYPE is read once, as NumPy
    loads OpenBLAS, so it cannot be changed in a process that has loaded it)."""
    if target.forced():
        return _openblas_at_tier(problem_name, n, threads)
    return _openblas_here(problem_name, n, threads)


def _openblas_at_tier(problem_name: str, n: int, threads: int) -> float:
    coretype = target.tier().openblas_coretype
    code = (
        "from threadpoolctl import threadpool_info; from lab.harness.machine import _openblas_here; "
        "arch = {i.get('architecture', '') for i in threadpool_info() if i.get('internal_api') == 'openblas'}; "
        f"print(_openblas_here({problem_name!r}, {n}, {threads}), ','.join(sorted(arch)))"
    )
    env = {**os.environ, "OPENBLAS_CORETYPE": coretype}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"timing OpenBLAS at tier {target.current()} failed: {run.stderr.strip()[-300:]}")
    gflops, _, arch = run.stdout.strip().splitlines()[-1].partition(" ")
    if arch and arch.lower() != coretype.lower():
        # An OpenBLAS built for one core only (not DYNAMIC_ARCH) ignores the core type: the reference
        # would be of another tier than the kernels, which the fraction of OpenBLAS must not hide.
        raise RuntimeError(f"OpenBLAS ran its {arch} kernels, not {coretype}'s, under tier {target.current()}")
    return float(gflops)


def _openblas_here(problem_name: str, n: int, threads: int) -> float:
    problem = load_problem(problem_name)
    inputs = problem.make_inputs(seed=1, n=n)
    ref = problem.reference
    with threadpool_limits(limits=threads, user_api="blas"):
        fn = {"dgemm": lambda: np.matmul(*inputs), "dgemv": lambda: np.dot(*inputs)}.get(
            problem_name, lambda: ref(1, n)
        )
        med, _ = time_call(fn)
    return problem.flops(n) / med * 1e-9
