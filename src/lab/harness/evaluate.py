"""Evaluate a completion: extract -> static checks -> build -> sandboxed run -> EvalResult.

    result = evaluate(completion_text, "dgemm", MeasureConfig(threads=2))
    results = evaluate_batch(list_of_completions, "dgemm", MeasureConfig())

Every completion ends in exactly one status (lab.config.STATUSES). Only `ok`
carries performance numbers: `gflops` and `time_s` (median of the timed calls)
and, timed in the same binary, `baseline_gflops` of the problem's textbook serial
code and `speedup = gflops / baseline_gflops`. Every result also records where it
was measured: the host, the machine fingerprint (compiler and CPU) and the sandbox's
isolation level. What a status is worth as a reward is decided in one place only,
lab.rl.reward.

The verdict comes from the driver's report on a pipe the candidate has no handle
to, and the parent checks what it can on its own before believing it: the
report's nonce, a checksum of the candidate's last output against a NumPy
reference of the same inputs (the parent regenerates them from the seed), the
arithmetic of the timings, and that nothing was left running.

Identical (completion, problem, measurement config) is measured once: duplicates
in a batch are folded, and results persist in a joblib.Memory cache under
<cache_dir>/evals (lab.paths), keyed also by every file of the problem's folder and
of the C harness, the evaluator's code, the compiler and the CPU model (set
`cache=False` to always measure). `evaluate_batch` spreads
work over core slots with joblib: each job holds `threads` CPUs of its own
(locked machine-wide), runs with OMP_NUM_THREADS/OMP_THREAD_LIMIT set to
`threads`, and is pinned to those CPUs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import secrets
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import joblib
from tqdm.auto import tqdm

from lab import paths
from lab.config import MeasureConfig
from lab.files import tree_hash
from lab.harness import sandbox, static_check
from lab.harness.build import BuildConfig, compile_argv, driver_object, link_argv, preprocess_argv
from lab.harness.extract import FormatError, code_blocks, extract_source
from lab.harness.machine import machine_fingerprint
from lab.harness.problems import Problem, harness_fingerprint, load_problem

#: How many characters of compiler or program output a result's detail keeps.
DETAIL_CHARS = 600


@dataclass
class EvalResult:
    """The verdict on one completion. Performance fields are None unless status == 'ok'."""

    status: str
    gflops: float | None = None
    baseline_gflops: float | None = None
    speedup: float | None = None
    time_s: float | None = None  # median time of one timed call
    compile_s: float = 0.0  # extraction, checks, preprocess, compile and link
    run_s: float = 0.0  # wall time of the sandboxed run
    detail: str = ""
    problem: str = ""
    n: int | None = None
    threads: int | None = None
    reps: int | None = None
    cached: bool = False
    source_sha256: str = ""
    host: str = ""  # where it was measured
    machine: str = ""  # fingerprint of that machine's compiler and CPU (lab.harness.machine)
    isolation: str = ""  # the sandbox isolation level in force (lab.harness.sandbox.isolation_level)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _fail(status: str, detail: str, **kw: Any) -> EvalResult:
    return EvalResult(status=status, detail=detail[:DETAIL_CHARS], **kw)


@cache
def _code_fingerprint() -> str:
    """Hash of the evaluator's own code (every module of lab.harness and the config schema), so a
    changed evaluator never reuses stale results."""
    here = Path(__file__).parent
    return tree_hash(here) + "-" + hashlib.sha256((here.parent / "config.py").read_bytes()).hexdigest()[:8]


def parse_report(raw: bytes) -> dict[str, str]:
    """The driver's report ("key value" lines): the one place it is parsed."""
    out = {}
    for line in raw.decode("ascii", "replace").splitlines():
        key, _, value = line.partition(" ")
        if key:
            out[key] = value
    return out


#: The driver's cap on timed calls (bench.h); tiny sizes may stop there before min_time.
DRIVER_MAX_REPS = 100000


