// expect: wrong_result problem: spmv
// AVX2 form of spmv_edge_nonzeros_multiple_of_8.c: wrong edge case: two 4-wide AVX2 gathers per block of 8 nonzeros with no tail, correct only for rows whose length is a multiple of 8 (0, 8, 16, 24, 32); every other row drops its last 1-7 terms.
#include <immintrin.h>

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
        for (int k = rowptr[i]; k + 8 <= rowptr[i + 1]; k += 8) {
            __m128i c0 = _mm_loadu_si128((const __m128i *)(col + k));
            __m128i c1 = _mm_loadu_si128((const __m128i *)(col + k + 4));
            s0 = _mm256_fmadd_pd(_mm256_loadu_pd(val + k), _mm256_i32gather_pd(x, c0, 8), s0);
            s1 = _mm256_fmadd_pd(_mm256_loadu_pd(val + k + 4), _mm256_i32gather_pd(x, c1, 8), s1);
        }
        __m256d s = _mm256_add_pd(s0, s1);
        __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
        y[i] = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
    }
}
