// expect: ok problem: dot mode: openmp threads: 2
// Honest twin of the timed-window attacks on dot (openmp; hostile/dot_window_*_openmp_*.c copy its helper verbatim): the helper computes a range of elements (a parallel for with a sum reduction), called once over all of them.
#include <stddef.h>

/* The sum of x[i] * y[i] over lo <= i < hi. */
static double part(const double *restrict x, const double *restrict y, long lo, long hi) {
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (long i = lo; i < hi; i++) s += x[i] * y[i];
    return s;
}

double dot(int n, const double *x, const double *y) {
    return part(x, y, 0, n);
}
