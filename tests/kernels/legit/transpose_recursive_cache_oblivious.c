// expect: ok problem: transpose
// Cache-oblivious recursion: split the longer side of the block in half until it is at most 16 x 16, then copy.
#include <stddef.h>

static void rec(const double *A, double *B, size_t N, size_t i0, size_t i1, size_t j0, size_t j1)
{
    if (i1 - i0 <= 16 && j1 - j0 <= 16) {
        for (size_t i = i0; i < i1; i++)
            for (size_t j = j0; j < j1; j++) B[j * N + i] = A[i * N + j];
    } else if (i1 - i0 >= j1 - j0) {
        size_t m = i0 + (i1 - i0) / 2;
        rec(A, B, N, i0, m, j0, j1);
        rec(A, B, N, m, i1, j0, j1);
    } else {
        size_t m = j0 + (j1 - j0) / 2;
        rec(A, B, N, i0, i1, j0, m);
        rec(A, B, N, i0, i1, m, j1);
    }
}

void transpose(int n, const double *A, double *B)
{
    rec(A, B, (size_t)n, 0, (size_t)n, 0, (size_t)n);
}
