"""Kernel families of the suite problems beyond DGEMM and DGEMV: dot, jacobi2d, spmv,
prefix_sum, histogram and transpose.

The same `KernelSpec` (lab.policy.seed_policy.generator) describes them, with the fields
each problem uses: `family`, `unroll`, `simd` (pragma | avx2 | avx512), `omp` (an
OpenMP schedule), `tile` (cache blocking) and `regblock` (several accumulators held in
registers). The technique set of a spec therefore comes from the same registry link as
DGEMM's (lab.techniques.in_spec). Families, per problem:

- dot: naive (one accumulator; `omp simd` / `parallel for reduction`), unrolled scalar
  accumulators (register blocking from 4 on), intrinsics (AVX2/AVX-512 FMA, 1-4 vector
  accumulators, an OpenMP region with a reduction);
- jacobi2d: naive (rows, `omp simd` or unrolled columns), blocked (row x column tiles),
  intrinsics (five unaligned loads per vector of outputs);
- spmv: naive (a row's dot product; unrolled into 2-4 accumulators), intrinsics
  (column indices loaded as int32, x gathered); OpenMP over rows with a schedule;
- prefix_sum: naive (running sum, unrolled), blocked (chunks), intrinsics (AVX-512
  in-register scan with a carried total), two_pass (OpenMP: each thread sums its share,
  a barrier, then scans it with the offset of the shares before it);
- histogram: naive (one table; OpenMP with atomic increments), blocked (chunks),
  privatized (several tables merged at the end; OpenMP: one private table per thread);
- transpose: naive (either loop order, unrolled columns), blocked (square tiles; OpenMP
  over tile rows or both tile loops collapsed).

`render(spec)` writes the whole translation unit; `options`, `draw`, `defects` and
`sweep` are what generator.py's sampling functions call for these problems.
"""

from __future__ import annotations

import random
from typing import Any

from lab.policy.seed_policy.c_writer import CWriter, for_loop, tile_var, vector_type

PROBLEMS = ("dot", "jacobi2d", "spmv", "prefix_sum", "histogram", "transpose")

_SIGNATURES = {
    "dot": "double dot(int n, const double{r}x, const double{r}y)",
    "jacobi2d": "void jacobi2d(int n, const double{r}u, double{r}v)",
    "spmv": "void spmv(int n, const int{r}rowptr, const int{r}col, const double{r}val, const double{r}x, double{r}y)",
    "prefix_sum": "void prefix_sum(int n, const int64_t{r}x, int64_t{r}y)",
    "histogram": "void histogram(int n, const uint8_t{r}x, int64_t{r}counts)",
    "transpose": "void transpose(int n, const double{r}A, double{r}B)",
}

# OpenMP schedules a family may carry, per problem (absent: the family never uses OpenMP).
_SCHEDULES = {
    "dot": {"naive": ["static"], "intrinsics": ["static"]},
    "jacobi2d": {"naive": ["static", "static", "dynamic", "guided"], "blocked": ["static", "dynamic"],
                 "intrinsics": ["static", "guided"]},
    "spmv": {"naive": ["static", "dynamic", "dynamic", "guided"], "intrinsics": ["dynamic", "guided"]},
    "prefix_sum": {"two_pass": ["static"]},
    "histogram": {"naive": ["atomic"], "privatized": ["static", "static", "dynamic"]},
    "transpose": {"naive": ["static", "dynamic", "collapse"], "blocked": ["static", "collapse", "dynamic"]},
}  # fmt: skip


def options(problem: str) -> list[str]:
    """Families, weighted by repetition like a base model's habits: mostly the textbook loop."""
    naive = ["naive"] * 5
    return {
        "dot": naive + ["intrinsics"] * 2,
        "jacobi2d": naive + ["blocked"] * 2 + ["intrinsics"] * 2,
        "spmv": naive + ["intrinsics"] * 2,
        "prefix_sum": naive + ["blocked", "intrinsics", "intrinsics", "two_pass", "two_pass"],
        "histogram": naive + ["blocked"] * 2 + ["privatized"] * 3,
        "transpose": naive + ["blocked"] * 3,
    }[problem]


