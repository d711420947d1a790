"""Compiling and linking: every gcc flag of the lab lives here.

The trusted driver (harness/<problem>/driver.c with harness/bench.h) is compiled
once per (problem, flags) into the build cache. A candidate is preprocessed,
compiled and linked inside the sandbox, in its own work directory, with the
candidate-only flags below:

    >>> BuildConfig().candidate_cflags()[:3]
    ('-O3', '-march=native', '-fopenmp')
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lab import paths
from lab.harness.problems import Problem, harness_fingerprint


@dataclass(frozen=True)
class BuildConfig:
    """How candidates and drivers are compiled."""

    cc: str = "gcc"
    # What the paper's setting and a performance programmer would use.
    cflags: tuple[str, ...] = ("-O3", "-march=native", "-fopenmp")
    # Candidate only: no jump tables, so an indirect branch in the object always means a
    # function pointer (rejected); no common symbols; the C dialect prompts promise.
    candidate_only: tuple[str, ...] = ("-std=gnu11", "-fno-jump-tables", "-fno-common", "-pipe")
    ldflags: tuple[str, ...] = ("-fopenmp", "-lm")

    def candidate_cflags(self) -> tuple[str, ...]:
        return (*self.cflags, *self.candidate_only)

    def key(self) -> str:
        return hashlib.sha256(repr(self).encode()).hexdigest()[:12]


def compiler_version(cc: str = "gcc") -> str:
    return subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def driver_object(problem: Problem, config: BuildConfig) -> Path:
    """The compiled trusted driver of `problem`, built once and cached (atomic on concurrent builds)."""
    key = f"{problem.name}-{problem.fingerprint()}-{harness_fingerprint()}-{config.key()}"
    out = paths.cache_dir() / "drivers" / f"{key}.o"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".o", dir=out.parent)
    os.close(fd)
    try:
        subprocess.run(
            [config.cc, *config.cflags, "-Wall", "-c", str(problem.driver_path), "-o", tmp],
            check=True,
            capture_output=True,
            text=True,
        )
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def preprocess_argv(config: BuildConfig, src: str, out: str) -> list[str]:
    return [config.cc, *config.candidate_cflags(), "-E", src, "-o", out]


def compile_argv(config: BuildConfig, preprocessed: str, obj: str) -> list[str]:
    # Compile the already-checked preprocessed text, so what was checked is what is built.
    return [config.cc, *config.candidate_cflags(), "-x", "cpp-output", "-c", preprocessed, "-o", obj]


def link_argv(config: BuildConfig, driver: str, obj: str, exe: str) -> list[str]:
    return [config.cc, driver, obj, *config.ldflags, "-o", exe]
