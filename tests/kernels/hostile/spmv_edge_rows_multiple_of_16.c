// expect: wrong_result problem: spmv
// Wrong edge case: rows in blocks of 16 with no tail loop, correct only when n is a multiple of 16 (n = 128 is); the last n mod 16 rows of the odd size (1001) are never written and stay NaN.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i0 = 0; i0 + 16 <= n; i0 += 16)
        for (int i = i0; i < i0 + 16; i++) {
            double s = 0.0;
            for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
            y[i] = s;
        }
}
