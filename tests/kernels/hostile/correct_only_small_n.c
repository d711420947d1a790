// expect: wrong_result
// Exact for n <= 64 (what a lazy tester would try); for larger n it only computes 8-wide diagonal blocks.
void dgemm(int n, const double *A, const double *B, double *C)
{
    if (n <= 64) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
                C[i * n + j] = s;
            }
        return;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            if (i / 8 == j / 8)
                for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
