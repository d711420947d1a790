// expect: timeout
// Loop whose exit condition can never hold for inputs in [-1,1] (waits for |A[0]| > 2).
void dgemm(int n, const double *A, const double *B, double *C)
{
    volatile double probe = A[0];
    unsigned long iter = 0;
    while (!(probe > 2.0 || probe < -2.0)) {
        iter++;
        probe = A[iter % ((unsigned long)n * (unsigned long)n)];
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
