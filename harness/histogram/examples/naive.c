// The textbook histogram: zero the 256 counters, then one increment per byte; runs of equal bytes
// make each increment wait for the previous one's store.
#include <stdint.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    for (int b = 0; b < 256; b++)
        counts[b] = 0;
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
}
