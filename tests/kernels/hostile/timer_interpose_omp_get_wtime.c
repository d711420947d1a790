// expect: forbidden
// Defines omp_get_wtime() (declared by the allowed <omp.h>) to return a clock that barely moves.
#include <omp.h>

double omp_get_wtime(void)
{
    static double t = 1.0;
    t += 1e-9;
    return t;
}

void dgemm(int n, const double *A, const double *B, double *C)
{
#pragma omp parallel for
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
