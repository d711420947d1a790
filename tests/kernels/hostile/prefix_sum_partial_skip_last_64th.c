// expect: wrong_result problem: prefix_sum
// Partial work: scans only the first n - n/64 elements and leaves the last 64th of y as it found it (the driver poisons y before every call).
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int m = n - n / 64;
    int64_t s = 0;
    for (int i = 0; i < m; i++) {
        s += x[i];
        y[i] = s;
    }
}
