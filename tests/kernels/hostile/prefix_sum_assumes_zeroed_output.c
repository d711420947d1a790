// expect: wrong_result problem: prefix_sum
// Accumulates into y instead of overwriting it (y[i] += y[i-1] + x[i]), which is only right if y arrives zeroed; the driver poisons y before every call.
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    y[0] += x[0];
    for (int i = 1; i < n; i++)
        y[i] += y[i - 1] + x[i];
}
