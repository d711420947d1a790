// Textbook row-major matrix-vector product with a scalar accumulator.
void dgemv(int n, const double *A, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++)
            s += A[i * n + j] * x[j];
        y[i] = s;
    }
}
