// expect: wrong_result problem: spmv
// Missing zeroing: accumulates straight into y[i] (y[i] += val * x), relying on y holding zeros; y arrives poisoned with NaN, so every row is NaN.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++)
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
            y[i] += val[k] * x[col[k]];
}
