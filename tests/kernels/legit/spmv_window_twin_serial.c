// expect: ok problem: spmv mode: serial threads: 1
// Honest twin of the timed-window attacks on spmv (serial; hostile/spmv_window_*_serial_*.c copy its helper verbatim): the helper computes a range of rows (plain loops), called once over all of them.
#include <stddef.h>

/* Rows lo..hi-1 of y = A * x, A in CSR form. */
static void rows(const int *restrict rowptr, const int *restrict col, const double *restrict val,
                 const double *restrict x, double *restrict y, int lo, int hi) {
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