def _cross_check(
    report: dict[str, str], problem: Problem, config: MeasureConfig, run: sandbox.RunOutcome, seed: int
) -> str:
    """The parent's own checks of an 'ok' report; returns a reason, or '' if it holds."""
    try:
        n = int(report["n"])
        time_s, gflops = float(report["time_s"]), float(report["gflops"])
        reps, total = int(report["reps"]), float(report["timed_total_s"])
        checks = [
            (
                int(report["check_seed"]),
                int(report["check_n"]),
                float(report["check_sum"]),
                float(report["check_abs_sum"]),
            ),
            (int(report["check_big_seed"]), n, float(report["check_big_sum"]), float(report["check_big_abs_sum"])),
        ]
        if config.baseline:
            float(report["baseline_gflops"])
    except (KeyError, ValueError) as err:
        return f"incomplete report ({err})"
    if n != (config.n or problem.default_n) or checks[0][1] != (config.odd_n or problem.odd_n):
        return "report is for other sizes than requested"
    # The seeds of the last calls follow from the run's seed (bench.h): the parent knows the inputs.
    base = seed * 1000003
    if (checks[0][0], checks[1][0]) != (base + 6, base + 5):
        return "report names other inputs than the ones the run used"
    if not (time_s > 0 and math.isclose(gflops, problem.flops(n) / time_s * 1e-9, rel_tol=1e-6)):
        return "reported GFLOPS do not match the reported time"
    # The driver times until both minimums are met (or its call cap); the timed calls fit inside the run.
    enough = total >= config.min_time_s or reps >= DRIVER_MAX_REPS
    if reps < config.min_reps or not enough or not time_s <= total <= run.wall_s:
        return "reported timings are inconsistent with the run"
    for check_seed, size, got_sum, got_abs in checks:
        ref = problem.reference(check_seed, size)
        bound = problem.tolerance * size * ref.size * 4
        if not (abs(got_sum - float(ref.sum())) <= bound and abs(got_abs - float(abs(ref).sum())) <= bound):
            return f"checksum of the candidate's output at n={size} does not match the parent's reference"
    return ""


def _verdict(
    run: sandbox.RunOutcome, nonce: str, problem: Problem, config: MeasureConfig, limits: sandbox.Limits, seed: int
) -> EvalResult:
    tail = run.output.strip()[-300:]
    if run.timed_out:
        return _fail("timeout", f"exceeded the {limits.wall_s:g} s run limit")
    if run.signal == signal.SIGXCPU or (run.signal == signal.SIGKILL and run.cpu_s >= limits.cpu_s):
        return _fail("timeout", f"exceeded the {limits.cpu_s} s CPU-time limit")
    if run.survivors:
        return _fail("runtime_error", f"{run.survivors} process(es) could not be killed")
    if run.killed:
        return _fail("runtime_error", f"left {run.killed} process(es) running (killed)")
    if run.signal == signal.SIGXFSZ or run.output_bytes >= limits.file_mb * 1024 * 1024:
        return _fail("runtime_error", f"output flood: wrote past the {limits.file_mb} MiB output limit")
    report = parse_report(run.result)
    if run.signal:
        return _fail("runtime_error", f"killed by {run.signal_name}" + (f": {tail}" if tail else ""))
    if run.returncode != 0:
        return _fail("runtime_error", f"exited with status {run.returncode}" + (f": {tail}" if tail else ""))
    if report.get("nonce") != nonce:
        return _fail("runtime_error", "ended without a valid report")
    if report.get("status") == "wrong_result":
        return _fail("wrong_result", report.get("detail", ""))
    if report.get("status") != "ok":
        return _fail("runtime_error", f"unexpected report status {report.get('status')!r}")
    reason = _cross_check(report, problem, config, run, seed)
    if reason:
        return _fail("wrong_result", f"the parent's cross-check failed: {reason}")
    gflops = float(report["gflops"])
    base = float(report["baseline_gflops"]) if "baseline_gflops" in report else None
    return EvalResult(
        status="ok",
        gflops=gflops,
        time_s=float(report["time_s"]),
        reps=int(report["reps"]),
        baseline_gflops=base,
        speedup=gflops / base if base else None,
    )


