"""evaluate / evaluate_batch: statuses, baseline, cache, duplicates, the parent's cross-check."""

from __future__ import annotations

import dataclasses
import shutil
import socket
import time

import pytest

from lab.config import MeasureConfig, RewardConfig
from lab.harness import evaluate as ev
from lab.harness import sandbox
from lab.harness.evaluate import evaluate, evaluate_batch, parse_report
from lab.harness.machine import machine_class
from lab.harness.problems import load_problem
from lab.rl.reward import HarnessReward, reward_from_result
from tests.conftest import EXAMPLES

SMALL = MeasureConfig(n=96, min_time_s=0.02, min_reps=3, baseline_min_time_s=0.01, run_timeout_s=5.0)
NAIVE = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()


def test_ok_result_carries_performance_and_baseline():
    r = evaluate(NAIVE, "dgemm", SMALL, cache=False)
    assert r.status == "ok" and reward_from_result(r, RewardConfig()) == r.gflops
    assert r.gflops == pytest.approx(2 * 96**3 / r.time_s * 1e-9, rel=1e-6)
    assert r.speedup == pytest.approx(r.gflops / r.baseline_gflops)
    assert r.compile_s > 0 and r.run_s > 0 and r.reps >= 3 and r.n == 96


def test_every_result_records_where_it_was_measured():
    """host, machine fingerprint and sandbox isolation, for failures (even unbuilt ones) as for ok."""
    expected = dict(host=socket.gethostname(), machine=machine_class(), isolation=sandbox.isolation_level())
    assert expected["isolation"] in (("cgroup-v2", "cgroup-v1", "namespaces") if sandbox.is_root() else ("rlimits",))
    texts = [NAIVE, "nothing", "void dgemm(int n, const double *A, const double *B, double *C) { oops }"]
    results = evaluate_batch(texts, "dgemm", SMALL, cache=False, progress=False)
    assert [r.status for r in results] == ["ok", "format_error", "compile_error"]
    for r in results:
        assert {k: getattr(r, k) for k in expected} == expected
        assert {k: r.to_dict()[k] for k in expected} == expected


def test_duplicates_are_measured_once_and_cache_hits_are_cheap():
    text = NAIVE + "\n/* cache test */\n"
    results = evaluate_batch([text, text, text], "dgemm", SMALL, progress=False)
    assert [r.cached for r in results] == [False, True, True]
    assert len({r.gflops for r in results}) == 1
    t0 = time.monotonic()
    again = evaluate(text, "dgemm", SMALL)
    cost = time.monotonic() - t0
    assert again.cached and again.gflops == results[0].gflops
    assert cost < 0.02 * (results[0].compile_s + results[0].run_s) + 0.01


def test_reward_config_change_does_not_remeasure():
    text = NAIVE + "\n/* reward test */\n"
    first = evaluate(text, "dgemm", SMALL)
    assert reward_from_result(first, RewardConfig()) == first.gflops

    def cached_only(texts, problem, config):  # the harness, refusing to measure anything afresh
        results = evaluate_batch(texts, problem, config, progress=False)
        assert all(r.cached for r in results)
        return results

    reward = HarnessReward("dgemm", RewardConfig(positive="speedup"), SMALL, evaluate=cached_only)
    assert reward([text]) == [pytest.approx(first.speedup)]
    assert reward.last[0].cached and reward.last[0].gflops == first.gflops


@pytest.fixture
def harness_copy(tmp_path, monkeypatch):
    """A private copy of harness/ and an empty cache, in force for the test only."""
    root = tmp_path / "harness"
    shutil.copytree(EXAMPLES, root)
    monkeypatch.setenv("LAB_HARNESS_DIR", str(root))
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path / "cache"))
    load_problem.cache_clear()
    yield root
    load_problem.cache_clear()  # forget the copy: the next test loads the real harness again


def _key() -> str:
    load_problem.cache_clear()  # load_problem is cached by name: read the folder afresh
    return ev._fingerprint(load_problem("dgemm"), ev.machine_class())


