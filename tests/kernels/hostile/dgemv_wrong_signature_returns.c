// expect: format_error problem: dgemv
// dgemv with the wrong signature: returns a new y instead of taking an output pointer.
#include <stdlib.h>

double *dgemv(int n, const double *A, const double *x)
{
    double *y = malloc((size_t)n * sizeof(double));
    if (!y) return NULL;
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
        y[i] = s;
    }
    return y;
}
