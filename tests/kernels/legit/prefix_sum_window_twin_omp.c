// expect: ok problem: prefix_sum mode: openmp threads: 2
// Honest twin of the timed-window attacks on prefix_sum (openmp; hostile/prefix_sum_window_*_openmp_*.c copy its helper verbatim): the helper computes a range of elements (a two-pass blocked scan, each pass a parallel for over 64 blocks), called once over all of them.
#include <stddef.h>
#include <stdint.h>

#define BLOCKS 64

/* y[i] = carry + x[lo] + ... + x[i] for lo <= i < hi: block sums in parallel, their scan, then each
 * block scanned from its offset in parallel. */
static void scan(const int64_t *restrict x, int64_t *restrict y, long lo, long hi, int64_t carry) {
    static int64_t sums[BLOCKS + 1];
    long len = hi - lo;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < BLOCKS; b++) {
        long a = lo + len * b / BLOCKS, e = lo + len * (b + 1) / BLOCKS;
        int64_t s = 0;
        for (long i = a; i < e; i++) s += x[i];
        sums[b + 1] = s;
    }
    sums[0] = carry;
    for (int b = 0; b < BLOCKS; b++) sums[b + 1] += sums[b];
#pragma omp parallel for schedule(static)
    for (int b = 0; b < BLOCKS; b++) {
        long a = lo + len * b / BLOCKS, e = lo + len * (b + 1) / BLOCKS;
        int64_t s = sums[b];
        for (long i = a; i < e; i++) {
            s += x[i];
            y[i] = s;
        }
    }
}

void prefix_sum(int n, const int64_t *x, int64_t *y) {
    scan(x, y, 0, n, 0);
}
