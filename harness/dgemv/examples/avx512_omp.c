// AVX-512 dgemv: 4 rows at a time with FMA, masked column tail, OpenMP over row blocks, _mm512_reduce_add_pd.
#include <immintrin.h>
#include <stddef.h>
#include <omp.h>

static double dot_row(int n, const double *a, const double *x)
{
    __m512d acc = _mm512_setzero_pd();
    int j = 0;
    for (; j + 8 <= n; j += 8)
        acc = _mm512_fmadd_pd(_mm512_loadu_pd(a + j), _mm512_loadu_pd(x + j), acc);
    if (j < n) {
        __mmask8 m = (__mmask8)((1u << (n - j)) - 1u);
        acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, a + j), _mm512_maskz_loadu_pd(m, x + j), acc);
    }
    return _mm512_reduce_add_pd(acc);
}

void dgemv(int n, const double *A, const double *x, double *y)
{
    const int m4 = n & ~3;
    const __mmask8 tail = (__mmask8)((1u << (n & 7)) - 1u);
    const int n8 = n & ~7;

#pragma omp parallel for schedule(static)
    for (int i = 0; i < m4; i += 4) {
        const double *a0 = A + (size_t)i * n, *a1 = a0 + n, *a2 = a1 + n, *a3 = a2 + n;
        __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
        __m512d s2 = _mm512_setzero_pd(), s3 = _mm512_setzero_pd();
        for (int j = 0; j < n8; j += 8) {
            __m512d xv = _mm512_loadu_pd(x + j);
            s0 = _mm512_fmadd_pd(_mm512_loadu_pd(a0 + j), xv, s0);
            s1 = _mm512_fmadd_pd(_mm512_loadu_pd(a1 + j), xv, s1);
            s2 = _mm512_fmadd_pd(_mm512_loadu_pd(a2 + j), xv, s2);
            s3 = _mm512_fmadd_pd(_mm512_loadu_pd(a3 + j), xv, s3);
        }
        if (tail) {
            __m512d xv = _mm512_maskz_loadu_pd(tail, x + n8);
            s0 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(tail, a0 + n8), xv, s0);
            s1 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(tail, a1 + n8), xv, s1);
            s2 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(tail, a2 + n8), xv, s2);
            s3 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(tail, a3 + n8), xv, s3);
        }
        y[i] = _mm512_reduce_add_pd(s0);
        y[i + 1] = _mm512_reduce_add_pd(s1);
        y[i + 2] = _mm512_reduce_add_pd(s2);
        y[i + 3] = _mm512_reduce_add_pd(s3);
    }
    for (int i = m4; i < n; i++)
        y[i] = dot_row(n, A + (size_t)i * n, x);
}
