// expect: wrong_result
// Computes C correctly, then plants one NaN (0.0/0.0) in the last entry: catches checkers whose `err > tol` is false for NaN.
#include <math.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    C[(long)n * n - 1] = NAN;
}
