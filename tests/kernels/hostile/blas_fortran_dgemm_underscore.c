// expect: forbidden
// Declares the Fortran BLAS symbol `extern void dgemm_(...)` by hand and calls it (row-major trick: C^T = B^T A^T).
extern void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *b,
                   const int *ldb, const double *beta, double *c, const int *ldc);

void dgemm(int n, const double *A, const double *B, double *C)
{
    const double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &n, &n, &n, &one, B, &n, A, &n, &zero, C, &n);
}
