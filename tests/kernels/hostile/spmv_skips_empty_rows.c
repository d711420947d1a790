// expect: wrong_result problem: spmv
// Wrong edge case: a "fast path" that skips empty rows without writing y[i] = 0, assuming y was cleared; about 1 row in 33 is empty, and its y[i] stays NaN.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        const int start = rowptr[i], end = rowptr[i + 1];
        if (start == end) continue;
        double s = val[start] * x[col[start]];
        for (int k = start + 1; k < end; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}