def test_cache_key_covers_every_file_of_the_problem_folder_and_harness(harness_copy):
    dgemm = harness_copy / "dgemm"
    assert load_problem("dgemm").root == dgemm
    keys = [_key()]

    def changed() -> bool:
        keys.append(_key())
        return keys[-1] != keys[-2]

    assert not changed()  # nothing changed: the same key
    with open(dgemm / "reference.py", "a") as f:
        f.write("\n# a comment is a change too\n")
    assert changed()
    problem_key = load_problem("dgemm").fingerprint()
    (dgemm / "examples" / "naive.c").write_text(NAIVE + "\n/* edited */\n")
    assert changed() and load_problem("dgemm").fingerprint() != problem_key
    (dgemm / "examples" / "new.c").write_text(NAIVE)  # a new file
    assert changed()
    (dgemm / "examples" / "new.c").unlink()  # and a removed one
    assert changed()
    for name in ("problem.toml", "driver.c"):
        with open(dgemm / name, "a") as f:
            f.write("\n")
        assert changed(), name
    # The shared C harness enters through the measurement version (lab.provenance): a comment
    # or a blank line changes no measurement, code does.
    with open(harness_copy / "bench.h", "a") as f:
        f.write("\n/* changes no measurement */\n")
    assert not changed()
    with open(harness_copy / "bench.h", "a") as f:
        f.write("#define LAB_EDITED 1\n")
    assert changed()
    with open(harness_copy / "dgemv" / "reference.py", "a") as f:  # another problem's folder: not dgemm's key
        f.write("\n")
    assert not changed()


def test_a_changed_problem_folder_is_measured_again(harness_copy):
    text = NAIVE + "\n/* folder test */\n"
    first = evaluate(text, "dgemm", SMALL)
    assert first.status == "ok" and not first.cached
    assert evaluate(text, "dgemm", SMALL).cached
    with open(harness_copy / "dgemm" / "reference.py", "a") as f:
        f.write("\n# edited\n")
    load_problem.cache_clear()
    again = evaluate(text, "dgemm", SMALL)
    assert again.status == "ok" and not again.cached


def test_batch_keeps_input_order_across_statuses():
    texts = ["nothing", NAIVE, "void dgemm(int n, const double *A, const double *B, double *C) { oops }"]
    statuses = [r.status for r in evaluate_batch(texts, "dgemm", SMALL, progress=False)]
    assert statuses == ["format_error", "ok", "compile_error"]


def test_threads_are_explicit():
    omp = """#include <omp.h>
    void dgemm(int n, const double *A, const double *B, double *C) {
        /* Correct only when exactly two threads run: proves OMP_NUM_THREADS reaches the kernel. */
        int t = omp_get_max_threads();
        for (int i = 0; i < n * n; i++) C[i] = 0.0;
        if (t != 2) return;
        #pragma omp parallel for
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++)
                for (int j = 0; j < n; j++) C[i * n + j] += A[i * n + k] * B[k * n + j];
    }"""
    assert evaluate(omp, "dgemm", dataclasses.replace(SMALL, threads=2), cache=False).status == "ok"
    assert evaluate(omp, "dgemm", dataclasses.replace(SMALL, threads=1), cache=False).status == "wrong_result"


def test_parse_report():
    assert parse_report(b"status ok\ndetail n=3 call 1: bad\n") == {"status": "ok", "detail": "n=3 call 1: bad"}


def _run(result: bytes, wall_s: float = 10.0) -> sandbox.RunOutcome:
    return sandbox.RunOutcome(
        returncode=0, signal=None, timed_out=False, wall_s=wall_s, cpu_s=1.0, output="", output_bytes=0, result=result
    )


RUN_SEED = 5  # the seeds a report names are random draws of the measurer; any number will do


