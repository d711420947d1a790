// expect: ok
// OpenMP parallel for with collapse(2) and schedule(dynamic) over (i, j) with a dot-product inner loop.
#include <omp.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
#pragma omp parallel for collapse(2) schedule(dynamic, 64)
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                s += A[(long)i * n + k] * B[(long)k * n + j];
            C[(long)i * n + j] = s;
        }
    }
}
