// expect: forbidden problem: prefix_sum mode: serial
// The same correct two-pass blocked scan in serial mode, with its OpenMP directive hidden in a macro as _Pragma("omp parallel for"), so the raw text shows no '#pragma omp'.
#include <stdint.h>

#define BLOCKS 64
#define EACH_BLOCK _Pragma("omp parallel for") for (int b = 0; b < BLOCKS; b++)

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t sums[BLOCKS + 1];
    sums[0] = 0;
    EACH_BLOCK {
        int64_t s = 0;
        for (long i = (long)n * b / BLOCKS; i < (long)n * (b + 1) / BLOCKS; i++)
            s += x[i];
        sums[b + 1] = s;
    }
    for (int b = 0; b < BLOCKS; b++)
        sums[b + 1] += sums[b];
    EACH_BLOCK {
        int64_t s = sums[b];
        for (long i = (long)n * b / BLOCKS; i < (long)n * (b + 1) / BLOCKS; i++) {
            s += x[i];
            y[i] = s;
        }
    }
}