def _report(
    problem,
    n=96,
    odd=77,
    time_s=0.001,
    reps=300,
    nonce="abc",
    total=None,
    checksum=None,
    big_checksum=None,
    seed_shift=0,
):
    base = RUN_SEED * 1000003
    ref, big = problem.reference(base + 6, odd), problem.reference(base + 5, n)
    base += seed_shift
    s, a = checksum or (float(ref.sum()), float(abs(ref).sum()))
    bs, ba = big_checksum or (float(big.sum()), float(abs(big).sum()))
    total = total if total is not None else time_s * reps
    return (
        f"nonce {nonce}\nstatus ok\ndetail -\ncheck_seed {base + 6}\ncheck_n {odd}\ncheck_sum {s!r}\n"
        f"check_abs_sum {a!r}\ncheck_big_seed {base + 5}\ncheck_big_sum {bs!r}\ncheck_big_abs_sum {ba!r}\n"
        f"n {n}\nthreads 1\nreps {reps}\ntimed_total_s {total}\ntime_s {time_s}\n"
        f"gflops {problem.flops(n) / time_s * 1e-9}\nbaseline_gflops {_calibrated_baseline(problem, n)}\n"
        "handshake_s 5e-06\n"
    ).encode()


def _calibrated_baseline(problem, n):
    from lab.harness import plausibility

    return plausibility.baseline_gflops(problem, n, SMALL)


@pytest.mark.parametrize(
    "tamper, status",
    [
        ({}, "ok"),
        ({"nonce": "forged"}, "runtime_error"),
        ({"checksum": (123.0, 456.0)}, "wrong_result"),
        ({"total": 50.0}, "wrong_result"),  # more timed seconds than the whole run took
        ({"reps": 1, "total": 0.3}, "wrong_result"),  # fewer calls than the protocol makes
        ({"n": 64}, "wrong_result"),  # a report for another size
        ({"big_checksum": (1.0, 2.0)}, "wrong_result"),  # honest at the odd size only
        ({"seed_shift": 7}, "wrong_result"),  # checksums of inputs the report does not name
        ({"time_s": 1e-6, "total": 0.3}, "suspicious"),  # faster than this machine's calibrated peak
    ],
)
def test_parent_cross_check_rejects_forged_reports(tamper, status):
    """A report the driver did not write (or one about other work) must not pass."""
    problem = load_problem("dgemm")
    cfg = dataclasses.replace(SMALL, odd_n=77)
    result = ev._verdict(_run(_report(problem, **tamper)), "abc", problem, cfg, sandbox.Limits())
    assert result.status == status, result.detail


def test_verdict_maps_signals_and_limits():
    problem, cfg, limits = load_problem("dgemm"), SMALL, sandbox.Limits(cpu_s=10)
    crash = dataclasses.replace(_run(b""), returncode=None, signal=11)
    assert ev._verdict(crash, "x", problem, cfg, limits).detail.startswith("killed by SIGSEGV")
    cpu = dataclasses.replace(_run(b""), returncode=None, signal=24)
    assert ev._verdict(cpu, "x", problem, cfg, limits).status == "timeout"
    flood = dataclasses.replace(_run(b""), returncode=None, signal=25)
    assert "output flood" in ev._verdict(flood, "x", problem, cfg, limits).detail
    left = dataclasses.replace(_run(_report(problem)), killed=2)
    assert ev._verdict(left, "abc", problem, cfg, limits).status == "runtime_error"
    silent = _run(b"")
    assert ev._verdict(silent, "x", problem, cfg, limits).detail == "ended without a valid report"


def test_verdict_tells_the_hosts_faults_from_the_candidates():
    problem, cfg, limits = load_problem("dgemm"), SMALL, sandbox.Limits(cpu_s=10)
    oom = dataclasses.replace(_run(b""), returncode=None, signal=9, oom_killed=True)
    assert "memory limit" in ev._verdict(oom, "x", problem, cfg, limits).detail
    host = dataclasses.replace(_run(b""), returncode=None, signal=9)
    with pytest.raises(ev._HostFault):
        ev._verdict(host, "x", problem, cfg, limits)
    runner_killed = _run(
        b"nonce x\nstatus runtime_error\ndetail in a timed call: the kernel's process was killed by KILL\n"
    )
    with pytest.raises(ev._HostFault):
        ev._verdict(runner_killed, "x", problem, cfg, limits)
    for status in ("forbidden", "suspicious", "wrong_result"):
        report = _run(f"nonce x\nstatus {status}\ndetail why\n".encode())
        assert ev._verdict(report, "x", problem, cfg, limits).status == status


