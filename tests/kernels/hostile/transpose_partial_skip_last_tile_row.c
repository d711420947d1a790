// expect: wrong_result problem: transpose
// Partial work: 32 x 32 tiles, but the loop bound drops the last (partial) tile row of A, so the last n % 32 columns of B keep their old contents.
#include <stddef.h>

void transpose(int n, const double *A, double *B)
{
    const size_t N = (size_t)n, full = N / 32 * 32;
    for (size_t i0 = 0; i0 < full; i0 += 32)
        for (size_t j0 = 0; j0 < N; j0 += 32)
            for (size_t i = i0; i < i0 + 32; i++)
                for (size_t j = j0; j < j0 + 32 && j < N; j++) B[j * N + i] = A[i * N + j];
}
