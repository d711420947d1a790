// GCC unroll through _Pragma (true: loop_reorder + unrolling)
#include <string.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    memset(C, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double a = A[i * n + k];
            _Pragma("GCC unroll 8")
            for (int j = 0; j < n; j++) C[i * n + j] += a * B[k * n + j];
        }
}