@pytest.mark.parametrize("name", ["dgemm", "dgemv"])
def test_trusted_halves_export_nothing_but_main(name):
    """Reference, baseline and the handshake are static: a candidate cannot call or replace them by
    name, and the runner's half leaves exactly the candidate's function undefined."""
    import subprocess

    from lab.harness.build import BuildConfig, runner_stub

    problem = load_problem(name)
    obj = runner_stub(problem, BuildConfig())

    def symbols(*flags):
        out = subprocess.run(["nm", "-P", *flags, str(obj)], capture_output=True, text=True, check=True).stdout
        return [line.split()[0] for line in out.splitlines() if line.strip()]

    assert symbols("--defined-only", "--extern-only") == ["main"]
    assert problem.function in symbols("--undefined-only")


# ---- the harness never raises on a candidate, and never caches the host's faults ----------------


def test_an_exception_in_the_harness_is_a_harness_error_never_cached(monkeypatch):
    calls = []

    def broken(completion, *args, **kwargs):
        calls.append(completion)
        if "boom" in completion:
            raise KeyError("the harness tripped")
        return ev.EvalResult(status="wrong_result")

    monkeypatch.setattr(ev, "_measure_once", broken)
    texts = ["/* boom */" + NAIVE, "/* fine */" + NAIVE]
    results = evaluate_batch(texts, "dgemm", SMALL, n_jobs=1, progress=False)
    assert [r.status for r in results] == ["harness_error", "wrong_result"]
    assert results[0].detail == "KeyError: 'the harness tripped'"
    again = evaluate(texts[0], "dgemm", SMALL)  # not cached: measured (and failing) again
    assert again.status == "harness_error" and not again.cached and len(calls) == 3
    assert evaluate(texts[1], "dgemm", SMALL).cached  # the candidate's own verdict is cached


def test_a_host_fault_is_retried_once_and_never_cached(monkeypatch):
    attempts = []

    def flaky(completion, *args, **kwargs):
        attempts.append(completion)
        raise ev._HostFault(ev._fail("runtime_error", "killed by the host"))

    monkeypatch.setattr(ev, "_measure_once", flaky)
    text = "/* flaky host */" + NAIVE
    r = evaluate(text, "dgemm", SMALL)
    assert r.status == "runtime_error" and len(attempts) == 2  # tried twice
    r = evaluate(text, "dgemm", SMALL)
    assert not r.cached and len(attempts) == 4  # and never taken from the cache

    outcomes = iter([ev._HostFault(ev._fail("compile_error", "died")), ev.EvalResult(status="ok", gflops=1.0)])

    def once(*args, **kwargs):
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(ev, "_measure_once", once)
    assert evaluate("/* retried */" + NAIVE, "dgemm", SMALL).status == "ok"


def test_a_reward_batch_survives_a_harness_error(monkeypatch):
    real = ev._measure_once

    def sometimes(completion, *args, **kwargs):
        if "boom" in completion:
            raise RuntimeError("disk full")
        return real(completion, *args, **kwargs)

    monkeypatch.setattr(ev, "_measure_once", sometimes)
    in_process = lambda texts, problem, config: evaluate_batch(texts, problem, config, n_jobs=1, progress=False)  # noqa: E731
    reward = HarnessReward("dgemm", measure=SMALL, evaluate=in_process)
    values = reward(["/* boom */" + NAIVE, NAIVE], prompts=["p", "p"])
    assert [r.status for r in reward.last] == ["harness_error", "ok"]
    assert values[0] == pytest.approx(values[1])  # the group mean: zero advantage


# ---- bounded parent work on hostile sources --------------------------------------------------------

