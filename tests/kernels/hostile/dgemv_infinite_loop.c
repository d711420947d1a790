// expect: timeout problem: dgemv
// dgemv whose row loop index is reset by a bug (i = 0 at the end of each row): never terminates for n >= 1.
void dgemv(int n, const double *A, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
        y[i] = s;
        i = -1;
    }
}
