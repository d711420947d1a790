// expect: ok
// restrict-qualified pointers and an IDX() indexing macro; ikj with a row-block of 2 and tails.
#include <stddef.h>

#define IDX(i, j) ((size_t)(i) * (size_t)n + (size_t)(j))

void dgemm(int n, const double *restrict A, const double *restrict B, double *restrict C)
{
    int i;
    for (i = 0; i + 1 < n; i += 2) {
        for (int j = 0; j < n; j++) { C[IDX(i, j)] = 0.0; C[IDX(i + 1, j)] = 0.0; }
        for (int k = 0; k < n; k++) {
            const double a0 = A[IDX(i, k)], a1 = A[IDX(i + 1, k)];
            for (int j = 0; j < n; j++) {
                const double b = B[IDX(k, j)];
                C[IDX(i, j)] += a0 * b;
                C[IDX(i + 1, j)] += a1 * b;
            }
        }
    }
    if (i < n) { /* odd n: last row */
        for (int j = 0; j < n; j++) C[IDX(i, j)] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[IDX(i, k)];
            for (int j = 0; j < n; j++) C[IDX(i, j)] += a * B[IDX(k, j)];
        }
    }
}
#undef IDX
