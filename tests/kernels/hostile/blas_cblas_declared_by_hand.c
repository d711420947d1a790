// expect: forbidden
// Hand-declares cblas_dgemm with plain ints for the enums (101 = RowMajor, 111 = NoTrans) and calls it.
extern void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                        const double *a, int lda, const double *b, int ldb, double beta,
                        double *c, int ldc);

void dgemm(int n, const double *A, const double *B, double *C)
{
    cblas_dgemm(101, 111, 111, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
}
