// expect: wrong_result problem: histogram
// Forgets to zero counts and only increments it, relying on the output's old contents being zero; the driver poisons counts with a nonzero value before every call.
#include <stdint.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
}
