"""Shared test helpers: paths, root-only marker, escape detection, what this CPU can compile."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab.config import MeasureConfig
from lab.harness import sandbox
from lab.harness.machine import simd_flags

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "kernels"
#: The example kernels under harness/ (all correct) double as legitimate test kernels.
EXAMPLES = ROOT / "harness"
#: Small, quickly timed kernels for tests that train or warm-start the smoke policy.
TINY_MEASURE = MeasureConfig(n=48, min_time_s=0.02, min_reps=3, baseline_min_time_s=0.01)

requires_root = pytest.mark.skipif(not sandbox.is_root(), reason="uid switch and namespaces need root")
#: `lab` as a user runs it: the CLI in a child process of this Python.
LAB = [sys.executable, "-m", "lab.cli"]


def run_lab(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`lab ARGS` from the repository root; its output captured as text."""
    return subprocess.run([*LAB, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)


#: Whether this CPU runs AVX-512. The harness compiles with -march=native, so a kernel written
#: with AVX-512 intrinsics compiles only where it does; elsewhere it is a compile error
#: ("target specific option mismatch"), and the tests expect that instead.
CPU_AVX512 = "avx512f" in simd_flags()
_AVX512 = re.compile(r"\b_mm512_\w+|\b__m512\w*|\bavx512\w*")
#: Statuses a kernel gets before it is compiled: the same on every CPU.
BEFORE_COMPILING = frozenset({"format_error", "forbidden", "compile_error"})


def lacks_avx512_for(text: str) -> bool:
    """True if `text` is written with AVX-512 and this CPU lacks it, so it cannot compile here."""
    return not CPU_AVX512 and bool(_AVX512.search(text))


def on_this_cpu(expected: str, text: str) -> str:
    """The status a kernel expected to get `expected` on an AVX-512 machine gets on this CPU."""
    return "compile_error" if expected not in BEFORE_COMPILING and lacks_avx512_for(text) else expected


def live_sandbox_processes() -> list[int]:
    """Live processes owned by any sandbox uid of this machine's CPUs."""
    uids = {sandbox.SANDBOX_UID_BASE + cpu for cpu in os.sched_getaffinity(0)}
    return [pid for uid in uids for pid in sandbox._uid_processes(uid)[0]]


@pytest.fixture(scope="session")
def smoke_policy(tmp_path_factory) -> Path:
    """The smoke-preset seed policy, built once per test session by `lab seed-model --preset smoke`
    (what `make smoke` runs; about a minute). In its own process, so that its OpenMP threads
    spin-wait as usual: nothing is scored beside the build, and passive waiting (this session's
    setting) slows it by a sixth."""
    out = tmp_path_factory.mktemp("policy") / "smoke"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    build = run_lab("seed-model", "--preset", "smoke", "--out", str(out), env=env, timeout=250)
    assert build.returncode == 0, build.stderr[-2000:]
    return out
