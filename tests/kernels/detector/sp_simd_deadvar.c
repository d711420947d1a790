// naive ijk + one unused __m256d variable (true: none)
#include <immintrin.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    __m256d unused;
    (void)unused;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
