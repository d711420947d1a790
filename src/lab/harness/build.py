"""Compiling and linking: every gcc flag of the lab lives here.

Each problem's trusted driver (harness/<problem>/driver.c with harness/bench.h) is
built twice, once per (problem, flags), into the build cache:

- `measurer(problem)`: the `measure` program (-DLAB_ROLE_MEASURER), which never
  contains candidate code;
- `runner_stub(problem)`: the runner's half (-DLAB_ROLE_RUNNER), an object that
  is linked with the candidate's object into `runner`.

A candidate is preprocessed, compiled, localized (every global symbol but the
required function made local, so exported helpers cannot interpose anything) and
linked inside the sandbox, in its own work directory, with the candidate-only
flags below:

    >>> BuildConfig().candidate_cflags()[:3]
    ('-O3', '-march=native', '-fopenmp')
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lab import paths
from lab.harness import target
from lab.harness.problems import Problem, harness_fingerprint


@dataclass(frozen=True)
class BuildConfig:
    """How candidates and drivers are compiled."""

    cc: str = "gcc"
    # The ISA tier built for (lab.harness.target): the process's when the config is made. It
    # travels with the config into the processes that measure, which work at it.
    tier: str = field(default_factory=target.current)
    # What the paper's setting and a performance programmer would use, at the tier (empty: -O3,
    # the tier's target flags, -fopenmp; -march=native at the machine's own tier).
    cflags: tuple[str, ...] = ()
    # Candidate only: no jump tables, so an indirect branch in the object always means a
    # function pointer (rejected); no common symbols; the C dialect prompts promise.
    candidate_only: tuple[str, ...] = ("-std=gnu11", "-fno-jump-tables", "-fno-common", "-pipe")
    ldflags: tuple[str, ...] = ("-fopenmp", "-lm")

    def __post_init__(self) -> None:
        if not self.cflags:  # frozen: set once, here
            object.__setattr__(self, "cflags", ("-O3", *target.march_flags(self.tier), "-fopenmp"))

    def candidate_cflags(self) -> tuple[str, ...]:
        return (*self.cflags, *self.candidate_only)

    def key(self) -> str:
        return hashlib.sha256(repr(self).encode()).hexdigest()[:12]


def compiler_version(cc: str = "gcc") -> str:
    return subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def _cached_build(problem: Problem, config: BuildConfig, role: str, suffix: str, argv_tail: list[str]) -> Path:
    """Build one trusted half of `problem`'s driver once; atomic under concurrent builders."""
    key = f"{problem.name}-{problem.fingerprint()}-{harness_fingerprint()}-{config.key()}"
    out = paths.cache_dir() / "drivers" / f"{key}-{role}{suffix}"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=suffix, dir=out.parent)
    os.close(fd)
    define = {"measure": "-DLAB_ROLE_MEASURER", "runner": "-DLAB_ROLE_RUNNER"}[role]
    try:
        subprocess.run(
            [config.cc, *config.cflags, "-Wall", define, str(problem.driver_path), "-o", tmp, *argv_tail],
            check=True,
            capture_output=True,
            text=True,
        )
        os.chmod(tmp, 0o755)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def measurer(problem: Problem, config: BuildConfig) -> Path:
    """The trusted `measure` executable of `problem` (serial: no OpenMP runtime in it)."""
    return _cached_build(problem, config, "measure", "", ["-lm"])


def runner_stub(problem: Problem, config: BuildConfig) -> Path:
    """The runner's trusted half of `problem`, an object to link with the candidate's."""
    return _cached_build(problem, config, "runner", ".o", ["-c"])


def preprocess_argv(config: BuildConfig, src: str, out: str) -> list[str]:
    return [config.cc, *config.candidate_cflags(), "-E", src, "-o", out]


#: A second build that shows which vector instructions the source itself asks for: with gcc's
#: auto-vectorizers off, packed arithmetic remains only where intrinsics, vector types or
#: `omp simd` put it (lab.harness.static_check.object_facts).
NO_AUTOVECTORIZE = ("-fno-tree-vectorize", "-fno-tree-slp-vectorize")


def compile_argv(config: BuildConfig, preprocessed: str, obj: str, extra: tuple[str, ...] = ()) -> list[str]:
    # Compile the already-checked preprocessed text, so what was checked is what is built.
    return [config.cc, *config.candidate_cflags(), *extra, "-x", "cpp-output", "-c", preprocessed, "-o", obj]


def localize_argv(function: str, obj: str, out: str) -> list[str]:
    # Every global symbol but the required function becomes local: helpers stay callable
    # inside the object and invisible to the linker.
    return ["objcopy", f"--keep-global-symbol={function}", obj, out]


def link_argv(config: BuildConfig, stub: str, obj: str, exe: str) -> list[str]:
    # No linker plugin: a candidate object carrying LTO bytecode must not be recompiled at link time.
    return [config.cc, "-fno-use-linker-plugin", stub, obj, *config.ldflags, "-o", exe]
