// expect: wrong_result problem: spmv
// Partial work: computes 7 rows of every 8 and writes 0 into the eighth (a 12% saving); the skipped rows are nonempty almost always, so their y is wrong.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        if (i % 8 != 7)
            for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}
