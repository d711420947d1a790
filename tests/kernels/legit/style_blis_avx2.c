// expect: ok
// BLIS-style GEMM with an AVX2/FMA 4x8 intrinsics micro-kernel; packing, macro- and micro-kernel are all exported (non-static).
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

enum { MC = 128, KC = 256, NC = 1024, MR = 4, NR = 8 };

void dgemm_pack_a(int mc, int kc, const double *A, int lda, double *restrict dst)
{
    for (int p = 0; p < mc; p += MR) {
        int rows = mc - p < MR ? mc - p : MR;
        for (int k = 0; k < kc; k++) {
            for (int i = 0; i < MR; i++)
                *dst++ = i < rows ? A[(size_t)(p + i) * lda + k] : 0.0;
        }
    }
}

void dgemm_pack_b(int kc, int nc, const double *B, int ldb, double *restrict dst)
{
    for (int p = 0; p < nc; p += NR) {
        int cols = nc - p < NR ? nc - p : NR;
        for (int k = 0; k < kc; k++) {
            const double *src = B + (size_t)k * ldb + p;
            if (cols == NR) {
                _mm256_storeu_pd(dst, _mm256_loadu_pd(src));
                _mm256_storeu_pd(dst + 4, _mm256_loadu_pd(src + 4));
            } else {
                for (int j = 0; j < NR; j++)
                    dst[j] = j < cols ? src[j] : 0.0;
            }
            dst += NR;
        }
    }
}

/* 4x8 micro-kernel: eight ymm accumulators, one broadcast per row per k. */
void dgemm_micro_4x8(int kc, const double *a, const double *b, double *C, int ldc, int mr, int nr)
{
    __m256d c00 = _mm256_setzero_pd(), c01 = _mm256_setzero_pd();
    __m256d c10 = _mm256_setzero_pd(), c11 = _mm256_setzero_pd();
    __m256d c20 = _mm256_setzero_pd(), c21 = _mm256_setzero_pd();
    __m256d c30 = _mm256_setzero_pd(), c31 = _mm256_setzero_pd();

    for (int k = 0; k < kc; k++) {
        __m256d b0 = _mm256_loadu_pd(b);
        __m256d b1 = _mm256_loadu_pd(b + 4);
        __m256d a0 = _mm256_broadcast_sd(a + 0);
        __m256d a1 = _mm256_broadcast_sd(a + 1);
        __m256d a2 = _mm256_broadcast_sd(a + 2);
        __m256d a3 = _mm256_broadcast_sd(a + 3);
        c00 = _mm256_fmadd_pd(a0, b0, c00); c01 = _mm256_fmadd_pd(a0, b1, c01);
        c10 = _mm256_fmadd_pd(a1, b0, c10); c11 = _mm256_fmadd_pd(a1, b1, c11);
        c20 = _mm256_fmadd_pd(a2, b0, c20); c21 = _mm256_fmadd_pd(a2, b1, c21);
        c30 = _mm256_fmadd_pd(a3, b0, c30); c31 = _mm256_fmadd_pd(a3, b1, c31);
        a += MR;
        b += NR;
    }

    if (mr == MR && nr == NR) {
        double *r0 = C, *r1 = C + ldc, *r2 = C + 2 * (size_t)ldc, *r3 = C + 3 * (size_t)ldc;
        _mm256_storeu_pd(r0, _mm256_add_pd(_mm256_loadu_pd(r0), c00));
        _mm256_storeu_pd(r0 + 4, _mm256_add_pd(_mm256_loadu_pd(r0 + 4), c01));
        _mm256_storeu_pd(r1, _mm256_add_pd(_mm256_loadu_pd(r1), c10));
        _mm256_storeu_pd(r1 + 4, _mm256_add_pd(_mm256_loadu_pd(r1 + 4), c11));
        _mm256_storeu_pd(r2, _mm256_add_pd(_mm256_loadu_pd(r2), c20));
        _mm256_storeu_pd(r2 + 4, _mm256_add_pd(_mm256_loadu_pd(r2 + 4), c21));
        _mm256_storeu_pd(r3, _mm256_add_pd(_mm256_loadu_pd(r3), c30));
        _mm256_storeu_pd(r3 + 4, _mm256_add_pd(_mm256_loadu_pd(r3 + 4), c31));
        return;
    }

    double tile[MR * NR];
    _mm256_storeu_pd(tile + 0, c00);  _mm256_storeu_pd(tile + 4, c01);
    _mm256_storeu_pd(tile + 8, c10);  _mm256_storeu_pd(tile + 12, c11);
    _mm256_storeu_pd(tile + 16, c20); _mm256_storeu_pd(tile + 20, c21);
    _mm256_storeu_pd(tile + 24, c30); _mm256_storeu_pd(tile + 28, c31);
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            C[(size_t)i * ldc + j] += tile[i * NR + j];
}

void dgemm_macro(int mc, int nc, int kc, const double *Ap, const double *Bp, double *C, int ldc)
{
    for (int jr = 0; jr < nc; jr += NR) {
        int nr = nc - jr < NR ? nc - jr : NR;
        for (int ir = 0; ir < mc; ir += MR) {
            int mr = mc - ir < MR ? mc - ir : MR;
            dgemm_micro_4x8(kc, Ap + (size_t)ir * kc, Bp + (size_t)jr * kc,
                            C + (size_t)ir * ldc + jr, ldc, mr, nr);
        }
    }
}

void dgemm_driver(int m, int n, int k, const double *A, const double *B, double *C)
{
    double *Ap = aligned_alloc(64, sizeof(double) * (size_t)(MC + MR) * KC);
    double *Bp = aligned_alloc(64, sizeof(double) * (size_t)KC * (NC + NR));
    if (!Ap || !Bp) { free(Ap); free(Bp); return; }

    memset(C, 0, sizeof(double) * (size_t)m * (size_t)n);
    for (int jc = 0; jc < n; jc += NC) {
        int nc = n - jc < NC ? n - jc : NC;
        for (int pc = 0; pc < k; pc += KC) {
            int kc = k - pc < KC ? k - pc : KC;
            dgemm_pack_b(kc, nc, B + (size_t)pc * n + jc, n, Bp);
            for (int ic = 0; ic < m; ic += MC) {
                int mc = m - ic < MC ? m - ic : MC;
                dgemm_pack_a(mc, kc, A + (size_t)ic * k + pc, k, Ap);
                dgemm_macro(mc, nc, kc, Ap, Bp, C + (size_t)ic * n + jc, n);
            }
        }
    }
    free(Ap);
    free(Bp);
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    dgemm_driver(n, n, n, A, B, C);
}
