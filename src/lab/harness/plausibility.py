"""Plausibility: numbers the checks accept but this machine cannot produce are `suspicious`.

Three calibrations, each measured once per machine fingerprint, while every CPU slot of this
machine is held (so no evaluation runs beside it), and kept in
<cache_dir>/calibration/<fingerprint>.json:

- the floating-point peak of one core (harness/peak.c: fused multiply-adds on the
  widest vectors, enough accumulators to hide latency);
- per thread count, the best data rate at working sets that sit in each level of the
  memory hierarchy, L1, L2, L3 and DRAM (harness/bandwidth.c: a read-only reduction and a
  triad, with nontemporal stores too for L3 and DRAM; threads pinned one per CPU), with
  the cache capacities those CPUs hold (sysfs): keys `bandwidth/<level>/t<threads>` (GB/s)
  and `cache/<level>/t<threads>` (bytes);
- each problem's textbook baseline at each timed size (`measure --baseline-only`).

`violation(...)` then says why an `ok` cannot be believed:

- a rate above PEAK_MARGIN x peak x threads (problems measured in GFLOP/s);
- a call faster than the memory hierarchy allows (every problem and unit): the problem's
  `bytes` (problem.toml: what one call must move at least) served greedily, the fastest
  level holding as much of the call's working set (its arrays) as fits (L1 and L2 once per
  granted CPU, a shared L3 once) at that level's calibrated rate for the thread count,
  gives the least time of a call (`fastest_call_s`); the rate implies a time
  (flops(n) / rate), and one shorter than that least time / BANDWIDTH_MARGIN is refused;
- a baseline more than BASELINE_FACTOR away from its calibration (the speedup would rest
  on a baseline the machine did not really run at).

None should ever fire for honest code; all are the last line behind the process split
(see the README's threat model).

    >>> PEAK_MARGIN, BANDWIDTH_MARGIN, BASELINE_FACTOR
    (1.5, 1.5, 3.0)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from lab import paths
from lab.config import MeasureConfig
from lab.files import write_json
from lab.harness import machine, sandbox, target
from lab.harness.build import BuildConfig, measurer
from lab.harness.machine import machine_class
from lab.harness.problems import Problem

#: An ok kernel may reach at most this multiple of the calibrated peak per granted CPU
#: (turbo and measurement noise; real kernels stay below 1.0).
PEAK_MARGIN = 1.5
#: An ok call may be at most this much faster than the memory hierarchy's calibrated least time for
#: its bytes. That least time is already optimistic: it puts the working set in the fastest levels
#: (a call's inputs were just written by the measurer, so they rarely start in L1), serves every
#: byte at the best rate of STREAM-like loops, and for t threads at no less than t times one
#: thread's rate (2-thread calibrations on the shared 2-vCPU virtual machine this was built on
#: swung by 2x between runs, a neighbour or the other vCPU's host core busy; one thread's, best of
#: rounds, by about +-10%). The margin covers what noise remains and kernels that stream a little
#: better than those loops: there, the honest examples stayed at or below 0.82 of the bound (a
#: DRAM-bound scan with nontemporal stores), so 1.5 leaves them 1.8x of room. Cheating shows as
#: far more (a result kept from another call moves nothing: many times the rate).
BANDWIDTH_MARGIN = 1.5
#: A result's baseline may differ from the calibrated one by at most this factor either way.
BASELINE_FACTOR = 3.0
#: Runs of a baseline's calibration at most (fewer once two agree within CALIBRATION_AGREE); the
#: fastest counts.
CALIBRATION_RUNS = 3
CALIBRATION_AGREE = 0.05
#: Bandwidth runs agree within this (their rates vary more than a baseline's between runs).
BANDWIDTH_AGREE = 0.10


def _path() -> Path:
    return paths.cache_dir() / "calibration" / f"{machine_class()}.json"


def _read(path: Path) -> dict:
    """The calibration file's values, read and parsed ({} if it is missing or unreadable)."""
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text())
    return {}


#: path -> ((inode, mtime_ns, size) of the file when it was read, its values). One evaluation asks
#: for its calibrations about ten times (before it measures and again for the verdict's bounds);
#: each reads the same file, which changes only when a calibration is added (rarely).
_loaded: dict[Path, tuple[tuple[int, int, int], dict]] = {}


