// expect: ok problem: histogram threads: 2 n: 200000
// OpenMP array-section reduction: a parallel for over x with reduction(+: counts[:256]); each thread's private copy starts at zero and OpenMP adds them up (textbook style, slower than private sub-tables).
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
#pragma omp parallel for schedule(static) reduction(+ : counts[:256])
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
}
