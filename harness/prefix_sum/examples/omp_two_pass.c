// OpenMP two-pass scan: each thread sums its contiguous chunk, one thread scans the chunk sums,
// then each thread rescans its chunk starting from its offset (x is read twice).
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t *sums = NULL;
#pragma omp parallel
    {
        int T = omp_get_num_threads(), t = omp_get_thread_num();
#pragma omp single
        sums = malloc((size_t)(T + 1) * sizeof *sums); /* the implicit barrier publishes it */
        long lo = (long)n * t / T, hi = (long)n * (t + 1) / T;
        int64_t s = 0;
        for (long i = lo; i < hi; i++)
            s += x[i];
        sums[t + 1] = s;
#pragma omp barrier
#pragma omp single
        {
            sums[0] = 0;
            for (int k = 1; k <= T; k++)
                sums[k] += sums[k - 1];
        }
        s = sums[t];
        for (long i = lo; i < hi; i++) {
            s += x[i];
            y[i] = s;
        }
    }
    free(sums);
}
