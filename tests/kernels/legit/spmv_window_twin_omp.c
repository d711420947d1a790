// expect: ok problem: spmv mode: openmp threads: 2
// Honest twin of the timed-window attacks on spmv (openmp; hostile/spmv_window_*_openmp_*.c copy its helper verbatim): the helper computes a range of rows (a parallel for over its outer loop), called once over all of them.
#include <stddef.h>

/* Rows lo..hi-1 of y = A * x, A in CSR form. */
static void rows(const int *restrict rowptr, const int *restrict col, const double *restrict val,
                 const double *restrict x, double *restrict y, int lo, int hi) {
#pragma omp parallel for schedule(static)
    for (int i = lo; i < hi; i++) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y) {
    (void)n;
    rows(rowptr, col, val, x, y, 0, n);
}