def _load() -> dict:
    """The calibration file's values (a copy, which the caller may change), read again only when the
    file has changed since: write_json replaces it by a rename, so another process's write gives it a
    new inode (and mtime), seen at the next call. The stat costs microseconds, parsing the file
    (a few hundred entries on a machine used for long) about a millisecond."""
    path = _path()
    try:
        st = path.stat()
    except OSError:
        return {}
    version = (st.st_ino, st.st_mtime_ns, st.st_size)
    known = _loaded.get(path)
    if known is None or known[0] != version:
        # Stat first, read second: a file replaced in between is read in its newer version, and
        # the next call (a version that differs from the one recorded) reads it once more.
        known = _loaded[path] = (version, _read(path))
    return dict(known[1])


def _store(values: dict[str, float]) -> None:
    data = _load()
    data.update(values)
    write_json(_path(), data)


def _whole_machine() -> contextlib.AbstractContextManager[None]:
    """Every CPU slot of this machine held (lab.harness.sandbox.whole_machine), for one calibration."""
    return sandbox.whole_machine()


def _calibrated_many(keys: Iterable[str], measure: Callable[[list[int]], dict[str, float]]) -> dict[str, float]:
    """The calibrations `keys` of this machine: from the file, or measured together by
    `measure(cpus)` (this process's CPUs, ascending; it returns at least `keys`) while every CPU
    slot is held, and stored. The file is read again once the slots are held, so processes that
    ask at once (the workers of a pool) measure them once."""
    keys = list(keys)

    def cached() -> dict[str, float] | None:
        data = _load()
        return {k: float(data[k]) for k in keys} if all(data.get(k) for k in keys) else None

    found = cached()
    if found:
        return found
    with _whole_machine():
        found = cached()
        if found:
            return found
        values = {k: float(v) for k, v in measure(sorted(os.sched_getaffinity(0))).items()}
        _store(values)
    return {k: values[k] for k in keys}


def _calibrated(key: str, measure: Callable[[int], float]) -> float:
    """The calibration `key` of this machine: from the file, or measured by `measure(cpu)` (the
    lowest CPU of this process) while every CPU slot is held, and stored (_calibrated_many)."""
    return _calibrated_many([key], lambda cpus: {key: measure(cpus[0])})[key]


@functools.cache
def _peak_key(program: Path) -> str:
    """The calibration key of the peak measured by `program`: its digest, read once per process
    (an evaluation asks for the peak about ten times)."""
    return f"peak_gflops_per_core@{hashlib.sha256(program.read_bytes()).hexdigest()[:12]}"


def peak_gflops_per_core() -> float:
    """This machine's calibrated floating-point peak of one core, in GFLOP/s. The calibration is
    stored under the digest of the program that measured it: a peak from an older peak.c (one that
    spilled its accumulators and halved an AVX2 core's peak) is measured again, not reused."""
    program = paths.harness_dir() / "peak.c"
    key = _peak_key(program)

    def measure(cpu: int) -> float:
        with tempfile.TemporaryDirectory(prefix="lab-peak-") as tmp:
            exe = Path(tmp) / "peak"
            cc = BuildConfig()
            argv = [cc.cc, "-O2", *target.march_flags(), str(program), "-o", str(exe)]
            subprocess.run(argv, check=True)
            out = subprocess.run(
                ["taskset", "-c", str(cpu), str(exe)], capture_output=True, text=True, check=True, timeout=60
            ).stdout
        return float(out.split()[1])

    return _calibrated(key, measure)


#: The levels of the memory hierarchy the bandwidth calibration measures, fastest first. DRAM holds
#: whatever the caches do not.
LEVELS = ("L1", "L2", "L3", "DRAM")
CACHES = LEVELS[:-1]
#: Cache capacities where sysfs does not tell: L1 (data) and L2 per CPU, L3 shared once.
DEFAULT_CACHE_BYTES = {"L1": 32 << 10, "L2": 1 << 20, "L3": 16 << 20}
_PER_CPU = ("L1", "L2")
_SYSFS_CPU = Path("/sys/devices/system/cpu")


def _size_bytes(text: str) -> int:
    """A sysfs cache size in bytes.

    >>> _size_bytes("32K"), _size_bytes("1024K"), _size_bytes("2M"), _size_bytes("512")
    (32768, 1048576, 2097152, 512)
    """
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMGB") or "0") * scale


