/*
 * HISTOGRAM driver: counts[b] = #{i : x[i] = b} for the 256 byte values b, exact.
 * Defines the problem hooks of ../bench.h (see harness/dgemm/driver.c for the two halves).
 *
 * Inputs: skewed bytes from the driver's own generator (hist_fill, mirrored by make_inputs in
 * reference.py): each byte is, with probability 1/2, a "hot" value drawn afresh for every call,
 * else uniform. Half the increments then hit one counter: a single table serializes on its
 * store-to-load chain and counters shared between threads contend, which is what sub-histograms
 * and per-thread private tables are for. counts is poisoned with a nonzero value before every
 * call, so a kernel that does not zero it fails. The check is exact and O(n), like the kernel,
 * so it is also the fast check: every call is checked in full.
 */
#include "../bench.h"

#define HIST_BINS 256

/* The shared arrays. */
static uint8_t *X;
static int64_t *C;

static size_t problem_array_bytes(int k, int n) {
    return k == 0 ? (size_t)n : k == 1 ? HIST_BINS * sizeof(int64_t) : 0;
}

static void problem_bind(unsigned char *shared) {
    X = bench_array(shared, 0);
    C = bench_array(shared, 1);
}

#ifdef LAB_ROLE_RUNNER
void histogram(int n, const uint8_t *x, int64_t *counts);

static void problem_invoke(int n) { histogram(n, X, C); }

#else
static uint8_t *X0;
static int64_t Cout[HIST_BINS], Ref[HIST_BINS];

/* x[i] = hot if bit 0 of draw i of stream 0 is set, else that draw's top byte; hot = the top byte
 * of draw 0 of stream 1. */
static void hist_fill(uint8_t *x, size_t count, uint64_t seed) {
    bench_key key = bench_stream_key(seed, 0), key1 = bench_stream_key(seed, 1);
    uint8_t hot = (uint8_t)(bench_draw(&key1, 0) >> 56);
    BENCH_EACH_DRAW(key, count, x[i] = (z & 1) ? hot : (uint8_t)(z >> 56));
}

static void problem_alloc(int max_n) { X0 = bench_alloc_bytes((size_t)max_n); }

static void problem_fill(int n, uint64_t seed) {
    hist_fill(X0, (size_t)n, seed);
    memcpy(X, X0, (size_t)n);
    bench_poison_i64(C, HIST_BINS);
}

static void problem_collect(int n) {
    (void)n;
    bench_copy_shuffled(Cout, C, sizeof Cout);
}

static void baseline_histogram(int n, const uint8_t *x, int64_t *counts) {
    for (int b = 0; b < HIST_BINS; b++) counts[b] = 0;
    for (int i = 0; i < n; i++) counts[x[i]]++;
}

static void problem_call_baseline(int n) { baseline_histogram(n, X0, Cout); }

/* The check's own count: four sub-tables, so the hot value's increments do not wait on each other. */
static void check_histogram(int n, const uint8_t *x, int64_t *counts) {
    static int64_t sub[4][HIST_BINS];
    memset(sub, 0, sizeof sub);
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        sub[0][x[i]]++;
        sub[1][x[i + 1]]++;
        sub[2][x[i + 2]]++;
        sub[3][x[i + 3]]++;
    }
    for (; i < n; i++) sub[0][x[i]]++;
    for (int b = 0; b < HIST_BINS; b++) counts[b] = sub[0][b] + sub[1][b] + sub[2][b] + sub[3][b];
}

/* Full check, exact (tol is not used): all 256 counts against the pristine input's. */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    (void)tol;
    if (memcmp(X, X0, (size_t)n)) {
        snprintf(why, len, "the const input x was modified");
        return 1;
    }
    check_histogram(n, X0, Ref);
    for (int b = 0; b < HIST_BINS; b++)
        if (Cout[b] != Ref[b]) {
            snprintf(why, len, "counts[%d] = %lld, expected %lld", b, (long long)Cout[b], (long long)Ref[b]);
            return 1;
        }
    return 0;
}

static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    (void)seed;
    return problem_check_full(n, tol, why, len);
}

static double problem_flops(int n) { return (double)n; }

/* Called after a passed check: the counts are the reference's, their sum is n (exact). */
static void problem_checksum(int n, double *sum, double *abs_sum) {
    (void)n;
    int64_t s = 0, a = 0;
    for (int b = 0; b < HIST_BINS; b++) {
        s += Cout[b];
        a += Cout[b] < 0 ? -Cout[b] : Cout[b];
    }
    *sum = (double)s;
    *abs_sum = (double)a;
}
#endif
