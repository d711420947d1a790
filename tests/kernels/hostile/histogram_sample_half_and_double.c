// expect: wrong_result problem: histogram
// Partial work: counts every second byte and doubles the counts (an unbiased estimate whose total is right for even n), but the histogram must be exact.
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
    for (int i = 0; i < n; i += 2)
        counts[x[i]] += 2;
}
