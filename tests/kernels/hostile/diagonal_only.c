// expect: wrong_result
// Writes only the diagonal entries C[i][i] (correctly); off-diagonal entries stay NaN.
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + i];
        C[i * n + i] = s;
    }
}
