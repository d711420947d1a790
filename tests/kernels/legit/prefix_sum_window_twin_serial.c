// expect: ok problem: prefix_sum mode: serial threads: 1
// Honest twin of the timed-window attacks on prefix_sum (serial; hostile/prefix_sum_window_*_serial_*.c copy its helper verbatim): the helper computes a range of elements (plain loops), called once over all of them.
#include <stddef.h>
#include <stdint.h>

/* y[i] = carry + x[lo] + ... + x[i] for lo <= i < hi. */
static void scan(const int64_t *restrict x, int64_t *restrict y, long lo, long hi, int64_t carry) {
    int64_t s = carry;
    for (long i = lo; i < hi; i++) {
        s += x[i];
        y[i] = s;
    }
}

void prefix_sum(int n, const int64_t *x, int64_t *y) {
    scan(x, y, 0, n, 0);
}
