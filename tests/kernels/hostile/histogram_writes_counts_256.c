// expect: wrong_result problem: histogram
// Correct counts, plus the total n stored at counts[256] as a sentinel: one element past the 256-element output (the harness keeps a canary in the page slack after each array).
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
    counts[256] = n;
}
