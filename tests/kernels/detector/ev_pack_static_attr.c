// Packing into a static buffer declared with __attribute__((aligned)) and filled by *(B + ...) (true: loop_reorder + packing)
#include <string.h>
static double __attribute__((aligned(64))) panel[256 * 4096];
void dgemm(int n, const double *A, const double *B, double *C) {
    memset(C, 0, sizeof(double) * n * n);
    for (int k0 = 0; k0 < n; k0 += 256) {
        int kb = n - k0 < 256 ? n - k0 : 256;
        for (int j0 = 0; j0 < n; j0 += 4096) {
            int jb = n - j0 < 4096 ? n - j0 : 4096;
            for (int k = 0; k < kb; k++) memcpy(panel + (long)k * jb, B + (long)(k0 + k) * n + j0, sizeof(double) * jb);
            for (int i = 0; i < n; i++)
                for (int k = 0; k < kb; k++) {
                    double a = *(A + (long)i * n + k0 + k);
                    double *c = C + (long)i * n + j0;
                    const double *p = panel + (long)k * jb;
                    for (int j = 0; j < jb; j++) c[j] += a * p[j];
                }
        }
    }
}
