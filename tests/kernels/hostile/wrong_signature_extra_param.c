// expect: format_error
// Wrong signature: BLAS-style extra leading-dimension parameter (int n, int ld, ...).
void dgemm(int n, int ld, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * ld + k] * B[k * ld + j];
            C[i * ld + j] = s;
        }
}
