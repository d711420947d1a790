// expect: wrong_result problem: histogram threads: 2 n: 2000000
// Data race: '#pragma omp parallel for' with plain counts[x[i]]++ on the shared table; half the bytes hit one hot counter, so the two threads' read-modify-writes on it lose updates on every call.
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
}
