"""The process split and the runner's seccomp filter on their own: candidates that slipped
past every static check (compiled here straight to an object, no checks) must still get
nothing out of the runner's process.

Each candidate computes a correct DGEMM after its attack, so "ok" means the attack was
contained and changed nothing; trapped system calls end the run as `forbidden`. All
attacks are bounded and touch only their own process and a temp dir.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from lab.config import MeasureConfig
from lab.harness import evaluate as ev
from lab.harness import plausibility, sandbox
from lab.harness.build import BuildConfig, link_argv, measurer, runner_stub
from lab.harness.problems import load_problem
from tests.conftest import live_sandbox_processes

pytestmark = pytest.mark.slow  # builds and runs a dozen runners

CONFIG = MeasureConfig(n=64, odd_n=17, min_time_s=0.01, min_reps=3, baseline_min_time_s=0.01, run_timeout_s=10.0)
DGEMM = """
void dgemm(int n, const double *A, const double *B, double *C) {
    attack(n, C);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
"""


def run_unchecked(tmp_path: Path, attack: str) -> ev.EvalResult:
    """Build `attack` + a correct dgemm into a runner without any static check, and measure it."""
    problem, build = load_problem("dgemm"), BuildConfig()
    tmp_path.chmod(0o711)
    work = tmp_path / "work"
    work.mkdir()
    source = (
        "#define _GNU_SOURCE\n#include <errno.h>\n#include <fcntl.h>\n#include <pthread.h>\n#include <sched.h>\n"
        "#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n"
        "#include <sys/mman.h>\n#include <sys/socket.h>\n#include <sys/syscall.h>\n" + textwrap.dedent(attack) + DGEMM
    )
    (work / "candidate.c").write_text(source)
    subprocess.run(
        ["gcc", "-O2", "-fopenmp", "-c", "candidate.c", "-o", "kernel.o"], cwd=work, check=True, capture_output=True
    )
    shutil.copy(measurer(problem, build), tmp_path / "measure")
    shutil.copy(runner_stub(problem, build), tmp_path / "stub.o")
    subprocess.run(link_argv(build, "../stub.o", "kernel.o", "runner") + ["-lpthread"], cwd=work, check=True)
    plausibility.peak_gflops_per_core()  # calibrations lock CPU slots: take them before holding one
    plausibility.bandwidth_gbs(1)
    plausibility.baseline_gflops(problem, 64, CONFIG)
    with sandbox.core_slot(1) as (cores, uid):
        sandbox.prepare_workdir(work, uid)
        nonce = secrets.token_hex(4)
        argv, env = ev.measure_command(problem, CONFIG, nonce)
        limits = sandbox.Limits(wall_s=10, memory_mb=1024 + ev.MEASURER_MB, file_mb=1024, processes=16)
        out = sandbox.run(argv, work, limits, cores, uid, env=env, want_result=True, log_dir=tmp_path)
        try:
            return ev._verdict(out, nonce, problem, CONFIG, limits)
        finally:
            sandbox.remove_tree(work, uid)


ATTACKS = {
    # a system call outside the allow-list ends the run
    "socket": (
        "static void attack(int n, double *C) { (void)n; (void)C; socket(AF_INET, SOCK_STREAM, 0); }",
        "forbidden",
    ),
    "raw_getppid": ("static void attack(int n, double *C) { (void)n; (void)C; syscall(SYS_getppid); }", "forbidden"),
    "nanosleep": ("static void attack(int n, double *C) { (void)n; (void)C; usleep(1); }", "forbidden"),
    # refused quietly: the kernel goes on, and nothing happened
    "write_report": (
        """
        static void attack(int n, double *C) {
            (void)n; (void)C;
            for (int fd = 0; fd < 64; fd++) if (write(fd, "status ok\\ngflops 1e9\\n", 22) > 0) abort();
        }""",
        "ok",
    ),
    "open_file": (
        """
        static void attack(int n, double *C) {
            (void)n; (void)C;
            if (open("/tmp/lab_escape_canary_runner", O_CREAT | O_WRONLY, 0644) >= 0) abort();
        }""",
        "ok",
    ),
    "fork": ("static void attack(int n, double *C) { (void)n; (void)C; if (fork() >= 0) abort(); }", "ok"),
    "affinity": (
        """
        static void attack(int n, double *C) {
            (void)n; (void)C;
            cpu_set_t s; CPU_ZERO(&s); for (int c = 0; c < 64; c++) CPU_SET(c, &s);
            if (sched_setaffinity(0, sizeof s, &s) == 0) abort();
        }""",
        "ok",
    ),
    "exec_memory": (
        """
        static void attack(int n, double *C) {
            (void)n; (void)C;
            void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p != MAP_FAILED) abort();
            void *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (q == MAP_FAILED || mprotect(q, 4096, PROT_READ | PROT_EXEC) == 0) abort();
        }""",
        "ok",
    ),
    "kill_measurer": (
        "static void attack(int n, double *C) { (void)n; (void)C; if (kill(getppid(), SIGKILL) == 0) abort(); }",
        "forbidden",  # kill is not on the list at all (getppid isn't either)
    ),
    # a thread of its own is allowed (OpenMP needs threads) but gains nothing: the runner is frozen between calls
    "background_thread": (
        """
        static volatile int spin;
        static void *loop(void *arg) { (void)arg; for (;;) spin++; return NULL; }
        static void attack(int n, double *C) {
            (void)n; (void)C;
            static int started;
            pthread_t t;
            if (!started++) pthread_create(&t, NULL, loop, NULL);
        }""",
        "ok",
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_runner_contains_what_the_static_checks_missed(tmp_path, name):
    attack, expected = ATTACKS[name]
    result = run_unchecked(tmp_path, attack)
    assert result.status == expected, result.detail
    assert not Path("/tmp/lab_escape_canary_runner").exists()
    assert not live_sandbox_processes()


def test_early_done_is_caught(tmp_path):
    """A kernel that posts "done" itself before computing, then computes: caught by the check."""
    attack = """
    static void attack(int n, double *C) {
        /* the control page sits one page before A; A, B and C are page-aligned, max_n = 64 */
        size_t step = ((size_t)64 * 64 * sizeof(double) + 4095) & ~(size_t)4095;
        unsigned *ctl = (unsigned *)((char *)C - 2 * step - 4096);
        __atomic_store_n(&ctl[2], ctl[1], __ATOMIC_RELEASE);      /* done = go */
        syscall(SYS_futex, &ctl[2], 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0);
        (void)n;
    }
    """
    result = run_unchecked(tmp_path, attack)
    assert result.status == "wrong_result", result.detail


@pytest.mark.parametrize("threads", [1, 2])
def test_every_runner_cpu_second_lies_in_a_window(monkeypatch, threads):
    """The runner runs only while starting and inside requests (thaw to freeze): startup plus the
    requests' CPU time is the runner's own CPU clock, and that clock is the OS's total for the
    reaped process, within 1%. A step that thawed the runner outside request() would show here."""
    reports = []
    parse = ev.parse_report
    monkeypatch.setattr(ev, "parse_report", lambda raw: reports.append(parse(raw)) or reports[-1])
    kernel = (Path(__file__).parents[1] / "harness" / "dgemm" / "examples" / "packed_avx512_omp.c").read_text()
    config = MeasureConfig(n=128, threads=threads, min_time_s=0.3, baseline_min_time_s=0.01)
    result = ev.evaluate_batch([kernel], "dgemm", config, cache=False, progress=False, n_jobs=1)[0]
    if result.status == "compile_error" and "target specific option mismatch" in result.detail:
        pytest.skip("the AVX-512 example does not compile on this CPU")
    assert result.status == "ok", result.detail
    report = {k: float(v) for k, v in reports[-1].items() if k.startswith("runner_") or k == "requests"}
    startup, requests, clock = (
        report["runner_startup_cpu_s"],
        report["runner_request_cpu_s"],
        report["runner_clock_cpu_s"],
    )
    assert clock > 0.25  # at least min_time_s of timed calls
    assert abs(startup + requests - clock) <= 0.01 * clock
    assert abs(report["runner_total_cpu_s"] - clock) <= 0.01 * clock
    # The untimed rest of each request (from "done" to the completed freeze) is a freeze's time.
    assert report["runner_untimed_wall_s"] < 2e-3 * report["requests"]
