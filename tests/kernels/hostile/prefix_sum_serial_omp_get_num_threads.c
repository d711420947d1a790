// expect: forbidden problem: prefix_sum mode: serial
// No pragma and no omp.h: a correct scan that only asks the OpenMP runtime for its thread count (declared by hand) to size its blocks; serial mode forbids any reference to the runtime.
#include <stdint.h>

int omp_get_num_threads(void);

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int blocks = omp_get_num_threads() * 4;
    int64_t s = 0;
    for (int b = 0; b < blocks; b++)
        for (long i = (long)n * b / blocks; i < (long)n * (b + 1) / blocks; i++) {
            s += x[i];
            y[i] = s;
        }
}
