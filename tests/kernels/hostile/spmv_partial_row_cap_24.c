// expect: wrong_result problem: spmv
// Partial work: sums at most the first 24 nonzeros of each row (tuned for "about 16 per row"), so rows longer than 24 lose their last terms.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        int end = rowptr[i + 1];
        if (end - rowptr[i] > 24) end = rowptr[i] + 24;
        double s = 0.0;
        for (int k = rowptr[i]; k < end; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}
