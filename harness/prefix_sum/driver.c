/*
 * PREFIX_SUM driver: y[i] = x[0] + ... + x[i], an inclusive scan of n int64_t, exact.
 * Defines the problem hooks of ../bench.h (see harness/dgemm/driver.c for the two halves).
 *
 * Inputs: x[i] uniform in [-2^32, 2^32] (bench_fill_i64, stream 0; the range is mirrored in
 * problem.toml): values and partial sums overflow 32 bits, so int or float accumulators fail,
 * and |y[i]| <= 2^32 * n < 2^63 for every int n. The check is exact and O(n), like the kernel,
 * so it is also the fast check: every call is checked in full.
 */
#include "../bench.h"

#define PREFIX_SUM_LO (-4294967296LL)
#define PREFIX_SUM_HI 4294967296LL

/* The shared arrays. */
static int64_t *X, *Y;

static size_t problem_array_bytes(int k, int n) { return k < 2 ? (size_t)n * sizeof(int64_t) : 0; }

static void problem_bind(unsigned char *shared) {
    X = bench_array(shared, 0);
    Y = bench_array(shared, 1);
}

#ifdef LAB_ROLE_RUNNER
void prefix_sum(int n, const int64_t *x, int64_t *y);

static void problem_invoke(int n) { prefix_sum(n, X, Y); }

#else
static int64_t *X0, *Yout;

static void problem_alloc(int max_n) {
    X0 = bench_alloc_bytes((size_t)max_n * sizeof(int64_t));
    Yout = bench_alloc_bytes((size_t)max_n * sizeof(int64_t));
}

static void problem_fill(int n, uint64_t seed) {
    bench_fill_i64(X0, (size_t)n, seed, 0, PREFIX_SUM_LO, PREFIX_SUM_HI);
    memcpy(X, X0, (size_t)n * sizeof *X);
    bench_poison_i64(Y, (size_t)n);
}

static void problem_collect(int n) { bench_copy_shuffled(Yout, Y, (size_t)n * sizeof *Y); }

static void baseline_prefix_sum(int n, const int64_t *x, int64_t *y) {
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
}

static void problem_call_baseline(int n) { baseline_prefix_sum(n, X0, Yout); }

/* Full check, exact (tol is not used): every y[i] against the running sum of the pristine x
 * (unsigned arithmetic: no undefined behaviour whatever the kernel wrote). */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    (void)tol;
    if (memcmp(X, X0, (size_t)n * sizeof *X)) {
        snprintf(why, len, "the const input x was modified");
        return 1;
    }
    uint64_t s = 0;
    for (int i = 0; i < n; i++) {
        s += (uint64_t)X0[i];
        if ((uint64_t)Yout[i] != s) {
            snprintf(why, len, "y[%d] = %lld, expected %lld", i, (long long)Yout[i], (long long)(int64_t)s);
            return 1;
        }
    }
    return 0;
}

static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    (void)seed;
    return problem_check_full(n, tol, why, len);
}

static double problem_flops(int n) { return (double)n; }

/* Sums of y and |y| in int64 arithmetic (modulo 2^64, as NumPy's int64 sum computes them; the
 * sums can pass 2^63 at large n), rounded to double once: the parent's reference.sum() is the
 * same integer rounded the same way, so the cross-check is exact. */
static void problem_checksum(int n, double *sum, double *abs_sum) {
    uint64_t s = 0, a = 0;
    for (int i = 0; i < n; i++) {
        uint64_t v = (uint64_t)Yout[i];
        s += v;
        a += Yout[i] < 0 ? 0 - v : v;
    }
    *sum = (double)(int64_t)s;
    *abs_sum = (double)(int64_t)a;
}
#endif
