// expect: timeout
// Correct, but recomputes the whole product 1,000,000 times (hours at n=77, forever at n=256).
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int rep = 0; rep < 1000000; rep++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
                C[i * n + j] = s;
            }
    }
}
