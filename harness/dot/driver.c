/*
 * DOT driver: result = sum x[i] * y[i], returned by the candidate.
 * Defines the problem hooks of ../bench.h (see harness/dgemm/driver.c for the two halves).
 * The runner stores the returned value in a one-element shared array, which the measurer
 * poisons before every call.
 */
#include "../bench.h"

/* The shared arrays. */
static double *X, *Y, *R;

static size_t problem_array_bytes(int k, int n) {
    return k < 2 ? (size_t)n * sizeof(double) : k == 2 ? sizeof(double) : 0;
}

static void problem_bind(unsigned char *shared) {
    X = bench_array(shared, 0);
    Y = bench_array(shared, 1);
    R = bench_array(shared, 2);
}

#ifdef LAB_ROLE_RUNNER
double dot(int n, const double *x, const double *y);

static void problem_invoke(int n) { R[0] = dot(n, X, Y); }

#else
static double *X0, *Y0, Rout;

static void problem_alloc(int max_n) {
    X0 = bench_alloc((size_t)max_n);
    Y0 = bench_alloc((size_t)max_n);
}

static void problem_fill(int n, uint64_t seed) {
    bench_fill(X0, (size_t)n, seed, 0);
    bench_fill(Y0, (size_t)n, seed, 1);
    memcpy(X, X0, (size_t)n * sizeof *X);
    memcpy(Y, Y0, (size_t)n * sizeof *Y);
    bench_poison(R, 1);
}

static void problem_collect(int n) {
    (void)n;
    Rout = R[0];
}

static double baseline_dot(int n, const double *x, const double *y) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

static void problem_call_baseline(int n) { Rout = baseline_dot(n, X0, Y0); }

/* Full check, O(n) like the kernel, so it is also the fast check: the reference sum is
 * compensated (Neumaier), the tolerance relative to sum |x_i * y_i|. */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    if (memcmp(X, X0, (size_t)n * sizeof *X) || memcmp(Y, Y0, (size_t)n * sizeof *Y)) {
        snprintf(why, len, "the const inputs x or y were modified");
        return 1;
    }
    double s = 0.0, c = 0.0, mag = 0.0;
    for (int i = 0; i < n; i++) {
        double p = X0[i] * Y0[i], t = s + p;
        c += fabs(s) >= fabs(p) ? (s - t) + p : (p - t) + s;
        s = t;
        mag += fabs(p);
    }
    double err = fabs(Rout - (s + c));
    if (!(err <= tol * mag)) {
        snprintf(why, len, "result %.17g, expected %.17g (error %.3g of sum |x*y| = %.3g)", Rout, s + c, err, mag);
        return 1;
    }
    return 0;
}

static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    (void)seed;
    return problem_check_full(n, tol, why, len);
}

static double problem_flops(int n) { return 2.0 * (double)n; }

static void problem_checksum(int n, double *sum, double *abs_sum) {
    (void)n;
    *sum = Rout;
    *abs_sum = fabs(Rout);
}
#endif