def cache_capacities(cpus: Iterable[int], sysfs: Path = _SYSFS_CPU) -> dict[str, int]:
    """The bytes of each cache level (L1 data, L2, L3) that the CPUs `cpus` hold together: every
    instance (a distinct shared_cpu_list) once, so a private L2 counts once per CPU and a shared
    L3 once. A level sysfs does not describe gets DEFAULT_CACHE_BYTES (per CPU for L1 and L2)."""
    cpus = list(cpus)
    instances: dict[tuple[str, str], int] = {}
    for cpu in cpus:
        for index in sorted((sysfs / f"cpu{cpu}" / "cache").glob("index*")):
            try:
                level = int((index / "level").read_text())
                kind = (index / "type").read_text().strip()
                size = _size_bytes((index / "size").read_text())
                shared = (index / "shared_cpu_list").read_text().strip()
            except (OSError, ValueError):
                continue
            if kind in ("Data", "Unified") and 1 <= level <= len(CACHES) and size > 0:
                instances[(f"L{level}", shared or str(cpu))] = size
    total = {level: 0 for level in CACHES}
    for (level, _), size in instances.items():
        total[level] += size
    for level in CACHES:
        if not total[level]:
            total[level] = DEFAULT_CACHE_BYTES[level] * (len(cpus) if level in _PER_CPU else 1)
    return total


