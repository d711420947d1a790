// AVX-512, serial: two rows per pass (the four input rows loaded once for both), 8 cells per vector, masked tail.
#include <immintrin.h>
#include <stddef.h>

static void copy_border(int n, const double *u, double *v)
{
    const size_t N = (size_t)n;
    for (size_t j = 0; j < N; j++) {
        v[j] = u[j];
        v[(N - 1) * N + j] = u[(N - 1) * N + j];
    }
    for (size_t i = 1; i + 1 < N; i++) {
        v[i * N] = u[i * N];
        v[i * N + N - 1] = u[i * N + N - 1];
    }
}

/* Interior cells [j, j+8) (masked by m) of rows i (r1) and i+1 (r2), from rows r0..r3. */
static inline void two_rows(const double *r0, const double *r1, const double *r2, const double *r3,
                            double *v1, double *v2, size_t j, __mmask8 m, __m512d fifth)
{
    __m512d a0 = _mm512_maskz_loadu_pd(m, r0 + j), a1 = _mm512_maskz_loadu_pd(m, r1 + j);
    __m512d a2 = _mm512_maskz_loadu_pd(m, r2 + j), a3 = _mm512_maskz_loadu_pd(m, r3 + j);
    __m512d l1 = _mm512_maskz_loadu_pd(m, r1 + j - 1), p1 = _mm512_maskz_loadu_pd(m, r1 + j + 1);
    __m512d l2 = _mm512_maskz_loadu_pd(m, r2 + j - 1), p2 = _mm512_maskz_loadu_pd(m, r2 + j + 1);
    __m512d s1 = _mm512_add_pd(_mm512_add_pd(a1, a0), _mm512_add_pd(a2, _mm512_add_pd(l1, p1)));
    __m512d s2 = _mm512_add_pd(_mm512_add_pd(a2, a1), _mm512_add_pd(a3, _mm512_add_pd(l2, p2)));
    _mm512_mask_storeu_pd(v1 + j, m, _mm512_mul_pd(s1, fifth));
    _mm512_mask_storeu_pd(v2 + j, m, _mm512_mul_pd(s2, fifth));
}

void jacobi2d(int n, const double *u, double *v)
{
    const size_t N = (size_t)n;
    const __m512d fifth = _mm512_set1_pd(0.2);
    copy_border(n, u, v);
    size_t i = 1;
    for (; i + 2 < N; i += 2) {
        const double *r0 = u + (i - 1) * N, *r1 = r0 + N, *r2 = r1 + N, *r3 = r2 + N;
        double *v1 = v + i * N, *v2 = v1 + N;
        size_t j = 1;
        for (; j + 8 <= N - 1; j += 8) two_rows(r0, r1, r2, r3, v1, v2, j, 0xFF, fifth);
        if (j < N - 1) two_rows(r0, r1, r2, r3, v1, v2, j, (__mmask8)((1u << (N - 1 - j)) - 1u), fifth);
    }
    if (i + 1 < N) { /* one row left */
        const double *r0 = u + (i - 1) * N, *r1 = r0 + N, *r2 = r1 + N;
        double *v1 = v + i * N;
        for (size_t j = 1; j + 1 < N; j++)
            v1[j] = 0.2 * (r1[j] + r0[j] + r2[j] + r1[j - 1] + r1[j + 1]);
    }
}
