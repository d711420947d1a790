// The textbook scan: one running sum, each addition waits for the one before it.
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
}
