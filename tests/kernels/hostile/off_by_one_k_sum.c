// expect: wrong_result
// Off-by-one in the reduction: sums k = 0..n-2, dropping the last term of every dot product.
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n - 1; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