# The probe scores an honest kernel first, untimed: the first `ok` of a fresh cache also builds the
# problem's driver and calibrates the machine, one-time costs that are not the hostile source's
# (under a loaded CI worker they took 24 s). Then it times the hostile source alone.
_PARENT_PROBE = r"""
import resource, sys, time
from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate
config = MeasureConfig(n=64, min_time_s=0.01, min_reps=3, baseline=False)
warm = evaluate(open(sys.argv[2]).read(), "dgemm", config, cache=False)
assert warm.status == "ok", warm.detail
source = open(sys.argv[1]).read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.monotonic()
r = evaluate(source, "dgemm", config, cache=False)
print(r.status, round(time.monotonic() - start, 2), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def _many_symbols() -> str:
    # 4096 exported functions from a dozen lines of macros.
    lines = ["#define F1(p) double p##0(double x) { return x + 1; } double p##1(double x) { return x + 2; }"]
    lines += [f"#define F{i}(p) F{i - 1}(p##0) F{i - 1}(p##1)" for i in range(2, 13)]
    return "\n".join(lines) + "\nF12(h)\n" + NAIVE


def _macro_bomb() -> str:
    lines = ["#define X0 1.0"] + [f"#define X{i} (X{i - 1} + X{i - 1})" for i in range(1, 24)]
    return "\n".join(lines) + "\nvoid dgemm(int n, const double *A, const double *B, double *C) { C[0] = X23; }\n"


def _data_in_text() -> str:
    return "static const double t[1 << 19] = {1};\n" + NAIVE


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make", "statuses"),
    [
        (_many_symbols, {"ok", "compile_error"}),
        (_macro_bomb, {"compile_error"}),
        (_data_in_text, {"ok", "compile_error"}),
    ],
)
def test_hostile_sources_cost_the_parent_little(tmp_path, make, statuses):
    """Any source gets its status within 10 s, the parent's own memory growing by < 200 MB."""
    import subprocess
    import sys

    src, honest = tmp_path / "candidate.c", tmp_path / "naive.c"
    src.write_text(make())
    honest.write_text(NAIVE)
    out = subprocess.run(
        [sys.executable, "-c", _PARENT_PROBE, str(src), str(honest)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    status, seconds, grown_kb = out[0], float(out[1]), int(out[2])
    assert status in statuses and seconds < 10 and grown_kb < 200 * 1024, out


def test_object_facts_show_openmp_and_explicit_simd_whatever_the_text_says():
    """The object tells OpenMP by its runtime calls and explicit SIMD by the packed arithmetic
    left when auto-vectorization is off: a _Pragma hides no OpenMP, a dead vector variable
    fakes no SIMD, and a plain loop gcc vectorizes by itself is not SIMD code."""
    from pathlib import Path

    from tests.conftest import EXAMPLES, TINY_MEASURE

    attacks = Path(__file__).parent / "kernels" / "detector"
    kernels = {
        "naive": (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text(),
        "intrinsics": (EXAMPLES / "dgemm" / "examples" / "avx2_fma.c").read_text(),
        "pragma operator": (attacks / "ev_omp_Pragma.c").read_text(),
        "dead vector": (attacks / "sp_simd_deadvar.c").read_text(),
        "reordered": (attacks / "ev_reorder_outptr.c").read_text(),
    }
    # One thread: the object's facts do not depend on the count, and a two-thread baseline on a
    # two-core machine beside the other test worker ran 3x below its calibration (suspicious).
    config = dataclasses.replace(TINY_MEASURE, mode="openmp", threads=1, verify_techniques=True)
    results = dict(zip(kernels, evaluate_batch(list(kernels.values()), "dgemm", config, progress=False)))
    assert all(r.status == "ok" for r in results.values()), {k: r.detail for k, r in results.items()}
    assert {k: r.object_facts for k, r in results.items()} == {
        "naive": {"openmp": False, "simd": False},
        "intrinsics": {"openmp": False, "simd": True},
        "pragma operator": {"openmp": True, "simd": False},
        "dead vector": {"openmp": False, "simd": False},
        "reordered": {"openmp": False, "simd": False},
    }
    # Without the second build, SIMD is not judged.
    plain = evaluate_batch(
        [kernels["naive"]], "dgemm", dataclasses.replace(config, verify_techniques=False), progress=False
    )
    assert plain[0].object_facts == {"openmp": False, "simd": None}