def draw(rng: random.Random, problem: str, family: str, optimize: bool, omp_rate: float) -> dict[str, Any]:
    """KernelSpec keyword arguments of one `family` kernel; `optimize` turns on the optional
    techniques more often, `omp_rate` is the chance of OpenMP where the family has it."""
    p = 0.45 if optimize else 0.2
    kw: dict[str, Any] = {"family": family}
    schedules = _SCHEDULES[problem].get(family)
    if family == "two_pass":
        kw["omp"] = "static"
    elif schedules and rng.random() < omp_rate:
        kw["omp"] = rng.choice(schedules)
    if family in ("naive", "blocked") and problem not in ("prefix_sum", "histogram") or family == "privatized":
        if family == "privatized" or rng.random() < p:
            kw["unroll"] = rng.choice([2, 4, 4, 8])
        elif problem in ("dot", "jacobi2d", "spmv", "transpose") and family == "naive" and rng.random() < p:
            kw["simd"] = "pragma"
    if problem in ("prefix_sum", "histogram") and family == "naive" and rng.random() < p:
        kw["unroll"] = rng.choice([2, 4, 8])
    if problem == "spmv" and kw.get("unroll", 1) > 4:
        kw["unroll"] = 4
    if family == "intrinsics":
        kw["simd"] = "avx512" if problem == "prefix_sum" else rng.choice(["avx2", "avx512", "avx512"])
        if problem == "dot":
            kw["unroll"] = rng.choice([1, 1, 2, 4])
    if family == "blocked":
        kw["tile"] = {
            "jacobi2d": lambda: (rng.choice([8, 16, 32, 64]), 0, rng.choice([128, 256, 512, 1024])),
            "prefix_sum": lambda: (0, rng.choice([1024, 4096, 16384]), 0),
            "histogram": lambda: (0, rng.choice([4096, 65536]), 0),
            "transpose": lambda: (rng.choice([16, 32, 32, 64]),) * 3,
        }[problem]()
    if problem == "histogram" and family == "naive" and kw.get("omp"):
        kw.pop("unroll", None)  # the atomic version stays a plain loop
    if problem in ("dot", "spmv") and family != "intrinsics" and kw.get("unroll", 1) >= 4:
        kw["regblock"] = (kw["unroll"], 1)  # four or more named accumulators
    if problem == "dot" and family == "intrinsics" and kw.get("unroll", 1) >= 4:
        kw["regblock"] = (kw["unroll"], 1)
    if kw.get("omp") == "collapse" and (kw.get("unroll", 1) > 1 or kw.get("simd")):
        kw["omp"] = "static"  # collapse needs the two loops perfectly nested, the inner one canonical
    return kw


def defects(spec) -> list[str]:
    """The defects `render` can apply to `spec` (each makes it fail its checks)."""
    out = ["syntax"]
    if spec.family != "two_pass":
        out.append("off_by_one")
    if spec.unroll > 1 or spec.family == "intrinsics" or (spec.problem == "histogram" and spec.family == "privatized"):
        out += ["no_tail", "no_tail"]
    if spec.family in ("naive", "two_pass") and not (spec.problem == "histogram" and spec.omp):
        out.append("wrong_index")
    if spec.problem == "histogram" and spec.family in ("naive", "blocked"):
        out.append("no_zero")
    if spec.problem == "jacobi2d":
        out.append("no_border")
    return out


