// expect: timeout
// Every OpenMP thread spins forever inside a parallel region (only omp.h; no library calls in the loop).
#include <omp.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)A; (void)B;
#pragma omp parallel
    {
        volatile double x = 0.0;
        while (1) x += 1.0;
    }
    C[0] = (double)n;
}
