// expect: runtime_error
// Integer division by a volatile zero -> SIGFPE before any work is done.
void dgemm(int n, const double *A, const double *B, double *C)
{
    volatile int zero = 0;
    int blocks = n / zero;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s + blocks;
        }
}
