"""Pytest setup for the whole repo (tests/ and the doctests in src/lab).

Tests get a private evaluation/build cache, set through the environment before any
test runs, so that joblib worker processes use it too. OpenMP threads of the
in-process model training (the smoke policy) wait passively: tests share the two
cores with kernel-scoring workers, and busy-waiting threads then slow a build of
seconds to minutes. Sandboxed kernels are unaffected: their environment is set
by the harness alone.
"""

from __future__ import annotations

import os
import tempfile

os.environ["LAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="lab-test-cache-")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
