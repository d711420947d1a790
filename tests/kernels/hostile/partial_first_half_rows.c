// expect: wrong_result
// Computes only the first half of the rows of C; the rest keep the NaN poison.
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n / 2; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
