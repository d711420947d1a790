// expect: ok problem: transpose mode: openmp threads: 2
// Honest twin of the timed-window attacks on transpose (openmp; hostile/transpose_window_*_openmp_*.c copy its helper verbatim): the helper computes a range of rows (a parallel for over its outer loop), called once over all of them.
#include <stddef.h>

/* Rows lo..hi-1 of A into columns lo..hi-1 of B, in 32 x 32 tiles. */
static void rows(int n, const double *restrict A, double *restrict B, int lo, int hi) {
#pragma omp parallel for schedule(static)
    for (int ii = lo; ii < hi; ii += 32) {
        int ie = ii + 32 < hi ? ii + 32 : hi;
        for (int jj = 0; jj < n; jj += 32) {
            int je = jj + 32 < n ? jj + 32 : n;
            for (int i = ii; i < ie; i++)
                for (int j = jj; j < je; j++) B[(size_t)j * n + i] = A[(size_t)i * n + j];
        }
    }
}

void transpose(int n, const double *A, double *B) {
    rows(n, A, B, 0, n);
}
