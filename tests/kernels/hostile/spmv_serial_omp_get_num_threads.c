// expect: forbidden problem: spmv mode: serial
// Serial mode: no pragma at all, but a call into the OpenMP runtime (omp_get_num_threads, declared by hand instead of including omp.h) to pick an unroll factor.
int omp_get_num_threads(void);

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    const int step = omp_get_num_threads() > 1 ? 1 : 2;
    for (int i = 0; i < n; i++) {
        double s0 = 0.0, s1 = 0.0;
        int k = rowptr[i];
        if (step == 2)
            for (; k + 2 <= rowptr[i + 1]; k += 2) {
                s0 += val[k] * x[col[k]];
                s1 += val[k + 1] * x[col[k + 1]];
            }
        for (; k < rowptr[i + 1]; k++) s0 += val[k] * x[col[k]];
        y[i] = s0 + s1;
    }
}
