"""Kernel generator: C implementations of the harness problems, composed from techniques.

A `KernelSpec` names a problem, a family and its parameters (loop order, tiles, unrolling,
SIMD flavour, OpenMP schedule, packing, register-block shape), a `Style` (names, index type,
braces, comments — how people differ), and optionally a `defect` (the slips a base code model
makes). `render(spec)` writes the C source; `spec_techniques(spec)` (`spec.techniques()`) is
its technique set by construction.

    >>> spec = KernelSpec("dgemm", "naive", order="ikj", omp="static")
    >>> sorted(spec_techniques(spec))
    ['loop_reorder', 'openmp']
    >>> "#pragma omp parallel for" in render(spec)
    True

Each problem's families live in a module of their own, lab.policy.seed_policy.problems.<name>
(its docstring lists them; from the textbook loop up to DGEMM's GotoBLAS/BLIS structure),
registered by name: `generator_for(problem)`. This module does what is the same for every
problem, through that one lookup: the `syntax` slip, the styles, the sampling loop over a
permitted set and an execution model, the defects and the autotuning sweep.

`random_spec(rng, problem, permitted, mode=...)` draws a spec whose techniques lie in
`permitted` (None = anything), with the mix a base model shows; in the serial execution
model it never uses OpenMP.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import replace

from lab.policy.seed_policy.c_writer import Style
from lab.policy.seed_policy.problems import GENERATORS, generator_for
from lab.policy.seed_policy.problems.base import DEFECTS, KernelSpec

__all__ = [
    "DEFECTS",
    "GENERATORS",
    "KernelSpec",
    "Style",
    "applicable_defects",
    "generator_for",
    "random_spec",
    "random_style",
    "render",
    "serial_safe",
    "spec_techniques",
    "sweep_specs",
]


def render(spec: KernelSpec) -> str:
    """The C source of `spec` (a complete translation unit)."""
    text = generator_for(spec.problem).render(spec)
    if spec.defect == "syntax":
        text = _syntax_slip(text, random.Random(zlib.crc32(text.encode())))  # stable across processes
    return text


def spec_techniques(spec: KernelSpec) -> frozenset[str]:
    """The techniques `spec` uses by construction, as its problem's generator module states them."""
    return generator_for(spec.problem).techniques(spec)


def _syntax_slip(text: str, rng: random.Random) -> str:
    """Drop one semicolon or closing brace: the kind of slip that breaks compilation."""
    lines = text.split("\n")
    idx = [n for n, line in enumerate(lines) if line.rstrip().endswith(";") and "for" not in line]
    if idx:
        n = rng.choice(idx)
        lines[n] = lines[n].rstrip()[:-1]
    return "\n".join(lines)


# ---------------------------------------------------------------- sampling specs

# Loop names and the accumulator name that goes with them: a few consistent habits
# (a small model learns a handful of self-consistent styles far better than free mixing).
_NAME_SETS = [
    (("i", "j", "k"), "sum"),
    (("i", "j", "k"), "sum"),
    (("i", "j", "k"), "acc"),
    (("row", "col", "k"), "s"),
    (("i", "j", "l"), "dot"),
    (("r", "c", "p"), "t"),
    (("ii", "jj", "kk"), "sum"),
]


def random_style(rng: random.Random) -> Style:
    names, acc = rng.choice(_NAME_SETS)
    return Style(
        names=names,
        acc=acc,
        index=rng.choices(["int", "long", "size_t"], [6, 1, 2])[0],
        allman=rng.random() < 0.25,
        comments=rng.choices([0, 1, 2], [3, 5, 2])[0],
        macro=rng.random() < 0.12,
        restrict=rng.random() < 0.2,
    )


def serial_safe(spec: KernelSpec) -> bool:
    """True if `spec` is allowed in the serial execution model: no OpenMP construct at all
    (`#pragma omp simd` included)."""
    return not spec.omp and spec.simd != "pragma"


#: Families whose kernels are long (packing, a register-blocked micro-kernel: over a hundred
#: lines): most of their examples keep one canonical style, so a small model sees the same
#: long text often enough to write it whole, as a code model has seen the textbook BLIS loop
#: nest many times; the rest vary as the other families do.
LONG_FAMILIES = frozenset({"microkernel"})
CANONICAL_RATE = 0.75


#: The vector intrinsics each target tier (lab.harness.target) can compile: a CPU with AVX-512
#: runs AVX2 code too; SSE4.2 has neither (its vector code is left to the compiler).
TIER_SIMD = {"avx512": ("avx2", "avx512"), "avx2": ("avx2",), "sse4": ()}


def for_tier(spec: KernelSpec, tier: str, rng: random.Random) -> KernelSpec | None:
    """`spec` as it is written for a CPU of `tier`: an AVX-512 kernel is written with AVX2 for
    `avx2` (the problem's own rule, else the same spec with AVX2 intrinsics); None where the tier
    has none of the intrinsics the spec needs."""
    if spec.simd not in ("avx2", "avx512") or spec.simd in TIER_SIMD[tier]:
        return spec
    if "avx2" not in TIER_SIMD[tier]:
        return None
    lower = generator_for(spec.problem).avx2
    return lower(spec, rng) if lower else replace(spec, simd="avx2")


def random_spec(
    rng: random.Random,
    problem: str = "dgemm",
    permitted: frozenset[str] | None = None,
    defect_rate: float = 0.18,
    optimize: bool | None = None,
    mode: str | None = None,
    tier: str = "avx512",
) -> KernelSpec:
    """Draw a spec whose techniques lie in `permitted` (None: anything), possibly defective.
    `mode` is the prompt's execution model: `serial` draws no OpenMP at all; `openmp` draws
    it more often than a prompt that does not state a model (None). `tier` is the CPU's vector
    tier the prompt names (lab.harness.target): its kernels use only intrinsics it has."""
    generator = generator_for(problem)
    optimize = rng.random() < 0.3 if optimize is None else optimize
    style = random_style(rng)
    for _ in range(200):
        spec = for_tier(generator.draw(rng, optimize, mode), tier, rng)
        if spec is None:
            continue
        if (permitted is None or generator.techniques(spec) <= permitted) and (mode != "serial" or serial_safe(spec)):
            break
    else:  # nothing but the plainest code fits
        spec = KernelSpec(problem, "naive")
    if spec.family in LONG_FAMILIES and rng.random() < CANONICAL_RATE:
        style = Style()
    defect = rng.choice(generator.defects(spec)) if rng.random() < defect_rate else None
    return replace(spec, style=style, defect=defect)


def applicable_defects(spec: KernelSpec) -> list[str]:
    """The defects `render` can apply to this spec (each makes it fail its checks)."""
    return generator_for(spec.problem).defects(spec)


def sweep_specs(problem: str = "dgemm") -> list[KernelSpec]:
    """The autotuning space: every family and parameter combination worth timing (default style)."""
    return generator_for(problem).sweep()
