"""DOT's kernel generator: the dot product of two vectors of n doubles, returned.

Families:

- naive: one accumulator, with `omp simd` or `parallel for reduction`; unrolled into 2-8
  named partial sums (register blocking from 4 on);
- intrinsics: AVX2/AVX-512 FMA into 1-4 vector accumulators (register blocking at 4), a
  horizontal sum and a scalar tail; OpenMP as a parallel region with a reduction.

`GENERATOR` is what the registry (lab.policy.seed_policy.problems) holds.
"""

from __future__ import annotations

import random

from lab.policy.seed_policy.c_writer import CWriter, for_loop, vector_type
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques, omp_rate
from lab.policy.seed_policy.problems.suite import draw_omp, hsum, loop_defects, omp_for, translation_unit

SIGNATURE = "double dot(int n, const double{r}x, const double{r}y)"
FAMILIES = ("naive", "intrinsics")
# Families, weighted by repetition like a base model's habits: mostly the textbook loop.
OPTIONS = ["naive"] * 5 + ["intrinsics"] * 2
# The OpenMP schedules a family may carry (weighted by repetition).
SCHEDULES = {"naive": ["static"], "intrinsics": ["static"]}
WHAT = {"naive": "one running sum", "intrinsics": "FMA into vector accumulators"}


def _dot(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, acc = s.names[0], s.acc
    hi = "n - 1" if spec.defect == "off_by_one" else "n"
    other = "x" if spec.defect == "wrong_index" else "y"
    if spec.family == "intrinsics":
        vt, width, p = vector_type(spec.simd)
        u = spec.unroll
        step = width * u
        vecs = [f"v{d}" for d in range(u)]
        w.line(f"{s.index} m = n - n % {step};")
        w.line(f"double {acc} = 0.0;")
        if spec.omp:
            w.line(f"#pragma omp parallel reduction(+:{acc})")
            w.block()
        w.line(f"{vt} " + ", ".join(f"{v} = {p}_setzero_pd()" for v in vecs) + ";")
        if spec.omp:
            w.line("#pragma omp for schedule(static)")
        w.open(for_loop(i, "0", "m", s, str(step)))
        for d, v in enumerate(vecs):
            off = f" + {d * width}" if d else ""
            w.line(f"{v} = {p}_fmadd_pd({p}_loadu_pd(x + {i}{off}), {p}_loadu_pd(y + {i}{off}), {v});")
        w.close()
        for v in vecs[1:]:
            w.line(f"{vecs[0]} = {p}_add_pd({vecs[0]}, {v});")
        hsum(spec, w, acc, vecs[0])
        if spec.omp:
            w.close()
        if spec.defect != "no_tail":
            w.comment("the last n % vector-width elements")
            w.open(for_loop(i, "m", hi, s))
            w.line(f"{acc} += x[{i}] * y[{i}];")
            w.close()
        w.line(f"return {acc};")
        return
    if spec.unroll == 1:
        w.line(f"double {acc} = 0.0;")
        if spec.omp and spec.simd == "pragma":
            w.line(f"#pragma omp parallel for simd reduction(+:{acc})")
        elif spec.omp:
            w.line(omp_for(spec, acc))
        elif spec.simd == "pragma":
            w.line(f"#pragma omp simd reduction(+:{acc})")
        w.open(for_loop(i, "0", hi, s))
        w.line(f"{acc} += x[{i}] * {other}[{i}];")
        w.close()
        w.line(f"return {acc};")
        return
    u = spec.unroll
    names = [f"{acc}{d}" for d in range(u)]
    w.comment(f"{u} independent partial sums hide the latency of the additions", 1)
    w.line("double " + ", ".join(f"{a} = 0.0" for a in names) + ";")
    w.line(f"{s.index} m = n - n % {u};")
    if spec.omp:
        w.line(omp_for(spec, ", ".join(names)))
    w.open(for_loop(i, "0", "m", s, str(u)))
    for d, a in enumerate(names):
        at = f"{i} + {d}" if d else i
        w.line(f"{a} += x[{at}] * {other}[{at}];")
    w.close()
    if spec.defect != "no_tail":
        w.open(for_loop(i, "m", hi, s))
        w.line(f"{names[0]} += x[{i}] * y[{i}];")
        w.close()
    w.line(f"return {' + '.join(names)};")


def render(spec: KernelSpec) -> str:
    """The C source of a DOT spec (a complete translation unit)."""
    return translation_unit(spec, SIGNATURE, _dot, WHAT)


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random DOT spec; `optimize` turns on the optional techniques more often, `mode` is the
    prompt's execution model (generator.random_spec)."""
    family = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.2
    kw = draw_omp(rng, SCHEDULES, family, omp_rate(optimize, mode))
    if family == "naive":
        if rng.random() < p:
            kw["unroll"] = rng.choice([2, 4, 4, 8])
        elif rng.random() < p:
            kw["simd"] = "pragma"
    if family == "intrinsics":
        kw["simd"] = rng.choice(["avx2", "avx512", "avx512"])
        kw["unroll"] = rng.choice([1, 1, 2, 4])
    if kw.get("unroll", 1) >= 4:
        kw["regblock"] = (kw["unroll"], 1)  # four or more named accumulators, scalar or vector
    return KernelSpec("dot", family, **kw)


def sweep() -> list[KernelSpec]:
    """Every family and technique of DOT (default style)."""
    out = []
    for omp in (None, "static"):
        o = {"omp": omp} if omp else {}
        out += [{"family": "naive", **o}, {"family": "naive", "simd": "pragma", **o}]
        out += [{"family": "naive", "unroll": 4, "regblock": (4, 1), **o}, {"family": "naive", "unroll": 2, **o}]
        out += [{"family": "intrinsics", "simd": v, "unroll": u, **o} for v in ("avx2", "avx512") for u in (1, 2)]
        out.append({"family": "intrinsics", "simd": "avx512", "unroll": 4, "regblock": (4, 1), **o})
    return [KernelSpec("dot", **kw) for kw in out]


GENERATOR = ProblemGenerator("dot", FAMILIES, render, draw, loop_defects, sweep, field_techniques)
