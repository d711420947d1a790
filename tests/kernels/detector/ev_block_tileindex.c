// Cache blocking written with tile indices (t*64) instead of a tile-stepping loop (true: loop_reorder + cache_blocking)
#include <string.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    memset(C, 0, sizeof(double) * n * n);
    const int nt = (n + 63) / 64;
    for (int ti = 0; ti < nt; ti++)
        for (int tk = 0; tk < nt; tk++)
            for (int tj = 0; tj < nt; tj++) {
                int i0 = ti * 64, k0 = tk * 64, j0 = tj * 64;
                int i1 = i0 + 64 < n ? i0 + 64 : n, k1 = k0 + 64 < n ? k0 + 64 : n, j1 = j0 + 64 < n ? j0 + 64 : n;
                for (int i = i0; i < i1; i++)
                    for (int k = k0; k < k1; k++) {
                        double a = A[i * n + k];
                        for (int j = j0; j < j1; j++) C[i * n + j] += a * B[k * n + j];
                    }
            }
}
