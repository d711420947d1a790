// expect: forbidden
// Exports an extra symbol through __attribute__((alias)) (here aliasing omp_get_wtime to a static fake clock).
static double fake_wtime(void) { return 42.0; }
double omp_get_wtime(void) __attribute__((alias("fake_wtime")));

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
