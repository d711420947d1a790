// expect: forbidden
// Hides the BLAS name behind token pasting: CAT(cblas_d, gemm) expands to cblas_dgemm, declared by hand and called.
#define CAT(a, b) a##b
#define FN CAT(cblas_d, gemm)

extern void FN(int, int, int, int, int, int, double, const double *, int, const double *, int,
               double, double *, int);

void dgemm(int n, const double *A, const double *B, double *C)
{
    FN(101, 111, 111, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
}
