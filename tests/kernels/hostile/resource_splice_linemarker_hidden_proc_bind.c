// expect: forbidden
// `#pragma omp parallel for proc_bind(spread)` (a clause outside the allow-list) placed after a line marker hidden by a backslash-space-newline splice: the clause only shows up as a flags argument of GOMP_parallel, which the object check cannot see.
#include <stddef.h>

void dgemm(int n, const double *A, const double *B, double *C) {
# \ 
1 "/usr/include/stdlib.h" 3
#pragma omp parallel for proc_bind(spread) schedule(static)
# \ 
8 "candidate.c"
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}
