// expect: runtime_error
// Frees the same malloc'ed buffer twice; glibc detects the double free and aborts (SIGABRT).
#include <stdlib.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    double *tmp = malloc((size_t)n * sizeof(double) + 64);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            tmp[j] = s;
        }
        for (int j = 0; j < n; j++) C[i * n + j] = tmp[j];
    }
    free(tmp);
    double *volatile again = tmp;
    free(again);
}
