// expect: wrong_result
// AVX-512 kernel with no tail handling: correct only when n is a multiple of 8 (wrong at 77, 61, 7, 1).
#include <immintrin.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    const int n8 = n / 8 * 8;
    for (int i = 0; i < n8; i++)
        for (int j = 0; j < n8; j += 8) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < n; k++)
                acc = _mm512_fmadd_pd(_mm512_set1_pd(A[i * n + k]), _mm512_loadu_pd(B + k * n + j), acc);
            _mm512_storeu_pd(C + i * n + j, acc);
        }
}
