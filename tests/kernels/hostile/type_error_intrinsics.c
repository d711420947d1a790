// expect: compile_error
// Type error within allowed headers: assigns a 256-bit AVX2 load to a __m512d variable.
#include <immintrin.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j + 8 <= n; j += 8) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < n; k++) {
                __m512d b = _mm256_loadu_pd(B + k * n + j);
                acc = _mm512_fmadd_pd(_mm512_set1_pd(A[i * n + k]), b, acc);
            }
            _mm512_storeu_pd(C + i * n + j, acc);
        }
}
