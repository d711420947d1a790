"""Where the lab finds its files, resolved each time it is asked (never frozen at import).

    >>> (harness_dir() / "bench.h").is_file()
    True

- `harness_dir()`: `$LAB_HARNESS_DIR`; else the `harness/` folder of the checkout this
  package was imported from (a source tree or an editable install); else the copy that a
  regular `pip install .` puts inside the package (`lab/_harness`).
- `cache_dir()`: `$LAB_CACHE_DIR`; else `.cache/lab` in the checkout; else
  `$XDG_CACHE_HOME/perfrl-lab` (`~/.cache/perfrl-lab`) for an installed package.
- `repo_root()`: that checkout, or None when running from an installed package.

Because nothing is read at import time, a test or a worker process can point the lab at
another cache or harness by setting the environment before its first call.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def repo_root() -> Path | None:
    """The checkout (folder with harness/ and pyproject.toml) this package lives in, if any."""
    root = _PACKAGE.parents[1]
    return root if (root / "harness").is_dir() and (root / "pyproject.toml").is_file() else None


def harness_dir() -> Path:
    if os.environ.get("LAB_HARNESS_DIR"):
        return Path(os.environ["LAB_HARNESS_DIR"])
    root = repo_root()
    return root / "harness" if root is not None else _PACKAGE / "_harness"


def cache_dir() -> Path:
    if os.environ.get("LAB_CACHE_DIR"):
        return Path(os.environ["LAB_CACHE_DIR"])
    root = repo_root()
    if root is not None:
        return root / ".cache" / "lab"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "perfrl-lab"
