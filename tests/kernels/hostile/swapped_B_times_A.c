// expect: wrong_result
// Computes B * A (operands swapped) with a fast ikj loop.
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    memset(C, 0, (size_t)n * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double b = B[i * n + k];
            for (int j = 0; j < n; j++) C[i * n + j] += b * A[k * n + j];
        }
}
