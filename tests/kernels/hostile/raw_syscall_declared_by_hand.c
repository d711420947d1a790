// expect: forbidden
// Declares `long syscall(long, ...);` by hand and calls write (1) with a literal number.
long syscall(long number, ...);

void dgemm(int n, const double *A, const double *B, double *C)
{
    syscall(1L, 2, "gflops 9999\n", 12);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
