// Tile-stepping loops whose step is a variable named sz (not a "tile name") and bounds via if (true: loop_reorder + cache_blocking)
#include <string.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    memset(C, 0, sizeof(double) * n * n);
    const int sz = 64;
    for (int ii = 0; ii < n; ii += sz) {
        int ie = ii + sz; if (ie > n) ie = n;
        for (int kk = 0; kk < n; kk += sz) {
            int ke = kk + sz; if (ke > n) ke = n;
            for (int i = ii + 0; i < ie; i++)
                for (int k = kk + 0; k < ke; k++) {
                    double a = A[i * n + k];
                    for (int j = 0; j < n; j++) C[i * n + j] += a * B[k * n + j];
                }
        }
    }
}
