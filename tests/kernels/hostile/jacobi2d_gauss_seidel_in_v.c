// expect: wrong_result problem: jacobi2d
// Gauss-Seidel instead of Jacobi: copies u to v and updates v in place, so the up and left neighbours are already-updated values.
#include <string.h>

void jacobi2d(int n, const double *u, double *v)
{
    memcpy(v, u, (size_t)n * n * sizeof(double));
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.2 * (v[i * n + j] + v[(i - 1) * n + j] + v[(i + 1) * n + j] + v[i * n + j - 1] + v[i * n + j + 1]);
}