def _measure(
    completion: str,
    problem_name: str,
    config: MeasureConfig,
    build: BuildConfig,
    fingerprint: str,
    preferred_slot: int = 0,
) -> EvalResult:
    """Measure one completion from scratch (no cache). `fingerprint` only keys the cache."""
    problem = load_problem(problem_name)
    start = time.monotonic()
    meta = dict(
        problem=problem.name,
        n=config.n or problem.default_n,
        threads=config.threads,
        source_sha256=hashlib.sha256(completion.encode()).hexdigest(),
        host=socket.gethostname(),
        machine=machine_fingerprint(),
        isolation=sandbox.isolation_level(),
    )
    try:
        source = extract_source(completion, problem.signature)
    except FormatError as err:
        # An attack wrapped in a non-conforming answer is still an attack: forbidden outranks format.
        violation = next(filter(None, (static_check.check_source(b, problem) for b in code_blocks(completion))), None)
        status, detail = (violation.status, violation.detail) if violation else ("format_error", str(err))
        return _fail(status, detail, compile_s=time.monotonic() - start, **meta)
    violation = static_check.check_source(source, problem)
    if violation:
        return _fail(violation.status, violation.detail, compile_s=time.monotonic() - start, **meta)
    driver = driver_object(problem, build)
    compile_limits = sandbox.Limits(
        wall_s=config.compile_timeout_s,
        cpu_s=int(config.compile_timeout_s) + 5,
        memory_mb=4096,
        file_mb=64,
        processes=16,
    )
    with (
        sandbox.core_slot(config.threads, preferred_slot) as (cores, uid),
        tempfile.TemporaryDirectory(prefix="lab-eval-") as tmp,
    ):
        work = Path(tmp)
        (work / "candidate.c").write_text(source)
        shutil.copy(driver, work / "driver.o")
        sandbox.prepare_workdir(work, uid)

        def step(argv: list[str], what: str) -> EvalResult | None:
            out = sandbox.run(argv, work, compile_limits, cores, uid)
            if out.timed_out:
                return _fail("compile_error", f"{what} exceeded {config.compile_timeout_s:g} s")
            if out.returncode != 0:
                log = out.output.strip()
                if len(log) > DETAIL_CHARS:  # keep the end, from a line start
                    log = log[-DETAIL_CHARS:].partition("\n")[2]
                return _fail("compile_error", f"{what} failed: {log}")
            return None

        fail = step(preprocess_argv(build, "candidate.c", "candidate.i"), "preprocessing")
        if not fail:
            violation = static_check.check_preprocessed(
                (work / "candidate.i").read_text(errors="replace"), "candidate.c", problem
            )
            fail = violation and _fail(violation.status, violation.detail)
        fail = fail or step(compile_argv(build, "candidate.i", "candidate.o"), "compilation")
        if not fail:
            violation = static_check.check_object(work / "candidate.o", problem)
            fail = violation and _fail(violation.status, violation.detail)
        fail = fail or step(link_argv(build, "driver.o", "candidate.o", "bench"), "linking")
        compile_s = time.monotonic() - start
        if fail:
            return dataclasses.replace(fail, compile_s=compile_s, **meta)

        nonce, seed = secrets.token_hex(8), secrets.randbits(40)
        threads = config.threads
        run_limits = sandbox.Limits(
            wall_s=config.run_timeout_s,
            cpu_s=int(config.run_timeout_s * threads) + 5,
            memory_mb=config.memory_mb,
            file_mb=1,
            processes=threads + 16,
        )
        argv = [
            "./bench",
            "--n",
            str(meta["n"]),
            "--odd-n",
            str(config.odd_n or problem.odd_n),
            "--threads",
            str(threads),
            "--min-time",
            repr(config.min_time_s),
            "--min-reps",
            str(config.min_reps),
            "--baseline",
            str(int(config.baseline)),
            "--baseline-min-time",
            repr(config.baseline_min_time_s),
            "--tol",
            repr(problem.tolerance),
            "--seed",
            str(seed),
            "--nonce",
            nonce,
            "--result-fd",
            "{result_fd}",
        ]
        env = {
            "OMP_NUM_THREADS": str(threads),
            "OMP_THREAD_LIMIT": str(threads),
            "OMP_DYNAMIC": "false",
            "OMP_PROC_BIND": "close",
            "OMP_PLACES": "threads",
        }
        run = sandbox.run(argv, work, run_limits, cores, uid, env=env, want_result=True)
        result = _verdict(run, nonce, problem, config, run_limits, seed)
        return dataclasses.replace(result, compile_s=compile_s, run_s=run.wall_s, **meta)


