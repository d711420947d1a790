"""DGEMM's kernel generator: C = A * B for n x n row-major matrices, from the textbook loop up
to the GotoBLAS/BLIS structure.

Families:

- naive: ijk dot products into a scalar, or ikj/kij row updates of C (loop reordering),
  unrolled or with `omp simd`;
- blocked: tiles over i, k and j (cache blocking), row updates inside;
- transposed: B packed transposed, then contiguous dot products (packing);
- intrinsics: AVX2/AVX-512 FMA row updates with a scalar or masked tail, optionally a k-block;
- microkernel: B packed in NR-wide panels, A in MR-row strips, an MR x NR block of vector
  accumulators (register blocking), optionally blocked over k (KC) and parallel over strips.

Besides the techniques every problem's fields name (base.field_techniques), a spec uses loop
reordering (ikj/kij orders, the intrinsics' row updates) and packing (transposed, microkernel)
by construction. `GENERATOR` is what the registry (lab.policy.seed_policy.problems) holds.

    >>> sorted(GENERATOR.techniques(KernelSpec("dgemm", "naive", order="ikj", omp="static")))
    ['loop_reorder', 'openmp']
"""

from __future__ import annotations

import random
from dataclasses import replace

from lab.policy.seed_policy.c_writer import CWriter, for_loop, tile_var, vector_type
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques, omp_rate
from lab.policy.seed_policy.problems.dense import (
    bound,
    ix,
    naive_description,
    omp_pragma,
    remainder,
    translation_unit,
    unrollable_loop,
)

SIGNATURE = "void dgemm(int n, const double{r}A, const double{r}B, double{r}C)"
FAMILIES = ("naive", "blocked", "transposed", "intrinsics", "microkernel")

# ---------------------------------------------------------------- families


