// expect: forbidden problem: jacobi2d mode: serial
// Serial mode: no pragma, but omp.h and a call into the OpenMP runtime (omp_get_num_threads) to pick a row block size.
#include <omp.h>

void jacobi2d(int n, const double *u, double *v)
{
    const int block = 16 * omp_get_num_threads();
    for (int j = 0; j < n; j++) { v[j] = u[j]; v[(n - 1) * n + j] = u[(n - 1) * n + j]; }
    for (int i0 = 1; i0 < n - 1; i0 += block)
        for (int i = i0; i < i0 + block && i < n - 1; i++) {
            v[i * n] = u[i * n];
            v[i * n + n - 1] = u[i * n + n - 1];
            for (int j = 1; j < n - 1; j++)
                v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
        }
}
