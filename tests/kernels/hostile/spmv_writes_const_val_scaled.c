// expect: wrong_result problem: spmv
// Uses the const val array as scratch: multiplies each val[k] by x[col[k]] in place and sums the products, so y is right but val comes back modified.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    double *v = (double *)val;
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
            v[k] *= x[col[k]];
            s += v[k];
        }
        y[i] = s;
    }
}
