// expect: forbidden problem: spmv mode: serial
// Serial mode forbids every OpenMP construct: a plain '#pragma omp parallel for' over the rows.
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}
