"""A kernel's correctness on another architecture, under user-mode emulation (qemu-user).

The harness measures on the machine it runs on. To see whether the C harness and a kernel work
on a CPU that is not at hand (aarch64 on an x86-64 machine), this module builds the problem's
driver and the kernel with a cross compiler and runs them under qemu-user:

- both halves are linked statically (no foreign C library needs to be installed for the
  emulator), and the runner is started through a two-line script that runs it under qemu;
- the runner is built with -DLAB_UNSANDBOXED (harness/bench.h): qemu-user cannot install a
  seccomp filter, and the runner's closing of every descriptor would close the emulator's own.
  So **this runs the kernel without the sandbox**: it is for the lab's own example kernels and a
  user's own code, never for a policy's completions;
- the verdict is a correctness check only: the driver's status (its full checks at both sizes)
  and the parent's own recomputation of the reported checksums (lab.harness.evaluate). No time
  or speed comes out of it: emulated time says nothing about the CPU emulated.

`lab score FILE --problem P --emulate aarch64` runs it from the command line.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lab.config import MeasureConfig
from lab.harness.evaluate import cross_check, measure_command, parse_report
from lab.harness.problems import load_problem

#: The cross compiler and the emulator of each architecture (Debian's package names in the docs).
TOOLS = {"aarch64": ("aarch64-linux-gnu-gcc", "qemu-aarch64")}
#: The target flags of the architecture's base tier (lab.harness.target): its portable baseline.
MARCH = {"aarch64": ("-march=armv8-a",)}
#: Small sizes: emulation is tens of times slower than the machine, and only correctness is asked.
CHECK = MeasureConfig(n=64, odd_n=33, min_time_s=0.01, min_reps=2, baseline=False, run_timeout_s=120.0)


class EmulationUnavailable(RuntimeError):
    """The cross compiler or the emulator of an architecture is not installed: one line to show."""


@dataclass(frozen=True)
class EmulatedVerdict:
    status: str  # a harness status (ok, compile_error, wrong_result, runtime_error, timeout)
    detail: str
    arch: str


def missing_tools(arch: str) -> list[str]:
    """The tools `arch` needs that this machine lacks (unknown architecture: ValueError)."""
    if arch not in TOOLS:
        raise ValueError(f"no emulated checks for {arch!r}; known: {', '.join(TOOLS)}")
    return [tool for tool in TOOLS[arch] if shutil.which(tool) is None]


def check_emulated(source: str, problem_name: str, arch: str = "aarch64", mode: str = "serial") -> EmulatedVerdict:
    """Build `source` for `problem_name` on `arch` and check it under emulation (see the module
    docstring: unsandboxed, correctness only). Raises EmulationUnavailable without the tools."""
    missing = missing_tools(arch)
    if missing:
        raise EmulationUnavailable(
            f"checking on {arch} needs {', '.join(missing)} (Debian: gcc-{arch}-linux-gnu, qemu-user)"
        )
    cc, emulator = TOOLS[arch]
    problem = load_problem(problem_name)
    config = CHECK.for_mode(mode)
    driver = str(problem.driver_path)
    common = ["-O3", *MARCH[arch], "-fopenmp"]
    with tempfile.TemporaryDirectory(prefix="lab-emulated-") as tmp:
        work = Path(tmp)
        (work / "kernel.c").write_text(source)
        builds = [
            [cc, "-O2", *MARCH[arch], "-static", "-DLAB_ROLE_MEASURER", driver, "-o", "measure", "-lm"],
            [cc, *common, "-DLAB_ROLE_RUNNER", "-DLAB_UNSANDBOXED", "-c", driver, "-o", "stub.o"],
            [cc, *common, "-c", "kernel.c", "-o", "kernel.o"],
            [cc, "-static", "-fopenmp", "stub.o", "kernel.o", "-o", "runner.bin", "-lm"],
        ]
        for i, argv in enumerate(builds):
            out = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=config.compile_timeout_s)
            if out.returncode != 0:
                what = "compile_error" if i >= 2 else "harness_error"
                return EmulatedVerdict(what, out.stderr.strip().replace(tmp + "/", "")[-600:], arch)
        runner = work / "runner"
        runner.write_text(f'#!/bin/sh\nexec {shutil.which(emulator)} {work / "runner.bin"} "$@"\n')
        runner.chmod(0o755)
        argv, env = measure_command(problem, config, nonce="emulated")
        argv = [emulator, "./measure", *argv[1:]]
        with open(work / "report", "w+b") as report_file:
            argv = [a.replace("{result_fd}", str(report_file.fileno())) for a in argv]
            start = time.monotonic()
            try:
                subprocess.run(
                    argv,
                    cwd=work,
                    env=env,
                    pass_fds=(report_file.fileno(),),
                    capture_output=True,
                    timeout=config.run_timeout_s,
                )
            except subprocess.TimeoutExpired:
                return EmulatedVerdict("timeout", f"no verdict within {config.run_timeout_s:.0f} s", arch)
            wall_s = time.monotonic() - start
            report_file.seek(0)
            report = parse_report(report_file.read())
    status = report.get("status", "runtime_error")
    if status != "ok":
        return EmulatedVerdict(status, report.get("detail", "no report"), arch)
    reason = cross_check(report, problem, config, wall_s)
    return EmulatedVerdict("wrong_result", reason, arch) if reason else EmulatedVerdict("ok", "-", arch)
