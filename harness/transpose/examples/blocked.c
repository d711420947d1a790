// Cache blocking, plain C, serial: 32 x 32 tiles, so the 32 rows of B a tile writes stay in L1 while it is filled.
#include <stddef.h>

#define T 32

void transpose(int n, const double *A, double *B)
{
    const size_t N = (size_t)n;
    for (size_t i0 = 0; i0 < N; i0 += T) {
        const size_t i1 = i0 + T < N ? i0 + T : N;
        for (size_t j0 = 0; j0 < N; j0 += T) {
            const size_t j1 = j0 + T < N ? j0 + T : N;
            for (size_t i = i0; i < i1; i++)
                for (size_t j = j0; j < j1; j++)
                    B[j * N + i] = A[i * N + j];
        }
    }
}
