// naive ijk dressed up to be detected as all seven techniques (true: none)
#include <immintrin.h>
#include <stdlib.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    __m256d unused; (void)unused;
    double c0 = 0, c1 = 0, c2 = 0, c3 = 0; (void)c0; (void)c1; (void)c2; (void)c3;
    double *buf = malloc(sizeof(double));
    if (buf) { buf[0] = A[0]; free(buf); }
    for (int t = 0; t < 0; t += 64) { }
    int m = n > 0 ? n : 0; (void)m;
#pragma omp parallel for if(0)
    for (int q = 0; q < n * n; q++) C[q] = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
#pragma unroll
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
