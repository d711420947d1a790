// expect: ok problem: jacobi2d threads: 2 n: 512
// Chat style: copy all of u into v first (border done), then overwrite the interior in parallel with a collapsed row/column-block loop and restrict pointers.
#include <string.h>
#include <omp.h>

#define BJ 256

void jacobi2d(int n, const double *restrict u, double *restrict v)
{
    memcpy(v, u, (size_t)n * (size_t)n * sizeof(double));
    const int nb = (n - 2 + BJ - 1) / BJ;
#pragma omp parallel for collapse(2) schedule(static)
    for (int i = 1; i < n - 1; i++)
        for (int b = 0; b < nb; b++) {
            const int j0 = 1 + b * BJ, j1 = j0 + BJ < n - 1 ? j0 + BJ : n - 1;
            const double *c = u + (size_t)i * n;
            double *out = v + (size_t)i * n;
#pragma omp simd
            for (int j = j0; j < j1; j++)
                out[j] = (c[j - n] + c[j - 1] + c[j] + c[j + 1] + c[j + n]) / 5.0;
        }
}
