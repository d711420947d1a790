// expect: wrong_result problem: histogram
// Partial work: counts only the first n - n/32 bytes of x, so the bins of the skipped tail are short.
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
    for (int i = 0; i < n - n / 32; i++)
        counts[x[i]]++;
}
