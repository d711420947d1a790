// expect: ok problem: prefix_sum threads: 2 n: 100000
// An exclusive OpenMP scan ('#pragma omp for reduction(inscan, +: s)' in a parallel region, '#pragma omp scan exclusive(s)'), each element added back to its exclusive prefix.
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t s = 0;
#pragma omp parallel
    {
#pragma omp for reduction(inscan, +: s)
        for (int i = 0; i < n; i++) {
            y[i] = s + x[i]; /* s: x[0] + ... + x[i - 1] */
#pragma omp scan exclusive(s)
            s += x[i];
        }
    }
}
