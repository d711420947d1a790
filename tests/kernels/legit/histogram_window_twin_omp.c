// expect: ok problem: histogram mode: openmp threads: 2
// Honest twin of the timed-window attacks on histogram (openmp; hostile/histogram_window_*_openmp_*.c copy its helper verbatim): the helper computes a range of elements (a parallel for over 64 chunks, each with a private table, then a merge), called once over all of them.
#include <stddef.h>
#include <stdint.h>

#define CHUNKS 64

static void clear(int64_t *counts) {
    for (int b = 0; b < 256; b++) counts[b] = 0;
}

/* Adds the counts of x[lo..hi-1] to counts: a private table per chunk, counted in parallel, then merged. */
static void count(const uint8_t *restrict x, int64_t *restrict counts, long lo, long hi) {
    static int64_t table[CHUNKS][256];
    long len = hi - lo;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < CHUNKS; c++) {
        int64_t *t = table[c];
        for (int b = 0; b < 256; b++) t[b] = 0;
        long a = lo + len * c / CHUNKS, e = lo + len * (c + 1) / CHUNKS;
        for (long i = a; i < e; i++) t[x[i]]++;
    }
    for (int b = 0; b < 256; b++) {
        int64_t s = 0;
        for (int c = 0; c < CHUNKS; c++) s += table[c][b];
        counts[b] += s;
    }
}

void histogram(int n, const uint8_t *x, int64_t *counts) {
    clear(counts);
    count(x, counts, 0, n);
}
