"""SPMV's kernel generator: y = A * x for a sparse n x n matrix in CSR (rowptr, col, val).

Families:

- naive: a row's dot product, with `omp simd` or unrolled into 2-4 accumulators (register
  blocking at 4);
- intrinsics: AVX2/AVX-512 along a row, the column indices loaded as int32 and x gathered, a
  horizontal sum and a scalar tail.

OpenMP parallelizes over rows, with a schedule (rows differ in length). `GENERATOR` is what the
registry (lab.policy.seed_policy.problems) holds.
"""

from __future__ import annotations

import random

from lab.policy.seed_policy.c_writer import CWriter, for_loop, vector_type
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques, omp_rate
from lab.policy.seed_policy.problems.suite import draw_omp, hsum, loop_defects, omp_for, translation_unit

SIGNATURE = "void spmv(int n, const int{r}rowptr, const int{r}col, const double{r}val, const double{r}x, double{r}y)"
FAMILIES = ("naive", "intrinsics")
# Families, weighted by repetition like a base model's habits: mostly the textbook loop.
OPTIONS = ["naive"] * 5 + ["intrinsics"] * 2
# The OpenMP schedules a family may carry (weighted by repetition).
SCHEDULES = {"naive": ["static", "dynamic", "dynamic", "guided"], "intrinsics": ["dynamic", "guided"]}
WHAT = {"naive": "CSR, one row at a time", "intrinsics": "CSR rows with gathered x"}


def _spmv(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, _, k = s.names
    acc = s.acc
    rows_hi = "n - 1" if spec.defect == "off_by_one" else "n"
    xk = (lambda at: f"x[{i}]") if spec.defect == "wrong_index" else (lambda at: f"x[col[{at}]]")
    if spec.omp:
        w.line(omp_for(spec))
    w.open(for_loop(i, "0", rows_hi, s))
    if spec.family == "intrinsics":
        vt, width, p = vector_type(spec.simd)
        w.line(f"int {k} = rowptr[{i}];")
        w.line(f"const int end = rowptr[{i} + 1];")
        w.line(f"{vt} vs = {p}_setzero_pd();")
        w.open(f"for (; {k} + {width - 1} < end; {k} += {width})")
        if spec.simd == "avx512":
            w.line(f"__m256i idx = _mm256_loadu_si256((const __m256i *)(col + {k}));")
            w.line(f"vs = _mm512_fmadd_pd(_mm512_loadu_pd(val + {k}), _mm512_i32gather_pd(idx, x, 8), vs);")
        else:
            w.line(f"__m128i idx = _mm_loadu_si128((const __m128i *)(col + {k}));")
            w.line(f"vs = _mm256_fmadd_pd(_mm256_loadu_pd(val + {k}), _mm256_i32gather_pd(x, idx, 8), vs);")
        w.close()
        w.line(f"double {acc} = 0.0;")
        hsum(spec, w, acc, "vs")
        if spec.defect != "no_tail":
            w.open(f"for (; {k} < end; {k}++)")
            w.line(f"{acc} += val[{k}] * x[col[{k}]];")
            w.close()
        w.line(f"y[{i}] = {acc};")
        w.close()
        return
    if spec.unroll == 1:
        w.line(f"double {acc} = 0.0;")
        if spec.simd == "pragma":
            w.line(f"#pragma omp simd reduction(+:{acc})")
        w.open(for_loop(k, f"rowptr[{i}]", f"rowptr[{i} + 1]", s))
        w.line(f"{acc} += val[{k}] * {xk(k)};")
        w.close()
        w.line(f"y[{i}] = {acc};")
        w.close()
        return
    u = spec.unroll
    names = [f"{acc}{d}" for d in range(u)]
    w.line(f"int {k} = rowptr[{i}];")
    w.line(f"const int end = rowptr[{i} + 1];")
    w.line("double " + ", ".join(f"{a} = 0.0" for a in names) + ";")
    w.open(f"for (; {k} + {u - 1} < end; {k} += {u})")
    for d, a in enumerate(names):
        at = f"{k} + {d}" if d else k
        w.line(f"{a} += val[{at}] * {xk(at)};")
    w.close()
    if spec.defect != "no_tail":
        w.open(f"for (; {k} < end; {k}++)")
        w.line(f"{names[0]} += val[{k}] * x[col[{k}]];")
        w.close()
    w.line(f"y[{i}] = {' + '.join(names)};")
    w.close()


def render(spec: KernelSpec) -> str:
    """The C source of an SPMV spec (a complete translation unit)."""
    return translation_unit(spec, SIGNATURE, _spmv, WHAT)


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random SPMV spec; `optimize` turns on the optional techniques more often, `mode` is the
    prompt's execution model (generator.random_spec)."""
    family = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.2
    kw = draw_omp(rng, SCHEDULES, family, omp_rate(optimize, mode))
    if family == "naive":
        if rng.random() < p:
            kw["unroll"] = min(rng.choice([2, 4, 4, 8]), 4)  # rows are short: at most 4 partial sums
        elif rng.random() < p:
            kw["simd"] = "pragma"
    if family == "intrinsics":
        kw["simd"] = rng.choice(["avx2", "avx512", "avx512"])
    if family != "intrinsics" and kw.get("unroll", 1) >= 4:
        kw["regblock"] = (kw["unroll"], 1)  # four named accumulators
    return KernelSpec("spmv", family, **kw)


def sweep() -> list[KernelSpec]:
    """Every family and technique of SPMV (default style)."""
    out = []
    for omp in (None, "static"):
        o = {"omp": omp} if omp else {}
        out += [
            {"family": "naive", **o},
            {"family": "naive", "simd": "pragma", **o},
            {"family": "naive", "unroll": 2, **o},
        ]
        out += [{"family": "naive", "unroll": 4, "regblock": (4, 1), **o}]
        out += [{"family": "intrinsics", "simd": v, **o} for v in ("avx2", "avx512")]
    return [KernelSpec("spmv", **kw) for kw in out]


GENERATOR = ProblemGenerator("spmv", FAMILIES, render, draw, loop_defects, sweep, field_techniques)
