// expect: wrong_result problem: jacobi2d
// Computes the sweep once per size n and replays it for every later call of that size ("the grid is the same"): inputs are fresh every call.
#include <stdlib.h>
#include <string.h>

void jacobi2d(int n, const double *u, double *v)
{
    static double *saved[2];
    static int saved_n[2];
    const size_t nn = (size_t)n * (size_t)n;
    for (int s = 0; s < 2; s++)
        if (saved[s] && saved_n[s] == n) {
            memcpy(v, saved[s], nn * sizeof(double));
            return;
        }
    memcpy(v, u, nn * sizeof(double));
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
    int s = saved[0] ? 1 : 0;
    free(saved[s]);
    saved[s] = malloc(nn * sizeof(double));
    if (saved[s]) { memcpy(saved[s], v, nn * sizeof(double)); saved_n[s] = n; }
}
