// expect: wrong_result problem: dgemv
// Computes A^T x (walks A by columns) instead of A x.
void dgemv(int n, const double *A, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += A[j * n + i] * x[j];
        y[i] = s;
    }
}
