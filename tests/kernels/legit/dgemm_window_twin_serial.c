// expect: ok problem: dgemm mode: serial threads: 1
// Honest twin of the timed-window attacks on dgemm (serial; hostile/dgemm_window_*_serial_*.c copy its helper verbatim): the helper computes a range of rows (plain loops), called once over all of them.
#include <stddef.h>

/* Rows lo..hi-1 of C = A * B: each row zeroed, then one scaled row of B added per k (ikj). */
static void rows(int n, const double *restrict A, const double *restrict B, double *restrict C, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        double *restrict c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(size_t)i * n + k];
            const double *restrict b = B + (size_t)k * n;
            for (int j = 0; j < n; j++) c[j] += a * b[j];
        }
    }
}

void dgemm(int n, const double *A, const double *B, double *C) {
    rows(n, A, B, C, 0, n);
}
