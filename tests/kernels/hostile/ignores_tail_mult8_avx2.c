// expect: wrong_result
// AVX2 form of ignores_tail_mult8.c: 8 columns at a time in two 4-double vectors with no tail handling: correct only when n is a multiple of 8 (wrong at 77, 61, 7, 1).
#include <immintrin.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    const int n8 = n / 8 * 8;
    for (int i = 0; i < n8; i++)
        for (int j = 0; j < n8; j += 8) {
            __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
            for (int k = 0; k < n; k++) {
                const __m256d a = _mm256_set1_pd(A[i * n + k]);
                acc0 = _mm256_fmadd_pd(a, _mm256_loadu_pd(B + k * n + j), acc0);
                acc1 = _mm256_fmadd_pd(a, _mm256_loadu_pd(B + k * n + j + 4), acc1);
            }
            _mm256_storeu_pd(C + i * n + j, acc0);
            _mm256_storeu_pd(C + i * n + j + 4, acc1);
        }
}
