// expect: wrong_result problem: prefix_sum threads: 2 n: 100000
// Partial parallel scan: each thread scans its own chunk from zero and never adds the sums of the chunks before it, so every chunk but the first is off by an offset.
#include <omp.h>
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
#pragma omp parallel
    {
        int T = omp_get_num_threads(), t = omp_get_thread_num();
        long lo = (long)n * t / T, hi = (long)n * (t + 1) / T;
        int64_t s = 0;
        for (long i = lo; i < hi; i++) {
            s += x[i];
            y[i] = s;
        }
    }
}
