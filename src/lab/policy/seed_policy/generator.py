"""Kernel generator: C implementations of the harness problems, composed from techniques.

A `KernelSpec` names a family and its parameters (loop order, tiles, unrolling,
SIMD flavour, OpenMP schedule, packing, register-block shape), a `Style` (names,
index type, braces, comments — how people differ), and optionally a `defect`
(the slips a base code model makes). `render(spec)` writes the C source;
`spec.techniques()` is its technique set by construction.

    >>> spec = KernelSpec("dgemm", "naive", order="ikj", omp="static")
    >>> sorted(spec.techniques())
    ['loop_reorder', 'openmp']
    >>> "#pragma omp parallel for" in render(spec)
    True

Families, from the textbook loop up to the GotoBLAS/BLIS structure:

- dgemm: naive (ijk dot product, or ikj/kij row updates), blocked (tiles over
  i, k, j), transposed (B packed transposed, then contiguous dot products),
  intrinsics (AVX2/AVX-512 FMA row updates with tails), microkernel (B packed in
  NR-wide panels, A in MR-row panels, an MR x NR block of vector accumulators).
- dgemv: naive, rows (several rows per pass: register blocking), intrinsics.
- dot, jacobi2d, spmv, prefix_sum, histogram, transpose: lab.policy.seed_policy.suite_generator
  (the same KernelSpec; `render`, `random_spec`, `applicable_defects` and `sweep_specs`
  hand those problems to it).

`random_spec(rng, problem, permitted, mode=...)` draws a spec whose techniques lie in
`permitted` (None = anything), with the mix a base model shows; in the serial execution
model it never uses OpenMP.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field, replace

from lab.policy.seed_policy import suite_generator
from lab.policy.seed_policy.c_writer import CWriter, Style, for_loop, tile_var, vector_type
from lab.techniques import in_spec

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
        """Its technique set by construction (the registry's generator link, lab.techniques)."""
        return in_spec(self)

    @property
    def correct(self) -> bool:
        return self.defect is None


# ---------------------------------------------------------------- rendering helpers


def _omp_pragma(spec: KernelSpec, collapse_ok: bool = True) -> str | None:
    if not spec.omp:
        return None
    if spec.omp == "collapse" and collapse_ok:
        return "#pragma omp parallel for collapse(2) schedule(static)"
    if spec.omp in ("dynamic", "guided"):
        return f"#pragma omp parallel for schedule({spec.omp})"
    return "#pragma omp parallel for" + (
        " schedule(static)" if spec.omp == "static" and spec.style.comments != 1 else ""
    )


def _headers(spec: KernelSpec, extra: tuple[str, ...], code: str) -> list[str]:
    hs = list(extra)
    if spec.omp and spec.style.comments >= 2:
        hs.append("omp.h")
    if "size_t" in code and not {"stddef.h", "stdlib.h", "string.h"} & set(hs):
        hs.append("stddef.h")
    return [f"#include <{h}>" for h in dict.fromkeys(hs)]


def _signature(spec: KernelSpec) -> str:
    r = " *restrict " if spec.style.restrict else " *"
    if spec.problem == "dgemm":
        return f"void dgemm(int n, const double{r}A, const double{r}B, double{r}C)"
    return f"void dgemv(int n, const double{r}A, const double{r}x, double{r}y)"


def _header_comment(spec: KernelSpec) -> str | None:
    if spec.style.comments == 0:
        return None
    plain = ["straightforward triple loop", "textbook triple loop", "simple reference version"][
        (len(spec.style.names[0]) + spec.style.comments + (spec.style.index == "int")) % 3
    ]
    what = {
        "naive": {
            "ijk": plain,
            "ikj": "i-k-j loop order for unit-stride access to B and C",
            "kij": "k-i-j loop order",
        }.get(spec.order, "simple loops"),
        "blocked": "cache-blocked matrix multiply",
        "transposed": "transpose B first so the inner loop reads both operands contiguously",
        "intrinsics": f"{'AVX-512' if spec.simd == 'avx512' else 'AVX2'} FMA kernel",
        "microkernel": "packed panels and a register-blocked micro-kernel",
        "rows": "several rows per pass to reuse x",
    }[spec.family]
    extras = []
    if spec.omp:
        extras.append("OpenMP")
    if spec.unroll > 1:
        extras.append(f"unrolled x{spec.unroll}")
    if spec.simd == "pragma":
        extras.append("omp simd")
    return f"/* {spec.problem.upper()}: {what}" + (f" ({', '.join(extras)})" if extras else "") + ". */"


def _ix(style: Style, row: str, col: str) -> str:
    if " " in row and not row.startswith("("):
        row = f"({row})"
    if style.macro:
        return f"IDX({row}, {col})"
    cast = "(size_t)" if style.index == "int" and style.comments == 2 else ""
    return f"{cast}{row} * n + {col}"


def _bound(spec: KernelSpec, end: str, which: str) -> str:
    """Loop bound with the off_by_one defect applied to one loop."""
    if spec.defect == "off_by_one" and which == "row":
        return f"{end} - 1"
    return end


# ---------------------------------------------------------------- DGEMM families


def _dgemm_naive(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    a_ix = lambda r, c: _ix(s, r, c)  # noqa: E731
    n_rows = _bound(spec, "n", "row")
    if spec.order == "ijk":
        pragma = _omp_pragma(spec)
        if pragma:
            w.line(pragma)
        w.open(for_loop(i, "0", n_rows, s))
        w.open(for_loop(j, "0", "n", s))
        w.line(f"double {s.acc} = 0.0;")
        if spec.simd == "pragma":
            w.line(f"#pragma omp simd reduction(+:{s.acc})")
        stmt = lambda x: f"{s.acc} += A[{a_ix(i, x)}] * B[{a_ix(x, j)}];"  # noqa: E731
        wrong = lambda x: f"{s.acc} += A[{a_ix(i, x)}] * B[{a_ix(j, x)}];"  # noqa: E731
        if _unrollable_loop(spec, w, k, "0", "n", stmt, wrong if spec.defect == "wrong_index" else stmt):
            if spec.defect != "no_tail":
                w.comment("remaining iterations")
            _remainder(spec, w, k, "n", stmt)
        w.line(f"C[{a_ix(i, j)}] = {s.acc};")
        w.close()
        w.close()
        return
    # ikj / kij: zero C, then row updates C[i, :] += A[i, k] * B[k, :].
    if spec.defect != "no_zero":
        w.comment("C is overwritten, so clear it first")
        w.line("memset(C, 0, (size_t)n * n * sizeof(double));")
    outer, mid = (i, k) if spec.order == "ikj" else (k, i)
    pragma = _omp_pragma(spec, collapse_ok=False)
    if pragma and spec.order == "ikj":
        w.line(pragma)
    w.open(for_loop(outer, "0", n_rows if outer == i else "n", s))
    if pragma and spec.order == "kij":
        w.line(pragma)
    w.open(for_loop(mid, "0", n_rows if mid == i else "n", s))
    w.line(f"const double a = A[{a_ix(i, k)}];")
    _row_update(spec, w, f"C + {_ix(s, i, '0')}", f"B + {_ix(s, k, '0')}", "a", "0", "n")
    w.close()
    w.close()


def _unrollable_loop(spec: KernelSpec, w: CWriter, var: str, lo: str, hi: str, stmt, tail_stmt=None) -> bool:
    """for var in [lo, hi): stmt(var) — unrolled by spec.unroll with a remainder loop (unless
    the no_tail defect drops it). `tail_stmt` overrides the statement of the plain loop.
    Returns whether it unrolled (the caller then adds `_remainder`)."""
    s = spec.style
    tail_stmt = tail_stmt or stmt
    if spec.unroll > 1:
        u = spec.unroll
        w.line(f"{s.index} {var} = {lo};")
        w.open(f"for (; {var} + {u - 1} < {hi}; {var} += {u})")
        for d in range(u):
            w.line(stmt(f"{var} + {d}" if d else var))
        w.close()
        return True
    w.open(for_loop(var, lo, hi, s))
    w.line(tail_stmt(var))
    w.close()
    return False


def _remainder(spec: KernelSpec, w: CWriter, var: str, hi: str, stmt) -> None:
    if spec.defect != "no_tail":
        w.open(f"for (; {var} < {hi}; {var}++)")
        w.line(stmt(var))
        w.close()


def _row_update(spec: KernelSpec, w: CWriter, c_row: str, b_row: str, a: str, lo: str, hi: str) -> None:
    """c[j] += a * b[j] for j in [lo, hi), with the spec's SIMD pragma / unrolling."""
    s = spec.style
    j = s.names[1]
    r = "restrict " if s.restrict else ""
    w.line(f"double *{r}crow = {c_row};")
    w.line(f"const double *{r}brow = {b_row};")
    if spec.simd == "pragma":
        w.line("#pragma omp simd")
    stmt = lambda x: f"crow[{x}] += {a} * brow[{x}];"  # noqa: E731
    if _unrollable_loop(spec, w, j, lo, hi, stmt):
        _remainder(spec, w, j, hi, stmt)


def _dgemm_blocked(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    ti, tk, tj = spec.tile
    ii, kk, jj = (tile_var(v) for v in (i, k, j))
    if spec.defect != "no_zero":
        w.line("memset(C, 0, (size_t)n * n * sizeof(double));")
    pragma = _omp_pragma(spec, collapse_ok=False)
    if pragma:
        w.line(pragma)
    w.open(for_loop(ii, "0", "n", s, "BI"))
    w.open(for_loop(kk, "0", "n", s, "BK"))
    w.open(for_loop(jj, "0", "n", s, "BJ"))
    w.line(f"{s.index} {i}_end = {ii} + BI < n ? {ii} + BI : {_bound(spec, 'n', 'row')};")
    w.line(f"{s.index} {k}_end = {kk} + BK < n ? {kk} + BK : n;")
    w.line(f"{s.index} {j}_end = {jj} + BJ < n ? {jj} + BJ : n;")
    w.open(f"for ({s.index} {i} = {ii}; {i} < {i}_end; {i}++)")
    w.open(f"for ({s.index} {k} = {kk}; {k} < {k}_end; {k}++)")
    w.line(f"const double a = A[{_ix(s, i, k)}];")
    _row_update(spec, w, f"C + {_ix(s, i, '0')}", f"B + {_ix(s, k, '0')}", "a", jj, f"{j}_end")
    w.close()
    w.close()
    w.close()
    w.close()
    w.close()


def _dgemm_transposed(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    w.comment("Bt holds B transposed: row j of Bt is column j of B")
    w.line("double *Bt = malloc((size_t)n * n * sizeof(double));")
    w.open("if (!Bt)")
    w.line("return;")
    w.close()
    w.open(for_loop(k, "0", "n", s))
    w.open(for_loop(j, "0", "n", s))
    w.line(f"Bt[{_ix(s, j, k)}] = B[{_ix(s, k, j)}];")
    w.close()
    w.close()
    pragma = _omp_pragma(spec)
    if pragma:
        w.line(pragma)
    w.open(for_loop(i, "0", _bound(spec, "n", "row"), s))
    w.open(for_loop(j, "0", "n", s))
    w.line(f"const double *a = A + {_ix(s, i, '0')};")
    w.line(f"const double *b = Bt + {_ix(s, j, '0')};")
    w.line(f"double {s.acc} = 0.0;")
    if spec.simd == "pragma":
        w.line(f"#pragma omp simd reduction(+:{s.acc})")
    stmt = lambda x: f"{s.acc} += a[{x}] * b[{x}];"  # noqa: E731
    if _unrollable_loop(spec, w, k, "0", "n", stmt):
        _remainder(spec, w, k, "n", stmt)
    w.line(f"C[{_ix(s, i, j)}] = {s.acc};")
    w.close()
    w.close()
    w.line("free(Bt);")


def _dgemm_intrinsics(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    vt, width, p = vector_type(spec.simd)
    u = spec.unroll
    step = width * u
    if spec.defect != "no_zero":
        w.line("memset(C, 0, (size_t)n * n * sizeof(double));")
    pragma = _omp_pragma(spec, collapse_ok=False)
    if pragma:
        w.line(pragma)
    w.open(for_loop(i, "0", _bound(spec, "n", "row"), s))
    w.line(f"double *crow = C + {_ix(s, i, '0')};")
    k_lo, k_hi = "0", "n"
    if spec.tile:
        kk = tile_var(k)
        w.open(for_loop(kk, "0", "n", s, "BK"))
        w.line(f"{s.index} {k}_end = {kk} + BK < n ? {kk} + BK : n;")
        k_lo, k_hi = kk, f"{k}_end"
    w.open(f"for ({s.index} {k} = {k_lo}; {k} < {k_hi}; {k}++)")
    w.line(f"const {vt} a = {p}_set1_pd(A[{_ix(s, i, k)}]);")
    w.line(f"const double *brow = B + {_ix(s, k, '0')};")
    w.line(f"{s.index} {j} = 0;")
    w.open(f"for (; {j} + {step - 1} < n; {j} += {step})")
    for d in range(u):
        off = f" + {d * width}" if d else ""
        w.line(
            f"{p}_storeu_pd(crow + {j}{off}, {p}_fmadd_pd(a, {p}_loadu_pd(brow + {j}{off}), "
            f"{p}_loadu_pd(crow + {j}{off})));"
        )
    w.close()
    if spec.defect != "no_tail":
        if spec.simd == "avx512" and spec.style.comments != 1:
            if u > 1:
                w.open(f"for (; {j} + {width - 1} < n; {j} += {width})")
                w.line(
                    f"{p}_storeu_pd(crow + {j}, {p}_fmadd_pd(a, {p}_loadu_pd(brow + {j}), {p}_loadu_pd(crow + {j})));"
                )
                w.close()
            w.open(f"if ({j} < n)")
            w.line(f"__mmask8 m = (__mmask8)((1u << (n - {j})) - 1u);")
            w.line(
                f"{p}_mask_storeu_pd(crow + {j}, m, {p}_fmadd_pd(a, {p}_maskz_loadu_pd(m, brow + {j}), "
                f"{p}_maskz_loadu_pd(m, crow + {j})));"
            )
            w.close()
        else:
            w.comment("scalar tail")
            w.open(f"for (; {j} < n; {j}++)")
            w.line(f"crow[{j}] += A[{_ix(s, i, k)}] * brow[{j}];")
            w.close()
    w.close()
    if spec.tile:
        w.close()
    w.close()


def _dgemm_microkernel(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    mr, nr = spec.regblock
    vt, width, p = vector_type(spec.simd)
    nv = nr // width
    kc = "KC" if spec.kc else "n"
    # Helpers: pack B panel-major, pack A, the micro-kernel, and an edge store.
    h = CWriter(s)
    h.comment("Copy rows k0..k0+kc of B into panels of NR columns (zero-padded past n).", 1)
    h.open("static void pack_b(int n, int k0, int kc, const double *B, double *Bp)")
    h.line("int panels = (n + NR - 1) / NR;")
    if spec.omp:
        h.line("#pragma omp for schedule(static)")
    h.open("for (int q = 0; q < panels; q++)")
    h.line("double *dst = Bp + (size_t)q * kc * NR;")
    h.open("for (int k = 0; k < kc; k++)")
    h.line("const double *src = B + (size_t)(k0 + k) * n + q * NR;")
    h.open("for (int jj = 0; jj < NR; jj++)")
    h.line("dst[k * NR + jj] = (q * NR + jj < n) ? src[jj] : 0.0;")
    h.close()
    h.close()
    h.close()
    h.close()
    h.line()
    h.comment("Copy an MR-row strip of A (columns k0..k0+kc) so that Ap[k*MR + r] = A[i0+r][k0+k].", 1)
    h.open("static void pack_a(int n, int i0, int k0, int kc, const double *A, double *Ap)")
    h.open("for (int k = 0; k < kc; k++)")
    h.open("for (int r = 0; r < MR; r++)")
    h.line("Ap[k * MR + r] = (i0 + r < n) ? A[(size_t)(i0 + r) * n + k0 + k] : 0.0;")
    h.close()
    h.close()
    h.close()
    h.line()
    h.comment(f"C[0:mr, 0:nr] (+)= Ap * Bp: an {mr}x{nr} block of C lives in {mr * nv} vector registers.", 1)
    h.open(
        "static void kernel(int kc, const double *Ap, const double *Bp, double *C, int ldc, int mr, int nr, int first)"
    )
    names = [[f"c{r}{v}" for v in range(nv)] for r in range(mr)]
    for r in range(mr):
        h.line(f"{vt} " + ", ".join(f"{nm} = {p}_setzero_pd()" for nm in names[r]) + ";")
    h.open("for (int k = 0; k < kc; k++)")
    for v in range(nv):
        h.line(f"const {vt} b{v} = {p}_load_pd(Bp + k * NR + {v * width});")
    for r in range(mr):
        h.line(f"{vt} a{r} = {p}_set1_pd(Ap[k * MR + {r}]);")
        for v in range(nv):
            h.line(f"{names[r][v]} = {p}_fmadd_pd(a{r}, b{v}, {names[r][v]});")
    h.close()
    h.open("if (mr == MR && nr == NR)")
    h.comment("full block: straight from the registers into C", 2)
    for r in range(mr):
        for v in range(nv):
            dst = f"C + {r} * ldc + {v * width}" if r else f"C + {v * width}"
            h.line(f"{p}_storeu_pd({dst}, first ? {names[r][v]} : {p}_add_pd({p}_loadu_pd({dst}), {names[r][v]}));")
    h.line("return;")
    h.close()
    h.line("double tile[MR * NR] __attribute__((aligned(64)));")
    for r in range(mr):
        for v in range(nv):
            h.line(f"{p}_store_pd(tile + {r * nr + v * width}, {names[r][v]});")
    h.open("for (int r = 0; r < mr; r++)")
    h.open("for (int j = 0; j < nr; j++)")
    h.line("double *dst = C + (size_t)r * ldc + j;")
    h.line("*dst = first ? tile[r * NR + j] : *dst + tile[r * NR + j];")
    h.close()
    h.close()
    h.close()
    helpers.append(h.text())

    w.line("int panels = (n + NR - 1) / NR;")
    w.comment("aligned_alloc wants a size that is a multiple of the alignment", 1)
    w.line(f"size_t bytes = ((size_t)panels * NR * {'KC' if spec.kc else 'n'} * sizeof(double) + 63) & ~(size_t)63;")
    w.line("double *Bp = aligned_alloc(64, bytes);")
    w.open("if (!Bp)")
    w.line("return;")
    w.close()
    if spec.omp:
        w.line("#pragma omp parallel")
        w.block()
    k_loop = spec.kc is not None
    if k_loop:
        w.open("for (int k0 = 0; k0 < n; k0 += KC)")
        w.line("int kc = n - k0 < KC ? n - k0 : KC;")
    else:
        w.line("int k0 = 0, kc = n;")
    w.line("pack_b(n, k0, kc, B, Bp);")
    if spec.omp:
        w.line("#pragma omp for schedule(static)")
    w.open("for (int i0 = 0; i0 < n; i0 += MR)")
    w.line(
        f"double Ap[MR * {kc}] __attribute__((aligned(64)));"
        if spec.kc
        else "double *Ap = aligned_alloc(64, ((size_t)MR * n * sizeof(double) + 63) & ~(size_t)63);"
    )
    w.line(f"int mr = n - i0 < MR ? {_bound(spec, 'n', 'row')} - i0 : MR;")
    w.line("pack_a(n, i0, k0, kc, A, Ap);")
    w.open("for (int q = 0; q < panels; q++)")
    w.line("int nr = n - q * NR < NR ? n - q * NR : NR;")
    first = "k0 == 0" if spec.defect != "no_zero" else "0"
    w.line(f"kernel(kc, Ap, Bp + (size_t)q * kc * NR, C + (size_t)i0 * n + q * NR, n, mr, nr, {first});")
    w.close()
    if not spec.kc:
        w.line("free(Ap);")
    w.close()
    if k_loop:
        if spec.omp:
            w.line("#pragma omp barrier")
        w.close()
    if spec.omp:
        w.close()
    w.line("free(Bp);")


# ---------------------------------------------------------------- DGEMV families


def _dgemv(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, _ = s.names
    pragma = _omp_pragma(spec, collapse_ok=False)
    rows = spec.regblock[0] if spec.regblock else 1
    n_rows = _bound(spec, "n", "row")
    if pragma:
        w.line(pragma)
    if rows > 1:
        w.open(f"for ({s.index} {i} = 0; {i} < {n_rows}; {i} += {rows})")
        w.open(f"if ({i} + {rows} > n)")
        w.open(f"for ({s.index} rr = {i}; rr < n; rr++)")
        w.line("double t = 0.0;")
        w.open(for_loop(j, "0", "n", s))
        w.line(f"t += A[{_ix(s, 'rr', j)}] * x[{j}];")
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
            w.line(f"{s.acc}{r} += A[{_ix(s, f'({i} + {r})', j)}] * xv;")
        w.close()
        for r in range(rows):
            w.line(f"y[{i} + {r}] = {s.acc}{r};" if r else f"y[{i}] = {s.acc}0;")
        w.close()
        return
    w.open(for_loop(i, "0", n_rows, s))
    w.line(f"const double *a = A + {_ix(s, i, '0')};")
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


# ---------------------------------------------------------------- render


def render(spec: KernelSpec) -> str:
    """The C source of `spec` (a complete translation unit)."""
    if spec.problem in suite_generator.PROBLEMS:
        text = suite_generator.render(spec)
        if spec.defect == "syntax":
            text = _syntax_slip(text, random.Random(zlib.crc32(text.encode())))
        return text
    s = spec.style
    w = CWriter(s)
    helpers: list[str] = []
    defines: list[str] = []
    extra: tuple[str, ...] = ()
    if spec.problem == "dgemm":
        if spec.family == "naive":
            extra = ("string.h",) if spec.order != "ijk" else ()
        elif spec.family == "blocked":
            extra = ("string.h",)
            ti, tk, tj = spec.tile
            defines = [f"#define BI {ti}", f"#define BK {tk}", f"#define BJ {tj}"]
        elif spec.family == "transposed":
            extra = ("stdlib.h",)
        elif spec.family == "intrinsics":
            extra = ("immintrin.h", "string.h")
            if spec.tile:
                defines = [f"#define BK {spec.tile[1]}"]
        elif spec.family == "microkernel":
            extra = ("immintrin.h", "stdlib.h")
            defines = [f"#define MR {spec.regblock[0]}", f"#define NR {spec.regblock[1]}"]
            if spec.kc:
                defines.append(f"#define KC {spec.kc}")
    elif spec.family == "intrinsics":
        extra = ("immintrin.h",)
    if s.macro:
        defines.append("#define IDX(r, c) ((r) * n + (c))")
    head = _header_comment(spec)
    body = (
        {
            "naive": _dgemm_naive,
            "blocked": _dgemm_blocked,
            "transposed": _dgemm_transposed,
            "intrinsics": _dgemm_intrinsics,
        }.get(spec.family)
        if spec.problem == "dgemm"
        else _dgemv
    )
    w.open(_signature(spec))
    if spec.family == "microkernel":
        _dgemm_microkernel(spec, w, helpers)
    else:
        body(spec, w)
    w.close()
    out = _headers(spec, extra, w.text() + "".join(helpers))
    if out:
        out.append("")
    if defines:
        out += defines + [""]
    text = "\n".join(out) + "\n" + "".join(h + "\n" for h in helpers) + ((head + "\n") if head else "") + w.text()
    if spec.defect == "syntax":
        text = _syntax_slip(text, random.Random(zlib.crc32(text.encode())))  # stable across processes
    return text


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


def _options(problem: str) -> list[tuple[str, dict]]:
    """(family, fixed parameters) choices, weighted by repetition like a base model's habits."""
    if problem == "dgemv":
        return [("naive", {})] * 3 + [("rows", {}), ("intrinsics", {})]
    return (
        [("naive", {"order": "ijk"})] * 5
        + [("naive", {"order": "ikj"})] * 3
        + [("naive", {"order": "kij"})]
        + [("blocked", {})] * 2
        + [("transposed", {})] * 2
        + [("intrinsics", {})] * 2
        + [("microkernel", {})] * 2
    )


def _draw(
    rng: random.Random, problem: str, family: str, fixed: dict, optimize: bool, mode: str | None = None
) -> KernelSpec:
    """A spec of `family`; `optimize` turns on the optional techniques more often; `mode` as
    for `random_spec` (serial: no OpenMP; openmp: OpenMP offered in half of the draws)."""
    p = 0.45 if optimize else 0.12
    p_omp = 0.0 if mode == "serial" else (0.5 if mode == "openmp" else p)
    kw: dict = dict(fixed)
    kw["omp"] = rng.choice(["static", "static", "dynamic", "guided", "collapse"]) if rng.random() < p_omp else None
    if family in ("naive", "blocked", "transposed"):
        kw["unroll"] = rng.choice([2, 4, 4, 8]) if rng.random() < p else 1
        kw["simd"] = "pragma" if rng.random() < p else None
    if family == "blocked":
        kw["order"] = "ikj"
        kw["tile"] = (rng.choice([16, 32, 48, 64, 96]), rng.choice([32, 64, 128, 256]), rng.choice([64, 128, 256]))
    if family == "intrinsics":
        kw["simd"] = rng.choice(["avx2", "avx512", "avx512"])
        kw["unroll"] = rng.choice([1, 1, 2, 4]) if problem == "dgemm" else 1
        if problem == "dgemm" and rng.random() < p:
            kw["tile"] = (0, rng.choice([64, 128, 256]), 0)
    if family == "microkernel":
        kw["simd"] = rng.choice(["avx512", "avx512", "avx2"])
        kw["regblock"] = (
            rng.choice([(4, 16), (6, 16), (8, 16), (8, 8)])
            if kw["simd"] == "avx512"
            else rng.choice([(4, 8), (6, 8), (4, 4)])
        )
        kw["kc"] = rng.choice([None, 128, 256, 384]) if rng.random() < 0.7 else None
        if mode != "serial" and rng.random() < 0.6:
            kw["omp"] = "static"
    if family == "rows":
        kw["regblock"] = (rng.choice([4, 4, 8]), 1)  # four or more accumulators: register blocking
        kw["simd"] = "pragma" if rng.random() < p else None
        family = "naive"
    if family == "naive" and problem == "dgemv":
        kw["unroll"] = rng.choice([2, 4, 8]) if rng.random() < p else 1
        kw["simd"] = kw.get("simd") or ("pragma" if rng.random() < p else None)
        kw.pop("order", None)
    if kw.get("unroll", 1) > 1 and kw.get("simd") == "pragma":  # omp simd needs a canonical loop
        if rng.random() < 0.5:
            kw["unroll"] = 1
        else:
            kw["simd"] = None
    if kw.get("omp") == "collapse" and not (family in ("naive", "transposed") and kw.get("order", "ijk") == "ijk"):
        kw["omp"] = "static"
    return KernelSpec(problem, family, **kw)


def serial_safe(spec: KernelSpec) -> bool:
    """True if `spec` is allowed in the serial execution model: no OpenMP construct at all
    (`#pragma omp simd` included)."""
    return not spec.omp and spec.simd != "pragma"


def random_spec(
    rng: random.Random,
    problem: str = "dgemm",
    permitted: frozenset[str] | None = None,
    defect_rate: float = 0.18,
    optimize: bool | None = None,
    mode: str | None = None,
) -> KernelSpec:
    """Draw a spec whose techniques lie in `permitted` (None: anything), possibly defective.
    `mode` is the prompt's execution model: `serial` draws no OpenMP at all; `openmp` draws
    it more often than a prompt that does not state a model (None)."""
    optimize = rng.random() < 0.3 if optimize is None else optimize
    style = random_style(rng)
    for _ in range(200):
        if problem in suite_generator.PROBLEMS:
            family = rng.choice(suite_generator.options(problem))
            omp_rate = 0.0 if mode == "serial" else (0.5 if mode == "openmp" else (0.45 if optimize else 0.12))
            spec = KernelSpec(problem, **suite_generator.draw(rng, problem, family, optimize, omp_rate))
        else:
            family, fixed = rng.choice(_options(problem))
            spec = _draw(rng, problem, family, fixed, optimize, mode)
        if (permitted is None or spec.techniques() <= permitted) and (mode != "serial" or serial_safe(spec)):
            break
    else:  # nothing but the plainest code fits
        spec = KernelSpec(problem, "naive")
    defect = rng.choice(applicable_defects(spec)) if rng.random() < defect_rate else None
    return replace(spec, style=style, defect=defect)


def applicable_defects(spec: KernelSpec) -> list[str]:
    """The defects `render` can apply to this spec (each makes it fail its checks)."""
    if spec.problem in suite_generator.PROBLEMS:
        return suite_generator.defects(spec)
    out = ["off_by_one", "syntax"]
    if spec.family == "microkernel" or (
        spec.problem == "dgemm"
        and (spec.family in ("blocked", "intrinsics") or (spec.family == "naive" and spec.order != "ijk"))
    ):
        out.append("no_zero")
    if spec.unroll > 1 or (spec.family == "intrinsics" and spec.regblock is None):
        out += ["no_tail", "no_tail"]
    if (
        spec.family == "naive"
        and spec.regblock is None
        and (spec.problem == "dgemv" or spec.order == "ijk")
        and spec.unroll == 1
    ):
        out.append("wrong_index")
    return out


def sweep_specs(problem: str = "dgemm") -> list[KernelSpec]:
    """The autotuning space: every family and parameter combination worth timing (default style)."""
    if problem in suite_generator.PROBLEMS:
        return [KernelSpec(problem, **kw) for kw in suite_generator.sweep(problem)]
    specs = []
    if problem == "dgemv":
        for omp in (None, "static"):
            specs += [
                KernelSpec(problem, "naive", omp=omp, unroll=u, simd=sd)
                for u, sd in ((1, None), (4, None), (1, "pragma"))
            ]
            specs += [KernelSpec(problem, "naive", omp=omp, regblock=(r, 1)) for r in (4, 8)]
            specs += [KernelSpec(problem, "intrinsics", omp=omp, simd=v) for v in ("avx2", "avx512")]
        return specs
    for omp in (None, "static"):
        specs += [KernelSpec(problem, "naive", order=o, omp=omp) for o in ("ijk", "ikj")]
        specs += [KernelSpec(problem, "blocked", order="ikj", tile=t, omp=omp) for t in ((32, 64, 256), (64, 128, 128))]
        specs += [
            KernelSpec(problem, "transposed", omp=omp, unroll=4),
            KernelSpec(problem, "transposed", omp=omp, simd="pragma"),
        ]
        specs += [
            KernelSpec(problem, "intrinsics", simd=v, unroll=u, omp=omp) for v in ("avx2", "avx512") for u in (1, 2)
        ]
        for rb in ((4, 16), (6, 16), (8, 16), (8, 8)):
            for kc in (None, 128, 256):
                specs.append(KernelSpec(problem, "microkernel", simd="avx512", regblock=rb, kc=kc, omp=omp))
        for rb in ((4, 8), (6, 8)):
            specs.append(KernelSpec(problem, "microkernel", simd="avx2", regblock=rb, kc=256, omp=omp))
    return specs
