// expect: wrong_result problem: spmv
// Computes y correctly but also stores a zero one element past its end (y[n], a "sentinel" for a vector loop); the shared region's canary after y catches the write outside the array.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
    y[n] = 0.0;
}
