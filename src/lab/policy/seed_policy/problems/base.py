"""What every problem's kernel generator shares: the spec, the plug-in interface, the common rules.

`KernelSpec` names a problem, a family and its parameters (loop order, tiles, unrolling, SIMD
flavour, OpenMP schedule, register-block shape, k-block), a `Style` (names, index type, braces,
comments: how people differ) and optionally a `defect` (the slips a base code model makes). Each
problem uses the fields that mean something for it; its generator module says which.

`ProblemGenerator` is what a problem's module (lab.policy.seed_policy.problems.<name>) registers:
its families, how it renders a spec, draws a random one, lists its defects, sweeps its space and
names the techniques a spec uses by construction. `field_techniques` is the rule most problems
share for the last, `omp_rate` the chance of OpenMP in a draw.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from lab.policy.seed_policy.c_writer import Style

DEFECTS = ("off_by_one", "no_zero", "syntax", "no_tail", "wrong_index", "no_border")


@dataclass(frozen=True)
class KernelSpec:
    problem: str
    family: str
    order: str = "ijk"  # naive/blocked dgemm: ijk | ikj | kij
    tile: tuple[int, int, int] | None = None  # (i, k, j) tile sizes
    unroll: int = 1
    simd: str | None = None  # pragma | avx2 | avx512
    omp: str | None = None  # static | dynamic | guided | collapse (| atomic: the histogram's)
    regblock: tuple[int, int] | None = None  # (MR, NR)
    kc: int | None = None  # microkernel k-block (cache blocking) or None for whole k
    defect: str | None = None
    style: Style = field(default_factory=Style)

    def __post_init__(self):
        if self.simd == "pragma" and self.unroll > 1:
            # `omp simd` needs a canonical loop; a hand-unrolled loop with a tail is not one.
            raise ValueError("simd='pragma' and unroll > 1 cannot be combined")

    def techniques(self) -> frozenset[str]:
        """Its technique set by construction, as its problem's generator module states it."""
        # Imported here: the registry imports the problem modules, which import this one.
        from lab.policy.seed_policy.problems import generator_for

        return generator_for(self.problem).techniques(self)

    @property
    def correct(self) -> bool:
        return self.defect is None


def field_techniques(spec: KernelSpec) -> frozenset[str]:
    """The techniques a spec's fields name alike in every problem: tiles or a k-block (cache
    blocking), an unroll factor above 1, a SIMD flavour, an OpenMP schedule, a register block.
    A problem whose families use more (DGEMM's loop orders and packed buffers) adds those."""
    out = set()
    if spec.tile or spec.kc:
        out.add("cache_blocking")
    if spec.unroll > 1:
        out.add("unrolling")
    if spec.simd:
        out.add("simd")
    if spec.omp:
        out.add("openmp")
    if spec.regblock:
        out.add("register_blocking")
    return frozenset(out)


def omp_rate(optimize: bool, mode: str | None) -> float:
    """The chance that a draw uses OpenMP where its family can: none in the serial execution
    model, half of the draws for an OpenMP prompt, else as often as the other optional techniques."""
    if mode == "serial":
        return 0.0
    if mode == "openmp":
        return 0.5
    return 0.45 if optimize else 0.12


@dataclass(frozen=True)
class ProblemGenerator:
    """A problem's kernel generator, as the registry (lab.policy.seed_policy.problems) holds it."""

    problem: str  # the folder name under harness/
    families: tuple[str, ...]  # every family its specs come in; "naive" (the textbook loop) among them
    # The whole translation unit of a spec of this problem (the `syntax` defect is applied after,
    # alike for every problem, by lab.policy.seed_policy.generator.render).
    render: Callable[[KernelSpec], str]
    # One random spec (default style, no defect): draw(rng, optimize, mode), `optimize` turning the
    # optional techniques on more often, `mode` the prompt's execution model (serial: no OpenMP).
    draw: Callable[[random.Random, bool, str | None], KernelSpec]
    defects: Callable[[KernelSpec], list[str]]  # the defects render can apply to a spec (repeats weigh)
    sweep: Callable[[], list[KernelSpec]]  # the autotuning space: every family and technique worth timing
    techniques: Callable[[KernelSpec], frozenset[str]]  # the techniques a spec uses by construction
    # How an AVX-512 spec of this problem is written for a CPU with AVX2 but not AVX-512:
    # avx2(spec, rng) (None: the same spec with simd="avx2", which its render writes as it is).
    avx2: Callable[[KernelSpec, random.Random], KernelSpec] | None = None
