/*
 * DGEMV driver: y = A * x for a row-major n-by-n A.
 * Defines the problem hooks of ../bench.h (see harness/dgemm/driver.c for the two halves).
 */
#include "../bench.h"

/* The shared arrays. */
static double *A, *X, *Y;

static size_t problem_array_bytes(int k, int n) {
    return k == 0 ? (size_t)n * (size_t)n * sizeof(double) : k < 3 ? (size_t)n * sizeof(double) : 0;
}

static void problem_bind(unsigned char *shared) {
    A = bench_array(shared, 0);
    X = bench_array(shared, 1);
    Y = bench_array(shared, 2);
}

#ifdef LAB_ROLE_RUNNER
void dgemv(int n, const double *A, const double *x, double *y);

static void problem_invoke(int n) { dgemv(n, A, X, Y); }

#else
static double *A0, *X0, *Yout, *R;

static void problem_alloc(int max_n) {
    size_t nn = (size_t)max_n * (size_t)max_n;
    A0 = bench_alloc(nn);
    X0 = bench_alloc((size_t)max_n); Yout = bench_alloc((size_t)max_n); R = bench_alloc((size_t)max_n);
}

static void problem_fill(int n, uint64_t seed) {
    size_t nn = (size_t)n * (size_t)n;
    bench_fill(A0, nn, seed, 0);
    bench_fill(X0, (size_t)n, seed, 1);
    memcpy(A, A0, nn * sizeof *A);
    memcpy(X, X0, (size_t)n * sizeof *X);
    bench_poison(Y, (size_t)n);
}

static void problem_collect(int n) { bench_copy_shuffled(Yout, Y, (size_t)n * sizeof *Y); }

static void baseline_dgemv(int n, const double *a, const double *x, double *y) {
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += a[(size_t)i * n + j] * x[j];
        y[i] = s;
    }
}

static void problem_call_baseline(int n) { baseline_dgemv(n, A0, X0, Yout); }

/* Full check; O(n^2) like the kernel itself, so it also serves as the fast check. */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    size_t nn = (size_t)n * (size_t)n;
    if (memcmp(A, A0, nn * sizeof *A) || memcmp(X, X0, (size_t)n * sizeof *X)) {
        snprintf(why, len, "the const inputs A or x were modified");
        return 1;
    }
    baseline_dgemv(n, A0, X0, R);
    double err = bench_max_err(Yout, R, (size_t)n, (double)n);
    if (!(err <= tol)) {
        snprintf(why, len, "max error %.3g exceeds tolerance %.3g (relative to n)", err, tol);
        return 1;
    }
    return 0;
}

static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    (void)seed;
    return problem_check_full(n, tol, why, len);
}

static double problem_flops(int n) { return 2.0 * (double)n * (double)n; }

static void problem_checksum(int n, double *sum, double *abs_sum) { bench_checksum(Yout, (size_t)n, sum, abs_sum); }
#endif
