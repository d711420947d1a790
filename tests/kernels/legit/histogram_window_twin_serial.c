// expect: ok problem: histogram mode: serial threads: 1
// Honest twin of the timed-window attacks on histogram (serial; hostile/histogram_window_*_serial_*.c copy its helper verbatim): the helper computes a range of elements (plain loops), called once over all of them.
#include <stddef.h>
#include <stdint.h>

static void clear(int64_t *counts) {
    for (int b = 0; b < 256; b++) counts[b] = 0;
}

/* Adds the counts of x[lo..hi-1] to counts. */
static void count(const uint8_t *restrict x, int64_t *restrict counts, long lo, long hi) {
    for (long i = lo; i < hi; i++) counts[x[i]]++;
}

void histogram(int n, const uint8_t *x, int64_t *counts) {
    clear(counts);
    count(x, counts, 0, n);
}
