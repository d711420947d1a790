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
from lab.harness.machine import machine_fingerprint
from lab.harness.problems import harness_fingerprint, load_problem
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
    expected = dict(host=socket.gethostname(), machine=machine_fingerprint(), isolation=sandbox.isolation_level())
    assert expected["isolation"] == ("namespaces" if sandbox.is_root() else "rlimits")
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
    return ev._fingerprint(load_problem("dgemm"))


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
    with open(harness_copy / "bench.h", "a") as f:  # the shared C harness
        f.write("\n")
    assert changed() and harness_fingerprint() not in keys[-2]
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


RUN_SEED = 5


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
    base = RUN_SEED * 1000003 + seed_shift
    ref, big = problem.reference(base + 6, odd), problem.reference(base + 5, n)
    s, a = checksum or (float(ref.sum()), float(abs(ref).sum()))
    bs, ba = big_checksum or (float(big.sum()), float(abs(big).sum()))
    total = total if total is not None else time_s * reps
    return (
        f"nonce {nonce}\nstatus ok\ndetail -\ncheck_seed {base + 6}\ncheck_n {odd}\ncheck_sum {s!r}\n"
        f"check_abs_sum {a!r}\ncheck_big_seed {base + 5}\ncheck_big_sum {bs!r}\ncheck_big_abs_sum {ba!r}\n"
        f"n {n}\nthreads 1\nreps {reps}\ntimed_total_s {total}\ntime_s {time_s}\n"
        f"gflops {problem.flops(n) / time_s * 1e-9}\nbaseline_gflops 1.0\n"
    ).encode()


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
        ({"seed_shift": 7}, "wrong_result"),  # checksums of inputs the run did not use
    ],
)
def test_parent_cross_check_rejects_forged_reports(tamper, status):
    """A report the driver did not write (or one about other work) must not pass."""
    problem = load_problem("dgemm")
    cfg = dataclasses.replace(SMALL, odd_n=77)
    result = ev._verdict(_run(_report(problem, **tamper)), "abc", problem, cfg, sandbox.Limits(), RUN_SEED)
    assert result.status == status, result.detail


def test_verdict_maps_signals_and_limits():
    problem, cfg, limits = load_problem("dgemm"), SMALL, sandbox.Limits(cpu_s=10)
    crash = dataclasses.replace(_run(b""), returncode=None, signal=11)
    assert ev._verdict(crash, "x", problem, cfg, limits, RUN_SEED).detail.startswith("killed by SIGSEGV")
    cpu = dataclasses.replace(_run(b""), returncode=None, signal=24)
    assert ev._verdict(cpu, "x", problem, cfg, limits, RUN_SEED).status == "timeout"
    flood = dataclasses.replace(_run(b""), returncode=None, signal=25)
    assert "output flood" in ev._verdict(flood, "x", problem, cfg, limits, RUN_SEED).detail
    left = dataclasses.replace(_run(_report(problem)), killed=2)
    assert ev._verdict(left, "abc", problem, cfg, limits, RUN_SEED).status == "runtime_error"
    silent = _run(b"")
    assert ev._verdict(silent, "x", problem, cfg, limits, RUN_SEED).detail == "ended without a valid report"


@pytest.mark.parametrize("name", ["dgemm", "dgemv"])
def test_driver_exports_only_main(name):
    """Reference and baseline are static: a candidate cannot call or replace them by name."""
    import subprocess

    from lab.harness.build import BuildConfig, driver_object

    obj = driver_object(load_problem(name), BuildConfig())
    symbols = subprocess.run(
        ["nm", "-P", "--defined-only", "--extern-only", str(obj)], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert [line.split()[0] for line in symbols if line.strip()] == ["main"]
