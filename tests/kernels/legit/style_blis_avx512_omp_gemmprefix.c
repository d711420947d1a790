// expect: ok
// BLIS-style GEMM (helpers prefixed gemm_ rather than bli_) with an AVX-512 6x16 micro-kernel and OpenMP on the macro-kernel loop; all helpers exported.
#include <immintrin.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define BLK_MC 120
#define BLK_KC 256
#define BLK_NC 2048
#define BLK_MR 6
#define BLK_NR 16

static int imin(int a, int b) { return a < b ? a : b; }

void gemm_pack_a(int mc, int kc, const double *A, int lda, double *buf)
{
    #pragma omp parallel for schedule(static)
    for (int p = 0; p < mc; p += BLK_MR) {
        int rows = imin(BLK_MR, mc - p);
        double *dst = buf + (size_t)p * kc;
        for (int k = 0; k < kc; k++) {
            int i = 0;
            for (; i < rows; i++) dst[i] = A[(size_t)(p + i) * lda + k];
            for (; i < BLK_MR; i++) dst[i] = 0.0;
            dst += BLK_MR;
        }
    }
}

void gemm_pack_b(int kc, int nc, const double *B, int ldb, double *buf)
{
    #pragma omp parallel for schedule(static)
    for (int p = 0; p < nc; p += BLK_NR) {
        int cols = imin(BLK_NR, nc - p);
        __mmask8 m0 = (__mmask8)(cols >= 8 ? 0xFF : (1u << cols) - 1u);
        __mmask8 m1 = (__mmask8)(cols >= 16 ? 0xFF : cols <= 8 ? 0 : (1u << (cols - 8)) - 1u);
        double *dst = buf + (size_t)p * kc;
        for (int k = 0; k < kc; k++) {
            const double *src = B + (size_t)k * ldb + p;
            _mm512_storeu_pd(dst, _mm512_maskz_loadu_pd(m0, src));
            _mm512_storeu_pd(dst + 8, _mm512_maskz_loadu_pd(m1, src + 8));
            dst += BLK_NR;
        }
    }
}

void gemm_micro_6x16(int kc, const double *a, const double *b, double *C, int ldc, int mr, int nr)
{
    __m512d c[BLK_MR][2];
    for (int i = 0; i < BLK_MR; i++) {
        c[i][0] = _mm512_setzero_pd();
        c[i][1] = _mm512_setzero_pd();
    }

    for (int k = 0; k < kc; k++) {
        __m512d b0 = _mm512_loadu_pd(b);
        __m512d b1 = _mm512_loadu_pd(b + 8);
        for (int i = 0; i < BLK_MR; i++) {
            __m512d ai = _mm512_set1_pd(a[i]);
            c[i][0] = _mm512_fmadd_pd(ai, b0, c[i][0]);
            c[i][1] = _mm512_fmadd_pd(ai, b1, c[i][1]);
        }
        a += BLK_MR;
        b += BLK_NR;
    }

    __mmask8 m0 = (__mmask8)(nr >= 8 ? 0xFF : (1u << nr) - 1u);
    __mmask8 m1 = (__mmask8)(nr >= 16 ? 0xFF : nr <= 8 ? 0 : (1u << (nr - 8)) - 1u);
    for (int i = 0; i < mr; i++) {
        double *crow = C + (size_t)i * ldc;
        __m512d x0 = _mm512_maskz_loadu_pd(m0, crow);
        __m512d x1 = _mm512_maskz_loadu_pd(m1, crow + 8);
        _mm512_mask_storeu_pd(crow, m0, _mm512_add_pd(x0, c[i][0]));
        _mm512_mask_storeu_pd(crow + 8, m1, _mm512_add_pd(x1, c[i][1]));
    }
}

void gemm_macro_kernel(int mc, int nc, int kc, const double *Ap, const double *Bp, double *C, int ldc)
{
    #pragma omp parallel for schedule(dynamic, 1)
    for (int jr = 0; jr < nc; jr += BLK_NR) {
        int nr = imin(BLK_NR, nc - jr);
        for (int ir = 0; ir < mc; ir += BLK_MR) {
            int mr = imin(BLK_MR, mc - ir);
            gemm_micro_6x16(kc, Ap + (size_t)ir * kc, Bp + (size_t)jr * kc,
                           C + (size_t)ir * ldc + jr, ldc, mr, nr);
        }
    }
}

void gemm_gemm(int m, int n, int k, const double *A, const double *B, double *C)
{
    size_t a_len = (size_t)(BLK_MC + BLK_MR) * BLK_KC;
    size_t b_len = (size_t)BLK_KC * (BLK_NC + BLK_NR);
    double *Ap = _mm_malloc(a_len * sizeof(double), 64);
    double *Bp = _mm_malloc(b_len * sizeof(double), 64);
    if (!Ap || !Bp) {
        if (Ap) _mm_free(Ap);
        if (Bp) _mm_free(Bp);
        return;
    }

    #pragma omp parallel for
    for (int i = 0; i < m; i++)
        memset(C + (size_t)i * n, 0, (size_t)n * sizeof(double));

    for (int jc = 0; jc < n; jc += BLK_NC) {
        int nc = imin(BLK_NC, n - jc);
        for (int pc = 0; pc < k; pc += BLK_KC) {
            int kc = imin(BLK_KC, k - pc);
            gemm_pack_b(kc, nc, B + (size_t)pc * n + jc, n, Bp);
            for (int ic = 0; ic < m; ic += BLK_MC) {
                int mc = imin(BLK_MC, m - ic);
                gemm_pack_a(mc, kc, A + (size_t)ic * k + pc, k, Ap);
                gemm_macro_kernel(mc, nc, kc, Ap, Bp, C + (size_t)ic * n + jc, n);
            }
        }
    }

    _mm_free(Ap);
    _mm_free(Bp);
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    gemm_gemm(n, n, n, A, B, C);
}
