"""The technique detector on hand-written code in varied styles: 3+ positives and 3+ negatives each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lab.techniques import TECHNIQUES, detect

NAIVE = """void dgemm(int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { double s = 0;
    for (int k = 0; k < n; k++) s += A[i*n+k] * B[k*n+j]; C[i*n+j] = s; } }"""
NAIVE_LONG = """void dgemm(int n, const double *A, const double *B, double *C)
{
    for (long row = 0; row < n; ++row)
        for (long col = 0; col < n; ++col) {
            double acc = 0.0;   /* dot product of row and column */
            for (long p = 0; p < n; ++p)
                acc += A[row * n + p] * B[p * n + col];
            C[row * n + col] = acc;
        }
}"""
DGEMV = """void dgemv(int n, const double *A, const double *x, double *y) {
    for (int i = 0; i < n; i++) { double t = 0; for (int j = 0; j < n; j++) t += A[i*n+j]*x[j]; y[i] = t; } }"""
IKJ = """#include <string.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    memset(C, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double a = A[i * n + k];
            for (int j = 0; j < n; j++) C[i * n + j] += a * B[k * n + j];
        }
}"""
KIJ_PTR = """void dgemm(int n, const double *A, const double *B, double *C) {
    for (int q = 0; q < n * n; q++) C[q] = 0;
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < n; ++i) {
            const double aik = A[i*n + k]; double *crow = C + i*n; const double *brow = B + k*n;
            for (int j = 0; j < n; ++j) crow[j] += aik * brow[j];
        }
}"""
AVX_IKJ = """#include <immintrin.h>
void dgemm(int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) C[i*n+j] = 0;
    for (int k = 0; k < n; k++) {
      __m256d a = _mm256_set1_pd(A[i*n+k]); int j = 0;
      for (; j + 3 < n; j += 4)
        _mm256_storeu_pd(&C[i*n+j], _mm256_fmadd_pd(a, _mm256_loadu_pd(&B[k*n+j]), _mm256_loadu_pd(&C[i*n+j])));
      for (; j < n; j++) C[i*n+j] += A[i*n+k] * B[k*n+j];
    }
  }
}"""
BLOCKED = """#define BS 64
static int imin(int a, int b) { return a < b ? a : b; }
void dgemm(int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < n*n; i++) C[i] = 0;
  for (int ii = 0; ii < n; ii += BS)
    for (int kk = 0; kk < n; kk += BS)
      for (int i = ii; i < imin(ii + BS, n); i++)
        for (int k = kk; k < imin(kk + BS, n); k++)
          for (int j = 0; j < n; j++) C[i*n+j] += A[i*n+k] * B[k*n+j];
}"""
BLOCKED_LITERAL = """void dgemm(int n, const double *A, const double *B, double *C) {
    for (int t = 0; t < n * n; t++) C[t] = 0.0;
    for (int i0 = 0; i0 < n; i0 += 32) {
        int iend = i0 + 32 > n ? n : i0 + 32;
        for (int k0 = 0; k0 < n; k0 += 128) {
            int kend = k0 + 128 > n ? n : k0 + 128;
            for (int i = i0; i < iend; i++)
                for (int k = k0; k < kend; k++)
                    for (int j = 0; j < n; j++) C[i*n+j] += A[i*n+k] * B[k*n+j];
        }
    }
}"""
TILE_DGEMV = """void dgemv(int n, const double *A, const double *x, double *y) {
    for (int i = 0; i < n; i++) y[i] = 0;
    for (int jb = 0; jb < n; jb += TILE_J)
        for (int i = 0; i < n; i++) {
            double t = 0; int jend = jb + TILE_J < n ? jb + TILE_J : n;
            for (int j = jb; j < jend; j++) t += A[i*n+j] * x[j];
            y[i] += t;
        }
}"""
UNROLL4 = """void dgemm(int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) {
    double s = 0; int k = 0;
    for (; k + 3 < n; k += 4) s += A[i*n+k]*B[k*n+j] + A[i*n+k+1]*B[(k+1)*n+j] + A[i*n+k+2]*B[(k+2)*n+j]
                                 + A[i*n+k+3]*B[(k+3)*n+j];
    for (; k < n; k++) s += A[i*n+k]*B[k*n+j];
    C[i*n+j] = s; } }"""
UNROLL_PRAGMA = """void dgemv(int n, const double *A, const double *x, double *y) {
    for (int i = 0; i < n; i++) { double t = 0;
        #pragma GCC unroll 8
        for (int j = 0; j < n; j++) t += A[i*n+j] * x[j];
        y[i] = t; } }"""
UNROLL_DGEMV2 = """void dgemv(int n, const double *A, const double *x, double *y) {
    for (int i = 0; i < n; i++) {
        const double *a = A + (long)i * n; double t = 0; int j = 0;
        for (; j + 1 < n; j += 2) { t += a[j] * x[j]; t += a[j + 1] * x[j + 1]; }
        if (j < n) t += a[j] * x[j];
        y[i] = t;
    }
}"""
OMP_SIMD = """void dgemv(int n, const double *A, const double *x, double *y) {
    for (int i = 0; i < n; i++) { double t = 0.0;
        #pragma omp simd reduction(+:t)
        for (int j = 0; j < n; j++) t += A[i*n+j] * x[j];
        y[i] = t; } }"""
AVX512 = """#include <immintrin.h>
void dgemv(int n, const double *A, const double *x, double *y) {
    for (int i = 0; i < n; i++) { __m512d v = _mm512_setzero_pd(); int j = 0;
        for (; j + 7 < n; j += 8) v = _mm512_fmadd_pd(_mm512_loadu_pd(A + i*n + j), _mm512_loadu_pd(x + j), v);
        double t = _mm512_reduce_add_pd(v); for (; j < n; j++) t += A[i*n+j]*x[j]; y[i] = t; } }"""
OMP = """void dgemm(int n, const double *A, const double *B, double *C) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { double s = 0;
    for (int k = 0; k < n; k++) s += A[i*n+k]*B[k*n+j]; C[i*n+j] = s; } }"""
OMP_COLLAPSE = """void dgemm(int n, const double *A, const double *B, double *C) {
    #pragma omp parallel for collapse(2) schedule(dynamic, 4)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) { double s = 0; for (int k = 0; k < n; k++) s += A[i*n+k]*B[k*n+j]; C[i*n+j] = s; }
}"""
OMP_REGION = """#include <omp.h>
void dgemv(int n, const double *A, const double *x, double *y) {
  #pragma omp parallel
  {
    #pragma omp for schedule(static)
    for (int i = 0; i < n; i++) { double t = 0; for (int j = 0; j < n; j++) t += A[i*n+j]*x[j]; y[i] = t; }
  }
}"""
TRANSPOSE = """#include <stdlib.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    double *Bt = malloc(sizeof(double) * n * n);
    for (int k = 0; k < n; k++) for (int j = 0; j < n; j++) Bt[j*n+k] = B[k*n+j];
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { double s = 0;
        for (int k = 0; k < n; k++) s += A[i*n+k] * Bt[j*n+k]; C[i*n+j] = s; }
    free(Bt);
}"""
PACK_STATIC = """static double panel[256 * 256];
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int k = 0; k < n; k++) for (int j = 0; j < n; j++) panel[j * n + k] = B[k * n + j];
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { double s = 0;
        for (int k = 0; k < n; k++) s += A[i*n+k] * panel[j*n+k]; C[i*n+j] = s; }
}"""
PACK_ALIGNED = """#include <stdlib.h>
#include <string.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    double *Ap = aligned_alloc(64, 64 * ((sizeof(double) * n * n + 63) / 64));
    for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) Ap[k * n + i] = A[i * n + k];
    memset(C, 0, sizeof(double) * n * n);
    for (int k = 0; k < n; k++) for (int i = 0; i < n; i++) {
        double a = Ap[k * n + i]; for (int j = 0; j < n; j++) C[i*n+j] += a * B[k*n+j]; }
    free(Ap);
}"""
REG_SCALAR = """void dgemm(int n, const double *A, const double *B, double *C) {
  int i = 0;
  for (; i + 1 < n; i += 2) for (int j = 0; j + 1 < n; j += 2) {
    double c00 = 0, c01 = 0, c10 = 0, c11 = 0;
    for (int k = 0; k < n; k++) { double a0 = A[i*n+k], a1 = A[(i+1)*n+k], b0 = B[k*n+j], b1 = B[k*n+j+1];
      c00 += a0*b0; c01 += a0*b1; c10 += a1*b0; c11 += a1*b1; }
    C[i*n+j] = c00; C[i*n+j+1] = c01; C[(i+1)*n+j] = c10; C[(i+1)*n+j+1] = c11; }
}"""
REG_VEC = """#include <immintrin.h>
static void kernel4x8(int kc, const double *a, const double *b, double *c, int ldc) {
    __m256d c0 = _mm256_setzero_pd(), c1 = _mm256_setzero_pd(), c2 = _mm256_setzero_pd(), c3 = _mm256_setzero_pd();
    __m256d c4 = _mm256_setzero_pd(), c5 = _mm256_setzero_pd(), c6 = _mm256_setzero_pd(), c7 = _mm256_setzero_pd();
    for (int k = 0; k < kc; k++) { /* ... */ }
    _mm256_storeu_pd(c, c0);
}"""
REG_ARRAY = """#include <immintrin.h>
static void micro(int kc, const double *Ap, const double *Bp, double *C, int ldc) {
    __m512d acc[4][2];
    for (int r = 0; r < 4; r++) { acc[r][0] = _mm512_setzero_pd(); acc[r][1] = _mm512_setzero_pd(); }
    for (int k = 0; k < kc; k++) for (int r = 0; r < 4; r++) {
        __m512d a = _mm512_set1_pd(Ap[k*4+r]);
        acc[r][0] = _mm512_fmadd_pd(a, _mm512_loadu_pd(Bp + k*16), acc[r][0]);
        acc[r][1] = _mm512_fmadd_pd(a, _mm512_loadu_pd(Bp + k*16 + 8), acc[r][1]); }
}"""

CASES = {
    "loop_reorder": ([IKJ, KIJ_PTR, AVX_IKJ, BLOCKED], [NAIVE, NAIVE_LONG, DGEMV, TRANSPOSE]),
    "cache_blocking": ([BLOCKED, BLOCKED_LITERAL, TILE_DGEMV], [NAIVE, IKJ, AVX_IKJ, UNROLL4]),
    "unrolling": ([UNROLL4, UNROLL_PRAGMA, UNROLL_DGEMV2], [NAIVE, IKJ, OMP_SIMD, BLOCKED]),
    "simd": ([AVX_IKJ, OMP_SIMD, AVX512, REG_ARRAY], [NAIVE, IKJ, UNROLL4, OMP]),
    "openmp": ([OMP, OMP_COLLAPSE, OMP_REGION], [NAIVE, OMP_SIMD, AVX512, DGEMV]),
    "packing": ([TRANSPOSE, PACK_STATIC, PACK_ALIGNED], [NAIVE, IKJ, BLOCKED, AVX_IKJ]),
    "register_blocking": ([REG_SCALAR, REG_VEC, REG_ARRAY], [NAIVE, IKJ, AVX512, UNROLL4]),
}


def test_every_technique_has_cases():
    assert set(CASES) == set(TECHNIQUES)
    for pos, neg in CASES.values():
        assert len(pos) >= 3 and len(neg) >= 3


@pytest.mark.parametrize("technique, source", [(t, s) for t, (pos, _) in CASES.items() for s in pos])
def test_detects(technique, source):
    assert technique in detect(source)


@pytest.mark.parametrize("technique, source", [(t, s) for t, (_, neg) in CASES.items() for s in neg])
def test_does_not_detect(technique, source):
    assert technique not in detect(source)


def test_comments_and_strings_do_not_count():
    text = NAIVE.replace("double s = 0;", "double s = 0; /* #pragma omp parallel for _mm256_add_pd */")
    assert detect(text) == set()


def test_every_problem_declares_known_techniques_and_dgemm_all_of_them():
    from lab.harness.problems import list_problems
    from lab.techniques import problem_techniques

    assert problem_techniques("dgemm") == TECHNIQUES
    for problem in list_problems():
        declared = problem_techniques(problem)
        assert declared and set(declared) <= set(TECHNIQUES) and "openmp" in declared


def test_detection_for_a_problem_reports_only_its_techniques():
    # A histogram's zeroing loop writes `counts[b] = 0`, which DGEMM's reordering pattern matches.
    source = (
        "#include <stdint.h>\nvoid histogram(int n, const uint8_t *x, int64_t *counts) {\n"
        "for (int b = 0; b < 256; b++) counts[b] = 0;\nfor (int i = 0; i < n; i++) counts[x[i]]++;\n}\n"
    )
    assert "loop_reorder" in detect(source)
    assert detect(source, "histogram") == set()


def test_prompts_offer_only_the_problems_techniques():
    from lab.policy.prompts import prompt_text

    text = prompt_text("histogram", frozenset({"unrolling"}), "serial")
    assert text.endswith("Permitted optimization techniques: loop unrolling. Not permitted: cache blocking.")
    with pytest.raises(ValueError, match="packing do not apply to dot"):
        prompt_text("dot", frozenset({"packing"}))
    with pytest.raises(ValueError, match="openmp do not apply to dot in serial mode"):
        prompt_text("dot", frozenset({"openmp"}), "serial")


DETECTOR_ATTACKS = Path(__file__).parent / "kernels" / "detector"


@pytest.mark.parametrize(
    "name, technique",
    [
        ("ev_omp_Pragma.c", "openmp"),
        ("ev_omp_macro.c", "openmp"),
        ("ev_omp_digraph.c", "openmp"),
        ("ev_omp_autopar.c", "openmp"),
        ("ev_simd_dunder_vector_size.c", "simd"),
        ("ev_simd_m512d_u.c", "simd"),
        ("ev_simd_v4df_builtin.c", "simd"),
        ("ev_simd_paste.c", "simd"),
        ("ev_simd_Pragma_omp_simd.c", "simd"),
        ("ev_novec_reenable.c", "simd"),
        ("ev_unroll_Pragma.c", "unrolling"),
        ("ev_unroll_attr.c", "unrolling"),
        ("ev_all7_as_none.c", "openmp"),
        ("ev_all7_as_none.c", "simd"),
    ],
)
def test_directives_hidden_in_strings_macros_or_digraphs_are_detected(name, technique):
    """What the compiler acts on counts, however it is spelled: _Pragma("..."), a macro around
    it, the %: digraph, GCC optimize("...") options, GCC's own vector types and builtins, and
    intrinsic names built by token pasting (tests/kernels/detector: attacks on the detector)."""
    assert technique in detect((DETECTOR_ATTACKS / name).read_text(), "dgemm")


_LOOP = "void dgemm(int n,const double*A,const double*B,double*C){for(int i=0;i<n;i++)C[i]=A[i];}"


@pytest.mark.parametrize(
    "prefix",
    [
        '#pragma GCC optimize "unroll-loops"\n',  # the pragma without parentheses
        '__attribute__((__optimize__("unroll-loops"))) ',  # the reserved spelling
        '__attribute__((optimize("O3", "unroll-loops"))) ',  # the option in a later string
        '__attribute__((optimize("O3,unroll-loops"))) ',  # comma-separated in one string
        "#define P(x) _Pragma(#x)\nP(GCC unroll 8)\n",  # a pragma made by stringizing a macro argument
        '_Pragma(L"GCC unroll 8")\n',  # a wide string
        '__attribute__((optimize("O3",\n  "unroll-loops"))) ',  # the argument list over two lines
        '_Pragma("GCC optimize \\"unroll-loops\\"")\n',  # an optimize pragma made by _Pragma
    ],
)
def test_unrolling_asked_of_the_compiler_in_any_spelling_is_detected(prefix):
    assert "unrolling" in detect(prefix + _LOOP, "dgemm")


def test_an_optimize_option_that_turns_a_technique_off_is_not_that_technique():
    for option in ("no-tree-vectorize", "-fno-unroll-loops", "no-tree-parallelize-loops"):
        found = detect(f'#pragma GCC optimize("{option}")\n' + _LOOP, "dgemm")
        assert not found & {"simd", "unrolling", "openmp"}, (option, found)


def test_techniques_is_below_the_policy_layer():
    """The registry knows nothing of the kernel generator: each problem's generator module names
    the techniques its specs use (lab.policy.seed_policy.problems), not a field here."""
    import dataclasses
    import subprocess
    import sys

    from lab.techniques import Technique

    assert "in_spec" not in {f.name for f in dataclasses.fields(Technique)}
    code = "import sys, lab.techniques; print(sorted(m for m in sys.modules if m.startswith('lab.policy')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_the_detector_takes_any_text_a_policy_may_stop_at():
    """A completion can stop anywhere (mid-header, mid-identifier); detecting its techniques
    must never raise: a crash here once stopped a training run on one sample."""
    root = Path(__file__).resolve().parents[1] / "harness"
    sources = [p.read_text() for p in sorted(root.glob("*/examples/*.c"))] + [NAIVE_LONG, IKJ]
    # Cut just after each loop keyword and header (where a cut-off text confuses a parser most),
    # and at a stride through the rest.
    ends = {
        source: {m.start() + d for m in re.finditer(r"\bfor\b", source) for d in (3, 5, 9, 20)}
        | set(range(0, len(source), 211))
        for source in sources
    }
    cut_offs = {source[:end] for source, at in ends.items() for end in at}
    odd = [
        "for (int i = 0; i < n; i++) forward",
        "for (int i = 0; i < n; i++)\n  for",
        "for (int i = 0; i < n; i++) for (int j = 0; j < n; j++",
        "for (;;) { for (i = 0; i < 4; i++) { x[i] += 1;",
        "for (int i = 0; i < (n; i++) format_t x;",
        "void f(int *x) { " + "for (;;) " * 1100 + "x[0] = 1; }",  # deeper than the recursion limit (1000)
    ]
    for text in sorted(cut_offs) + odd:
        detect(text, "dgemm")
        detect(text)


def test_an_unbraced_nested_loop_is_the_outer_loops_body():
    from lab.techniques import _body, _loops

    code = "for (i = 0; i < n; i++)\n  for (k = 0; k < n; k++)\n    for (j = 0; j < n; j++) c[j] += a * b[j];\nx = 1;"
    outer = _loops(code)[0][0]
    assert _body(code, outer).strip() == code[code.index("for (k") : code.index("x = 1")].strip()
