// expect: wrong_result problem: dgemv
// dgemv with an off-by-one: the last row of y is never written (stays NaN).
void dgemv(int n, const double *A, const double *x, double *y)
{
    for (int i = 0; i < n - 1; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
        y[i] = s;
    }
}
