// Unrolled by 4 (scalar, no OpenMP): a block's local sums are formed off the critical path, so
// the running sum takes one addition per 4 elements; scalar loop for the tail.
#include <stdint.h>

void prefix_sum(int n, const int64_t *restrict x, int64_t *restrict y)
{
    int64_t s = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        int64_t a = x[i], b = a + x[i + 1], c = b + x[i + 2], d = c + x[i + 3];
        y[i] = s + a;
        y[i + 1] = s + b;
        y[i + 2] = s + c;
        y[i + 3] = s + d;
        s += d;
    }
    for (; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
}
