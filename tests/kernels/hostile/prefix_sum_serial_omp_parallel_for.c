// expect: forbidden problem: prefix_sum mode: serial
// A correct two-pass blocked scan parallelized with plain '#pragma omp parallel for' (no omp.h, no runtime call), submitted in serial mode, where no OpenMP construct is allowed.
#include <stdint.h>

#define BLOCKS 64

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t sums[BLOCKS + 1];
    sums[0] = 0;
#pragma omp parallel for
    for (int b = 0; b < BLOCKS; b++) {
        int64_t s = 0;
        for (long i = (long)n * b / BLOCKS; i < (long)n * (b + 1) / BLOCKS; i++)
            s += x[i];
        sums[b + 1] = s;
    }
    for (int b = 0; b < BLOCKS; b++)
        sums[b + 1] += sums[b];
#pragma omp parallel for
    for (int b = 0; b < BLOCKS; b++) {
        int64_t s = sums[b];
        for (long i = (long)n * b / BLOCKS; i < (long)n * (b + 1) / BLOCKS; i++) {
            s += x[i];
            y[i] = s;
        }
    }
}
