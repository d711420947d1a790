"""Shared test helpers: paths, root-only marker, escape detection, what this CPU can compile, and
the smoke policy that every test worker shares."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from filelock import FileLock

from lab.config import MeasureConfig
from lab.harness import sandbox

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "kernels"
#: The example kernels under harness/ (all correct) double as legitimate test kernels.
EXAMPLES = ROOT / "harness"
#: Small, quickly timed kernels for tests that train or warm-start the smoke policy.
TINY_MEASURE = MeasureConfig(n=48, min_time_s=0.02, min_reps=3, baseline_min_time_s=0.01)

requires_root = pytest.mark.skipif(not sandbox.is_root(), reason="uid switch and namespaces need root")
#: `lab` as a user runs it: the CLI in a child process of this Python.
LAB = [sys.executable, "-m", "lab.cli"]


def run_lab(
    *args: str, env: dict | None = None, timeout: float = 300, prefix: Sequence[str] = ()
) -> subprocess.CompletedProcess:
    """`lab ARGS` from the repository root (run by the command `prefix`, if any: `taskset -c 1`);
    its output captured as text."""
    argv = [*prefix, *LAB, *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)


def _compiler_has_avx512() -> bool:
    """Whether the harness's compiler targets AVX-512 here: -march=native as the harness builds."""
    try:
        macros = subprocess.run(
            ["gcc", "-march=native", "-dM", "-E", "-"], input="", capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "__AVX512F__" in macros


#: Whether this machine compiles AVX-512. The harness compiles with -march=native, so a kernel
#: written with AVX-512 intrinsics compiles only on a CPU that has it; elsewhere it is a compile
#: error ("target specific option mismatch"), and the tests expect that instead.
CPU_AVX512 = _compiler_has_avx512()
_AVX512 = re.compile(r"\b_mm512_\w+|\b__m512\w*|\bavx512\w*")
#: What gcc says when a kernel uses AVX-512 that -march=native does not enable ("target specific
#: option mismatch" on an intrinsic of avx512*intrin.h); the harness shortens long messages, so
#: either part may be what is left.
AVX512_MISMATCH = re.compile(r"target spec|avx512\w*intrin\.h")
#: Statuses a kernel gets by its text, before it is compiled: the same on every CPU. (`forbidden`
#: can also come after compiling, from the object checks; such a kernel would fail loudly here.)
BEFORE_COMPILING = frozenset({"format_error", "forbidden", "compile_error"})


def lacks_avx512_for(text: str) -> bool:
    """True if `text` is written with AVX-512 and this CPU lacks it, so it cannot compile here."""
    return not CPU_AVX512 and bool(_AVX512.search(text))


def on_this_cpu(expected: str, text: str) -> str:
    """The status a kernel expected to get `expected` on an AVX-512 machine gets on this CPU."""
    return "compile_error" if expected not in BEFORE_COMPILING and lacks_avx512_for(text) else expected


def assert_status_on_this_cpu(result, expected: str, text: str, what: str) -> None:
    """`result` got `expected` (its status on an AVX-512 machine), or, where this CPU cannot
    compile the AVX-512 it is written with, the compile error that says exactly that."""
    here = on_this_cpu(expected, text)
    assert result.status == here, f"{what}: {result.status} ({result.detail})"
    if here != expected:
        assert AVX512_MISMATCH.search(result.detail), f"{what}: not the AVX-512 mismatch: {result.detail}"


#: Longest wait for another test worker's evaluation to give a CPU back before an escape check
#: (below pytest's 300 s per test, so that this, not pytest's stack dump, says what hung).
CPU_LOCK_WAIT_S = 240.0


def live_sandbox_processes(holding: Sequence[int] = ()) -> list[int]:
    """Live processes owned by any sandbox uid of this machine's CPUs in the suite's namespace
    (conftest.py sets it), looked for while no evaluation of the suite runs: the uid lock of every
    CPU is taken first (sandbox.hold_cpus(machine_wide=False), which clears nothing), so that a
    kernel another test worker is measuring in its slot is not taken for one that escaped. A lab
    run's kernels on the same machine run as other uids, so this neither sees nor waits for them.

    `holding`: the CPUs of the slot this test itself holds (its lock is already this test's).
    They must be the lowest CPUs (core_slot(..., preferred=0, exact=True)): the locks are taken
    in ascending order here and by the harness's whole-machine calibration, and a test holding a
    higher CPU while this waits for a lower one could wait on a calibration that waits on it."""
    cpus = sorted(os.sched_getaffinity(0))
    assert sorted(holding) == cpus[: len(holding)], f"hold the lowest CPUs, not {sorted(holding)} of {cpus}"
    with sandbox.hold_cpus(cpus[len(holding) :], machine_wide=False, timeout_s=CPU_LOCK_WAIT_S):
        return [pid for cpu in cpus for pid in sandbox.live_processes(sandbox.sandbox_uid(cpu))]


@pytest.fixture(scope="session")
def smoke_policy(tmp_path_factory) -> Path:
    """The smoke-preset seed policy, built once per test run by `lab seed-model --preset smoke`
    (what `make smoke` runs; one to four minutes). Each pytest-xdist worker is a session of its
    own: the first to ask builds it into the run's shared temporary folder while holding a file
    lock; the others wait for it and reuse it, or fail with the build's own error without trying
    again. Alone (no xdist) it trains on every CPU and its OpenMP threads spin-wait as usual,
    which makes it a sixth faster. Beside another worker it trains on the last CPU only (it
    takes one thread per CPU it may use) with threads that wait passively (this session's
    setting). On 2 cores a second thread bought a 1.2x speedup for 1.25x the CPU time (136 s
    and 206 CPU-seconds, against 166 s and 163 on one CPU, with the same weights bit for bit):
    time the other worker can use. Spinning threads that share their cores slow the build
    severalfold."""
    shared = tmp_path_factory.getbasetemp()
    env, pin = None, []
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the folder above every worker's own
        shared = shared.parent
        pin = ["taskset", "-c", str(max(os.sched_getaffinity(0)))]
    else:
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = shared / "policy" / "smoke"
    built, failed = out.with_name("smoke.built"), out.with_name("smoke.failed")
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(shared / "smoke-policy.lock"):
        if not (built.exists() or failed.exists()):
            try:
                build = run_lab("seed-model", "--preset", "smoke", "--out", str(out), env=env, timeout=540, prefix=pin)
                error = "" if build.returncode == 0 else build.stderr[-2000:]
            except subprocess.TimeoutExpired:
                error = "timed out after 540 s"
            if error:
                failed.write_text(error)
            else:
                built.touch()
    if failed.exists():
        pytest.fail(f"the smoke policy did not build: {failed.read_text()}", pytrace=False)
    return out


def assert_drawn(path) -> None:
    """The PNG at `path` is a drawn figure: hundreds of pixels a side, many colours (text, lines,
    fills), and not a white page with a speck on it."""
    import matplotlib.image
    import numpy as np

    pixels = matplotlib.image.imread(path)
    height, width, channels = pixels.shape
    assert channels in (3, 4) and min(height, width) >= 300, pixels.shape
    rgb = np.ascontiguousarray((pixels[..., :3] * 255).round().astype(np.uint8))
    assert len(np.unique(rgb.view(np.dtype((np.void, 3))))) > 50
    assert (rgb < 240).any(axis=-1).mean() > 0.01


@pytest.fixture
def saved_figures(monkeypatch) -> list:
    """Every matplotlib figure lab.analysis.plots saves, as it is saved: what it draws."""
    from lab.analysis import plots

    figures, save = [], plots._save

    def recording(fig, path):
        figures.append(fig)
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", recording)
    return figures
