"""Pytest setup for the whole repo (tests/ and the doctests in src/lab).

Tests get a private evaluation/build cache, set through the environment before
`lab` is imported, so that joblib worker processes use it too.
"""

from __future__ import annotations

import os
import tempfile

os.environ["LAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="lab-test-cache-")
