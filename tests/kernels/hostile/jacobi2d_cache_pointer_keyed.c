// expect: wrong_result problem: jacobi2d
// Caches v in a static buffer keyed on (n, u, v) pointers; a repeat call on the same buffers copies the stale sweep although u holds fresh values.
#include <stdlib.h>
#include <string.h>

void jacobi2d(int n, const double *u, double *v)
{
    static const double *last_u;
    static double *last_v, *cache;
    static int last_n;
    const size_t nn = (size_t)n * (size_t)n;
    if (cache && n == last_n && u == last_u && v == last_v) {
        memcpy(v, cache, nn * sizeof(double));
        return;
    }
    memcpy(v, u, nn * sizeof(double));
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
    free(cache);
    cache = malloc(nn * sizeof(double));
    if (cache) {
        memcpy(cache, v, nn * sizeof(double));
        last_u = u; last_v = v; last_n = n;
    }
}