def _working_sets(caps: dict[str, int]) -> dict[str, int]:
    """The working set (bytes, all threads together) at which bandwidth.c measures each level:
    half of L1; half of L2 (well past L1); between L2 and L3 (past L2); several times L2 + L3.

    >>> _working_sets({"L1": 64 << 10, "L2": 2 << 20, "L3": 32 << 20})["L3"] == 17 << 20
    True
    """
    l1, l2, l3 = caps["L1"], caps["L2"], caps["L3"]
    return {
        "L1": l1 // 2,
        "L2": max(l2 // 2, 2 * l1),
        "L3": max((l2 + l3) // 2, 2 * l2),
        "DRAM": min(max(4 * (l2 + l3), 64 << 20), 1 << 30),
    }


def _measure_bandwidths(cpus: list[int], threads: int, runs: int = CALIBRATION_RUNS) -> dict[str, float]:
    """Run harness/bandwidth.c on the first `threads` CPUs of `cpus` (one pinned thread each): the
    calibration keys of that thread count, the levels' best GB/s and the caches' capacities. Like
    a baseline's, the best of up to `runs` runs per level (fewer once two runs agree
    within BANDWIDTH_AGREE at every level): the slots are held, but a process outside the lab can
    still slow a run, and a low figure, kept for good, would make honest kernels suspicious."""
    used = cpus[:threads]
    caps = cache_capacities(used)
    sizes = _working_sets(caps)
    levels = [f"{level}={sizes[level]}" + (",nt" if level in ("L3", "DRAM") else "") for level in LEVELS]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    # Threads spin at the barriers between trials (the default policy may be made passive for tests).
    env.update(OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="active", OMP_DYNAMIC="false")
    rates: dict[str, list[float]] = {level: [] for level in LEVELS}
    with tempfile.TemporaryDirectory(prefix="lab-bandwidth-") as tmp:
        exe = Path(tmp) / "bandwidth"
        source = paths.harness_dir() / "bandwidth.c"
        argv = [BuildConfig().cc, "-O3", *target.march_flags(), "-fopenmp", str(source), "-o", str(exe)]
        subprocess.run(argv, check=True)
        while len(rates["L1"]) < runs and not all(_two_agree(r, BANDWIDTH_AGREE) for r in rates.values()):
            out = subprocess.run(
                ["taskset", "-c", ",".join(map(str, used)), str(exe), str(threads), *levels],
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
                env=env,
            ).stdout
            best = {p[0]: float(p[2]) for p in map(str.split, out.splitlines()) if p[1:2] == ["best"]}
            for level in LEVELS:
                rates[level].append(best[level])
    values = {f"bandwidth/{level}/t{threads}": max(rates[level]) for level in LEVELS}
    values.update({f"cache/{level}/t{threads}": float(caps[level]) for level in CACHES})
    return values


def _bandwidth_calibration(threads: int) -> dict[str, float]:
    keys = [f"bandwidth/{level}/t{threads}" for level in LEVELS] + [f"cache/{level}/t{threads}" for level in CACHES]
    return _calibrated_many(keys, lambda cpus: _measure_bandwidths(cpus, threads))


def bandwidth_gbs(threads: int) -> dict[str, float]:
    """This machine's best GB/s at each level (LEVELS) on `threads` threads: the calibration of that
    thread count, and never less than `threads` times one thread's (both measured once per machine)."""
    own = _bandwidth_calibration(threads)
    one = _bandwidth_calibration(1) if threads > 1 else own
    return {
        level: max(own[f"bandwidth/{level}/t{threads}"], threads * one[f"bandwidth/{level}/t1"]) for level in LEVELS
    }


def cache_bytes(threads: int) -> dict[str, float]:
    """The cache capacities (L1, L2, L3) that `threads` granted CPUs hold together, as calibrated."""
    own = _bandwidth_calibration(threads)
    return {level: own[f"cache/{level}/t{threads}"] for level in CACHES}


def bandwidth_record(threads: int) -> dict[str, float]:
    """The figures the bandwidth bound uses at `threads` threads, for a result's `calibration`."""
    record = {f"bandwidth_gbs_{level}": round(v, 3) for level, v in bandwidth_gbs(threads).items()}
    record.update({f"cache_bytes_{level}": v for level, v in cache_bytes(threads).items()})
    return record


def fastest_call_s(
    nbytes: float, working_set: float, capacities: dict[str, float], rates_gbs: dict[str, float]
) -> tuple[float, list[tuple[str, float]]]:
    """The least time a call that moves `nbytes` can take, and where its working set sits: greedily,
    the fastest level holds as much of `working_set` as its capacity allows (DRAM the rest), and
    each level serves its share of the bytes at its rate.

    >>> t, held = fastest_call_s(3e6, 3e6, {"L1": 1e6, "L2": 1e6}, {"L1": 100.0, "L2": 50.0, "DRAM": 10.0})
    >>> round(t * 1e6, 3), held
    (130.0, [('L1', 1000000.0), ('L2', 1000000.0), ('DRAM', 1000000.0)])
    """
    working_set = working_set if working_set > 0 else nbytes
    left, seconds, held = float(working_set), 0.0, []
    for level in LEVELS:
        if left <= 0:
            break
        share = left if level == "DRAM" else min(left, float(capacities.get(level, 0)))
        if share <= 0 or level not in rates_gbs:
            continue
        seconds += nbytes * (share / working_set) / (rates_gbs[level] * 1e9)
        held.append((level, share))
        left -= share
    return seconds, held


def roofline(
    problem: Problem,
    n: int,
    threads: int,
    peak_per_core: float,
    rates_gbs: dict[str, float],
    capacities: dict[str, float],
) -> tuple[float, str]:
    """(rate in problem.unit, limiter): the highest rate a call of `problem` at size n can reach on
    `threads` CPUs, the lower of two roofs. Memory: the call's bytes at the fastest levels that hold
    its working set (fastest_call_s), the limiter being the slowest level used. Compute, for
    problems counted in GFLOP/s only: `peak_per_core` x threads ("fma_peak"). No compute roof is
    modelled for other units (a scan's or a histogram's operations are bound by dependency chains
    and stores, not by the FMA peak), so theirs is the memory roof alone.

    >>> from types import SimpleNamespace as NS
    >>> stream = NS(unit="GFLOP/s", flops=lambda n: 2.0 * n, bytes=lambda n: 16.0 * n, working_set=lambda n: 16 * n)
    >>> rate, limiter = roofline(stream, 10**8, 1, 50.0, {"L1": 300.0, "L2": 100.0, "L3": 80.0, "DRAM": 40.0},
    ...                          {"L1": 32e3, "L2": 1e6, "L3": 32e6})
    >>> round(rate, 2), limiter
    (5.05, 'DRAM')
    >>> rate, limiter = roofline(stream, 10**3, 1, 20.0, {"L1": 300.0, "DRAM": 40.0}, {"L1": 32e3})
    >>> rate, limiter
    (20.0, 'fma_peak')
    """
    seconds, held = fastest_call_s(problem.bytes(n), problem.working_set(n), capacities, rates_gbs)
    memory = problem.flops(n) / seconds * 1e-9 if seconds > 0 else float("inf")
    if problem.unit == "GFLOP/s" and peak_per_core * threads < memory:
        return peak_per_core * threads, "fma_peak"
    return memory, held[-1][0] if held else "DRAM"


def cache_resident_n(problem: Problem, capacity: float, upper: int) -> int | None:
    """The largest n <= `upper` whose working set (problem.working_set) fits in `capacity` bytes,
    or None if not even n = 1 does. Bisection: a working set grows with n.

    >>> from types import SimpleNamespace as NS
    >>> cache_resident_n(NS(working_set=lambda n: 24 * n * n), 16 << 20, 4096)
    836
    >>> cache_resident_n(NS(working_set=lambda n: 24 * n * n), 16 << 20, 256), cache_resident_n(NS(working_set=lambda n: 8 * n), 4, 9)
    (256, None)
    """
    if problem.working_set(1) > capacity:
        return None
    lo, hi = 1, upper
    while lo < hi:  # invariant: lo fits
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if problem.working_set(mid) <= capacity else (lo, mid - 1)
    return lo


def _mb(nbytes: float) -> str:
    return f"{nbytes / 1e6:.3g} MB"


def bandwidth_bound(problem: Problem, n: int, threads: int) -> tuple[float, str]:
    """(GB/s, how): the fastest rate at which `threads` CPUs of this machine can move one call's
    bytes of `problem` at size n (fastest_call_s on the calibrated levels), and where it came from."""
    nbytes, rates = problem.bytes(n), bandwidth_gbs(threads)
    seconds, held = fastest_call_s(nbytes, problem.working_set(n), cache_bytes(threads), rates)
    how = ", ".join(f"{_mb(share)} in {level} at {rates[level]:.0f} GB/s" for level, share in held)
    return nbytes / seconds * 1e-9, how


def _two_agree(runs: list[float], agree: float = CALIBRATION_AGREE) -> bool:
    """Whether two of the calibration runs so far lie within `agree` of each other.

    >>> _two_agree([2.0]), _two_agree([2.0, 1.0]), _two_agree([2.0, 1.0, 1.96])
    (False, False, True)
    """
    best = sorted(runs, reverse=True)
    return any(b >= a * (1 - agree) for a, b in zip(best, best[1:]))


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


def implied_bandwidth_gbs(rate: float, problem: Problem, n: int) -> float:
    """The GB/s a result's rate (in problem.unit) implies: bytes(n) over the time flops(n) / rate."""
    return problem.bytes(n) * rate / problem.flops(n) if rate > 0 and problem.flops(n) > 0 else 0.0


def violation(
    gflops: float, threads: int, baseline: float | None, problem: Problem, n: int, config: MeasureConfig
) -> str:
    """Why an `ok` result's numbers cannot be believed on this machine, or ''. `gflops` is the
    result's rate in problem.unit at size n on `threads` granted CPUs. The peak bound applies to
    problems measured in GFLOP/s, the bandwidth bound to every problem and unit, the baseline
    check wherever a baseline was timed."""
    bound = PEAK_MARGIN * peak_gflops_per_core() * threads
    if problem.unit == "GFLOP/s" and gflops > bound:
        return (
            f"{gflops:.1f} GFLOPS exceeds what {threads} CPU(s) of this machine can do "
            f"({PEAK_MARGIN:g} x calibrated peak = {bound:.1f})"
        )
    implied = implied_bandwidth_gbs(gflops, problem, n)
    ceiling, how = bandwidth_bound(problem, n, threads)
    if implied > BANDWIDTH_MARGIN * ceiling:
        return (
            f"{gflops:.3g} {problem.unit} means each call moved its {_mb(problem.bytes(n))} at {implied:.1f} GB/s, "
            f"above {BANDWIDTH_MARGIN:g} x the {ceiling:.1f} GB/s that {threads} CPU(s) of this machine can "
            f"serve it at (calibrated: {how})"
        )
    if baseline is not None:
        expected = baseline_gflops(problem, n, config)
        if not expected / BASELINE_FACTOR <= baseline <= expected * BASELINE_FACTOR:
            return (
                f"the baseline ran at {baseline:.3g} GFLOPS, more than {BASELINE_FACTOR:g}x away from "
                f"its calibration ({expected:.3g}): the speedup cannot be trusted"
            )
    return ""
