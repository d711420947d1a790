// expect: wrong_result problem: jacobi2d
// Partial work: every 8th interior row is not swept but copied from u (finite, plausible values, 1/8 of the work saved).
#include <string.h>

void jacobi2d(int n, const double *u, double *v)
{
    memcpy(v, u, (size_t)n * n * sizeof(double));
    for (int i = 1; i < n - 1; i++) {
        if (i % 8 == 0) continue;
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
    }
}
