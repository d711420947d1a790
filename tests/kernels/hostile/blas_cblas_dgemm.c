// expect: forbidden
// Calls CBLAS through <cblas.h> instead of computing anything itself.
#include <cblas.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
}
