// expect: wrong_result problem: prefix_sum
// Narrows to 32 bits (an int running sum of the values truncated to int), as if the values were small: the inputs span [-2^32, 2^32], so values and partial sums overflow int on the first call.
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += (int)x[i];
        y[i] = s;
    }
}
