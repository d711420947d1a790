// expect: ok problem: transpose threads: 2 n: 512
// Copy A into B (overwriting all of it), then transpose B in place by swapping tile pairs across the diagonal, OpenMP over tile rows with a dynamic schedule.
#include <string.h>

#define T 32

void transpose(int n, const double *A, double *B)
{
    memcpy(B, A, (size_t)n * (size_t)n * sizeof(double));
    const int tiles = (n + T - 1) / T;
#pragma omp parallel for schedule(dynamic, 1)
    for (int ti = 0; ti < tiles; ti++)
        for (int tj = ti; tj < tiles; tj++) {
            const int i0 = ti * T, j0 = tj * T;
            const int i1 = i0 + T < n ? i0 + T : n, j1 = j0 + T < n ? j0 + T : n;
            for (int i = i0; i < i1; i++)
                for (int j = (ti == tj ? i + 1 : j0); j < j1; j++) {
                    double t = B[i * n + j];
                    B[i * n + j] = B[j * n + i];
                    B[j * n + i] = t;
                }
        }
}