def _naive(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    a_ix = lambda r, c: ix(s, r, c)  # noqa: E731
    n_rows = bound(spec, "n", "row")
    if spec.order == "ijk":
        pragma = omp_pragma(spec)
        if pragma:
            w.line(pragma)
        w.open(for_loop(i, "0", n_rows, s))
        w.open(for_loop(j, "0", "n", s))
        w.line(f"double {s.acc} = 0.0;")
        if spec.simd == "pragma":
            w.line(f"#pragma omp simd reduction(+:{s.acc})")
        stmt = lambda x: f"{s.acc} += A[{a_ix(i, x)}] * B[{a_ix(x, j)}];"  # noqa: E731
        wrong = lambda x: f"{s.acc} += A[{a_ix(i, x)}] * B[{a_ix(j, x)}];"  # noqa: E731
        if unrollable_loop(spec, w, k, "0", "n", stmt, wrong if spec.defect == "wrong_index" else stmt):
            if spec.defect != "no_tail":
                w.comment("remaining iterations")
            remainder(spec, w, k, "n", stmt)
        w.line(f"C[{a_ix(i, j)}] = {s.acc};")
        w.close()
        w.close()
        return
    # ikj / kij: zero C, then row updates C[i, :] += A[i, k] * B[k, :].
    if spec.defect != "no_zero":
        w.comment("C is overwritten, so clear it first")
        w.line("memset(C, 0, (size_t)n * n * sizeof(double));")
    outer, mid = (i, k) if spec.order == "ikj" else (k, i)
    pragma = omp_pragma(spec, collapse_ok=False)
    if pragma and spec.order == "ikj":
        w.line(pragma)
    w.open(for_loop(outer, "0", n_rows if outer == i else "n", s))
    if pragma and spec.order == "kij":
        w.line(pragma)
    w.open(for_loop(mid, "0", n_rows if mid == i else "n", s))
    w.line(f"const double a = A[{a_ix(i, k)}];")
    _row_update(spec, w, f"C + {ix(s, i, '0')}", f"B + {ix(s, k, '0')}", "a", "0", "n")
    w.close()
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
    if unrollable_loop(spec, w, j, lo, hi, stmt):
        remainder(spec, w, j, hi, stmt)


def _blocked(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    ti, tk, tj = spec.tile
    ii, kk, jj = (tile_var(v) for v in (i, k, j))
    if spec.defect != "no_zero":
        w.line("memset(C, 0, (size_t)n * n * sizeof(double));")
    pragma = omp_pragma(spec, collapse_ok=False)
    if pragma:
        w.line(pragma)
    w.open(for_loop(ii, "0", "n", s, "BI"))
    w.open(for_loop(kk, "0", "n", s, "BK"))
    w.open(for_loop(jj, "0", "n", s, "BJ"))
    w.line(f"{s.index} {i}_end = {ii} + BI < n ? {ii} + BI : {bound(spec, 'n', 'row')};")
    w.line(f"{s.index} {k}_end = {kk} + BK < n ? {kk} + BK : n;")
    w.line(f"{s.index} {j}_end = {jj} + BJ < n ? {jj} + BJ : n;")
    w.open(f"for ({s.index} {i} = {ii}; {i} < {i}_end; {i}++)")
    w.open(f"for ({s.index} {k} = {kk}; {k} < {k}_end; {k}++)")
    w.line(f"const double a = A[{ix(s, i, k)}];")
    _row_update(spec, w, f"C + {ix(s, i, '0')}", f"B + {ix(s, k, '0')}", "a", jj, f"{j}_end")
    w.close()
    w.close()
    w.close()
    w.close()
    w.close()


def _transposed(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    w.comment("Bt holds B transposed: row j of Bt is column j of B")
    w.line("double *Bt = malloc((size_t)n * n * sizeof(double));")
    w.open("if (!Bt)")
    w.line("return;")
    w.close()
    w.open(for_loop(k, "0", "n", s))
    w.open(for_loop(j, "0", "n", s))
    w.line(f"Bt[{ix(s, j, k)}] = B[{ix(s, k, j)}];")
    w.close()
    w.close()
    pragma = omp_pragma(spec)
    if pragma:
        w.line(pragma)
    w.open(for_loop(i, "0", bound(spec, "n", "row"), s))
    w.open(for_loop(j, "0", "n", s))
    w.line(f"const double *a = A + {ix(s, i, '0')};")
    w.line(f"const double *b = Bt + {ix(s, j, '0')};")
    w.line(f"double {s.acc} = 0.0;")
    if spec.simd == "pragma":
        w.line(f"#pragma omp simd reduction(+:{s.acc})")
    stmt = lambda x: f"{s.acc} += a[{x}] * b[{x}];"  # noqa: E731
    if unrollable_loop(spec, w, k, "0", "n", stmt):
        remainder(spec, w, k, "n", stmt)
    w.line(f"C[{ix(s, i, j)}] = {s.acc};")
    w.close()
    w.close()
    w.line("free(Bt);")


def _intrinsics(spec: KernelSpec, w: CWriter) -> None:
    s = spec.style
    i, j, k = s.names
    vt, width, p = vector_type(spec.simd)
    u = spec.unroll
    step = width * u
    if spec.defect != "no_zero":
        w.line("memset(C, 0, (size_t)n * n * sizeof(double));")
    pragma = omp_pragma(spec, collapse_ok=False)
    if pragma:
        w.line(pragma)
    w.open(for_loop(i, "0", bound(spec, "n", "row"), s))
    w.line(f"double *crow = C + {ix(s, i, '0')};")
    k_lo, k_hi = "0", "n"
    if spec.tile:
        kk = tile_var(k)
        w.open(for_loop(kk, "0", "n", s, "BK"))
        w.line(f"{s.index} {k}_end = {kk} + BK < n ? {kk} + BK : n;")
        k_lo, k_hi = kk, f"{k}_end"
    w.open(f"for ({s.index} {k} = {k_lo}; {k} < {k_hi}; {k}++)")
    w.line(f"const {vt} a = {p}_set1_pd(A[{ix(s, i, k)}]);")
    w.line(f"const double *brow = B + {ix(s, k, '0')};")
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
            w.line(f"crow[{j}] += A[{ix(s, i, k)}] * brow[{j}];")
            w.close()
    w.close()
    if spec.tile:
        w.close()
    w.close()


def _microkernel(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
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
    w.line(f"int mr = n - i0 < MR ? {bound(spec, 'n', 'row')} - i0 : MR;")
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


def _body(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    if spec.family == "microkernel":
        _microkernel(spec, w, helpers)
        return
    {"naive": _naive, "blocked": _blocked, "transposed": _transposed, "intrinsics": _intrinsics}[spec.family](spec, w)


def _what(spec: KernelSpec) -> str:
    if spec.family == "naive":
        return naive_description(spec)
    return {
        "blocked": "cache-blocked matrix multiply",
        "transposed": "transpose B first so the inner loop reads both operands contiguously",
        "intrinsics": f"{'AVX-512' if spec.simd == 'avx512' else 'AVX2'} FMA kernel",
        "microkernel": "packed panels and a register-blocked micro-kernel",
    }[spec.family]


def render(spec: KernelSpec) -> str:
    """The C source of a DGEMM spec (a complete translation unit)."""
    extra: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    if spec.family == "naive":
        extra = ("string.h",) if spec.order != "ijk" else ()
    elif spec.family == "blocked":
        extra = ("string.h",)
        ti, tk, tj = spec.tile
        defines = (f"#define BI {ti}", f"#define BK {tk}", f"#define BJ {tj}")
    elif spec.family == "transposed":
        extra = ("stdlib.h",)
    elif spec.family == "intrinsics":
        extra = ("immintrin.h", "string.h")
        if spec.tile:
            defines = (f"#define BK {spec.tile[1]}",)
    elif spec.family == "microkernel":
        extra = ("immintrin.h", "stdlib.h")
        defines = (f"#define MR {spec.regblock[0]}", f"#define NR {spec.regblock[1]}")
        if spec.kc:
            defines += (f"#define KC {spec.kc}",)
    return translation_unit(spec, SIGNATURE, _body, _what(spec), extra, defines)


# ---------------------------------------------------------------- sampling

#: The micro-kernel's register blocks (rows x columns of C held in registers) `draw` chooses from,
#: per vector width: AVX2's fit its sixteen 4-wide registers.
REGBLOCKS = {"avx512": [(4, 16), (6, 16), (8, 16), (8, 8)], "avx2": [(4, 8), (6, 8), (4, 4)]}

# (family, fixed parameters) choices, weighted by repetition like a base model's habits.
OPTIONS: list[tuple[str, dict]] = (
    [("naive", {"order": "ijk"})] * 5
    + [("naive", {"order": "ikj"})] * 3
    + [("naive", {"order": "kij"})]
    + [("blocked", {})] * 2
    + [("transposed", {})] * 2
    + [("intrinsics", {})] * 2
    + [("microkernel", {})] * 3
)


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random DGEMM spec; `optimize` turns on the optional techniques more often; `mode` as
    for generator.random_spec (serial: no OpenMP; openmp: OpenMP offered in half of the draws)."""
    family, fixed = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.12
    kw: dict = dict(fixed)
    kw["omp"] = (
        rng.choice(["static", "static", "dynamic", "guided", "collapse"])
        if rng.random() < omp_rate(optimize, mode)
        else None
    )
    if family in ("naive", "blocked", "transposed"):
        kw["unroll"] = rng.choice([2, 4, 4, 8]) if rng.random() < p else 1
        kw["simd"] = "pragma" if rng.random() < p else None
    if family == "blocked":
        kw["order"] = "ikj"
        kw["tile"] = (rng.choice([16, 32, 48, 64, 96]), rng.choice([32, 64, 128, 256]), rng.choice([64, 128, 256]))
    if family == "intrinsics":
        kw["simd"] = rng.choice(["avx2", "avx512", "avx512"])
        kw["unroll"] = rng.choice([1, 1, 2, 4])
        if rng.random() < p:
            kw["tile"] = (0, rng.choice([64, 128, 256]), 0)
    if family == "microkernel":
        kw["simd"] = rng.choice(["avx512", "avx512", "avx2"])
        kw["regblock"] = rng.choice(REGBLOCKS[kw["simd"]])
        kw["kc"] = rng.choice([None, 128, 256, 384]) if rng.random() < 0.7 else None
        if mode != "serial" and rng.random() < 0.6:
            kw["omp"] = "static"
    if kw.get("unroll", 1) > 1 and kw.get("simd") == "pragma":  # omp simd needs a canonical loop
        if rng.random() < 0.5:
            kw["unroll"] = 1
        else:
            kw["simd"] = None
    if kw.get("omp") == "collapse" and not (family in ("naive", "transposed") and kw.get("order", "ijk") == "ijk"):
        kw["omp"] = "static"  # collapse needs two perfectly nested loops: only the ijk dot products have them
    return KernelSpec("dgemm", family, **kw)


def defects(spec: KernelSpec) -> list[str]:
    """The defects `render` can apply to `spec` (each makes it fail its checks)."""
    out = ["off_by_one", "syntax"]
    if spec.family in ("blocked", "intrinsics", "microkernel") or (spec.family == "naive" and spec.order != "ijk"):
        out.append("no_zero")
    if spec.unroll > 1 or (spec.family == "intrinsics" and spec.regblock is None):
        out += ["no_tail", "no_tail"]
    if spec.family == "naive" and spec.regblock is None and spec.order == "ijk" and spec.unroll == 1:
        out.append("wrong_index")
    return out


def sweep() -> list[KernelSpec]:
    """The autotuning space: every family and parameter combination worth timing (default style)."""
    specs = []
    for omp in (None, "static"):
        specs += [KernelSpec("dgemm", "naive", order=o, omp=omp) for o in ("ijk", "ikj")]
        specs += [KernelSpec("dgemm", "blocked", order="ikj", tile=t, omp=omp) for t in ((32, 64, 256), (64, 128, 128))]
        specs += [
            KernelSpec("dgemm", "transposed", omp=omp, unroll=4),
            KernelSpec("dgemm", "transposed", omp=omp, simd="pragma"),
        ]
        specs += [
            KernelSpec("dgemm", "intrinsics", simd=v, unroll=u, omp=omp) for v in ("avx2", "avx512") for u in (1, 2)
        ]
        for rb in ((4, 16), (6, 16), (8, 16), (8, 8)):
            for kc in (None, 128, 256):
                specs.append(KernelSpec("dgemm", "microkernel", simd="avx512", regblock=rb, kc=kc, omp=omp))
        for rb in ((4, 8), (6, 8), (4, 12)):
            for kc in (None, 128, 256):
                specs.append(KernelSpec("dgemm", "microkernel", simd="avx2", regblock=rb, kc=kc, omp=omp))
    return specs


def techniques(spec: KernelSpec) -> frozenset[str]:
    """The techniques a DGEMM spec uses by construction."""
    out = set(field_techniques(spec))
    # Row updates C[i, :] += a * B[k, :]: the ikj/kij orders (blocked ones included) and every
    # intrinsics kernel.
    if (spec.family in ("naive", "blocked") and spec.order in ("ikj", "kij")) or spec.family == "intrinsics":
        out.add("loop_reorder")
    if spec.family in ("transposed", "microkernel"):  # B transposed; A and B in panels
        out.add("packing")
    return frozenset(out)


def avx2(spec: KernelSpec, rng: random.Random) -> KernelSpec:
    """An AVX-512 spec written with AVX2: a micro-kernel's register block shrinks to fit AVX2's
    sixteen 4-wide registers (the blocks `draw` gives AVX2)."""
    if spec.family == "microkernel":
        return replace(spec, simd="avx2", regblock=rng.choice(REGBLOCKS["avx2"]))
    return replace(spec, simd="avx2")


GENERATOR = ProblemGenerator("dgemm", FAMILIES, render, draw, defects, sweep, techniques, avx2)
