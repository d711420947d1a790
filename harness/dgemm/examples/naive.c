// Textbook ijk triple loop with a scalar accumulator per element.
void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double sum = 0.0;
            for (int k = 0; k < n; k++)
                sum += A[i * n + k] * B[k * n + j];
            C[i * n + j] = sum;
        }
    }
}
