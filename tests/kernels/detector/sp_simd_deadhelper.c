// naive ijk + an unused static helper full of intrinsics (true: none)
#include <immintrin.h>
static inline __m256d fma4(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
