// expect: ok problem: dgemv mode: serial threads: 1
// Honest twin of the timed-window attacks on dgemv (serial; hostile/dgemv_window_*_serial_*.c copy its helper verbatim): the helper computes a range of rows (plain loops), called once over all of them.
#include <stddef.h>

/* Rows lo..hi-1 of y = A * x: one dot product per row. */
static void rows(int n, const double *restrict A, const double *restrict x, double *restrict y, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        const double *restrict a = A + (size_t)i * n;
        double s = 0.0;
        for (int j = 0; j < n; j++) s += a[j] * x[j];
        y[i] = s;
    }
}

void dgemv(int n, const double *A, const double *x, double *y) {
    rows(n, A, x, y, 0, n);
}
