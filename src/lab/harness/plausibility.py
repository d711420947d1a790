"""Plausibility: numbers the checks accept but this machine cannot produce are `suspicious`.

Two calibrations, each measured once per machine fingerprint and kept in
<cache_dir>/calibration/<fingerprint>.json:

- the floating-point peak of one core (harness/peak.c: fused multiply-adds on the
  widest vectors, enough accumulators to hide latency), measured while every CPU slot
  of this machine is held, so no evaluation runs beside it;
- each problem's textbook baseline at each timed size (`measure --baseline-only`).

`violation(result, problem, config)` then says why an `ok` cannot be believed:
GFLOPS above PEAK_MARGIN x peak x threads (problems measured in GFLOP/s), or a baseline more than BASELINE_FACTOR
away from its calibration (the speedup would rest on a baseline the machine did not
really run at). Neither should ever fire for honest code; both are the last line
behind the process split (see the README's threat model).

    >>> PEAK_MARGIN, BASELINE_FACTOR
    (1.5, 3.0)
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

from lab import paths
from lab.config import MeasureConfig
from lab.files import write_json
from lab.harness import machine, sandbox
from lab.harness.build import BuildConfig, measurer
from lab.harness.machine import machine_fingerprint
from lab.harness.problems import Problem

#: An ok kernel may reach at most this multiple of the calibrated peak per granted CPU
#: (turbo and measurement noise; real kernels stay below 1.0).
PEAK_MARGIN = 1.5
#: A result's baseline may differ from the calibrated one by at most this factor either way.
BASELINE_FACTOR = 3.0
#: Runs of a baseline's calibration at most (fewer once two agree within CALIBRATION_AGREE); the
#: fastest counts.
CALIBRATION_RUNS = 3
CALIBRATION_AGREE = 0.05


def _path() -> Path:
    return paths.cache_dir() / "calibration" / f"{machine_fingerprint()}.json"


def _load() -> dict:
    with contextlib.suppress(OSError, ValueError):
        return json.loads(_path().read_text())
    return {}


def _store(key: str, value: float) -> None:
    data = _load()
    data[key] = value
    write_json(_path(), data)


@contextlib.contextmanager
def _whole_machine():
    """Hold every CPU slot of this machine (one at a time, in order, so two callers cannot deadlock)."""
    with contextlib.ExitStack() as stack:
        for slot in range(len(os.sched_getaffinity(0))):
            stack.enter_context(sandbox.core_slot(1, preferred=slot, exact=True))
        yield


def _calibrated(key: str, measure) -> float:
    """The calibration `key` of this machine: from the file, or measured by `measure()` while every
    CPU slot is held and stored. The file is read again once the slots are held, so processes that
    ask at once (the workers of a pool) measure it once."""
    cached = _load().get(key)
    if cached:
        return float(cached)
    with _whole_machine():
        cached = _load().get(key)
        if cached:
            return float(cached)
        value = measure(min(os.sched_getaffinity(0)))
        _store(key, value)
    return value


def peak_gflops_per_core() -> float:
    """This machine's calibrated floating-point peak of one core, in GFLOP/s."""

    def measure(cpu: int) -> float:
        with tempfile.TemporaryDirectory(prefix="lab-peak-") as tmp:
            exe = Path(tmp) / "peak"
            cc = BuildConfig()
            argv = [cc.cc, "-O2", "-march=native", str(paths.harness_dir() / "peak.c"), "-o", str(exe)]
            subprocess.run(argv, check=True)
            out = subprocess.run(
                ["taskset", "-c", str(cpu), str(exe)], capture_output=True, text=True, check=True, timeout=60
            ).stdout
        return float(out.split()[1])

    return _calibrated("peak_gflops_per_core", measure)


def _two_agree(runs: list[float]) -> bool:
    """Whether two of the calibration runs so far lie within CALIBRATION_AGREE of each other.

    >>> _two_agree([2.0]), _two_agree([2.0, 1.0]), _two_agree([2.0, 1.0, 1.96])
    (False, False, True)
    """
    best = sorted(runs, reverse=True)
    return any(b >= a * (1 - CALIBRATION_AGREE) for a, b in zip(best, best[1:]))


def baseline_gflops(problem: Problem, n: int, config: MeasureConfig) -> float:
    """The calibrated GFLOPS of `problem`'s textbook baseline at size n (serial, like every baseline).
    Timed with the whole machine held, like the peak: a neighbour's run would share the caches and
    the memory bandwidth, and a calibration taken under load would excuse slow baselines later."""

    def measure(cpu: int) -> float:
        exe = measurer(problem, BuildConfig())
        argv = [str(exe), "--baseline-only", "1", "--n", str(n), "--odd-n", str(n), "--result-fd", "1", "--nonce", "-"]
        argv += ["--baseline-min-time", repr(max(config.baseline_min_time_s, 0.2)), "--min-reps", "5"]
        runs: list[float] = []
        # The best of a few runs: the slots are held, but a process outside the lab (a trainer on
        # the same CPUs) can still slow one run, and a low calibration would make honest runs
        # suspicious. Two runs that agree were not slowed apart, so a third adds nothing.
        while len(runs) < CALIBRATION_RUNS and not _two_agree(runs):
            out = subprocess.run(
                ["taskset", "-c", str(cpu), *argv], capture_output=True, text=True, check=True, timeout=120
            ).stdout
            report = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
            runs.append(float(report["baseline_gflops"]))
        return max(runs)

    return _calibrated(f"baseline/{problem.name}/{problem.fingerprint()}/{n}", measure)


def openblas_gflops(problem: str, n: int, threads: int) -> float:
    """This machine's calibrated OpenBLAS GFLOP/s on `problem` (dgemm or dgemv) at size n on
    `threads` threads, timed once per machine while every CPU slot is held."""
    return _calibrated(f"openblas/{problem}/{n}/t{threads}", lambda cpu: machine.openblas_gflops(problem, n, threads))


def violation(
    gflops: float, threads: int, baseline: float | None, problem: Problem, n: int, config: MeasureConfig
) -> str:
    """Why an `ok` result's numbers cannot be believed on this machine, or ''. The peak bound
    applies to problems measured in GFLOP/s; a rate in GB/s or Gop/s has no calibrated
    ceiling here (cache bandwidth at small n can be far above any FLOP figure), so only the
    baseline check judges it."""
    bound = PEAK_MARGIN * peak_gflops_per_core() * threads
    if problem.unit == "GFLOP/s" and gflops > bound:
        return (
            f"{gflops:.1f} GFLOPS exceeds what {threads} CPU(s) of this machine can do "
            f"({PEAK_MARGIN:g} x calibrated peak = {bound:.1f})"
        )
    if baseline is not None:
        expected = baseline_gflops(problem, n, config)
        if not expected / BASELINE_FACTOR <= baseline <= expected * BASELINE_FACTOR:
            return (
                f"the baseline ran at {baseline:.3g} GFLOPS, more than {BASELINE_FACTOR:g}x away from "
                f"its calibration ({expected:.3g}): the speedup cannot be trusted"
            )
    return ""
