"""lab.harness.plausibility's bandwidth bound: the greedy least time of a call on a made-up
calibration, the cache capacities read from a made-up sysfs, the calibration file, and one
real bandwidth calibration of this machine."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import subprocess

import pytest

from lab import paths
from lab.config import MeasureConfig
from lab.harness import plausibility, target
from lab.harness.plausibility import BANDWIDTH_MARGIN, LEVELS, fastest_call_s, violation
from lab.harness.problems import list_problems, load_problem

GB = 1e9
#: A made-up machine: per level GB/s at 1 and 2 threads, and the caches 1 and 2 CPUs hold.
RATES = {
    1: {"L1": 200.0, "L2": 100.0, "L3": 50.0, "DRAM": 20.0},
    2: {"L1": 400.0, "L2": 200.0, "L3": 90.0, "DRAM": 30.0},
}
CAPS = {1: {"L1": 32e3, "L2": 1e6, "L3": 32e6}, 2: {"L1": 64e3, "L2": 2e6, "L3": 32e6}}
PEAK = 50.0  # GFLOP/s per core
CONFIG = MeasureConfig()


@pytest.fixture
def fake_machine(monkeypatch):
    """The made-up calibration in place of this machine's (nothing is measured)."""
    monkeypatch.setattr(plausibility, "bandwidth_gbs", lambda threads: RATES[threads])
    monkeypatch.setattr(plausibility, "cache_bytes", lambda threads: CAPS[threads])
    monkeypatch.setattr(plausibility, "peak_gflops_per_core", lambda: PEAK)


def _least_s(problem, n, threads):
    return fastest_call_s(problem.bytes(n), problem.working_set(n), CAPS[threads], RATES[threads])[0]


def _rate(problem, n, seconds):
    """The rate (in problem.unit) of a call that takes `seconds`."""
    return problem.flops(n) / seconds * 1e-9


def test_fastest_call_fills_the_fastest_levels_first():
    rates, caps = RATES[1], CAPS[1]
    # Fits in L1: every byte at L1's rate.
    seconds, held = fastest_call_s(16e3, 16e3, caps, rates)
    assert held == [("L1", 16e3)] and seconds == pytest.approx(16e3 / (200 * GB))
    # 100 MB: 32 kB in L1, 1 MB in L2, 32 MB in L3, the rest in DRAM, each share at its rate.
    seconds, held = fastest_call_s(100e6, 100e6, caps, rates)
    assert [level for level, _ in held] == list(LEVELS)
    expected = 32e3 / 200 + 1e6 / 100 + 32e6 / 50 + (100e6 - 32e3 - 1e6 - 32e6) / 20
    assert seconds == pytest.approx(expected / GB)
    # Bytes moved more than once over a smaller working set: shares in proportion.
    seconds, _ = fastest_call_s(2e6, 1e6, caps, rates)
    assert seconds == pytest.approx(2 * (32e3 / 200 + (1e6 - 32e3) / 100) / GB)


def test_more_threads_hold_more_private_cache_and_move_faster():
    problem = load_problem("transpose")
    assert _least_s(problem, 512, 2) < _least_s(problem, 512, 1)


@pytest.mark.usefixtures("fake_machine")
@pytest.mark.parametrize("name", ["transpose", "prefix_sum", "histogram"])
def test_gbs_and_gops_problems_have_a_ceiling(name):
    """Problems measured in GB/s or Gop/s, which the FMA peak never bounded, are bounded now."""
    problem = load_problem(name)
    for n, threads in [(problem.default_n, 1), (problem.default_n, 2), (128, 1)]:
        least = _least_s(problem, n, threads)
        assert violation(_rate(problem, n, least * 1.01), threads, None, problem, n, CONFIG) == ""
        honest_limit = _rate(problem, n, least / BANDWIDTH_MARGIN * 1.01)
        assert violation(honest_limit, threads, None, problem, n, CONFIG) == ""
        why = violation(_rate(problem, n, least / BANDWIDTH_MARGIN / 1.01), threads, None, problem, n, CONFIG)
        assert why and "\n" not in why and f"{BANDWIDTH_MARGIN:g} x the" in why and "GB/s" in why, why
        assert f"{threads} CPU(s)" in why and "in L1 at" in why


@pytest.mark.usefixtures("fake_machine")
def test_memory_bound_gflops_problem_meets_the_bandwidth_bound_before_the_peak():
    """DOT at its default size: 2 flops per 16 bytes, so a rate far below the FMA peak can still
    imply an impossible bandwidth; both bounds apply, and each names itself."""
    problem, n = load_problem("dot"), load_problem("dot").default_n
    too_fast = _rate(problem, n, _least_s(problem, n, 1) / BANDWIDTH_MARGIN / 2)
    assert too_fast < plausibility.PEAK_MARGIN * PEAK
    assert "GB/s" in violation(too_fast, 1, None, problem, n, CONFIG)
    above_peak = 2 * plausibility.PEAK_MARGIN * PEAK
    assert "calibrated peak" in violation(above_peak, 1, None, problem, n, CONFIG)
    assert violation(0.5 * _rate(problem, n, _least_s(problem, n, 1)), 1, None, problem, n, CONFIG) == ""


@pytest.mark.usefixtures("fake_machine")
def test_compute_bound_problem_keeps_the_peak_bound():
    problem = load_problem("dgemm")
    assert "calibrated peak" in violation(PEAK * 2, 1, None, problem, 256, CONFIG)
    assert violation(PEAK, 1, None, problem, 256, CONFIG) == ""


