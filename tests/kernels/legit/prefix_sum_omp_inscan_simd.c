// expect: ok problem: prefix_sum threads: 2 n: 100000
// OpenMP 5.0 scan: '#pragma omp parallel for simd reduction(inscan, +: s)' with '#pragma omp scan inclusive(s)'; the compiler and runtime do the blocked two-pass scan.
#include <stdint.h> // int64_t
#include <omp.h>    // OpenMP

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t s = 0; /* the running total */
#pragma omp parallel for simd reduction(inscan, +: s) // inclusive scan over x
    for (int i = 0; i < n; i++) {
        s += x[i]; /* input phase */
#pragma omp scan inclusive(s)
        y[i] = s; /* scan phase: s holds x[0] + ... + x[i] */
    }
}
