// expect: wrong_result
// Converts to float and accumulates in float (2x SIMD width), error ~1e-6 >> the double tolerance.
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int k = 0; k < n; k++) s += (float)A[i * n + k] * (float)B[k * n + j];
            C[i * n + j] = (double)s;
        }
}
