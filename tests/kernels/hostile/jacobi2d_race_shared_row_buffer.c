// expect: wrong_result problem: jacobi2d threads: 2 n: 1024
// Data race: OpenMP threads share one static row buffer (rows dealt round-robin), so a thread copies out a row its neighbour is overwriting.
#include <string.h>

static double rowbuf[1 << 16];

void jacobi2d(int n, const double *u, double *v)
{
    memcpy(v, u, (size_t)n * sizeof(double));
    memcpy(v + (size_t)(n - 1) * n, u + (size_t)(n - 1) * n, (size_t)n * sizeof(double));
#pragma omp parallel for schedule(static, 1)
    for (int i = 1; i < n - 1; i++) {
        rowbuf[0] = u[i * n];
        rowbuf[n - 1] = u[i * n + n - 1];
        for (int j = 1; j < n - 1; j++)
            rowbuf[j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
        for (int j = 0; j < n; j++) v[i * n + j] = rowbuf[j];
    }
}