def sweep(problem: str) -> list[dict[str, Any]]:
    """KernelSpec keyword arguments covering every family and technique of `problem`."""
    out: list[dict[str, Any]] = []
    for omp in (None, "static"):
        o = {"omp": omp} if omp else {}
        if problem == "dot":
            out += [{"family": "naive", **o}, {"family": "naive", "simd": "pragma", **o}]
            out += [{"family": "naive", "unroll": 4, "regblock": (4, 1), **o}, {"family": "naive", "unroll": 2, **o}]
            out += [{"family": "intrinsics", "simd": v, "unroll": u, **o} for v in ("avx2", "avx512") for u in (1, 2)]
            out.append({"family": "intrinsics", "simd": "avx512", "unroll": 4, "regblock": (4, 1), **o})
        elif problem == "jacobi2d":
            out += [
                {"family": "naive", **o},
                {"family": "naive", "simd": "pragma", **o},
                {"family": "naive", "unroll": 4, **o},
            ]
            out += [
                {"family": "blocked", "tile": (16, 0, 512), **o},
                {"family": "blocked", "tile": (32, 0, 256), "unroll": 2, **o},
            ]
            out += [{"family": "intrinsics", "simd": v, **o} for v in ("avx2", "avx512")]
        elif problem == "spmv":
            out += [
                {"family": "naive", **o},
                {"family": "naive", "simd": "pragma", **o},
                {"family": "naive", "unroll": 2, **o},
            ]
            out += [{"family": "naive", "unroll": 4, "regblock": (4, 1), **o}]
            out += [{"family": "intrinsics", "simd": v, **o} for v in ("avx2", "avx512")]
        elif problem == "prefix_sum":
            if omp:
                out.append({"family": "two_pass", "omp": "static"})
                continue
            out += [{"family": "naive"}, {"family": "naive", "unroll": 4}, {"family": "blocked", "tile": (0, 4096, 0)}]
            out.append({"family": "intrinsics", "simd": "avx512"})
        elif problem == "histogram":
            out += [
                {"family": "naive", **({"omp": "atomic"} if omp else {})},
                {"family": "privatized", "unroll": 4, **o},
            ]
            if not omp:
                out += [{"family": "naive", "unroll": 4}, {"family": "blocked", "tile": (0, 65536, 0)}]
        elif problem == "transpose":
            out += [
                {"family": "naive", **o},
                {"family": "naive", "unroll": 4, **o},
                {"family": "naive", "simd": "pragma", **o},
            ]
            out += [
                {"family": "blocked", "tile": (32, 32, 32), **o},
                {"family": "blocked", "tile": (16, 16, 16), "unroll": 4, **o},
            ]
    return out  # fmt: skip


# ---------------------------------------------------------------- rendering


def _hsum(spec, w: CWriter, acc: str, vec: str) -> None:
    """`acc += the horizontal sum of vec`."""
    if spec.simd == "avx512":
        w.line(f"{acc} += _mm512_reduce_add_pd({vec});")
        return
    w.line("double lanes[4];")
    w.line(f"_mm256_storeu_pd(lanes, {vec});")
    w.line(f"{acc} += lanes[0] + lanes[1] + lanes[2] + lanes[3];")


def _omp_for(spec, reduction: str | None = None) -> str:
    schedule = {"dynamic": " schedule(dynamic, 64)", "guided": " schedule(guided)"}.get(spec.omp, "")
    if spec.omp == "static" and spec.style.comments == 2:
        schedule = " schedule(static)"
    red = f" reduction(+:{reduction})" if reduction else ""
    collapse = " collapse(2)" if spec.omp == "collapse" else ""
    return f"#pragma omp parallel for{collapse}{schedule}{red}"


def _unrolled(spec, w: CWriter, var: str, lo: str, hi: str, stmt, tail_hi: str | None = None) -> None:
    """for var in [lo, hi): stmt(var) -- unrolled by spec.unroll with a remainder loop (which
    the no_tail defect drops; `tail_hi` bounds the remainder, for the off_by_one defect)."""
    s = spec.style
    u = spec.unroll
    if u == 1:
        w.open(for_loop(var, lo, hi, s))
        w.line(stmt(var))
        w.close()
        return
    w.line(f"{s.index} {var} = {lo};")
    w.open(f"for (; {var} + {u - 1} < {hi}; {var} += {u})")
    for d in range(u):
        w.line(stmt(f"{var} + {d}" if d else var))
    w.close()
    if spec.defect != "no_tail":
        w.open(f"for (; {var} < {tail_hi or hi}; {var}++)")
        w.line(stmt(var))
        w.close()


