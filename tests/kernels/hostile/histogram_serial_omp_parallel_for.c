// expect: forbidden problem: histogram mode: serial
// A correct OpenMP array-section reduction ('#pragma omp parallel for reduction(+ : counts[:256])', no omp.h, no runtime call) submitted in serial mode, where no OpenMP construct is allowed.
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
#pragma omp parallel for reduction(+ : counts[:256])
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
}
