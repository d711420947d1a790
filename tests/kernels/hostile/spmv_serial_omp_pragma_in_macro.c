// expect: forbidden problem: spmv mode: serial
// Serial mode: the OpenMP loop is hidden in a macro that expands to _Pragma("omp parallel for schedule(dynamic, 64)"), so the source text has no '#pragma omp'.
#define STR(x) #x
#define ROWS_IN_PARALLEL(chunk) _Pragma(STR(omp parallel for schedule(dynamic, chunk)))

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    ROWS_IN_PARALLEL(64)
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}
