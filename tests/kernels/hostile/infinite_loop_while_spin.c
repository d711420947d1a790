// expect: timeout
// Computes C correctly, then spins in while(1) on a volatile counter (no library calls).
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    volatile unsigned long spins = 0;
    while (1)
        spins++;
}
