// expect: wrong_result problem: prefix_sum
// Correct scan that also stores the total as a sentinel at y[n], one element past the output array (the harness keeps a canary in the page slack after each array).
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
    y[n] = s;
}
