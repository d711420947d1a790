"""Shared test helpers: paths, root-only marker, escape detection, and the smoke policy (built in
the background from the start of the session)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from lab.config import MeasureConfig
from lab.harness import sandbox

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "kernels"
#: The example kernels under harness/ (all correct) double as legitimate test kernels.
EXAMPLES = ROOT / "harness"
#: Small, quickly timed kernels for tests that train or warm-start the smoke policy.
TINY_MEASURE = MeasureConfig(n=48, min_time_s=0.02, min_reps=3, baseline_min_time_s=0.01)

requires_root = pytest.mark.skipif(not sandbox.is_root(), reason="uid switch and namespaces need root")


def live_sandbox_processes() -> list[int]:
    """Live processes owned by any sandbox uid of this machine's CPUs."""
    uids = {sandbox.SANDBOX_UID_BASE + cpu for cpu in os.sched_getaffinity(0)}
    return [pid for uid in uids for pid in sandbox._uid_processes(uid)[0]]


#: The smoke policy's build, started in the background when the session begins (see
#: pytest_collection_modifyitems): (process, output folder, log file).
_SMOKE_BUILD: tuple[subprocess.Popen, Path, Path] | None = None


def _die_with_parent() -> None:
    """In the child: lower its priority, and have the kernel kill it when pytest dies (a session
    killed outright never reaches pytest_sessionfinish)."""
    import ctypes
    import signal

    os.nice(10)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@pytest.hookimpl(trylast=True)  # after -m/-k deselection: only what will really run counts
def pytest_collection_modifyitems(session, config, items):
    """When some selected test needs the smoke policy, start building it at once, in a process of
    low priority, and run the test modules that need it last. The build (about two minutes of
    training) then uses the CPU time other tests leave idle (many wait on subprocesses and
    servers), instead of holding up the whole session; at low priority it takes little from the
    tests that time kernels."""
    global _SMOKE_BUILD
    users = {item.module for item in items if "smoke_policy" in getattr(item, "fixturenames", ())}
    if not users or _SMOKE_BUILD is not None:
        return
    out = Path(tempfile.mkdtemp(prefix="lab-smoke-policy-"))
    log = out / "build.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lab.cli", "seed-model", "--preset", "smoke", "--out", str(out / "smoke")],
            stdout=f,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
    _SMOKE_BUILD = (proc, out, log)
    items[:] = [i for i in items if getattr(i, "module", None) not in users] + [
        i for i in items if getattr(i, "module", None) in users
    ]


def pytest_sessionfinish(session, exitstatus):
    if _SMOKE_BUILD is not None:
        proc, out, _ = _SMOKE_BUILD
        if proc.poll() is None:
            proc.kill()  # our own child (a session stopped early)
            proc.wait()
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="session")
def smoke_policy(tmp_path_factory) -> Path:
    """The smoke-preset seed policy, built once per test session (in the background since the
    session began, when collection saw a test that needs it)."""
    if _SMOKE_BUILD is None:
        from lab.policy.seed_policy.pretrain import SMOKE, build_seed_model

        out = tmp_path_factory.mktemp("policy") / "smoke"
        build_seed_model(out, SMOKE, progress=False)
        return out
    proc, out, log = _SMOKE_BUILD
    if proc.wait(timeout=1200) != 0:
        pytest.fail(f"building the smoke policy failed: {log.read_text(errors='replace')[-2000:]}")
    return out / "smoke"
