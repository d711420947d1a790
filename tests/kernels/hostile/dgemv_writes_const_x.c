// expect: wrong_result problem: dgemv
// dgemv that casts away const and scales x in place (y is correct, x is left modified).
void dgemv(int n, const double *A, const double *x, double *y)
{
    double *xw = (double *)x;
    for (int j = 0; j < n; j++) xw[j] *= 4.0;
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += A[i * n + j] * xw[j];
        y[i] = 0.25 * s;
    }
}
