// expect: ok problem: prefix_sum threads: 2 n: 100000
// OpenMP scan-then-fix: every thread scans its chunk into y from zero, a barrier, then each thread adds the totals of the chunks before it (read from y's chunk ends) to its own chunk.
#include <omp.h>
#include <stdint.h>

void prefix_sum(int n, const int64_t *restrict x, int64_t *restrict y)
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
#pragma omp barrier
        int64_t offset = 0;
        for (int u = 0; u < t; u++) {
            long end = (long)n * (u + 1) / T;
            if (end > (long)n * u / T)
                offset += y[end - 1];
        }
        if (offset != 0)
            for (long i = lo; i < hi; i++)
                y[i] += offset;
    }
}
