"""Pytest setup for the whole repo (tests/ and the doctests in src/lab).

Tests get a private evaluation/build cache, set through the environment before any
test runs, so that joblib worker processes use it too; only its calibration is shared
by the test workers of one run. OpenMP threads of the in-process model training (the
smoke policy) wait passively: tests share the two cores with kernel-scoring workers,
and busy-waiting threads then slow a build of seconds to minutes. Sandboxed kernels are
unaffected: their environment is set by the harness alone. Below: how pytest-xdist
shares the modules between workers.
"""

from __future__ import annotations

import os
import tempfile

import pytest

os.environ["LAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="lab-test-cache-")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# The suite's sandboxed kernels run as uids of their own (a sandbox namespace, lab.harness.sandbox),
# so that the suite and a lab run on the same machine (`make reproduce`) never clear, kill or wait
# for each other's sandbox processes. The CPU locks stay machine-wide: both sides' timings stay honest.
os.environ.setdefault("LAB_SANDBOX_NAMESPACE", "1")
# The pytest-xdist workers of one run share the calibration folder inside their caches: the
# controller makes it, the workers (started after this file is read) inherit the variable. Each
# worker calibrating on its own measured every baseline twice, each time holding every CPU
# (lab.harness.plausibility); the machine-wide CPU locks that calibration holds keep two
# workers from writing the shared file at once.
if "LAB_TEST_CALIBRATION_DIR" not in os.environ:
    os.environ["LAB_TEST_CALIBRATION_DIR"] = tempfile.mkdtemp(prefix="lab-test-calibration-")
os.symlink(os.environ["LAB_TEST_CALIBRATION_DIR"], os.path.join(os.environ["LAB_CACHE_DIR"], "calibration"))


# `make test` runs the suite on two pytest-xdist workers. Each test module is one unit of work, so
# its module-scoped fixtures are made once and its tests keep their order. The modules that leave
# processes of the sandbox uids outside the harness's CPU locks (a leftover planted for the
# harness to clear, a cluster worker or a trainer killed mid-kernel), or that look for escaped
# ones, share one unit: they never run beside each other. (xdist's own `--dist loadgroup` would
# say this with marks, but it loses them under pytest 9.2: pytest-dev/pytest-xdist#1386.)
SANDBOX_UNIT = frozenset(
    {
        "tests/test_kernels.py",
        "tests/test_sandbox.py",
        "tests/test_runner.py",
        "tests/test_cluster.py",
        "tests/test_train.py",
    }
)
# The longest units go first, so that no worker starts one near the end while the other sits
# idle: the notebooks with the smoke policy's build (7 to 11 minutes on 2 cores), then the kernel
# corpus. (xdist would otherwise order the units by their number of tests.)
FIRST = ("tests/test_notebooks.py", "tests/test_kernels.py")


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, asked only when it distributes
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # keep the collection's order: FIRST

    class ModuleScheduling(LoadScopeScheduling):
        """xdist's scope scheduling with a module as the scope, and SANDBOX_UNIT as one scope."""

        def _split_scope(self, nodeid: str) -> str:
            module = _module(nodeid)
            return "sandbox" if module in SANDBOX_UNIT else module

    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    rank = {module: i for i, module in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(_module(item.nodeid), len(FIRST)))  # stable: the rest as collected
