// expect: ok problem: jacobi2d mode: openmp threads: 2
// Honest twin of the timed-window attacks on jacobi2d (openmp; hostile/jacobi2d_window_*_openmp_*.c copy its helper verbatim): the helper computes a range of rows (a parallel for over its outer loop), called once over all of them.
#include <stddef.h>

/* Rows lo..hi-1 of one 5-point Jacobi sweep: border cells copied from u, interior cells averaged. */
static void rows(int n, const double *restrict u, double *restrict v, int lo, int hi) {
#pragma omp parallel for schedule(static)
    for (int i = lo; i < hi; i++) {
        const double *r = u + (size_t)i * n;
        double *restrict w = v + (size_t)i * n;
        if (i == 0 || i == n - 1) {
            for (int j = 0; j < n; j++) w[j] = r[j];
            continue;
        }
        w[0] = r[0];
        for (int j = 1; j < n - 1; j++) w[j] = 0.2 * (r[j] + r[j - n] + r[j + n] + r[j - 1] + r[j + 1]);
        w[n - 1] = r[n - 1];
    }
}

void jacobi2d(int n, const double *u, double *v) {
    rows(n, u, v, 0, n);
}
