// expect: wrong_result
// Indexes A and B as if column-major: computes A^T * B^T = (B*A)^T instead of A*B.
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i + k * n] * B[k + j * n];
            C[i * n + j] = s;
        }
}
