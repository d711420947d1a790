"""Evaluate a completion: extract -> static checks -> build -> sandboxed measurement -> EvalResult.

    result = evaluate(completion_text, "dgemm", MeasureConfig(threads=2))
    results = evaluate_batch(list_of_completions, "dgemm", MeasureConfig())

Every completion ends in exactly one status (lab.config.STATUSES). Only `ok`
carries performance numbers: `gflops` and `time_s` (median of the timed calls,
less the handshake's cost) and, timed by the measurer before the candidate's
process exists, `baseline_gflops` of the problem's textbook serial code and
`speedup = gflops / baseline_gflops`. Every result also records where it was
measured: the host, the machine fingerprint (compiler and CPU) and the sandbox's
isolation level. What a status is worth as a reward is decided in one place only,
lab.rl.reward.

The candidate runs in its own process (`runner`), which the trusted `measure`
program drives through shared memory (harness/bench.h); the verdict comes from the
measurer's report on a pipe only it holds. The parent checks what it can on its own
before believing it: the report's nonce, a checksum of the candidate's last outputs
against a NumPy reference of the same inputs (regenerated from the seeds the report
names), the arithmetic of the timings, that nothing was left running, and that the
numbers are possible on this machine (lab.harness.plausibility: else `suspicious`).

Failures are kept apart by cause. The candidate's own (every status but the two
below) are cached like any result. The host's (a SIGKILL that none of our limits
sent, a compiler that died without a word, a sandbox uid that cannot be cleared)
are retried once and never cached. Any exception of the harness itself becomes
`harness_error` with the exception's last line in `detail`: never cached, never
raised into a training batch.

Identical (completion, problem, measurement config) is measured once: duplicates
in a batch are folded, and results persist in a joblib.Memory cache under
<cache_dir>/evals (lab.paths), keyed also by every file of the problem's folder and
of the C harness, the evaluator's code, and the compiler and CPU model of the machine
that measures (set `cache=False` to always measure). `evaluate_batch` spreads work over
core slots with joblib, each job holding `threads` CPUs of its own (locked machine-wide),
or over the workers of a Dask cluster (ComputeConfig, lab.harness.cluster), each measuring
on its own host.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import joblib
from tqdm.auto import tqdm

from lab import paths
from lab.config import ComputeConfig, MeasureConfig
from lab.harness import cluster, plausibility, sandbox, static_check, target
from lab.harness.build import (
    NO_AUTOVECTORIZE,
    BuildConfig,
    compile_argv,
    link_argv,
    localize_argv,
    measurer,
    preprocess_argv,
    runner_stub,
)
from lab.harness.extract import FormatError, code_blocks, extract_source
from lab.harness.machine import BLAS_PROBLEMS, machine_class
from lab.harness.problems import Problem, load_problem
from lab.provenance import measurement_version

#: How many characters of compiler or program output a result's detail keeps.
DETAIL_CHARS = 600


@dataclass
class EvalResult:
    """The verdict on one completion. Performance fields are None unless status == 'ok'."""

    status: str
    gflops: float | None = None
    baseline_gflops: float | None = None
    speedup: float | None = None
    time_s: float | None = None  # median time of one timed call, less the handshake's
    handshake_s: float | None = None  # a request's overhead (thaw, priming, round trip), subtracted from time_s
    compile_s: float = 0.0  # extraction, checks, preprocess, compile and link
    run_s: float = 0.0  # wall time of the sandboxed run
    detail: str = ""
    problem: str = ""
    n: int | None = None
    threads: int | None = None
    mode: str = ""  # the execution model: serial or openmp
    reps: int | None = None
    cached: bool = False
    source_sha256: str = ""
    host: str = ""  # where it was measured
    worker: str = ""  # the Dask worker that measured it ("" when measured by this machine's pool)
    machine: str = ""  # fingerprint of that machine's compiler and CPU (lab.harness.machine)
    # That machine's calibration when it measured: its peak GFLOP/s per core and, for problems with
    # a BLAS reference (dgemm, dgemv), OpenBLAS's GFLOP/s at the result's size and threads.
    calibration: dict[str, float] | None = None
    isolation: str = ""  # the sandbox isolation level in force (lab.harness.sandbox.isolation_level)
    # What the compiled object shows of its techniques (lab.harness.static_check.object_facts):
    # {"openmp": bool, "simd": bool or None (not checked)}; None when nothing was compiled.
    object_facts: dict[str, bool | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _fail(status: str, detail: str, **kw: Any) -> EvalResult:
    return EvalResult(status=status, detail=detail[:DETAIL_CHARS], **kw)


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
#: Limits of the preprocessing step (it only expands text; a blow-up is cut off here).
PREPROCESS_TIMEOUT_S = 5.0
#: Memory of the measurer beside the kernel's budget (its private copies and reference), in MiB.
MEASURER_MB = 512


class _HostFault(Exception):
    """A failure the machine caused, not the candidate: retried once, never cached."""

    def __init__(self, result: EvalResult):
        super().__init__(result.detail)
        self.result = result


def cross_check(report: dict[str, str], problem: Problem, config: MeasureConfig, wall_s: float) -> str:
    """The parent's own checks of an 'ok' report of a run that took `wall_s`; returns a reason,
    or '' if it holds."""
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
    if n != (config.n or problem.timed_n(config.mode)) or checks[0][1] != (config.odd_n or problem.odd_n):
        return "report is for other sizes than requested"
    if not (time_s > 0 and math.isclose(gflops, problem.flops(n) / time_s * 1e-9, rel_tol=1e-6)):
        return "reported GFLOPS do not match the reported time"
    # The driver times until both minimums are met (or its call cap); the timed calls fit inside the run.
    enough = total >= config.min_time_s or reps >= DRIVER_MAX_REPS
    if reps < config.min_reps or not enough or not time_s <= total <= wall_s:
        return "reported timings are inconsistent with the run"
    for check_seed, size, got_sum, got_abs in checks:
        ref = problem.reference(check_seed, size)
        bound = problem.tolerance * size * ref.size * 4
        if not (abs(got_sum - float(ref.sum())) <= bound and abs(got_abs - float(abs(ref).sum())) <= bound):
            return f"checksum of the candidate's output at n={size} does not match the parent's reference"
    return ""


def _host_killed(run: sandbox.RunOutcome, limits: sandbox.Limits) -> bool:
    """A SIGKILL that none of our limits sent (not the timer, CPU limit or the cgroup's OOM killer)."""
    return run.signal == signal.SIGKILL and not run.timed_out and run.cpu_s < limits.cpu_s and not run.oom_killed


def _verdict(
    run: sandbox.RunOutcome, nonce: str, problem: Problem, config: MeasureConfig, limits: sandbox.Limits
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
    if run.oom_killed:
        return _fail("runtime_error", f"exceeded the memory limit ({limits.memory_mb} MiB for the whole evaluation)")
    if _host_killed(run, limits):
        raise _HostFault(_fail("runtime_error", "killed by the host (a SIGKILL none of the sandbox's limits sent)"))
    if run.signal == signal.SIGXFSZ or run.output_bytes >= limits.file_mb * 1024 * 1024:
        return _fail("runtime_error", f"output flood: wrote past the {limits.file_mb} MiB output limit")
    report = parse_report(run.result)
    if run.signal:
        return _fail("runtime_error", f"killed by {run.signal_name}" + (f": {tail}" if tail else ""))
    if run.returncode != 0:
        return _fail("runtime_error", f"exited with status {run.returncode}" + (f": {tail}" if tail else ""))
    if report.get("nonce") != nonce:
        return _fail("runtime_error", "ended without a valid report")
    status, detail = report.get("status"), report.get("detail", "")
    if status == "runtime_error" and detail.endswith("killed by KILL"):
        # The runner got a SIGKILL: from the cgroup's OOM killer (handled above) or from the host.
        raise _HostFault(_fail("runtime_error", f"{detail} (not by the sandbox's limits: the host)"))
    if status in ("wrong_result", "runtime_error", "forbidden", "suspicious"):
        return _fail(status, detail)
    if status != "ok":
        return _fail("runtime_error", f"unexpected report status {status!r}")
    reason = cross_check(report, problem, config, run.wall_s)
    if reason:
        return _fail("wrong_result", f"the parent's cross-check failed: {reason}")
    gflops = float(report["gflops"])
    base = float(report["baseline_gflops"]) if "baseline_gflops" in report else None
    doubt = plausibility.violation(gflops, config.threads, base, problem, int(report["n"]), config)
    if doubt:
        return _fail("suspicious", doubt)
    return EvalResult(
        status="ok",
        gflops=gflops,
        time_s=float(report["time_s"]),
        handshake_s=float(report["handshake_s"]),
        reps=int(report["reps"]),
        baseline_gflops=base,
        speedup=gflops / base if base else None,
    )


def _step_failure(out: sandbox.RunOutcome, what: str, timeout_s: float, limits: sandbox.Limits) -> EvalResult | None:
    """The verdict on one build step (None: it worked)."""
    if out.timed_out:
        return _fail("compile_error", f"{what} exceeded {timeout_s:g} s")
    if out.returncode == 0 and not out.signal:
        return None
    log = out.output.strip()
    # Only the compiler driver's own lines count (a line of the candidate's source or an #error
    # can say anything): "cc1: out of memory ...", "gcc: fatal error: Killed signal ...".
    driver_lines = [line for line in log.splitlines() if re.match(r"^(cc1|gcc|collect2|ld|as|lto1)\S*: ", line)]
    if out.oom_killed or any("out of memory" in x or "virtual memory exhausted" in x for x in driver_lines):
        return _fail("compile_error", f"{what} exceeded the {limits.memory_mb} MiB memory limit")
    if out.signal == signal.SIGXFSZ:
        return _fail("compile_error", f"{what} wrote past the {limits.file_mb} MiB output limit")
    if _host_killed(out, limits) or not log or any("Killed signal terminated program" in x for x in driver_lines):
        raise _HostFault(_fail("compile_error", f"{what} died without a diagnostic (the host, not the source)"))
    if len(log) > DETAIL_CHARS:  # keep the end, from a line start
        log = log[-DETAIL_CHARS:].partition("\n")[2]
    return _fail("compile_error", f"{what} failed: {log}")


def _static(completion: str, problem: Problem, openmp: bool) -> tuple[str | None, EvalResult | None]:
    """Extraction and the source checks: (source, None) or (None, the failure)."""
    if len(completion.encode("utf-8", "replace")) > static_check.MAX_COMPLETION_BYTES:
        return None, _fail("format_error", f"the answer exceeds {static_check.MAX_COMPLETION_BYTES >> 10} KiB")
    try:
        source = extract_source(completion, problem.signature)
    except FormatError as err:
        # An attack wrapped in a non-conforming answer is still an attack: forbidden outranks format.
        violation = next(
            filter(None, (static_check.check_source(b, problem, openmp) for b in code_blocks(completion))), None
        )
        return None, _fail(violation.status, violation.detail) if violation else _fail("format_error", str(err))
    if len(source.encode("utf-8", "replace")) > static_check.MAX_SOURCE_BYTES:
        return None, _fail("format_error", f"the code exceeds {static_check.MAX_SOURCE_BYTES >> 10} KiB")
    violation = static_check.check_source(source, problem, openmp)
    return (None, _fail(violation.status, violation.detail)) if violation else (source, None)


def measure_command(problem: Problem, config: MeasureConfig, nonce: str) -> tuple[list[str], dict[str, str]]:
    """argv and environment of `measure` in a work dir holding `runner`, with `measure` one level up."""
    threads = config.threads
    argv = ["../measure", "--runner", "./runner", "--n", str(config.n or problem.timed_n(config.mode))]
    argv += ["--odd-n", str(config.odd_n or problem.odd_n), "--threads", str(threads)]
    argv += ["--min-time", repr(config.min_time_s), "--min-reps", str(config.min_reps)]
    argv += ["--baseline", str(int(config.baseline)), "--baseline-min-time", repr(config.baseline_min_time_s)]
    argv += ["--tol", repr(problem.tolerance), "--nonce", nonce, "--result-fd", "{result_fd}"]
    argv += ["--kernel-memory-mb", str(config.memory_mb)]
    env = {
        "OMP_NUM_THREADS": str(threads),
        "OMP_THREAD_LIMIT": str(threads),
        "OMP_DYNAMIC": "false",
        "OMP_MAX_ACTIVE_LEVELS": "1",
        # Bound at start-up, before the runner's seccomp filter refuses affinity changes.
        "OMP_PROC_BIND": "close",
        "OMP_PLACES": "cores",
    }
    return argv, env


def _measure_once(
    completion: str, problem: Problem, config: MeasureConfig, build: BuildConfig, preferred_slot: int, slot_threads: int
) -> EvalResult:
    """One attempt: everything from the source to the verdict (meta fields are added by the caller).
    The build and the run hold `slot_threads` CPUs (at least the run's threads) of this host."""
    start = time.monotonic()
    source, failure = _static(completion, problem, config.openmp)
    if failure:
        return dataclasses.replace(failure, compile_s=time.monotonic() - start)
    measure_exe, stub = measurer(problem, build), runner_stub(problem, build)
    build_limits = sandbox.Limits(
        wall_s=config.compile_timeout_s,
        cpu_s=int(config.compile_timeout_s) + 5,
        memory_mb=4096,
        file_mb=64,
        processes=16,
    )
    preprocess_limits = dataclasses.replace(
        build_limits,
        wall_s=min(PREPROCESS_TIMEOUT_S, config.compile_timeout_s),
        file_mb=static_check.MAX_PREPROCESSED_BYTES >> 20,
        memory_mb=1024,
    )
    with sandbox.core_slot(max(slot_threads, config.threads), preferred_slot) as (cores, uid):
        # tmp (the parent's, 0711): measure, stub.o and the logs; tmp/work (the sandbox uid's): the rest.
        tmp = Path(tempfile.mkdtemp(prefix="lab-eval-"))
        work = tmp / "work"
        try:
            os.chmod(tmp, 0o711)
            work.mkdir()
            (work / "candidate.c").write_text(source)
            shutil.copy(measure_exe, tmp / "measure")
            shutil.copy(stub, tmp / "stub.o")
            os.chmod(tmp / "measure", 0o755)
            os.chmod(tmp / "stub.o", 0o644)
            sandbox.prepare_workdir(work, uid)

            def step(argv: list[str], what: str, limits: sandbox.Limits = build_limits) -> EvalResult | None:
                out = sandbox.run(argv, work, limits, cores, uid, log_dir=tmp)
                return _step_failure(out, what, limits.wall_s, limits)

            fail = step(preprocess_argv(build, "candidate.c", "candidate.i"), "preprocessing", preprocess_limits)
            if not fail:
                violation = static_check.check_preprocessed_file(
                    work / "candidate.i", "candidate.c", problem, config.openmp, build.cc
                )
                fail = violation and _fail(violation.status, violation.detail)
            fail = fail or step(compile_argv(build, "candidate.i", "candidate.o"), "compilation")
            if not fail:
                violation = static_check.check_object(work / "candidate.o", problem, config.openmp)
                fail = violation and _fail(violation.status, violation.detail)
            facts = None
            if not fail and config.verify_techniques:
                fail = step(
                    compile_argv(build, "candidate.i", "novec.o", NO_AUTOVECTORIZE),
                    "compilation (no auto-vectorization)",
                )
            if not fail:
                novec = work / "novec.o" if config.verify_techniques else None
                try:
                    facts = static_check.object_facts(work / "candidate.o", novec)
                except static_check.ToolError as err:
                    fail = _fail("compile_error", f"the object could not be inspected: {err}")
            fail = fail or step(localize_argv(problem.function, "candidate.o", "kernel.o"), "localizing symbols")
            # Relative paths: the sandbox mounts an empty /tmp over the one `tmp` lives in, but its
            # working directory (entered before that) still leads to `tmp` through "..".
            fail = fail or step(link_argv(build, "../stub.o", "kernel.o", "runner"), "linking")
            compile_s = time.monotonic() - start
            if fail:
                return dataclasses.replace(fail, compile_s=compile_s)

            nonce, threads = secrets.token_hex(8), config.threads
            run_limits = sandbox.Limits(
                wall_s=config.run_timeout_s,
                cpu_s=int(config.run_timeout_s * threads) + 5,
                memory_mb=config.memory_mb + MEASURER_MB,
                # RLIMIT_FSIZE also caps the shared-memory file (memfd) of the inputs and outputs;
                # the kernel's process cannot write a file at all (seccomp).
                file_mb=config.memory_mb,
                processes=threads + 8,
            )
            argv, env = measure_command(problem, config, nonce)
            # The run gets its own threads' CPUs; the rest of a wider slot (threads_per_eval) stays idle.
            run = sandbox.run(argv, work, run_limits, cores[:threads], uid, env=env, want_result=True, log_dir=tmp)
            result = _verdict(run, nonce, problem, config, run_limits)
            return dataclasses.replace(result, compile_s=compile_s, run_s=run.wall_s, object_facts=facts)
        finally:
            sandbox.remove_tree(work, uid)
            sandbox.remove_tree(tmp, None)


def _measure(
    completion: str,
    problem_name: str,
    config: MeasureConfig,
    build: BuildConfig,
    preferred_slot: int = 0,
    slot_threads: int = 1,
) -> EvalResult:
    """Measure one completion from scratch (no cache), on this host: the result records the host,
    its machine class, its isolation level and its calibration.

    A host fault is retried once; if it repeats, _HostFault carries the result out, so that the
    cache never stores it."""
    target.use(build.tier)  # a pool's process, or a cluster's worker, works at the caller's tier
    problem = load_problem(problem_name)
    n = config.n or problem.timed_n(config.mode)
    # Calibrations first (once per machine), while this process holds no CPU slot: they lock them all.
    calibration = {
        "peak_gflops_per_core": plausibility.peak_gflops_per_core(),
        # The memory hierarchy's best GB/s per level and cache bytes at these threads (the bandwidth bound).
        **plausibility.bandwidth_record(config.threads),
    }
    if problem.name in BLAS_PROBLEMS:
        calibration["openblas_gflops"] = plausibility.openblas_gflops(problem.name, n, config.threads)
    if config.baseline:
        plausibility.baseline_gflops(problem, n, config)
    meta = dict(
        problem=problem.name,
        n=n,
        threads=config.threads,
        mode=config.mode,
        source_sha256=hashlib.sha256(completion.encode()).hexdigest(),
        host=socket.gethostname(),
        machine=machine_class(),
        isolation=sandbox.isolation_level(),
        calibration=calibration,
    )
    for attempt in (1, 2):
        try:
            once = _measure_once(completion, problem, config, build, preferred_slot, slot_threads)
            return dataclasses.replace(once, **meta)
        except (_HostFault, sandbox.SandboxBusy) as err:
            if attempt == 2:
                result = err.result if isinstance(err, _HostFault) else _fail("harness_error", str(err))
                raise _HostFault(dataclasses.replace(result, **meta)) from None
    raise AssertionError("unreachable")


def _remember(
    completion: str,
    problem_name: str,
    config: MeasureConfig,
    build: BuildConfig,
    fingerprint: str,
    preferred_slot: int = 0,
    slot_threads: int = 1,
    measured: EvalResult | None = None,
    measure_here: bool = True,
) -> EvalResult:
    """The cached function: measures here, or stores a result `measured` elsewhere (a cluster
    worker's, which the client writes only once it has it, so a worker that dies mid-run leaves
    nothing in the cache). `fingerprint` only keys the cache, with the arguments before it.
    `measure_here=False` only reads: a miss raises _NotCached instead of measuring on this host."""
    if measured is not None:
        return measured
    if not measure_here:
        raise _NotCached()
    return _measure(completion, problem_name, config, build, preferred_slot, slot_threads)


class _NotCached(Exception):
    """A cache entry that vanished between the check and the read (the cluster measures it)."""


_CACHE_IGNORES = ["preferred_slot", "slot_threads", "measured", "measure_here"]


def _harness_error(err: BaseException, problem: str, config: MeasureConfig) -> EvalResult:
    last = traceback.format_exception_only(type(err), err)[-1].strip()
    return _fail(
        "harness_error",
        last,
        problem=problem,
        threads=config.threads,
        mode=config.mode,
        host=socket.gethostname(),
        isolation=sandbox.isolation_level(),
    )


def _score(measure, completion: str, problem: str, config: MeasureConfig, *args) -> EvalResult:
    """One job: a result whatever happens (host faults come back uncached, exceptions as harness_error)."""
    return _score_here(measure, completion, problem, config, *args)[0]


def _score_here(measure, completion: str, problem: str, config: MeasureConfig, *args) -> tuple[EvalResult, bool]:
    """(result, whether it may be cached) of `measure(completion, problem, config, *args)`: a host
    fault's or the harness's own failure comes back as a result, flagged not to be cached."""
    try:
        return measure(completion, problem, config, *args), True
    except _HostFault as fault:
        return fault.result, False
    except Exception as err:  # noqa: BLE001 - the harness must never raise on a candidate
        error = _harness_error(err, problem, config)
        return dataclasses.replace(error, source_sha256=hashlib.sha256(completion.encode()).hexdigest()), False


def score_on_worker(
    completion: str, problem: str, config: MeasureConfig, build: BuildConfig, slot_threads: int
) -> tuple[EvalResult, bool]:
    """The task a Dask worker runs (lab.harness.cluster): measure on the worker's own host, with
    its CPU slots and calibration, and name the worker in the result. No cache is written there."""
    from distributed import get_worker  # noqa: PLC0415 - runs only inside a Dask worker

    result, keep = _score_here(_measure, completion, problem, config, build, 0, slot_threads)
    worker = get_worker()
    # A worker being shut down (a job's walltime, scancel) has its processes signalled too: a
    # verdict it still sends may be the shutdown's doing, so the client does not cache it.
    keep = keep and worker.status.name == "running"
    return dataclasses.replace(result, worker=worker.name if isinstance(worker.name, str) else worker.address), keep


def _memory() -> joblib.Memory:
    return joblib.Memory(paths.cache_dir() / "evals", verbose=0)


def worker_facts() -> dict[str, str]:
    """What a cluster worker measures with (it runs there): its host, machine and code."""
    return {"host": socket.gethostname(), "machine": machine_class(), "evaluator": measurement_version()}


def _fingerprint(problem: Problem, machine: str) -> str:
    """Everything a measurement depends on besides its arguments: the problem's folder, the
    measurement version of the code (lab.provenance: the C harness and the modules on the
    measuring path, comments and docstrings aside), and the machine that measures (a cache
    shared between machines must not hand one machine's numbers to another)."""
    return f"{problem.fingerprint()}-{measurement_version()}-{machine}"


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
    build: BuildConfig | None = None,
    compute: ComputeConfig | None = None,
) -> list[EvalResult]:
    """Score many completions in parallel, one CPU slot per job; results keep the input order.

    Never raises because of a completion: each gets a result, `harness_error` included; raises
    lab.harness.target.UnsupportedMachine where this machine's tier cannot be measured (aarch64,
    for now). `cache=False` measures every completion afresh. `compute` says where: this machine's core
    slots (joblib's process pool, `n_jobs` at most; the pool's processes write the cache), or
    the workers of a Dask scheduler (lab.harness.cluster), each measuring on its own host; the
    cache is then written by this process only, from the results it received.
    """
    if target.tier().arch != "x86_64":  # the object checks read x86 instructions only
        raise target.UnsupportedMachine(f"measuring at tier {target.current()} is not supported yet (x86-64 only)")
    config = config or MeasureConfig()
    build = build or BuildConfig()
    compute = compute or ComputeConfig()
    problem = problem if isinstance(problem, Problem) else load_problem(problem)
    completions = list(completions)
    unique = list(dict.fromkeys(completions))
    session = None
    if compute.backend == "dask":
        session = cluster.connect(compute.address, worker_facts, measurement_version())
    fingerprint = _fingerprint(problem, session.cluster_machine() if session else machine_class())
    slot_threads = compute.slot_threads(config.threads)
    remember = _memory().cache(_remember, ignore=_CACHE_IGNORES) if cache else None
    done: dict[str, tuple[EvalResult, bool]] = {}
    todo = []
    for text in unique:
        if remember and remember.check_call_in_cache(text, problem.name, config, build, fingerprint):
            try:  # on a cluster, an entry gone since the check is measured there, not here
                done[text] = (remember(text, problem.name, config, build, fingerprint, measure_here=not session), True)
                continue
            except _NotCached:
                pass
        todo.append(text)
    bar = tqdm(total=len(todo), desc=f"scoring {problem.name}", unit="kernel", disable=not progress or not todo)
    try:
        if session is not None:
            for text, out in session.map(score_on_worker, todo, problem.name, config, build, slot_threads):
                # A task that failed (its workers died, or the cluster went away) is the harness's fault.
                result, keep = out if isinstance(out, tuple) else (_harness_error(out, problem.name, config), False)
                if remember and keep:
                    try:
                        remember(text, problem.name, config, build, fingerprint, measured=result)
                    except Exception as err:  # noqa: BLE001 - a full disk loses a cache entry, not the result
                        print(f"lab: could not cache a result ({type(err).__name__}: {err})", file=sys.stderr)
                done[text] = (result, False)
                bar.update()
        elif todo:
            _score_locally(todo, done, bar, remember, problem.name, config, build, fingerprint, slot_threads, n_jobs)
    finally:
        bar.close()
    # The first occurrence of a duplicate is the measured one; the rest are cache answers.
    seen: set[str] = set()
    results = []
    for text in completions:
        result, cached = done[text]
        results.append(dataclasses.replace(result, cached=cached or text in seen))
        seen.add(text)
    return results


def _score_locally(todo, done, bar, remember, problem_name, config, build, fingerprint, slot_threads, n_jobs) -> None:
    """Score `todo` on this machine's core slots with joblib, into `done`. The cached function runs
    in the pool's processes and writes the cache itself, as soon as it has a verdict."""
    slots = max(1, len(os.sched_getaffinity(0)) // slot_threads)
    n_jobs = min(n_jobs or slots, slots, len(todo))  # one job per local core slot
    if remember:
        measure, args = remember, (fingerprint,)
    else:
        measure, args = _measure, ()
    jobs = (
        joblib.delayed(_score)(measure, text, problem_name, config, build, *args, i % n_jobs, slot_threads)
        for i, text in enumerate(todo)
    )
    if n_jobs == 1:
        outputs = (job[0](*job[1], **job[2]) for job in jobs)
    else:
        outputs = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    try:
        for text, result in zip(todo, outputs):
            done[text] = (result, False)
            bar.update()
    except Exception as err:  # noqa: BLE001 - a worker pool that died: the rest become harness_error
        for text in todo:
            done.setdefault(text, (_harness_error(err, problem_name, config), False))


# The measuring code this process runs, hashed as it is imported: a cluster worker that stays up
# while its checkout is updated still reports the code it loaded, not the files now on disk.
measurement_version()
