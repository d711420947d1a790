"""Shared test helpers: paths, root-only marker, escape detection."""

from __future__ import annotations

import os
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


@pytest.fixture(scope="session")
def smoke_policy(tmp_path_factory) -> Path:
    """The smoke-preset seed policy, built once per test session (tiny: trains in seconds)."""
    from lab.policy.seed_policy.pretrain import SMOKE, build_seed_model

    out = tmp_path_factory.mktemp("policy") / "smoke"
    build_seed_model(out, SMOKE, progress=False)
    return out
