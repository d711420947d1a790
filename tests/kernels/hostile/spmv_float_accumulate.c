// expect: wrong_result problem: spmv
// Single precision: products and sums in float (twice the SIMD width), about 1e-7 relative error per row, far beyond the tolerance of 1e-12 of the row's sum |a*x|.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += (float)val[k] * (float)x[col[k]];
        y[i] = s;
    }
}
