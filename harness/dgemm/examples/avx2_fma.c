// AVX2+FMA ikj kernel: _mm256_fmadd_pd over 8 columns, then 4, then a scalar tail.
#include <immintrin.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++) {
        double *c = C + (long)i * n;
        int j = 0;
        for (; j + 4 <= n; j += 4) _mm256_storeu_pd(c + j, _mm256_setzero_pd());
        for (; j < n; j++) c[j] = 0.0;

        for (int k = 0; k < n; k++) {
            const double *b = B + (long)k * n;
            const double a = A[(long)i * n + k];
            const __m256d av = _mm256_set1_pd(a);
            j = 0;
            for (; j + 8 <= n; j += 8) {
                __m256d c0 = _mm256_loadu_pd(c + j);
                __m256d c1 = _mm256_loadu_pd(c + j + 4);
                c0 = _mm256_fmadd_pd(av, _mm256_loadu_pd(b + j), c0);
                c1 = _mm256_fmadd_pd(av, _mm256_loadu_pd(b + j + 4), c1);
                _mm256_storeu_pd(c + j, c0);
                _mm256_storeu_pd(c + j + 4, c1);
            }
            for (; j + 4 <= n; j += 4) {
                __m256d c0 = _mm256_loadu_pd(c + j);
                _mm256_storeu_pd(c + j, _mm256_fmadd_pd(av, _mm256_loadu_pd(b + j), c0));
            }
            for (; j < n; j++)
                c[j] += a * b[j];
        }
    }
}
