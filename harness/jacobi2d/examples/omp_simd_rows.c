// OpenMP over rows (static schedule), each row vectorized by the compiler with `omp simd`.
#include <stddef.h>

void jacobi2d(int n, const double *u, double *v)
{
    const size_t N = (size_t)n;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) {
        const double *up = u + (i ? i - 1 : 0) * N, *c = u + i * N, *dn = u + (i + 1 < N ? i + 1 : i) * N;
        double *out = v + i * N;
        if (i == 0 || i == N - 1) {
            for (size_t j = 0; j < N; j++) out[j] = c[j];
            continue;
        }
        out[0] = c[0];
        out[N - 1] = c[N - 1];
#pragma omp simd
        for (size_t j = 1; j < N - 1; j++)
            out[j] = 0.2 * (c[j] + up[j] + dn[j] + c[j - 1] + c[j + 1]);
    }
}