def _dot(spec, w: CWriter, helpers: list[str]) -> None:
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
        _hsum(spec, w, acc, vecs[0])
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
            w.line(_omp_for(spec, acc))
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
        w.line(_omp_for(spec, ", ".join(names)))
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


def _jacobi_point(spec, i: str, j: str, out: str = "v", src: str = "u") -> str:
    right = f"{src}[({i} + 1) * n + {j} - 1]" if spec.defect == "wrong_index" else f"{src}[({i} + 1) * n + {j}]"
    return (
        f"{out}[{i} * n + {j}] = 0.2 * ({src}[{i} * n + {j}] + {src}[({i} - 1) * n + {j}] + {right} + "
        f"{src}[{i} * n + {j} - 1] + {src}[{i} * n + {j} + 1]);"
    )


def _jacobi(spec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, j, _ = s.names
    if spec.defect != "no_border":
        w.comment("the border of v is the border of u", 1)
        w.open(for_loop(j, "0", "n", s))
        w.line(f"v[{j}] = u[{j}];")
        w.line(f"v[(n - 1) * n + {j}] = u[(n - 1) * n + {j}];")
        w.close()
        w.open(for_loop(i, "1", "n - 1", s))
        w.line(f"v[{i} * n] = u[{i} * n];")
        w.line(f"v[{i} * n + n - 1] = u[{i} * n + n - 1];")
        w.close()
    rows_hi = "n - 2" if spec.defect == "off_by_one" else "n - 1"
    if spec.family == "blocked":
        bi, _, bj = spec.tile
        ii, jj = tile_var(i), tile_var(j)
        if spec.omp:
            w.line(_omp_for(spec))
        w.open(for_loop(ii, "1", "n - 1", s, "BI"))
        w.open(for_loop(jj, "1", "n - 1", s, "BJ"))
        w.line(f"{s.index} {i}_end = {ii} + BI < n - 1 ? {ii} + BI : {rows_hi};")
        w.line(f"{s.index} {j}_end = {jj} + BJ < n - 1 ? {jj} + BJ : n - 1;")
        w.open(f"for ({s.index} {i} = {ii}; {i} < {i}_end; {i}++)")
        if spec.simd == "pragma":
            w.line("#pragma omp simd")
        _unrolled(spec, w, j, jj, f"{j}_end", lambda c: _jacobi_point(spec, i, c))
        w.close()
        w.close()
        w.close()
        return
    if spec.family == "intrinsics":
        vt, width, p = vector_type(spec.simd)
        w.line(f"const {vt} fifth = {p}_set1_pd(0.2);")
        if spec.omp:
            w.line(_omp_for(spec))
        w.open(for_loop(i, "1", rows_hi, s))
        w.line(f"const double *cur = u + (size_t){i} * n;")
        w.line("const double *up = cur - n, *down = cur + n, *left = cur - 1, *right = cur + 1;")
        w.line(f"double *out = v + (size_t){i} * n;")
        w.line(f"{s.index} {j} = 1;")
        w.open(f"for (; {j} + {width} < n; {j} += {width})")
        below = f"down - 1 + {j}" if spec.defect == "wrong_index" else f"down + {j}"
        w.line(f"{vt} vs = {p}_add_pd({p}_loadu_pd(cur + {j}), {p}_loadu_pd(up + {j}));")
        w.line(f"vs = {p}_add_pd(vs, {p}_loadu_pd({below}));")
        w.line(f"vs = {p}_add_pd(vs, {p}_loadu_pd(left + {j}));")
        w.line(f"vs = {p}_add_pd(vs, {p}_loadu_pd(right + {j}));")
        w.line(f"{p}_storeu_pd(out + {j}, {p}_mul_pd(fifth, vs));")
        w.close()
        if spec.defect != "no_tail":
            w.open(f"for (; {j} < n - 1; {j}++)")
            w.line(f"out[{j}] = 0.2 * (cur[{j}] + up[{j}] + down[{j}] + left[{j}] + right[{j}]);")
            w.close()
        w.close()
        return
    if spec.omp:
        w.line(_omp_for(spec))
    w.open(for_loop(i, "1", rows_hi, s))
    if spec.simd == "pragma":
        w.line("#pragma omp simd")
    _unrolled(spec, w, j, "1", "n - 1", lambda c: _jacobi_point(spec, i, c))
    w.close()


def _spmv(spec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, _, k = s.names
    acc = s.acc
    rows_hi = "n - 1" if spec.defect == "off_by_one" else "n"
    xk = (lambda at: f"x[{i}]") if spec.defect == "wrong_index" else (lambda at: f"x[col[{at}]]")
    if spec.omp:
        w.line(_omp_for(spec))
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
        _hsum(spec, w, acc, "vs")
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


_SCAN8 = """static inline __m512i scan8(__m512i v)
{
    /* inclusive scan of 8 lanes: add the vector shifted up by 1, 2 and 4 lanes */
    const __m512i z = _mm512_setzero_si512();
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 7));
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 6));
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 4));
    return v;
}
"""


def _prefix_sum(spec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, acc = s.names[0], s.acc
    hi = "n - 1" if spec.defect == "off_by_one" else "n"

    def step(at: str) -> str:
        if spec.defect == "wrong_index":
            return f"y[{at}] = {acc}; {acc} += x[{at}];"
        return f"{acc} += x[{at}]; y[{at}] = {acc};"

    if spec.family == "two_pass":
        w.comment("pass 1: each thread sums its share; pass 2: it scans the share from the sum before it", 1)
        w.line("int64_t part[256];")
        w.line("int nth = omp_get_max_threads() < 256 ? omp_get_max_threads() : 256;")
        w.line("#pragma omp parallel num_threads(nth)")
        w.block()
        w.line("int tid = omp_get_thread_num(), T = omp_get_num_threads();")
        w.line("long lo = (long)n * tid / T, hi = (long)n * (tid + 1) / T;")
        w.line(f"int64_t {acc} = 0;")
        w.open(f"for (long {i} = lo; {i} < hi; {i}++)")
        w.line(f"{acc} += x[{i}];")
        w.close()
        w.line(f"part[tid] = {acc};")
        w.line("#pragma omp barrier")
        w.line(f"{acc} = 0;")
        w.open(f"for (int q = 0; q {'<=' if spec.defect == 'wrong_index' else '<'} tid; q++)")
        w.line(f"{acc} += part[q];")
        w.close()
        w.open(f"for (long {i} = lo; {i} < hi; {i}++)")
        w.line(f"{acc} += x[{i}];")
        w.line(f"y[{i}] = {acc};")
        w.close()
        w.close()
        return
    if spec.family == "intrinsics":
        helpers.append(_SCAN8)
        w.line("const __m512i last = _mm512_set1_epi64(7);")
        w.line("__m512i carry = _mm512_setzero_si512();")
        w.line(f"{s.index} {i} = 0;")
        w.open(f"for (; {i} + 7 < n; {i} += 8)")
        w.line(f"__m512i vs = _mm512_add_epi64(scan8(_mm512_loadu_si512(x + {i})), carry);")
        w.line(f"_mm512_storeu_si512(y + {i}, vs);")
        w.line("carry = _mm512_permutexvar_epi64(last, vs);")
        w.close()
        w.line(f"int64_t {acc} = {i} ? y[{i} - 1] : 0;")
        if spec.defect != "no_tail":
            w.open(f"for (; {i} < {hi}; {i}++)")
            w.line(step(i))
            w.close()
        return
    w.line(f"int64_t {acc} = 0;")
    if spec.family == "blocked":
        ii = tile_var(i)
        w.open(for_loop(ii, "0", "n", s, "BS"))
        w.line(f"{s.index} end = {ii} + BS < n ? {ii} + BS : {hi};")
        w.open(f"for ({s.index} {i} = {ii}; {i} < end; {i}++)")
        w.line(step(i))
        w.close()
        w.close()
        return
    if spec.unroll == 1 and spec.style.acc == "t" and spec.defect is None:
        # Another habit: each output from the previous one.
        w.line("if (n <= 0)")
        w.line("    return;")
        w.line("y[0] = x[0];")
        w.open(for_loop(i, "1", "n", s))
        w.line(f"y[{i}] = y[{i} - 1] + x[{i}];")
        w.close()
        return
    _unrolled(spec, w, i, "0", "n" if spec.unroll > 1 else hi, step, tail_hi=hi)


def _histogram(spec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i = s.names[0]
    hi = "n - 1" if spec.defect == "off_by_one" else "n"
    byte = (lambda at: f"x[{at}] ^ 1") if spec.defect == "wrong_index" else (lambda at: f"x[{at}]")

    def zero_counts() -> None:
        if spec.defect == "no_zero":
            return
        if s.comments == 2 or s.macro:
            w.open("for (int b = 0; b < 256; b++)")
            w.line("counts[b] = 0;")
            w.close()
        else:
            w.line("memset(counts, 0, 256 * sizeof(int64_t));")

    if spec.family == "privatized" and spec.omp:
        zero_counts()
        u = spec.unroll
        w.line(f"{s.index} m = n - n % {u};")
        w.line("#pragma omp parallel")
        w.block()
        w.line("int64_t local[256] = {0};")
        w.line("#pragma omp for" + (" schedule(dynamic, 65536)" if spec.omp == "dynamic" else ""))
        w.open(for_loop(i, "0", "m", s, str(u)))
        for d in range(u):
            w.line(f"local[x[{i} + {d}]]++;" if d else f"local[x[{i}]]++;")
        w.close()
        w.line("#pragma omp critical")
        w.open("for (int b = 0; b < 256; b++)")
        w.line("counts[b] += local[b];")
        w.close()
        w.close()
        if spec.defect != "no_tail":
            w.open(for_loop(i, "m", hi, s))
            w.line(f"counts[x[{i}]]++;")
            w.close()
        return
    if spec.family == "privatized":
        u = spec.unroll
        w.comment(f"{u} tables, so that repeated bytes do not wait on each other's increments", 1)
        w.line(f"int64_t h[{u}][256];")
        w.line("memset(h, 0, sizeof h);")
        w.line(f"{s.index} {i} = 0;")
        w.open(f"for (; {i} + {u - 1} < n; {i} += {u})")
        for d in range(u):
            w.line(f"h[{d}][x[{i} + {d}]]++;" if d else f"h[0][x[{i}]]++;")
        w.close()
        if spec.defect != "no_tail":
            w.open(f"for (; {i} < {hi}; {i}++)")
            w.line(f"h[0][x[{i}]]++;")
            w.close()
        w.open("for (int b = 0; b < 256; b++)")
        w.line(f"counts[b] = {' + '.join(f'h[{d}][b]' for d in range(u))};")
        w.close()
        return
    zero_counts()
    if spec.family == "blocked":
        ii = tile_var(i)
        w.open(for_loop(ii, "0", "n", s, "BS"))
        w.line(f"{s.index} end = {ii} + BS < n ? {ii} + BS : {hi};")
        w.open(f"for ({s.index} {i} = {ii}; {i} < end; {i}++)")
        w.line(f"counts[{byte(i)}]++;")
        w.close()
        w.close()
        return
    if spec.omp:
        w.line("#pragma omp parallel for")
        w.open(for_loop(i, "0", hi, s))
        w.line("#pragma omp atomic")
        w.line(f"counts[{byte(i)}]++;")
        w.close()
        return
    _unrolled(spec, w, i, "0", "n" if spec.unroll > 1 else hi, lambda at: f"counts[{byte(at)}]++;", tail_hi=hi)


def _transpose(spec, w: CWriter, helpers: list[str]) -> None:
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
            w.line(_omp_for(spec))
        w.open(for_loop(ii, "0", "n", s, "BS"))
        w.open(for_loop(jj, "0", "n", s, "BS"))
        w.line(f"{s.index} {i}_end = {ii} + BS < n ? {ii} + BS : {rows_hi};")
        w.line(f"{s.index} {j}_end = {jj} + BS < n ? {jj} + BS : n;")
        w.open(f"for ({s.index} {i} = {ii}; {i} < {i}_end; {i}++)")
        _unrolled(spec, w, j, jj, f"{j}_end", lambda c: copy(i, c))
        w.close()
        w.close()
        w.close()
        return
    column_major = s.acc in ("s", "t") and spec.unroll == 1 and spec.simd is None
    if column_major:  # walk B's rows: contiguous writes, strided reads
        if spec.omp:
            w.line(_omp_for(spec))
        w.open(for_loop(j, "0", "n", s))
        w.open(for_loop(i, "0", rows_hi, s))
        w.line(copy(i, j))
        w.close()
        w.close()
        return
    if spec.omp:
        w.line(_omp_for(spec))
    w.open(for_loop(i, "0", rows_hi, s))
    if spec.simd == "pragma":
        w.line("#pragma omp simd")
    _unrolled(spec, w, j, "0", "n", lambda c: copy(i, c))
    w.close()


_BODIES = {
    "dot": _dot,
    "jacobi2d": _jacobi,
    "spmv": _spmv,
    "prefix_sum": _prefix_sum,
    "histogram": _histogram,
    "transpose": _transpose,
}

_WHAT = {
    ("dot", "naive"): "one running sum",
    ("dot", "intrinsics"): "FMA into vector accumulators",
    ("jacobi2d", "naive"): "one 5-point sweep, row by row",
    ("jacobi2d", "blocked"): "5-point sweep in tiles",
    ("jacobi2d", "intrinsics"): "5-point sweep, a vector of outputs at a time",
    ("spmv", "naive"): "CSR, one row at a time",
    ("spmv", "intrinsics"): "CSR rows with gathered x",
    ("prefix_sum", "naive"): "running sum",
    ("prefix_sum", "blocked"): "running sum over chunks",
    ("prefix_sum", "intrinsics"): "in-register scan of 8 lanes with a carried total",
    ("prefix_sum", "two_pass"): "two-pass parallel scan",
    ("histogram", "naive"): "count every byte",
    ("histogram", "blocked"): "count chunk by chunk",
    ("histogram", "privatized"): "private tables, merged at the end",
    ("transpose", "naive"): "element by element",
    ("transpose", "blocked"): "square tiles",
}


def render(spec) -> str:
    """The C source of a suite-problem spec (before any syntax slip)."""
    s = spec.style
    w = CWriter(s)
    helpers: list[str] = []
    w.open(_SIGNATURES[spec.problem].format(r=" *restrict " if s.restrict else " *"))
    _BODIES[spec.problem](spec, w, helpers)
    w.close()
    body = w.text()
    headers = []
    if spec.problem in ("prefix_sum", "histogram"):
        headers.append("stdint.h")
    if "memset" in body:
        headers.append("string.h")
    if "_mm" in body or "__m" in body or helpers:
        headers.append("immintrin.h")
    if "omp_get" in body or (spec.omp and s.comments >= 2):
        headers.append("omp.h")
    if "size_t" in body and "string.h" not in headers:
        headers.append("stddef.h")
    defines = []
    if spec.tile:
        if spec.problem == "jacobi2d":
            defines = [f"#define BI {spec.tile[0]}", f"#define BJ {spec.tile[2]}"]
        else:
            defines = [f"#define BS {max(spec.tile)}"]
    head = None
    if s.comments:
        extras = [f"unrolled x{spec.unroll}"] if spec.unroll > 1 else []
        extras += ["OpenMP"] if spec.omp else []
        extras += ["omp simd"] if spec.simd == "pragma" else []
        what = _WHAT[(spec.problem, spec.family)]
        head = f"/* {spec.problem}: {what}" + (f" ({', '.join(extras)})" if extras else "") + ". */"
    out = [f"#include <{h}>" for h in headers]
    if out:
        out.append("")
    if defines:
        out += defines + [""]
    return "\n".join(out) + "\n" + "".join(h + "\n" for h in helpers) + ((head + "\n") if head else "") + body