def test_every_problem_has_a_positive_bytes_formula_no_smaller_than_its_output():
    for name in list_problems():
        problem = load_problem(name)
        for n in (1, problem.odd_n, 128, problem.default_n):
            assert problem.bytes(n) > 0 and problem.working_set(n) > 0, (name, n)
            # What is compulsory: at least the output is written once.
            assert problem.bytes(n) >= problem.output.nbytes(n), (name, n)


def test_bandwidth_for_more_threads_never_undercuts_single_threads(monkeypatch):
    """A 2-thread calibration a neighbour slowed counts for no less than twice one thread's."""
    stored = {f"bandwidth/{level}/t{t}": RATES[t][level] for t in (1, 2) for level in LEVELS}
    stored["bandwidth/DRAM/t2"] = 25.0  # below 2 x 20
    monkeypatch.setattr(plausibility, "_bandwidth_calibration", lambda threads: stored)
    rates = plausibility.bandwidth_gbs(2)
    assert rates["DRAM"] == 40.0 and rates["L1"] == 400.0 and rates["L3"] == 100.0
    assert plausibility.bandwidth_gbs(1) == RATES[1]


def _write_cache(root, cpu, index, level, kind, size, shared):
    folder = root / f"cpu{cpu}" / "cache" / f"index{index}"
    folder.mkdir(parents=True)
    for name, value in {"level": level, "type": kind, "size": size, "shared_cpu_list": shared}.items():
        (folder / name).write_text(f"{value}\n")


def test_cache_capacities_count_each_instance_once(tmp_path):
    for cpu in (0, 1):
        _write_cache(tmp_path, cpu, 0, 1, "Data", "48K", cpu)
        _write_cache(tmp_path, cpu, 1, 1, "Instruction", "32K", cpu)
        _write_cache(tmp_path, cpu, 2, 2, "Unified", "2048K", cpu)
        _write_cache(tmp_path, cpu, 3, 3, "Unified", "32M", "0-1")
    assert plausibility.cache_capacities([0], tmp_path) == {"L1": 48 << 10, "L2": 2 << 20, "L3": 32 << 20}
    assert plausibility.cache_capacities([0, 1], tmp_path) == {"L1": 96 << 10, "L2": 4 << 20, "L3": 32 << 20}


def test_cache_capacities_fall_back_without_sysfs(tmp_path):
    defaults = plausibility.DEFAULT_CACHE_BYTES
    caps = plausibility.cache_capacities([0, 1], tmp_path / "missing")
    assert caps == {"L1": 2 * defaults["L1"], "L2": 2 * defaults["L2"], "L3": defaults["L3"]}


def test_calibration_is_measured_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(plausibility, "_path", lambda: tmp_path / "calibration.json")
    monkeypatch.setattr(plausibility, "_whole_machine", contextlib.nullcontext)
    calls = []

    def measure(cpus):
        calls.append(cpus)
        return {"a": 1.5, "b": 2.5, "extra": 3.0}

    assert plausibility._calibrated_many(["a", "b"], measure) == {"a": 1.5, "b": 2.5}
    assert plausibility._calibrated_many(["b", "extra"], measure) == {"b": 2.5, "extra": 3.0}
    assert plausibility._calibrated("a", lambda cpu: 9.0) == 1.5
    assert len(calls) == 1 and calls[0] == sorted(os.sched_getaffinity(0))


@pytest.mark.timeout(60)
def test_real_bandwidth_calibration_is_positive_and_ordered():
    """harness/bandwidth.c on this machine, one run at one thread (every CPU slot held, like the
    calibration): each level positive, a faster level no slower than the next beyond noise."""
    with plausibility._whole_machine():
        values = plausibility._measure_bandwidths(sorted(os.sched_getaffinity(0)), 1, runs=1)
    rates = [values[f"bandwidth/{level}/t1"] for level in LEVELS]
    assert all(rate > 0 for rate in rates), rates
    assert all(fast * 1.3 >= slow for fast, slow in zip(rates, rates[1:])), dict(zip(LEVELS, rates))
    assert rates[0] > 2 * rates[-1], dict(zip(LEVELS, rates))
    assert all(values[f"cache/{level}/t1"] > 0 for level in plausibility.CACHES)


def _innermost_loop(assembly: list[str]) -> list[str]:
    """The shortest backward-jumping block of `assembly` that holds at least 8 vector multiplies
    (FMAs, or SSE's mulpd): the peak program's timed loop."""
    labels = {line[:-1]: i for i, line in enumerate(assembly) if re.fullmatch(r"\.L\w+:", line)}
    best: list[str] = []
    for i, line in enumerate(assembly):
        jump = re.match(r"\s+j\w+\s+(\.L\w+)$", line)
        if jump and labels.get(jump.group(1), i) < i:
            body = assembly[labels[jump.group(1)] : i + 1]
            multiplies = sum(bool(re.search(r"\t(vfmadd|v?mulpd)", x)) for x in body)
            if multiplies >= 8 and (not best or len(body) < len(best)):
                best = body
    return best


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the x86 tiers' register files")
@pytest.mark.parametrize("tier", ["sse4", "avx2", "avx512"])
def test_the_peak_program_keeps_its_accumulators_in_registers_at_every_x86_tier(tier):
    """Below AVX-512, x86 has 16 vector registers: a timed loop that spilled accumulators to the
    stack halved the peak an AVX2 core was calibrated at, and honest AVX2 kernels came out
    `suspicious`. Compiled (not run) at each tier, so every machine checks every tier."""
    program = str(paths.harness_dir() / "peak.c")
    argv = ["gcc", "-O2", *target.TIERS[tier].march, "-S", program, "-o", "-"]
    loop = _innermost_loop(subprocess.run(argv, capture_output=True, text=True, check=True).stdout.splitlines())
    assert loop, "no timed loop found"
    assert not [line for line in loop if re.search(r"\(%r[sb]p\)", line)], f"spills at {tier}"