def _memory() -> joblib.Memory:
    return joblib.Memory(paths.cache_dir() / "evals", verbose=0)


def _fingerprint(problem: Problem) -> str:
    """Everything a measurement depends on besides its arguments: the problem's folder and the C
    harness, the evaluator's code, and the machine (a cache shared between machines must not hand
    one machine's numbers to another)."""
    return f"{problem.fingerprint()}-{harness_fingerprint()}-{_code_fingerprint()}-{machine_fingerprint()}"


def evaluate(
    completion: str, problem: str | Problem, config: MeasureConfig | None = None, cache: bool = True
) -> EvalResult:
    """Score one completion (raw C or chat text) on `problem`."""
    return evaluate_batch([completion], problem, config, cache=cache, n_jobs=1, progress=False)[0]


def evaluate_batch(
    completions: Iterable[str],
    problem: str | Problem,
    config: MeasureConfig | None = None,
    cache: bool = True,
    n_jobs: int | None = None,
    progress: bool = True,
    backend: str | None = None,
    build: BuildConfig | None = None,
) -> list[EvalResult]:
    """Score many completions in parallel, one core slot per job; results keep the input order.

    `cache=False` measures every completion afresh. `backend` is any joblib backend ("loky" by
    default; "dask" or "ray" once their cluster is set up), which is how a batch scales past
    one machine.
    """
    config = config or MeasureConfig()
    build = build or BuildConfig()
    problem = problem if isinstance(problem, Problem) else load_problem(problem)
    completions = list(completions)
    unique = list(dict.fromkeys(completions))
    fingerprint = _fingerprint(problem)
    measure = _memory().cache(_measure, ignore=["preferred_slot"]) if cache else _measure
    done: dict[str, tuple[EvalResult, bool]] = {}
    todo = []
    for text in unique:
        if cache and measure.check_call_in_cache(text, problem.name, config, build, fingerprint):
            done[text] = (measure(text, problem.name, config, build, fingerprint), True)
        else:
            todo.append(text)
    if todo:
        slots = max(1, len(os.sched_getaffinity(0)) // config.threads)
        if backend in (None, "loky", "multiprocessing", "threading"):
            n_jobs = min(n_jobs or slots, slots, len(todo))  # one job per local core slot
        else:  # a cluster backend: each worker node locks its own CPUs
            n_jobs = n_jobs or -1
        jobs = (
            joblib.delayed(measure)(text, problem.name, config, build, fingerprint, i % n_jobs)
            for i, text in enumerate(todo)
        )
        if n_jobs == 1:
            outputs = (job[0](*job[1], **job[2]) for job in jobs)
        else:
            outputs = joblib.Parallel(n_jobs=n_jobs, backend=backend, return_as="generator")(jobs)
        bar = tqdm(outputs, total=len(todo), desc=f"scoring {problem.name}", unit="kernel", disable=not progress)
        for text, result in zip(todo, bar):
            done[text] = (result, False)
    # The first occurrence of a duplicate is the measured one; the rest are cache answers.
    seen: set[str] = set()
    results = []
    for text in completions:
        result, cached = done[text]
        results.append(dataclasses.replace(result, cached=cached or text in seen))
        seen.add(text)
    return results
