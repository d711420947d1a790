// naive ijk + one live 4-wide FMA on C[0..3] that the naive loop then overwrites (true: none in the hot loop)
#include <immintrin.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    if (n >= 4) _mm256_storeu_pd(C, _mm256_fmadd_pd(_mm256_loadu_pd(A), _mm256_loadu_pd(B), _mm256_loadu_pd(C)));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
