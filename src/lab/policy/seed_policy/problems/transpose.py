"""TRANSPOSE's kernel generator: B = A^T for n x n row-major matrices of doubles.

Families:

- naive: element by element, in either loop order (contiguous reads or contiguous writes),
  the columns unrolled or with `omp simd`;
- blocked: square tiles (cache blocking), unrolled inside.

OpenMP parallelizes over rows (tile rows), or collapses both loops. `GENERATOR` is what the
registry (lab.policy.seed_policy.problems) holds.
"""

from __future__ import annotations

import random

from lab.policy.seed_policy.c_writer import CWriter, for_loop, tile_var
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques, omp_rate
from lab.policy.seed_policy.problems.suite import draw_omp, loop_defects, omp_for, translation_unit, unrolled

SIGNATURE = "void transpose(int n, const double{r}A, double{r}B)"
FAMILIES = ("naive", "blocked")
# Families, weighted by repetition like a base model's habits: mostly the textbook loop.
OPTIONS = ["naive"] * 5 + ["blocked"] * 3
# The OpenMP schedules a family may carry (weighted by repetition; `collapse`: both loops).
SCHEDULES = {"naive": ["static", "dynamic", "collapse"], "blocked": ["static", "collapse", "dynamic"]}
WHAT = {"naive": "element by element", "blocked": "square tiles"}


def _transpose(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, j, _ = s.names
    rows_hi = "n - 1" if spec.defect == "off_by_one" else "n"

    def copy(r: str, c: str) -> str:
        if spec.defect == "wrong_index":
            return f"B[{r} * n + {c}] = A[{r} * n + {c}];"
        cc = f"({c})" if " " in c else c
        return f"B[{cc} * n + {r}] = A[{r} * n + {c}];"

    if spec.family == "blocked":
        ii, jj = tile_var(i), tile_var(j)
        if spec.omp:
            w.line(omp_for(spec))
        w.open(for_loop(ii, "0", "n", s, "BS"))
        w.open(for_loop(jj, "0", "n", s, "BS"))
        w.line(f"{s.index} {i}_end = {ii} + BS < n ? {ii} + BS : {rows_hi};")
        w.line(f"{s.index} {j}_end = {jj} + BS < n ? {jj} + BS : n;")
        w.open(f"for ({s.index} {i} = {ii}; {i} < {i}_end; {i}++)")
        unrolled(spec, w, j, jj, f"{j}_end", lambda c: copy(i, c))
        w.close()
        w.close()
        w.close()
        return
    column_major = s.acc in ("s", "t") and spec.unroll == 1 and spec.simd is None
    if column_major:  # walk B's rows: contiguous writes, strided reads
        if spec.omp:
            w.line(omp_for(spec))
        w.open(for_loop(j, "0", "n", s))
        w.open(for_loop(i, "0", rows_hi, s))
        w.line(copy(i, j))
        w.close()
        w.close()
        return
    if spec.omp:
        w.line(omp_for(spec))
    w.open(for_loop(i, "0", rows_hi, s))
    if spec.simd == "pragma":
        w.line("#pragma omp simd")
    unrolled(spec, w, j, "0", "n", lambda c: copy(i, c))
    w.close()


def render(spec: KernelSpec) -> str:
    """The C source of a TRANSPOSE spec (a complete translation unit)."""
    defines = (f"#define BS {max(spec.tile)}",) if spec.tile else ()
    return translation_unit(spec, SIGNATURE, _transpose, WHAT, defines=defines)


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random TRANSPOSE spec; `optimize` turns on the optional techniques more often, `mode` is
    the prompt's execution model (generator.random_spec)."""
    family = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.2
    kw = draw_omp(rng, SCHEDULES, family, omp_rate(optimize, mode))
    if rng.random() < p:
        kw["unroll"] = rng.choice([2, 4, 4, 8])
    elif family == "naive" and rng.random() < p:
        kw["simd"] = "pragma"
    if family == "blocked":
        kw["tile"] = (rng.choice([16, 32, 32, 64]),) * 3
    if kw.get("omp") == "collapse" and (kw.get("unroll", 1) > 1 or kw.get("simd")):
        kw["omp"] = "static"  # collapse needs the two loops perfectly nested, the inner one canonical
    return KernelSpec("transpose", family, **kw)


def sweep() -> list[KernelSpec]:
    """Every family and technique of TRANSPOSE (default style)."""
    out = []
    for omp in (None, "static"):
        o = {"omp": omp} if omp else {}
        out += [
            {"family": "naive", **o},
            {"family": "naive", "unroll": 4, **o},
            {"family": "naive", "simd": "pragma", **o},
        ]
        out += [
            {"family": "blocked", "tile": (32, 32, 32), **o},
            {"family": "blocked", "tile": (16, 16, 16), "unroll": 4, **o},
        ]
    return [KernelSpec("transpose", **kw) for kw in out]


GENERATOR = ProblemGenerator("transpose", FAMILIES, render, draw, loop_defects, sweep, field_techniques)
