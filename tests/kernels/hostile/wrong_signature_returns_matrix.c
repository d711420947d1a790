// expect: format_error
// Wrong signature: returns a freshly malloc'ed C instead of writing the caller's buffer.
#include <stdlib.h>

double *dgemm(int n, const double *A, const double *B)
{
    double *C = malloc((size_t)n * (size_t)n * sizeof(double));
    if (!C) return NULL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    return C;
}
