"""DGEMV's kernel generator: y = A * x for an n x n row-major matrix.

Families:

- naive: a dot product of each row with x, unrolled or with `omp simd`; with a register block
  of 4 or 8 rows (`regblock = (rows, 1)`) it computes several rows per pass, reusing each x[j]
  from a register (and names rows i + 1, i + 2, ...: unrolling too);
- intrinsics: AVX2/AVX-512 FMA along each row, a horizontal sum and a scalar tail.

OpenMP parallelizes over rows. `GENERATOR` is what the registry (lab.policy.seed_policy.problems)
holds.
"""

from __future__ import annotations

import random

from lab.policy.seed_policy.c_writer import CWriter, for_loop, vector_type
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques, omp_rate
from lab.policy.seed_policy.problems.dense import bound, ix, naive_description, omp_pragma, translation_unit

SIGNATURE = "void dgemv(int n, const double{r}A, const double{r}x, double{r}y)"
FAMILIES = ("naive", "intrinsics")


def _body(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, j, _ = s.names
    pragma = omp_pragma(spec, collapse_ok=False)
    rows = spec.regblock[0] if spec.regblock else 1
    n_rows = bound(spec, "n", "row")
    if pragma:
        w.line(pragma)
    if rows > 1:
        w.open(f"for ({s.index} {i} = 0; {i} < {n_rows}; {i} += {rows})")
        w.open(f"if ({i} + {rows} > n)")
        w.open(f"for ({s.index} rr = {i}; rr < n; rr++)")
        w.line("double t = 0.0;")
        w.open(for_loop(j, "0", "n", s))
        w.line(f"t += A[{ix(s, 'rr', j)}] * x[{j}];")
        w.close()
        w.line("y[rr] = t;")
        w.close()
        w.line("continue;")
        w.close()
        w.line("double " + ", ".join(f"{s.acc}{r} = 0.0" for r in range(rows)) + ";")
        if spec.simd == "pragma":
            w.line("#pragma omp simd reduction(+:" + ", ".join(f"{s.acc}{r}" for r in range(rows)) + ")")
        w.open(for_loop(j, "0", "n", s))
        w.line(f"const double xv = x[{j}];")
        for r in range(rows):
            w.line(f"{s.acc}{r} += A[{ix(s, f'({i} + {r})', j)}] * xv;")
        w.close()
        for r in range(rows):
            w.line(f"y[{i} + {r}] = {s.acc}{r};" if r else f"y[{i}] = {s.acc}0;")
        w.close()
        return
    w.open(for_loop(i, "0", n_rows, s))
    w.line(f"const double *a = A + {ix(s, i, '0')};")
    if spec.family == "intrinsics":
        vt, width, p = vector_type(spec.simd)
        w.line(f"{vt} v = {p}_setzero_pd();")
        w.line(f"{s.index} {j} = 0;")
        w.open(f"for (; {j} + {width - 1} < n; {j} += {width})")
        w.line(f"v = {p}_fmadd_pd({p}_loadu_pd(a + {j}), {p}_loadu_pd(x + {j}), v);")
        w.close()
        w.line(f"double tmp[{width}];")
        w.line(f"{p}_storeu_pd(tmp, v);")
        w.line(f"double {s.acc} = " + " + ".join(f"tmp[{d}]" for d in range(width)) + ";")
        if spec.defect != "no_tail":
            w.open(f"for (; {j} < n; {j}++)")
            w.line(f"{s.acc} += a[{j}] * x[{j}];")
            w.close()
    else:
        w.line(f"double {s.acc} = 0.0;")
        if spec.simd == "pragma":
            w.line(f"#pragma omp simd reduction(+:{s.acc})")
        if spec.unroll > 1:
            u = spec.unroll
            w.line(f"{s.index} {j} = 0;")
            w.open(f"for (; {j} + {u - 1} < n; {j} += {u})")
            w.line(
                f"{s.acc} += "
                + " + ".join(f"a[{j} + {d}] * x[{j} + {d}]" if d else f"a[{j}] * x[{j}]" for d in range(u))
                + ";"
            )
            w.close()
            if spec.defect != "no_tail":
                w.open(f"for (; {j} < n; {j}++)")
                w.line(f"{s.acc} += a[{j}] * x[{j}];")
                w.close()
        else:
            w.open(for_loop(j, "0", "n", s))
            xi = f"x[{i}]" if spec.defect == "wrong_index" else f"x[{j}]"
            w.line(f"{s.acc} += a[{j}] * {xi};")
            w.close()
    w.line(f"y[{i}] = {s.acc};")
    w.close()


def render(spec: KernelSpec) -> str:
    """The C source of a DGEMV spec (a complete translation unit)."""
    if spec.family == "intrinsics":
        what, extra = f"{'AVX-512' if spec.simd == 'avx512' else 'AVX2'} FMA kernel", ("immintrin.h",)
    else:
        what, extra = naive_description(spec), ()
    return translation_unit(spec, SIGNATURE, _body, what, extra)


# ---------------------------------------------------------------- sampling

# Family choices, weighted by repetition like a base model's habits ("rows": the naive family
# with a register block of rows).
OPTIONS = ["naive"] * 3 + ["rows", "intrinsics"]


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random DGEMV spec; `optimize` and `mode` as for generator.random_spec."""
    family = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.12
    kw: dict = {}
    kw["omp"] = (
        rng.choice(["static", "static", "dynamic", "guided", "collapse"])
        if rng.random() < omp_rate(optimize, mode)
        else None
    )
    # The draws keep the order and number of random numbers the seed corpus was built with: a
    # naive kernel's unroll factor is drawn twice (the second decides), its `omp simd` gets two chances.
    if family == "naive":
        kw["unroll"] = rng.choice([2, 4, 4, 8]) if rng.random() < p else 1
        kw["simd"] = "pragma" if rng.random() < p else None
    if family == "intrinsics":
        kw["simd"] = rng.choice(["avx2", "avx512", "avx512"])
        kw["unroll"] = 1
    if family == "rows":
        kw["regblock"] = (rng.choice([4, 4, 8]), 1)  # four or more accumulators: register blocking
        kw["simd"] = "pragma" if rng.random() < p else None
        family = "naive"
    if family == "naive":
        kw["unroll"] = rng.choice([2, 4, 8]) if rng.random() < p else 1
        kw["simd"] = kw.get("simd") or ("pragma" if rng.random() < p else None)
    if kw.get("unroll", 1) > 1 and kw.get("simd") == "pragma":  # omp simd needs a canonical loop
        if rng.random() < 0.5:
            kw["unroll"] = 1
        else:
            kw["simd"] = None
    if kw.get("omp") == "collapse" and family != "naive":
        kw["omp"] = "static"  # (the naive kernels write `collapse` as a plain `parallel for` over rows)
    return KernelSpec("dgemv", family, **kw)


def defects(spec: KernelSpec) -> list[str]:
    """The defects `render` can apply to `spec` (each makes it fail its checks)."""
    out = ["off_by_one", "syntax"]
    if spec.unroll > 1 or (spec.family == "intrinsics" and spec.regblock is None):
        out += ["no_tail", "no_tail"]
    if spec.family == "naive" and spec.regblock is None and spec.unroll == 1:
        out.append("wrong_index")
    return out


def sweep() -> list[KernelSpec]:
    """The autotuning space: every family and parameter combination worth timing (default style)."""
    specs = []
    for omp in (None, "static"):
        specs += [
            KernelSpec("dgemv", "naive", omp=omp, unroll=u, simd=sd) for u, sd in ((1, None), (4, None), (1, "pragma"))
        ]
        specs += [KernelSpec("dgemv", "naive", omp=omp, regblock=(r, 1)) for r in (4, 8)]
        specs += [KernelSpec("dgemv", "intrinsics", omp=omp, simd=v) for v in ("avx2", "avx512")]
    return specs


def techniques(spec: KernelSpec) -> frozenset[str]:
    """The techniques a DGEMV spec uses by construction."""
    # A row block steps the row loop by the block and names rows i + 1, i + 2, ...: unrolled.
    return field_techniques(spec) | ({"unrolling"} if spec.regblock else set())


GENERATOR = ProblemGenerator("dgemv", FAMILIES, render, draw, defects, sweep, techniques)
