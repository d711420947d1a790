// expect: wrong_result
// Correct C, but then zeroes the const input B (e.g. "releasing" it) via a cast; only the input check can catch it.
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    memset((void *)B, 0, (size_t)n * (size_t)n * sizeof(double));
}
